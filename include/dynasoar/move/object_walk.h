// The walk over the live objects of one class that the move layer's kernels
// share (compaction's pointer rewrite, migration between ranks, the pointer
// check): thread t of a grid of `threads` takes slot t % capacity of every
// (threads / capacity)-th block of the class's block list, the split of a
// do-all (soa/launch.h), so that neighbouring threads read neighbouring
// slots of a field.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dynasoar/allocator/soa/heap.h"
#include "dynasoar/allocator/soa/object_pointer.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::move {

/// f(object) (the object's pointer bits) for each live object of class
/// kType that thread t of `threads` takes among the n listed `blocks`.
/// `threads` is a multiple of the class's capacity (soa::do_all_threads).
template <class Registry, unsigned kType, class F>
DYNASOAR_HD DYNASOAR_FORCEINLINE void for_each_listed_object(const soa::HeapState* state, const bit_index* blocks,
                                                             bit_index n, std::size_t threads, std::size_t t,
                                                             F&& f) {
  constexpr unsigned kCap = Registry::kCapacityById[kType];
  const auto slot = static_cast<unsigned>(t % kCap);
  for (std::size_t k = t / kCap; k < n; k += threads / kCap) {
    const bit_index block = blocks[k];
    if (((state->live_slots(block, kType) >> slot) & 1u) == 0) continue;
    f(soa::make_pointer(state->block_address(block), slot, kCap, kType));
  }
}

}  // namespace dynasoar::move
