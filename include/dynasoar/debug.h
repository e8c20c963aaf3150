// Aids for tests and for debugging the framework itself, not for programs:
// they read every bitmap and block header of a heap back to the host, so
// call them only while no kernel of the heap runs. Not in dynasoar.h.
#pragma once

#include <string>

#include "dynasoar/soa_allocator_handle.h"

namespace dynasoar::debug {

/// Reaches the private checks of the heap handle for the functions below.
struct HeapInspector {
  /// See debug::check_consistency.
  template <class Alloc>
  static std::string check_consistency(const SoaAllocatorHandle<Alloc>& heap) {
    return heap.check_consistency();
  }
};

/// Checks the DynaSOAr heap's invariants (paper App. A.5): every hierarchical
/// bitmap consistent, and the block states agree with them (a block is free
/// or belongs to exactly one class, is not empty, has that class in its
/// header, has no live slot marked destroyed, and is active exactly when it
/// has a free slot). Returns an empty string if all holds, else a description
/// of the first violation. Host only; waits for the heap's stream.
template <class Alloc>
std::string check_consistency(const SoaAllocatorHandle<Alloc>& heap) {
  return HeapInspector::check_consistency(heap);
}

}  // namespace dynasoar::debug
