// The heap behind an AllocatorHandle, for the layers that move objects from
// outside the handle (distributed/: migration and halos). The handle keeps
// its storage private; these layers need its blocks, block lists and device
// state, as compaction and checkpoints do from inside.
#pragma once

#include "dynasoar/move/object_walk.h"

namespace dynasoar::move {

/// Friend of SoaAllocatorHandle: its heap storage and scratch.
struct HeapAccess {
  /// The handle's soa::HeapStorage.
  template <class Handle>
  static auto& storage(Handle& h) {
    return h.heap_;
  }
};

/// Whether the pointer bits `p` name a live object of the heap `state`:
/// inside its blocks, at a slot of a block of the pointer's class that
/// holds an object. (A freed block has every allocation bit set; its
/// bitmap bit tells it apart.)
DYNASOAR_HD inline bool names_live_object(const soa::HeapState* state, std::uint64_t p) {
  const unsigned type = soa::pointer_type(p);
  const unsigned slot = soa::pointer_slot(p);
  const std::uint64_t offset = soa::pointer_block(p) - state->blocks;  // below the heap it wraps: too large
  const std::uint64_t b = offset / state->block_bytes;
  if (type >= model::kMaxTypes || offset % state->block_bytes != 0 || b >= state->free_blocks.capacity())
    return false;
  const auto block = static_cast<bit_index>(b);
  if (state->capacity[type] == 0 || slot >= state->capacity[type] ||
      platform::atomic_load(&state->header(block)->type) != type || state->free_blocks.get(block))
    return false;
  return ((state->live_slots(block, type) >> slot) & 1u) != 0;
}

}  // namespace dynasoar::move
