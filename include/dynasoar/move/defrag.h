// Heap compaction of one class (CompactGpu: Springer & Masuhara, "Massively
// Parallel GPU Memory Compaction", ISMM 2019, Sec. 3-4), the heap's side of
// the move layer (move/object_fields.h):
//
//  1. candidates: the class's blocks at most F/(F+1) full, in a bitmap of
//     their own, listed in ascending order;
//  2. records: with N candidates, the first R = (N - retained) / (F + 1) are
//     sources, and record r moves source r's objects into the free slots
//     of the F targets r + R, r + 2R, ..., r + F*R. A source holds at most
//     F*cap/(F+1) objects and each target has at least cap/(F+1) free
//     slots, so they always fit;
//  3. move: each object's fields are copied to its new slot, and its new
//     pointer is kept in the record (the forwarding table, 64 entries per
//     record); then the targets' slots are taken and the sources freed;
//  4. rewrite: every pointer field that may point to the class, in every
//     live object of every class that has one, is looked up: a pointer into
//     a source block becomes the forwarded one.
//
// The compaction runs between kernels, on the heap's stream: no thread
// allocates, frees or reads objects meanwhile, so none of this needs to be
// lock-free; each step is a kernel whose threads write disjoint places.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "dynasoar/allocator/soa/heap.h"
#include "dynasoar/allocator/soa/heap_storage.h"
#include "dynasoar/allocator/soa/launch.h"
#include "dynasoar/allocator/soa/object_pointer.h"
#include "dynasoar/bitmap/bitmap.h"
#include "dynasoar/bitmap/bitmap_handle.h"
#include "dynasoar/model/type_list.h"
#include "dynasoar/move/defrag_options.h"
#include "dynasoar/move/object_fields.h"
#include "dynasoar/move/object_walk.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar::move {

/// Scratch memory of compaction, made by the first one: the candidate
/// bitmap (one for every class: a compaction takes one class at a time and
/// leaves it clear), the candidate list, the record of each source block
/// and the forwarding table.
class DefragScratch {
 public:
  /// Scratch for a heap of `num_blocks` blocks, set up on s.
  explicit DefragScratch(bit_index num_blocks, platform::Stream s)
      : candidates_(num_blocks, BitmapHandle::Init::kAllClear, s),
        list_(num_blocks),
        sorted_(num_blocks),
        count_(s),
        by_fill_(kFills),
        record_of_(num_blocks),
        moved_(1) {
    record_of_.zero(s);
  }
  /// Blocks at most F/(F+1) full of the class being compacted.
  BitmapHandle& candidates() { return candidates_; }
  /// Live-object counts a block can have: 0 to 64.
  static constexpr std::size_t kFills = soa::kMaxSlots + 1;
  /// The candidates in ascending order, as the enumeration wrote them.
  bit_index* list() const { return list_.data(); }
  /// The candidates by their number of objects, fewest first (blocks with
  /// the same number in ascending order).
  bit_index* sorted() const { return sorted_.data(); }
  /// Candidates per number of objects (kFills counters).
  unsigned* by_fill() const { return by_fill_.data(); }
  /// Sets the counters of by_fill() to zero on s.
  void zero_by_fill(platform::Stream s) { by_fill_.zero(s); }
  /// Reads the counters of by_fill() into out[kFills]. Waits for s.
  void read_by_fill(unsigned* out, platform::Stream s) const {
    by_fill_.copy_to_host(out, kFills, 0, s);
  }
  /// Length of the list.
  AlternatingCount& count() { return count_; }
  /// Per block: 1 + the record whose source it is, else 0.
  unsigned* record_of() const { return record_of_.data(); }
  /// The forwarding table of `records` records (64 pointers each), grown as needed.
  std::uint64_t* forward(std::size_t records) {
    if (forward_.size() < records * soa::kMaxSlots)
      forward_ = platform::Buffer<std::uint64_t>(records * soa::kMaxSlots);
    return forward_.data();
  }
  /// Objects moved (one counter in device memory).
  unsigned long long* moved() const { return moved_.data(); }
  /// Sets `moved()` to zero on s.
  void zero_moved(platform::Stream s) { moved_.zero(s); }
  /// Reads `moved()`. Waits for s.
  unsigned long long read_moved(platform::Stream s) const {
    unsigned long long n = 0;
    moved_.copy_to_host(&n, 1, 0, s);
    return n;
  }

 private:
  BitmapHandle candidates_;
  platform::Buffer<bit_index> list_;
  platform::Buffer<bit_index> sorted_;
  AlternatingCount count_;
  platform::Buffer<unsigned> by_fill_;
  platform::Buffer<unsigned> record_of_;
  platform::Buffer<std::uint64_t> forward_;
  platform::Buffer<unsigned long long> moved_;
};

namespace detail {

/// Step 1: marks the listed blocks of `type` that are at most F/(F+1) full.
struct MarkCandidates {
  soa::HeapState* state;
  const bit_index* blocks;  ///< the class's block list
  const bit_index* count;   ///< its length (device memory)
  Bitmap candidates;
  unsigned type;
  unsigned factor;
  /// Worker `worker` of `workers` takes every workers-th listed block. Host and device.
  DYNASOAR_HD void operator()(std::size_t worker, std::size_t workers) const {
    const bit_index n = *count;
    const unsigned cap = state->capacity[type];
    for (std::size_t k = worker; k < n; k += workers) {
      const auto live = static_cast<unsigned>(platform::popc(state->live_slots(blocks[k], type)));
      if (live * (factor + 1) <= cap * factor) candidates.set(blocks[k]);
    }
  }
};

/// Counts the listed candidates by their number of objects (the histogram
/// of SortByFill).
struct CountByFill {
  soa::HeapState* state;
  const bit_index* list;
  const bit_index* count;  ///< the list's length (device memory)
  unsigned type;
  unsigned* by_fill;  ///< DefragScratch::kFills counters, zeroed before
  DYNASOAR_HD void operator()(std::size_t worker, std::size_t workers) const {
    const bit_index n = *count;
    for (std::size_t k = worker; k < n; k += workers)
      platform::atomic_fetch_add(by_fill + platform::popc(state->live_slots(list[k], type)), 1u);
  }
};

/// The candidates sorted by their number of objects (a counting sort):
/// a candidate with f objects goes to position first[f] plus its turn
/// among them (an atomic counter per f, zeroed before). Blocks with the
/// same number of objects come in no particular order; which of them move
/// does not change what the program computes.
struct SortByFill {
  soa::HeapState* state;
  const bit_index* list;
  std::size_t n;
  unsigned type;
  bit_index* sorted;
  unsigned* turns;  ///< DefragScratch::kFills counters, zeroed before
  struct Starts {
    std::uint32_t at[DefragScratch::kFills];
  } first;
  DYNASOAR_HD void operator()(std::size_t worker, std::size_t workers) const {
    for (std::size_t k = worker; k < n; k += workers) {
      const auto f = static_cast<std::size_t>(platform::popc(state->live_slots(list[k], type)));
      sorted[first.at[f] + platform::atomic_fetch_add(turns + f, 1u)] = list[k];
    }
  }
};

/// The target block j (0 <= j < factor) of record r among R records, in
/// the n candidates sorted by fill: record r's source is the r-th emptiest
/// candidate and its targets are among the fullest, so that the fewest
/// objects move and the targets fill up.
DYNASOAR_HD DYNASOAR_FORCEINLINE bit_index target_of(const bit_index* sorted, std::size_t n,
                                                     std::size_t records, std::size_t r,
                                                     unsigned j) {
  return sorted[n - 1 - (records * j + r)];
}

/// Step 3a: item i moves the object in slot i % 64 of record i / 64's
/// source block, if there is one, into the free slot of the same rank among
/// the targets' free slots (targets in order, slots ascending), and keeps
/// its new pointer in the forwarding table; slots without an object get 0
/// there (a pointer to them, which no live object holds, stays as it is).
/// Reads the targets' bitmaps, which only step 3b changes.
template <class Registry, unsigned kType>
struct MoveObjects {
  soa::HeapState* state;
  const bit_index* list;
  std::size_t n;
  std::size_t records;
  unsigned factor;
  std::uint64_t* forward;
  DYNASOAR_HD void operator()(std::size_t i) const {
    using Fields = move::ObjectFields<Registry, model::At<typename Registry::Types, kType>>;
    constexpr unsigned kCap = Registry::kCapacityById[kType];
    const std::size_t r = i / soa::kMaxSlots;
    const auto slot = static_cast<unsigned>(i % soa::kMaxSlots);
    std::uint64_t& out = forward[i];
    const bit_index source = list[r];
    const soa::word live = state->live_slots(source, kType);
    if (((live >> slot) & 1u) == 0) {
      out = 0;
      return;
    }
    auto rank = static_cast<unsigned>(platform::popc(live & platform::low_bits(slot)));
    for (unsigned j = 0; j < factor; ++j) {
      const bit_index target = target_of(list, n, records, r, j);
      const soa::word free = ~platform::atomic_load(&state->header(target)->allocation);
      const auto room = static_cast<unsigned>(platform::popc(free));
      if (rank < room) {
        const auto to_slot =
            static_cast<unsigned>(platform::nth_set_bit(free, static_cast<int>(rank)));
        const std::uint64_t from =
            soa::make_pointer(state->block_address(source), slot, kCap, kType);
        const std::uint64_t to =
            soa::make_pointer(state->block_address(target), to_slot, kCap, kType);
        Fields::copy(from, to);
        out = to;
        return;
      }
      rank -= room;
    }
    out = 0;  // unreachable: the targets have room (see the top of this file)
  }
};

/// Step 3b: record r takes, in each target, the free slots its objects
/// went to (the lowest ones, as step 3a chose them), and frees its source.
struct CommitMoves {
  soa::HeapState* state;
  const bit_index* list;
  std::size_t n;
  std::size_t records;
  unsigned factor;
  unsigned type;
  unsigned* record_of;
  unsigned long long* moved;
  DYNASOAR_HD void operator()(std::size_t r) const {
    const bit_index source = list[r];
    soa::BlockHeader* src = state->header(source);
    auto remaining = static_cast<unsigned>(platform::popc(state->live_slots(source, type)));
    platform::atomic_fetch_add(moved, static_cast<unsigned long long>(remaining));
    for (unsigned j = 0; j < factor && remaining > 0; ++j) {
      const bit_index target = target_of(list, n, records, r, j);
      soa::BlockHeader* h = state->header(target);
      const soa::word free = ~platform::atomic_load(&h->allocation);
      const auto room = static_cast<unsigned>(platform::popc(free));
      const soa::word taken =
          remaining >= room ? free
                            : free & platform::low_bits(static_cast<unsigned>(
                                         platform::nth_set_bit(free, static_cast<int>(remaining))));
      remaining -= remaining >= room ? room : remaining;
      platform::atomic_fetch_and(&h->destroyed, ~taken);
      const soa::word after = platform::atomic_fetch_or(&h->allocation, taken) | taken;
      if (after == soa::kAllSlots) state->active[type].clear(target);
    }
    // The source is empty now: returned to the free blocks as try_delete_block does.
    platform::atomic_store(&src->allocation, soa::kAllSlots);
    platform::atomic_store(&src->destroyed, soa::word{0});
    state->active[type].clear(source);
    state->allocated[type].clear(source);
    state->free_blocks.set(source);
    record_of[source] = static_cast<unsigned>(r + 1);
  }
};

/// Step 4: in the listed blocks of class kRef, every pointer to class
/// kType in a field that may hold one is forwarded if it points into a
/// source block. Thread t takes slot t % cap of every (threads / cap)-th
/// listed block, as a do-all does.
template <class Registry, unsigned kRef, unsigned kType>
struct RewritePointers {
  soa::HeapState* state;
  const bit_index* blocks;
  const bit_index* count;
  const unsigned* record_of;
  const std::uint64_t* forward;
  std::size_t threads;
  DYNASOAR_HD void operator()(std::size_t t) const {
    using Fields = move::ObjectFields<Registry, model::At<typename Registry::Types, kRef>>;
    const std::uint64_t heap_bytes =
        static_cast<std::uint64_t>(state->free_blocks.capacity()) * state->block_bytes;
    for_each_listed_object<Registry, kRef>(state, blocks, *count, threads, t, [&](std::uint64_t object) {
      Fields::template for_each_pointer<std::uint64_t{1} << kType>(object, [&](std::uint64_t& p) {
        if (p == 0 || soa::pointer_type(p) != kType) return;
        const std::uint64_t offset = soa::pointer_block(p) - state->blocks;
        if (offset >= heap_bytes) return;  // not this heap's (the difference wraps below it)
        const unsigned record = record_of[offset / state->block_bytes];
        if (record == 0) return;
        const std::uint64_t to =
            forward[(record - 1) * std::size_t{soa::kMaxSlots} + soa::pointer_slot(p)];
        if (to != 0) p = to;
      });
    });
  }
};

/// Step 5: the candidates' marks and the sources' records cleared for the next compaction.
struct ClearDefragMarks {
  const bit_index* list;
  std::size_t records;
  Bitmap candidates;
  unsigned* record_of;
  DYNASOAR_HD void operator()(std::size_t k) const {
    if (k < records) record_of[list[k]] = 0;
    candidates.clear(list[k]);
  }
};

}  // namespace detail

/// Steps 1 and 2 for the concrete class `type`: marks its candidates and
/// lists them by fill, fewest objects first (DefragScratch::sorted).
/// Returns their number. Waits for s.
template <class Registry>
std::uint64_t defrag_candidates(soa::HeapStorage<Registry>& heap, DefragScratch& scratch,
                                unsigned type, const DefragOptions& o, platform::Stream s) {
  heap.list_blocks(type, s);
  const std::size_t workers = soa::workers_for_blocks(heap.num_blocks());
  platform::parallel_workers_up_to(
      workers,
      detail::MarkCandidates{heap.state(), heap.block_list(type), heap.block_count(type).get(),
                             scratch.candidates().device(), type, o.factor},
      s);
  scratch.candidates().enumerate(scratch.list(), scratch.count(), s);
  scratch.zero_by_fill(s);
  platform::parallel_workers_up_to(
      workers,
      detail::CountByFill{heap.state(), scratch.list(), scratch.count().get(), type,
                          scratch.by_fill()},
      s);
  unsigned by_fill[DefragScratch::kFills];
  scratch.read_by_fill(by_fill, s);
  detail::SortByFill::Starts first{};
  std::uint64_t n = 0;
  for (std::size_t f = 0; f < DefragScratch::kFills; ++f) {
    first.at[f] = static_cast<std::uint32_t>(n);
    n += by_fill[f];
  }
  if (n != 0) {
    scratch.zero_by_fill(s);  // now the turns within each count
    platform::parallel_workers_up_to(workers,
                                     detail::SortByFill{heap.state(), scratch.list(), n, type,
                                                        scratch.sorted(), scratch.by_fill(), first},
                                     s);
  }
  return n;
}

/// Steps 3-5 for the concrete class kType, whose n candidates
/// defrag_candidates has just listed and sorted (the policy's look lists
/// them once for its decision and for the compaction). Blocking.
template <class Registry, unsigned kType>
DefragResult defrag_listed(soa::HeapStorage<Registry>& heap, DefragScratch& scratch,
                           std::uint64_t n, const DefragOptions& o, platform::Stream s) {
  DefragResult result;
  result.candidates = n;
  const std::size_t records = n > o.retained ? (n - o.retained) / (o.factor + 1) : 0;
  if (records != 0) {
    std::uint64_t* forward = scratch.forward(records);
    scratch.zero_moved(s);
    platform::parallel_for(records * soa::kMaxSlots,
                           detail::MoveObjects<Registry, kType>{heap.state(), scratch.sorted(), n,
                                                                records, o.factor, forward},
                           s);
    platform::parallel_for(records,
                           detail::CommitMoves{heap.state(), scratch.sorted(), n, records, o.factor,
                                               kType, scratch.record_of(), scratch.moved()},
                           s);
    // Every class whose fields may point to kType, the class itself included.
    constexpr std::uint64_t kReferring =
        move::kReferringClasses<Registry, std::uint64_t{1} << kType>;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (
          [&] {
            if constexpr (((kReferring >> I) & 1u) != 0) {
              constexpr unsigned kRef = static_cast<unsigned>(I);
              constexpr unsigned kRefCap = Registry::kCapacityById[kRef];
              heap.list_blocks(kRef, s);
              const std::size_t threads = soa::do_all_threads(heap.num_blocks(), kRefCap);
              platform::parallel_for(
                  threads,
                  detail::RewritePointers<Registry, kRef, kType>{
                      heap.state(), heap.block_list(kRef), heap.block_count(kRef).get(),
                      scratch.record_of(), forward, threads},
                  s);
            }
          }(),
          ...);
    }
    (std::make_index_sequence<Registry::kNumTypes>{});
    result.blocks_freed = records;
  }
  if (n != 0)
    platform::parallel_for(
        n,
        detail::ClearDefragMarks{scratch.sorted(), records, scratch.candidates().device(),
                                 scratch.record_of()},
        s);
  result.objects_moved = records != 0 ? scratch.read_moved(s) : 0;
  platform::synchronize(s);
  return result;
}

/// Compacts the objects of the concrete class kType (steps 1-5). Blocking.
template <class Registry, unsigned kType>
DefragResult defrag_class(soa::HeapStorage<Registry>& heap, DefragScratch& scratch,
                          const DefragOptions& o, platform::Stream s) {
  return defrag_listed<Registry, kType>(heap, scratch,
                                        defrag_candidates(heap, scratch, kType, o, s), o, s);
}

}  // namespace dynasoar::move
