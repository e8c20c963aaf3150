// Object pointers of the SOA heap (Springer & Masuhara 2019, Sec. 3.3, Fig. 6): a T*
// that is not the address of a T but packs where the object is.
//
//   bits 63..56  type id of the runtime class (instance-of checks, deallocation)
//   bits 55..50  block capacity - 1 (SOA array lengths depend on the runtime class)
//   bits 49..6   address of the block (blocks are 128-byte aligned)
//   bits  5..0   slot of the object in its block
//
// The original kept 35 address bits (24 GB GPUs). Here the block address is
// kept whole up to 2^50, which covers the 49-bit virtual address space of
// current NVIDIA GPUs and host processes, so heaps of any size anywhere in
// it work; the allocator checks the bound when it creates the heap.
//
// Both block layouts (layout.h) use the same pointers; the AOS layout finds
// the stride of the runtime class through the type id.
#pragma once

#include <cstdint>

#include "dynasoar/allocator/soa/layout.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::soa {

inline constexpr unsigned kAddressBits = 50;
inline constexpr std::uint64_t kAddressLimit = std::uint64_t{1} << kAddressBits;
inline constexpr unsigned kCapacityShift = kAddressBits;
inline constexpr unsigned kTypeShift = 56;
inline constexpr std::uint64_t kSlotMask = kMaxSlots - 1;
inline constexpr std::uint64_t kBlockAddressMask = (kAddressLimit - 1) & ~(kArrayAlignment - 1);

static_assert(kBlockAlignment % kArrayAlignment == 0 && kArrayAlignment >= kMaxSlots,
              "the slot bits must lie below the block alignment");

/// Address of block b of a heap whose block 0 is at heap_base, masked to the
/// pointer's address bits: kernels that make pointers from it let the
/// compiler see that those bits are the address (the do-all, parallel_new,
/// ObjectIndex).
DYNASOAR_HD DYNASOAR_FORCEINLINE constexpr std::uint64_t block_at(std::uint64_t heap_base,
                                                                  std::uint64_t block_bytes, std::uint64_t b) {
  return (heap_base + b * block_bytes) & kBlockAddressMask;
}

DYNASOAR_HD DYNASOAR_FORCEINLINE constexpr std::uint64_t make_pointer(std::uint64_t block_address,
                                                                      unsigned slot, unsigned capacity,
                                                                      unsigned type_id) {
  return (static_cast<std::uint64_t>(type_id) << kTypeShift) |
         (static_cast<std::uint64_t>(capacity - 1) << kCapacityShift) | block_address | slot;
}

DYNASOAR_HD DYNASOAR_FORCEINLINE constexpr unsigned pointer_slot(std::uint64_t p) {
  return static_cast<unsigned>(p & kSlotMask);
}
DYNASOAR_HD DYNASOAR_FORCEINLINE constexpr std::uint64_t pointer_block(std::uint64_t p) {
  return p & kBlockAddressMask;
}
DYNASOAR_HD DYNASOAR_FORCEINLINE constexpr unsigned pointer_capacity(std::uint64_t p) {
  return static_cast<unsigned>((p >> kCapacityShift) & 63u) + 1;
}
DYNASOAR_HD DYNASOAR_FORCEINLINE constexpr unsigned pointer_type(std::uint64_t p) {
  return static_cast<unsigned>(p >> kTypeShift);
}

/// Address of the value of field J (global index, inherited fields first,
/// of type T) of the object at `p`, whose static class has layout Info
/// (ClassInfo of either Layout; layout.h gives the arithmetic of each).
template <class Info, std::size_t J, class T>
DYNASOAR_HD DYNASOAR_FORCEINLINE T* field_address(std::uint64_t p) {
  if constexpr (Info::kLayout == Layout::kAos) {
    // The object's slot times its runtime class's stride, plus the field's offset.
    return reinterpret_cast<T*>(pointer_block(p) + pointer_slot(p) * Info::stride_of(pointer_type(p)) +
                                Info::template kFieldOffset<J>);
  } else {
    // The field's array in a block of the runtime class's capacity, plus the slot.
    const std::uint64_t capacity = pointer_capacity(p);
    return reinterpret_cast<T*>(pointer_block(p) + Info::template array_offset<J>(capacity) +
                                pointer_slot(p) * sizeof(T));
  }
}

}  // namespace dynasoar::soa
