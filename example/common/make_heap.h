// Heap helpers shared by the examples. make_heap creates a heap the same
// way on every back end: the byte allocators also get room in their object
// registries for `objects` objects per class from the start (they would
// otherwise begin with 2^20 and fail a `new` that finds a registry full
// between two compactions). Also the registry time and the heap statistics
// that the examples report.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <dynasoar/dynasoar.h>

#include "dynasoar/support/phase_timer.h"
#include "example/common/run_report.h"

namespace dynasoar::example {

// snippet-begin: make-heap
template <class Handle>
Handle make_heap(std::uint64_t bytes, std::uint64_t objects) {
  HandleOptions options;  // the DynaSOAr heap ignores the registry's setting
  options.registry_capacity = std::max(options.registry_capacity, objects);
  return Handle(bytes, options);
}
// snippet-end: make-heap

/// The heap an example asks for when --heap-mib is not given: its own
/// estimate, `estimate`, on every back end but XMalloc (whose raw allocator
/// declares kHoldsFreedBlocks; XMallocOnCudaMalloc declares it too, but no
/// example builds on it), which gets four
/// times that, but at most 4 GiB more. Under the churn of wa-tor and the
/// game of life XMalloc needs more room than the objects: it keeps a block
/// until its last piece is freed, and freed blocks in its queues (which of
/// the two matters more is not known). The cap keeps sparse problems on
/// large grids, whose estimate is already far above their needs, within
/// XMalloc's 64 GiB and the GPU's memory. Used by wa-tor and the game of
/// life; the other examples finish in their estimate.
template <class Alloc>
std::uint64_t default_pool_bytes(std::uint64_t estimate) {
  // The raw allocator says so itself (xmalloc::XMallocOn::kHoldsFreedBlocks);
  // the DynaSOAr heap and the other byte allocators do not declare it.
  constexpr bool kBuffersFreedBlocks = [] {
    if constexpr (requires { Alloc::RawAllocator::kHoldsFreedBlocks; })
      return Alloc::RawAllocator::kHoldsFreedBlocks;
    else
      return false;
  }();
  constexpr std::uint64_t kMostExtra = std::uint64_t{4} << 30;
  return kBuffersFreedBlocks ? estimate + std::min(3 * estimate, kMostExtra) : estimate;
}

// snippet-begin: check-now-and-then
/// Inside a simulation loop that queues its do-alls without waiting: every
/// 64 steps and after the last, waits for the GPU and throws if a `new` ran
/// out of memory, so that a failed allocation stops the run early, while
/// the loop stays free of a host synchronisation per step.
template <class Handle>
void check_heap_now_and_then(Handle& heap, int step, int steps) {
  if (step % 64 != 0 && step != steps) return;
  platform::synchronize(heap.stream());
  heap.check_errors();
}
// snippet-end: check-now-and-then

/// Byte allocators keep an object registry and report the time spent
/// compacting it (enumeration_seconds); the DynaSOAr heap has none.
template <class H>
concept HasRegistry = requires(const H& h) { h.enumeration_seconds(); };

/// Seconds the handle spent compacting its registry so far; 0 without one.
template <class H>
double enumeration_seconds(const H& h) {
  if constexpr (HasRegistry<H>)
    return h.enumeration_seconds();
  else
    return 0.0;
}

// snippet-begin: step-boundary
/// The end of a step, where objects may move: with --defrag N (the
/// environment's DYNASOAR_DEFRAG, HandleOptions::defrag) the DynaSOAr heap and
/// BitmapAlloc compact the fragmented classes every N steps, timed as the
/// phase "compaction"; without it, and on the byte allocators, nothing.
template <class Handle>
void end_of_step(Handle& heap, support::PhaseTimer& timer) {
  if (heap.compact_if_fragmented().blocks_freed != 0) timer.mark("compaction");
}
// snippet-end: step-boundary

/// Adds what compaction did and the heap's blocks in use at the end to the
/// report (the DynaSOAr heap and BitmapAlloc only). Waits for the stream.
template <class Handle>
void report_compaction(Handle& heap, RunReport& r) {
  if constexpr (requires { heap.defrag_policy_result(); }) {
    const DefragResult d = heap.defrag_policy_result();
    const std::uint64_t used = heap.allocated_blocks();
    r.heap.emplace_back("in use at the end", std::to_string(used) + " blocks, " +
                                                 std::to_string((used * Handle::kBlockBytes) >> 10) + " KiB");
    if (d.blocks_freed != 0 || heap.defrag_policy().enabled)
      r.heap.emplace_back("compaction", std::to_string(d.blocks_freed) + " blocks freed, " +
                                            std::to_string(d.objects_moved) + " objects moved");
  }
}

// snippet-begin: statistics
/// Adds a line per concrete class under each of `Roots` (the class and its
/// subclasses) to the report's heap section: its objects and, on the
/// DynaSOAr heap, its blocks and the share of their slots left unused (paper
/// Sec. 6.3). `names[type_id]` names the classes (the allocator's type list,
/// in order). Waits for the stream.
template <class... Roots, class Handle>
void report_statistics(Handle& heap, RunReport& r, const char* const* names) {
  const auto add = [&](const std::vector<TypeStatistics>& stats) {
    for (const TypeStatistics& st : stats) {
      std::string line = std::to_string(st.objects) + " objects";
      if (st.blocks != 0)
        line += " in " + std::to_string(st.blocks) + " blocks, " +
                std::to_string(static_cast<int>(st.fragmentation() * 100 + 0.5)) + " % of their slots unused";
      r.heap.emplace_back(names[st.type_id], line);
    }
  };
  (add(heap.template statistics<Roots>()), ...);
}
// snippet-end: statistics

}  // namespace dynasoar::example
