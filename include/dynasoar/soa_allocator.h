// The device side of the DynaSOAr API (Springer & Masuhara 2019, Sec. 2.1) on the SOA heap: the
// allocator handle kernels receive by value. The same heap with whole
// objects in its blocks (BitmapAllocator, the AOS layout of
// allocator/soa/layout.h) is BitmapAlloc, the paper's Sec. 6 comparison. The root class, the
// field-declaration macros and `destroy` are shared by every back end
// (dynasoar/object.h).
//
//   class Body;
//   using AllocatorT = dynasoar::SoaAllocator<Body>;
//   class Body : public AllocatorT::Base {
//    public:
//     declare_field_types(Body, float, float)
//     Field<Body, 0> pos;
//     Field<Body, 1> vel;
//     DYNASOAR_HD Body(int i) : pos(i), vel(1.0f) {}
//     DYNASOAR_HD void move() { pos += vel; }
//   };
//
// The host side (owning the heap, parallel_new/parallel_do) is
// dynasoar::AllocatorHandle in soa_allocator_handle.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "dynasoar/allocator/soa/heap.h"
#include "dynasoar/allocator/soa/layout.h"
#include "dynasoar/allocator/soa/object_pointer.h"
#include "dynasoar/allocator/soa/kernels.h"
#include "dynasoar/model/type_list.h"
#include "dynasoar/model/visit.h"
#include "dynasoar/field.h"
#include "dynasoar/object.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/warp.h"

#ifndef DYNASOAR_STAGED_DEVICE_DO
#define DYNASOAR_STAGED_DEVICE_DO 0
#endif

namespace dynasoar {


template <class Alloc>
class SoaAllocatorHandle;

/// The allocator as kernels see it: a trivially copyable handle of the heap
/// owned by an AllocatorHandle. L is the layout of the blocks' data
/// segments (soa::Layout); Ts are all classes that may be allocated,
/// abstract base classes included, in any order. Programs name it through
/// SoaAllocator (DynaSOAr) or BitmapAllocator (BitmapAlloc) below.
template <soa::Layout L, class... Ts>
class HeapAllocator : public DeviceOps<HeapAllocator<L, Ts...>> {
 public:
  /// The registered classes, in the order that gives their type ids.
  using Types = model::TypeList<Ts...>;
  /// The compile-time table of those classes (ids, capacities, field layouts).
  using Registry = soa::Registry<Types, L>;
  /// The root class user classes derive from (`AllocatorT::Base`).
  using Base = Object<HeapAllocator>;
  /// The host handle that owns the heap (dynasoar/soa_allocator_handle.h).
  using Handle = SoaAllocatorHandle<HeapAllocator>;
  /// The layout of the blocks' data segments.
  static constexpr soa::Layout kLayout = L;
  /// Name of the back end in error messages.
  static constexpr const char* kBackendName = soa::backend_name(L);
  /// Its objects can move (parallel_defrag, checkpoints): dynasoar::kCanMoveObjects.
  static constexpr bool kMovesObjects = true;
  /// Whether DeviceOps::device_do_staged uses for_each_object_staged below
  /// (define DYNASOAR_STAGED_DEVICE_DO=1 to switch it on). Off by default:
  /// the staged walk has been slower than the plain one.
  static constexpr bool kStagedWalk = DYNASOAR_STAGED_DEVICE_DO != 0;

  HeapAllocator() = default;
  /// A handle on the heap whose state (device memory) is `state`, as
  /// SoaAllocatorHandle::device() makes it. Host and device.
  DYNASOAR_HD explicit HeapAllocator(soa::HeapState* state) : state_(state) {}

  /// Memory for one object of C (not constructed), or nullptr when the heap
  /// is full. `new (alloc) C(args...)` calls this and then the constructor.
  template <class C>
  DYNASOAR_HD C* allocate() const {
    static_assert(check_allocatable<Registry, C>());
    return reinterpret_cast<C*>(state_->allocate(HeapAllocator::template type_id<C>()));
  }

  /// Returns an object's slot to the heap without running its destructor.
  template <class C>
  DYNASOAR_HD void free(C* p) const {
    if (p == nullptr) return;
    state_->deallocate(reinterpret_cast<std::uint64_t>(p));
  }

  /// True if `p` points to an object of class C or of a subclass of C.
  template <class C>
  DYNASOAR_HD static bool is_a(const void* p) {
    const auto bits = reinterpret_cast<std::uint64_t>(p);
    return bits != 0 &&
           ((Registry::template kConcreteSubtypes<C> >> soa::pointer_type(bits)) & 1u) != 0;
  }

  /// f(T*) for every live object of T and its subclasses, in this thread.
  /// Instantiated per concrete class, with its type id and capacity as
  /// constants: the pointers made here then carry constant type and
  /// capacity bits and a block address masked to its bits, so a field read
  /// through them compiles to the block address plus a constant plus the
  /// slot times the field's size (the class's stride, in the AOS layout),
  /// as in DoAll, rather than each read decoding the capacity from the
  /// pointer and computing its array offset at run time. Full blocks take a
  /// counted loop.
  template <class T, class F>
  DYNASOAR_HD void for_each_object(F&& f) const {
    model::for_each_concrete_constant<Registry, T>([&](auto type_constant) {
      constexpr unsigned kType = decltype(type_constant)::value;
      constexpr unsigned kCap = Registry::kCapacityById[kType];
      constexpr soa::word kFull = ~soa::padding_bits(kCap);
      const auto visit_block = [&](std::uint64_t address, soa::word live) {
        for_each_live_slot<kCap>(live, [&](unsigned slot) {
          f(reinterpret_cast<T*>(soa::make_pointer(address, slot, kCap, kType)));
        });
      };
      // One block behind: a block's allocation bitmap is loaded (from L2: an
      // atomic load) before the previous block is visited, so its latency
      // hides behind that block's objects instead of stalling the walk at
      // every block. The class is read after the bitmap: a block emptied and
      // handed to another class since the walk found it is skipped rather
      // than visited as a T (its class can still change while the walk is
      // one block behind, as it can between any visit and the reads of the
      // method; device_do's contract leaves objects deleted meanwhile
      // undefined).
      std::uint64_t held_address = 0;
      soa::word held_live = 0;
      state_->allocated[kType].for_each_set([&](bit_index block) {
        const std::uint64_t address = state_->block_address(block) & soa::kBlockAddressMask;
        const soa::BlockHeader* header = state_->header(block);
        const soa::word live = platform::atomic_load(&header->allocation) & kFull;
        const bool ours = platform::atomic_load(&header->type) == kType;
        if (held_address != 0) visit_block(held_address, held_live);
        held_address = address;
        held_live = ours ? live : soa::word{0};
      });
      if (held_address != 0) visit_block(held_address, held_live);
    });
  }

  /// f(copy, object) for every live object of T and its subclasses, in this
  /// thread (DeviceOps::device_do_staged). In device code, when T has no
  /// registered subclass and its block fits the per-warp tile, the threads
  /// of a warp that call this together copy each block of T into shared
  /// memory once and every one of them reads its objects from there:
  /// `copy` then points into that tile and is laid out like the block, so
  /// field proxies work on it; `object` is the object in the heap. Elsewhere
  /// (host code, larger blocks, a second group of the same warp while the
  /// tile is taken) copy == object.
  template <class T, class F>
  DYNASOAR_HD void for_each_object_staged(F&& f) const {
#if defined(__CUDA_ARCH__)
    if constexpr (Registry::template kConcreteSubtypes<T> == (std::uint64_t{1} << type_id<T>())) {
      if (staged_in_warp<T>(f)) return;
    }
#endif
    for_each_object<T>([&](T* p) { f(static_cast<const T*>(p), p); });
  }

  /// Address of field J (global index, of type T) of the object at
  /// `object`, whose static class is C (Field's data_ptr).
  template <class C, std::size_t J, class T>
  DYNASOAR_HD DYNASOAR_FORCEINLINE static T* field_address(std::uint64_t object) {
    return soa::field_address<typename Registry::template Info<C>, J, T>(object);
  }

  /// The heap's state: its block bitmaps, block size and error flags.
  DYNASOAR_HD soa::HeapState* state() const { return state_; }

  /// Warps per thread block that get a staging tile: those of the do-all
  /// kernels. Threads of larger user blocks beyond them visit unstaged.
  static constexpr unsigned kStagingWarps = soa::kDoAllBlockThreads / 32;
  /// A class whose block data exceeds this is never staged (shared memory
  /// per thread block: kStagingWarps tiles plus a lock word per warp).
  static constexpr std::uint64_t kMaxTileBytes = 4096;

 private:
  /// visit(slot) for every slot set in `live`, in ascending order; a full
  /// block takes a counted loop, unrolled completely: every slot is then a
  /// constant, and a field's address the block's plus a constant offset,
  /// where a partly unrolled loop computes the slot's bits into each address.
  template <unsigned kCap, class V>
  DYNASOAR_HD DYNASOAR_FORCEINLINE static void for_each_live_slot(soa::word live, V&& visit) {
    if (live == ~soa::padding_bits(kCap)) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (unsigned slot = 0; slot < kCap; ++slot) visit(slot);
    } else {
      // The mask tells the compiler the slot stays below the block address bits.
      for (soa::word w = live; w != 0; w &= w - 1)
        visit(static_cast<unsigned>(static_cast<std::uint64_t>(platform::ctz(w)) & soa::kSlotMask));
    }
  }

#if defined(__CUDA_ARCH__)
  // The staged walk of for_each_object_staged. Returns false, having visited
  // nothing, where staging is not possible; every member of the calling
  // group gets the same answer. The group is the warp's threads that called
  // together (warp::present_lanes, the set cooperative groups'
  // coalesced_threads names; that header is not included, for its compile
  // time in every file that includes the framework); one member reads
  // the bitmaps and shares what it read, so all members walk the same blocks.
  template <class T, class F>
  __device__ bool staged_in_warp(F& f) const {
    using Info = typename Registry::template Info<T>;
    constexpr unsigned kType = type_id<T>();
    constexpr unsigned kCap = Registry::template kCapacity<T>;
    constexpr std::uint64_t kBytes = soa::round_up(Info::data_bytes(kCap), 16);
    if constexpr (kBytes > kMaxTileBytes) {
      return false;
    } else {
      __shared__ __align__(64) uint4 tiles[kStagingWarps][soa::round_up(kBytes, 64) / 16];
      // Tile locks: another group of the same warp (threads that skipped
      // ahead) may call at the same time. Shared memory starts undefined,
      // so a lock is held only if it holds this launch's grid id with the
      // low bit set; anything else is free.
      __shared__ unsigned long long locks[kStagingWarps];
      const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
      const unsigned warp_index = thread / 32;
      if (warp_index >= kStagingWarps) return false;  // the same for the whole warp
      const auto tile = reinterpret_cast<std::uint64_t>(&tiles[warp_index][0]);
      if (tile >= soa::kAddressLimit) return false;  // no room in an object pointer
      namespace warp = platform::warp;
      const warp::lane_mask group = warp::present_lanes();
      const auto first = static_cast<unsigned>(platform::ctz(group));  // the leader's lane, as in heap.h
      const auto rank = static_cast<unsigned>(platform::popc(group & warp::lanes_below()));
      const auto members = static_cast<unsigned>(platform::popc(group));
      const bool leader = rank == 0;
      unsigned long long grid = 0;
      asm("mov.u64 %0, %%gridid;" : "=l"(grid));
      const unsigned long long held = (grid << 1) | 1u;
      bool mine = false;
      if (leader) {
        const unsigned long long seen = locks[warp_index];
        mine = seen != held && atomicCAS(&locks[warp_index], seen, held) == seen;
      }
      if (warp::shfl(group, static_cast<int>(mine), first) == 0) return false;

      const auto load = [&](const soa::word* p) {
        return warp::shfl(group, leader ? platform::atomic_load(p) : soa::word{0}, first);
      };
      // Masked to the pointer's address bits (as in DoAll), so that the
      // compiler sees the capacity bits of the pointers made from it and
      // folds every field's array offset into a constant.
      const std::uint64_t staged_block = tile & soa::kBlockAddressMask;
      state_->allocated[kType].for_each_set_loading(
          [&](bit_index block) {
            const soa::word live = load(&state_->header(block)->allocation) & ~soa::padding_bits(kCap);
            const std::uint64_t block_address = state_->block_address(block) & soa::kBlockAddressMask;
            const auto* from = reinterpret_cast<const uint4*>(block_address);
            for (unsigned i = rank; i < kBytes / 16; i += members) tiles[warp_index][i] = from[i];
            warp::sync(group);
            const auto visit = [&](unsigned slot) {
              f(reinterpret_cast<const T*>(soa::make_pointer(staged_block, slot, kCap, kType)),
                reinterpret_cast<T*>(soa::make_pointer(block_address, slot, kCap, kType)));
            };
            for_each_live_slot<kCap>(live, visit);
            warp::sync(group);  // the tile is read before the next block overwrites it
          },
          load);
      if (leader) atomicExch(&locks[warp_index], grid << 1);
      return true;
    }
  }
#endif

  soa::HeapState* state_ = nullptr;
};

/// The DynaSOAr heap: fields in SOA arrays inside blocks (paper Sec. 3).
template <class... Ts>
using SoaAllocator = HeapAllocator<soa::Layout::kSoa, Ts...>;

/// BitmapAlloc (paper Sec. 6): the same heap, blocks and bitmaps, with whole
/// objects (AOS) inside each block instead of one array per field.
template <class... Ts>
using BitmapAllocator = HeapAllocator<soa::Layout::kAos, Ts...>;

}  // namespace dynasoar
