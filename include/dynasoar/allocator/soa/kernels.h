// The kernels of SoaAllocatorHandle (soa_allocator_handle.h): the snapshot
// and the do-all of parallel_do (Springer & Masuhara 2019, Sec. 3.1, 3.7), parallel_new in whole
// blocks, counting, and the header copy of the consistency check. Each is a
// trivially copyable functor that platform::parallel_for or
// parallel_workers runs on the device, or on the host threads in a host
// build. Implementation: users reach them through the handle.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dynasoar/allocator/soa/heap.h"
#include "dynasoar/allocator/soa/object_pointer.h"
#include "dynasoar/bitmap/bitmap.h"
#include "dynasoar/bitmap/detail/bitmap_kernels.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/watchdog_base.h"
#include "dynasoar/platform/warp.h"

namespace dynasoar::soa {
/// Threads per thread block of the do-all kernels (soa/launch.h).
/// Smaller blocks make the device-sized grid that every do-all launches,
/// even an empty one, more thread blocks; larger ones slow large do-alls.
/// A do-all over few objects reaches every multiprocessor whatever
/// the size, since DoAll::spread numbers the threads across thread blocks.
inline constexpr unsigned kDoAllBlockThreads = 128;
}  // namespace dynasoar::soa

namespace dynasoar::soa::detail {

#if DYNASOAR_CUDA
/// Threads per thread block of ListAndSnapshotBlocks: 32 warps, the most a
/// thread block holds, whose containers' blocks take one place in the list
/// together, so that the list keeps ascending runs as long as a thread
/// block's share of the bitmap.
inline constexpr unsigned kListThreads = 1024;
#endif

/// The snapshot (paper Sec. 3.1): copies the allocation bitmaps of the
/// listed blocks to the snapshot list, entry k for list entry k, so that a
/// do-all skips objects created during it. The snapshot is not kept in the
/// block's header (as in the paper's iteration bitmap): next to the list
/// entry, the do-all reads it together with the entry instead of after it,
/// one dependent load fewer per visited block. Worker w of `workers` takes
/// list entries w, w + workers, ...; launched with parallel_for over the
/// workers, after the enumeration and before any do-all kernel. A kernel of
/// its own where the enumeration takes several steps (heaps of over 2^26
/// blocks) and in host builds; otherwise ListAndSnapshotBlocks lists the
/// blocks and takes their snapshots in one kernel.
struct SnapshotBlocks {
  /// The heap (device memory) whose blocks' allocation bitmaps are copied.
  HeapState* state;
  /// The class's block list, as the enumeration wrote it.
  const bit_index* blocks;
  /// Number of entries of `blocks` (device memory, read when the kernel runs).
  const bit_index* count;
  /// Out: the snapshot of list entry k at snapshots[k].
  word* snapshots;
  /// Type id of the class whose live slots are copied.
  unsigned type;
  /// Threads of the launch: the stride over the list.
  std::size_t workers;
  /// Worker w's share of the list. Host and device.
  DYNASOAR_HD void operator()(std::size_t w) const {
    const bit_index n = *count;
    for (std::size_t k = w; k < n; k += workers) snapshots[k] = state->live_slots(blocks[k], type);
  }
};

#if DYNASOAR_CUDA
/// The block list of one class and its snapshot in one kernel: the
/// enumeration of the class's allocated-block bitmap where it takes a single
/// step (Alg. 5 over the lowest level; every heap of up to 2^26 blocks),
/// with each listed block's snapshot taken by the lane that lists it.
///
/// Warp w of `warps` (a multiple of 32) takes a range of about containers /
/// warps consecutive containers. The 32 warps of a thread block add up
/// their blocks, take their place in the list with one atomic add, and then
/// each warp lists its containers in order: for each non-empty one, lane b
/// lists and snapshots blocks b and b + 32 of it. So the list is in
/// ascending order within each thread block's containers, so that a do-all
/// visits the blocks in long ascending runs. With the usual one or two
/// containers per warp every block's snapshot has a lane of its own, as in
/// SnapshotBlocks, rather than one lane taking a container's 64 snapshots
/// one after another; a large, mostly empty heap costs each warp only its
/// share of the reads.
///
/// Item i of parallel_for_early<kListThreads> over warps * 32 items is lane
/// i % 32 of warp i / 32; every thread of the launch must take exactly one
/// item (warps * 32 at most the resident threads), since the warps of a
/// thread block meet at two __syncthreads. Device only.
struct ListAndSnapshotBlocks {
  /// The lowest level of the class's allocated-block bitmap.
  const Bitmap::word* words;
  /// Containers of that level.
  std::size_t containers;
  /// Warps of the launch (a multiple of 32).
  std::size_t warps;
  /// Out: the class's block list (room for every block).
  bit_index* blocks;
  /// Out: the number of entries (zero before the kernel).
  bit_index* count;
  /// Zeroed by item 0: AlternatingCount's other counter (BitmapHandle::one_step).
  bit_index* zero_after;
  /// Out: the snapshot of list entry k at snapshots[k].
  word* snapshots;
  /// The heap whose blocks' allocation bitmaps are copied.
  HeapState* state;
  /// Type id of the class.
  unsigned type;

  /// Lane i % 32 of warp i / 32.
  __device__ void operator()(std::size_t i) const {
    namespace warp = platform::warp;
    __shared__ bit_index place[kListThreads / 32];  // per warp: its total, then its first list entry
    const auto lane = static_cast<unsigned>(i % 32);
    const auto warp_in_block = static_cast<unsigned>(i % kListThreads / 32);
    const warp::lane_mask everyone = warp::full_mask();
    if (i == 0) *zero_after = 0;
    const std::size_t share = (containers + warps - 1) / warps;
    const std::size_t begin = i / 32 * share < containers ? i / 32 * share : containers;
    const std::size_t end = begin + share < containers ? begin + share : containers;

    bit_index mine_total = 0;
    for (std::size_t base = begin; base < end; base += 32)
      if (base + lane < end) mine_total += static_cast<bit_index>(platform::popc(words[base + lane]));
    const bit_index warp_total = warp::shfl(everyone, warp::inclusive_sum(mine_total), 31);
    if (lane == 0) place[warp_in_block] = warp_total;
    __syncthreads();
    if (warp_in_block == 0) {
      const bit_index t = place[lane];
      const bit_index inclusive = warp::inclusive_sum(t);
      bit_index first = 0;
      if (lane == 31 && inclusive != 0) first = platform::atomic_fetch_add(count, inclusive);
      first = warp::shfl(everyone, first, 31);
      place[lane] = first + inclusive - t;
    }
    __syncthreads();

    bit_index next = place[warp_in_block];
    for (std::size_t base = begin; base < end; base += 32) {
      const Bitmap::word mine = base + lane < end ? words[base + lane] : 0;
      const auto bits = static_cast<bit_index>(platform::popc(mine));
      const bit_index inclusive = warp::inclusive_sum(bits);
      dynasoar::detail::for_each_set_bit_by_container(
          mine, static_cast<bit_index>(base + lane), next + inclusive - bits, [&](bit_index position, bit_index block) {
            blocks[position] = block;
            snapshots[position] = state->live_slots(block, type);
          });
      next += warp::shfl(everyone, inclusive, 31);
    }
  }
};
#endif

/// DoAll::kSpreadUnit for a class of `capacity` slots: lcm(capacity, 32)
/// where it divides kDoAllBlockThreads, else 32. (std::lcm is not
/// constexpr in device code with every standard library.)
constexpr std::size_t do_all_spread_unit(std::size_t capacity) {
  std::size_t a = capacity, b = 32;
  while (b != 0) {
    const std::size_t r = a % b;
    a = b;
    b = r;
  }
  const std::size_t lcm = capacity / a * 32;
  return kDoAllBlockThreads % lcm == 0 ? lcm : 32;
}

/// What both do-all kernels (DoAll, HostDoAll) read: the heap, the class's
/// block list and the snapshot of each entry, the method's arguments, and
/// the watchdog's counters.
template <class Pack>
struct DoAllInput {
  /// Address of block 0 of the heap.
  std::uint64_t heap_base;
  /// Bytes of every block.
  std::uint64_t block_bytes;
  /// The class's block list (device memory; host memory in a host build).
  const bit_index* blocks;
  /// The snapshot of each list entry (SnapshotBlocks), read with the entry.
  const word* snapshots;
  /// The method's arguments, copied into the kernel parameters.
  Pack args;
  /// The watchdog's progress counters (platform::count_finished), or null.
  unsigned long long* progress = nullptr;
};

/// The do-all kernel (paper Sec. 3.7): thread t takes slot t % kCapacity of
/// blocks t / kCapacity, t / kCapacity + stride, ... of the block list, so
/// consecutive threads work on consecutive slots of one block. The grid is
/// sized for the device, not for the block count (only the device knows
/// it), so each thread visits many blocks in turn.
///
/// One instance per concrete class, with its type id and capacity as
/// template arguments, so the object pointers made here carry constant type
/// and capacity bits (the block address is masked to the pointer's address
/// bits, which lets the compiler see that). The heap's base address and
/// block size travel in the kernel parameters.
template <class T, auto Method, class Pack, unsigned kType, unsigned kCapacity>
struct DoAll : DoAllInput<Pack> {
  /// Number of entries of `blocks` (device memory, read when the kernel runs).
  const bit_index* count;
  std::size_t threads;  ///< Threads of the grid: a multiple of kCapacity and of kDoAllBlockThreads.

  /// Item i's share of the do-all: with t = spread(i), slot t % kCapacity
  /// of every stride-th listed block.
  DYNASOAR_HD void operator()(std::size_t i) const {
    const std::size_t t = spread(i);
    const unsigned slot = static_cast<unsigned>(t % kCapacity);
    const std::size_t stride = threads / kCapacity;
    const std::size_t n = *count;
    unsigned finished = 0;  // not yet added to the watchdog's counters
    for (std::size_t k = t / kCapacity; k < n; k += stride) {
      if (((this->snapshots[k] >> slot) & 1u) == 0) continue;
      const std::uint64_t block = block_at(this->heap_base, this->block_bytes, this->blocks[k]);
      T* obj = reinterpret_cast<T*>(make_pointer(block, slot, kCapacity, kType));
      this->args.apply([&](const auto&... a) { (obj->*Method)(a...); });
      if (this->progress != nullptr && ++finished == platform::kProgressBatch) {
        platform::count_finished(this->progress, finished);
        finished = 0;
      }
    }
    if (finished != 0) platform::count_finished(this->progress, finished);
  }

  /// Threads that spread() keeps together: the whole groups of threads that
  /// work on one heap block (kCapacity rounded up to whole warps) where a
  /// thread block holds a whole number of them, else single warps.
  static constexpr std::size_t kSpreadUnit = do_all_spread_unit(kCapacity);

  /// The thread number item i works as: units of kSpreadUnit threads are
  /// numbered across the thread blocks of kDoAllBlockThreads first (unit u
  /// of block b is unit u * blocks + b), so that the first listed blocks,
  /// all a small do-all has, go to different thread blocks and so to every
  /// multiprocessor, while the threads of one heap block stay in one thread
  /// block. A permutation of [0, threads), since threads is a multiple of
  /// kDoAllBlockThreads (soa::do_all_threads).
  DYNASOAR_HD std::size_t spread(std::size_t i) const {
    const std::size_t thread_blocks = threads / kDoAllBlockThreads;
    const std::size_t thread_block = i / kDoAllBlockThreads, within = i % kDoAllBlockThreads;
    return ((within / kSpreadUnit) * thread_blocks + thread_block) * kSpreadUnit + within % kSpreadUnit;
  }
};
static_assert(kDoAllBlockThreads % 32 == 0, "DoAll::spread keeps whole warps");

#if !DYNASOAR_CUDA
/// The host build's do-all over the block list entries [begin, end) (one
/// chunk of a host build's soa::do_all): the objects of the snapshot, block by
/// block, each block's slots in ascending order. One thread takes whole
/// blocks; the device's slot-per-thread mapping serves coalescing, which a
/// CPU core does not need. The snapshot does not change during a do-all, so
/// it is read once per block.
template <class T, auto Method, class Pack, unsigned kType, unsigned kCapacity>
struct HostDoAll : DoAllInput<Pack> {

  /// Runs the method on the snapshot's objects of list entries [begin, end). Host only.
  void operator()(std::size_t begin, std::size_t end) const {
    // The watchdog's counters are added to once per block.
    for (std::size_t k = begin; k < end; ++k) {
      const std::uint64_t block = block_at(this->heap_base, this->block_bytes, this->blocks[k]);
      const word snapshot = this->snapshots[k] & platform::low_bits(kCapacity);
      for (word live = snapshot; live != 0; live &= live - 1) {
        const auto slot = static_cast<unsigned>(platform::ctz(live));
        T* obj = reinterpret_cast<T*>(make_pointer(block, slot, kCapacity, kType));
        this->args.apply([&](const auto&... a) { (obj->*Method)(a...); });
      }
      platform::count_finished(this->progress, static_cast<unsigned>(platform::popc(snapshot)));
    }
  }
};
#endif

/// parallel_new, first step: worker g takes a free block for the objects
/// g * cap .. g * cap + cap - 1 (those below `objects`) with their slots
/// already reserved (a block born full is not active; the last group of
/// parallel_new_indexed may leave the block's upper slots free) and writes
/// its index to blocks[g], or kNoBit when no block is free (the second step then makes those objects
/// one `new` at a time). Objects made one `new` at a time land where each
/// warp's search leads, in partly filled blocks with scattered slots, which
/// later do-alls run with half-empty warps.
struct ClaimFullBlocks {
  /// The heap (device memory) to take free blocks from.
  HeapState* state;
  /// Out: the block claimed by worker g, or kNoBit, at blocks[g].
  bit_index* blocks;
  /// Type id of the class the blocks are claimed for.
  unsigned type;
  /// Slots per block of that class.
  unsigned cap;
  /// Objects of all groups: group g reserves the slots of those below it.
  std::size_t objects;
  /// First block of a run of free blocks found for the groups (kNoBit:
  /// none): worker g asks for block run + g before searching.
  bit_index run = kNoBit;
  /// With a run: incremented once per group that did not get its block of
  /// the run (another thread took it first), so that the host learns
  /// whether the blocks are consecutive (zeroed before).
  unsigned long long* outside = nullptr;
  /// Worker g claims one block for objects g * cap .. g * cap + cap - 1. Host and device.
  DYNASOAR_HD void operator()(std::size_t g) const {
    const std::size_t first = g * cap;
    const word taken = objects - first >= cap ? kAllSlots : platform::low_bits(static_cast<unsigned>(objects - first));
    const bit_index prefer = run == kNoBit ? kNoBit : static_cast<bit_index>(run + g);
    const bit_index got = state->initialize_block(type, cap, platform::mix64(g), taken, prefer);
    blocks[g] = got;
    if (prefer != kNoBit && got != prefer) platform::atomic_fetch_add(outside, 1ull);
  }
};

/// parallel_new, second step: object i is T(i, args...), in slot
/// i % kCapacity of block i / kCapacity where the first step claimed one
/// (`groups` of them), else (the last n % kCapacity objects, or no free block
/// was left) by `new`, which also fills the free slots of the class's
/// blocks and raises the out-of-memory flag only when there are none. For
/// parallel_new_indexed (`indexed` set) every object belongs in its group's
/// block: where the group got none, the flag is raised and nothing made.
template <class Alloc, class T, class Pack, unsigned kType, unsigned kCapacity>
struct ConstructInBlocks {
  /// The device allocator, for the objects that found no claimed block.
  Alloc alloc;
  /// Address of block 0 of the heap.
  std::uint64_t heap_base;
  /// Bytes of every block.
  std::uint64_t block_bytes;
  /// The blocks the first step claimed (kNoBit where none was free).
  const bit_index* blocks;
  /// Number of entries of `blocks`.
  std::size_t groups;
  /// The constructor's arguments after the index.
  Pack args;
  /// parallel_new_indexed: the heap whose flag a group without a block raises; else nullptr.
  HeapState* indexed = nullptr;
  /// Constructs object i; on out of memory it makes nothing (the flag is raised). Host and device.
  DYNASOAR_HD void operator()(std::size_t i) const {
    const std::size_t g = i / kCapacity;
    const bit_index b = g < groups ? blocks[g] : kNoBit;
    T* p = nullptr;
    if (b != kNoBit) {
      p = reinterpret_cast<T*>(
          make_pointer(block_at(heap_base, block_bytes, b), static_cast<unsigned>(i % kCapacity), kCapacity, kType));
    } else if (indexed != nullptr) {
      indexed->raise_error(kHeapOutOfMemory);
      return;
    } else {
      p = alloc.template allocate<T>();
      if (p == nullptr) return;  // out of memory: the flag is raised
    }
    args.apply([&](const auto&... a) { ::new (static_cast<void*>(p)) T(static_cast<int>(i), a...); });
  }
};

/// Live objects of the listed blocks, added to *total.
struct CountObjects {
  /// The heap (device memory) whose blocks are counted.
  HeapState* state;
  /// The class's block list, as list_blocks wrote it.
  const bit_index* blocks;
  /// Number of entries of `blocks` (device memory, read when the kernel runs).
  const bit_index* count;
  /// Type id of the class whose objects are counted.
  unsigned type;
  /// The sum the workers add their counts to (zeroed by the caller).
  unsigned long long* total;
  /// Worker `worker` of `workers` counts every workers-th listed block. Host and device.
  DYNASOAR_HD void operator()(std::size_t worker, std::size_t workers) const {
    const bit_index n = *count;
    unsigned long long mine = 0;
    for (std::size_t k = worker; k < n; k += workers)
      mine += static_cast<unsigned>(platform::popc(state->live_slots(blocks[k], type)));
    if (mine != 0) platform::atomic_fetch_add(total, mine);
  }
};

}  // namespace dynasoar::soa::detail
