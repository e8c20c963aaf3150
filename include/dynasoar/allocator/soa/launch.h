// How the heap's parallel operations are queued on a stream: the block list
// and snapshot of a class (paper Sec. 3.1), the do-all over it (Sec. 3.7),
// parallel_new in whole blocks, and counting. Each step is one function
// over a HeapStorage; SoaAllocatorHandle calls them in order, and they
// launch the kernels of soa/kernels.h with platform/executor.h.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>

#include "dynasoar/allocator/soa/heap_storage.h"
#include "dynasoar/allocator/soa/kernels.h"
#include "dynasoar/platform/executor.h"

namespace dynasoar::soa {

/// Workers of a kernel that takes the blocks of a list: one per block, at
/// most one per resident thread.
inline std::size_t workers_for_blocks(bit_index num_blocks) {
  return std::min<std::size_t>(platform::concurrent_threads(), std::max<std::size_t>(num_blocks, 1));
}

/// Queues the block list of `type` and its snapshot on s. On the GPU one
/// kernel where the block bitmap takes one enumeration step
/// (detail::ListAndSnapshotBlocks, launched early); otherwise, and in a
/// host build, the enumeration's steps and then a snapshot kernel.
template <class Registry>
void list_and_snapshot(HeapStorage<Registry>& heap, unsigned type, platform::Stream s) {
#if DYNASOAR_CUDA
  const BitmapHandle& bitmap = heap.allocated(type);
  if (bitmap.enumerates_in_one_step()) {
    const BitmapHandle::OneStep step = bitmap.one_step(heap.block_count(type));
    // A warp per container, in whole thread blocks, at most one thread per
    // resident thread (every thread takes exactly one item).
    constexpr std::size_t kBlockWarps = detail::kListThreads / 32;
    const std::size_t most =
        std::max<std::size_t>(kBlockWarps, platform::concurrent_threads() / detail::kListThreads * kBlockWarps);
    const std::size_t warps = std::min((step.containers + kBlockWarps - 1) / kBlockWarps * kBlockWarps, most);
    platform::parallel_for_early<detail::kListThreads>(
        warps * 32,
        detail::ListAndSnapshotBlocks{step.words, step.containers, warps, heap.block_list(type), step.count,
                                      step.zero_after, heap.snapshot_list(type), heap.state(), type},
        s);
    return;
  }
#endif
  heap.list_blocks(type, s);
  const std::size_t workers = workers_for_blocks(heap.num_blocks());
  platform::parallel_for_early(workers,
                               detail::SnapshotBlocks{heap.state(), heap.block_list(type),
                                                      heap.block_count(type).get(), heap.snapshot_list(type),
                                                      type, workers},
                               s);
}

/// Threads of a do-all kernel: a multiple of the class's capacity and of
/// kDoAllBlockThreads (DoAll::spread permutes the threads of whole thread
/// blocks), as many as the device holds at once; the block count is known
/// only on the device, so the grid cannot be sized by it.
inline std::size_t do_all_threads(bit_index num_blocks, unsigned cap) {
  const std::size_t want = platform::kCudaBuild ? platform::concurrent_threads() : platform::host_threads();
  const std::size_t needed = static_cast<std::size_t>(num_blocks) * cap;
  const std::size_t unit = std::lcm(std::size_t{cap}, std::size_t{kDoAllBlockThreads});
  return std::max<std::size_t>(1, std::min(want, needed) / unit) * unit;
}

/// Queues the do-all of Method over the objects of class kType (T or a
/// subclass), over the block list and snapshot list_and_snapshot made.
/// `progress` counts finished work for the watchdog (may be null). In a
/// host build the block list is in host memory by now, so the work is
/// split by the blocks it holds: chunks of whole blocks of at least
/// kHostDoAllGrain slots, each on a thread of its own.
template <class T, auto Method, unsigned kType, class Registry, class Pack>
void do_all(HeapStorage<Registry>& heap, const Pack& pack, unsigned long long* progress, platform::Stream s) {
  constexpr unsigned kCap = Registry::kCapacityById[kType];
  constexpr std::uint64_t kBlockBytes = Registry::kBlockBytes;
#if DYNASOAR_CUDA
  const std::size_t threads = do_all_threads(heap.num_blocks(), kCap);
  platform::parallel_for_early<kDoAllBlockThreads>(
      threads,
      detail::DoAll<T, Method, Pack, kType, kCap>{
          {heap.base(), kBlockBytes, heap.block_list(kType), heap.snapshot_list(kType), pack, progress},
          heap.block_count(kType).get(),
          threads},
      s);
#else
  const bit_index n = heap.block_count(kType).read(s);
  platform::host_parallel_chunks(
      n, platform::host_chunk_count(static_cast<std::size_t>(n) * kCap, platform::kHostDoAllGrain),
      detail::HostDoAll<T, Method, Pack, kType, kCap>{
          {heap.base(), kBlockBytes, heap.block_list(kType), heap.snapshot_list(kType), pack, progress}});
#endif
}

/// The two kernels of parallel_new in whole blocks, queued on s: the first
/// `groups` groups of T's capacity claim a block each into blocks[g]
/// (reserving the slots of objects below `claimed`; group g asks for block
/// run + g first where `run` is given, counting into *outside if it did not
/// get it), then object i is made in slot i % capacity of its group's
/// block; where a group has none, by `new` (indexed == nullptr) or not at
/// all, with indexed's out-of-memory flag raised.
template <class Alloc, class T, class Registry, class Pack>
void construct_in_blocks(HeapStorage<Registry>& heap, const Alloc& device, std::size_t n, const Pack& pack,
                         bit_index* blocks, std::size_t groups, std::size_t claimed, HeapState* indexed,
                         bit_index run, unsigned long long* outside, platform::Stream s) {
  constexpr unsigned kType = Alloc::template type_id<T>();
  constexpr unsigned kCap = Registry::kCapacityById[kType];
  if (groups != 0)
    platform::parallel_for(groups, detail::ClaimFullBlocks{heap.state(), blocks, kType, kCap, claimed, run, outside},
                           s);
  platform::parallel_for(n,
                         detail::ConstructInBlocks<Alloc, T, Pack, kType, kCap>{
                             device, heap.base(), Registry::kBlockBytes, blocks, groups, pack, indexed},
                         s);
}

/// Live objects of the concrete class `type`. Waits for s.
template <class Registry>
std::uint64_t count_objects(HeapStorage<Registry>& heap, unsigned type, platform::Stream s) {
  heap.list_blocks(type, s);
  heap.zero_total(s);
  platform::parallel_workers_up_to(
      workers_for_blocks(heap.num_blocks()),
      detail::CountObjects{heap.state(), heap.block_list(type), heap.block_count(type).get(), type, heap.total()},
      s);
  return heap.read_total(s);
}

}  // namespace dynasoar::soa
