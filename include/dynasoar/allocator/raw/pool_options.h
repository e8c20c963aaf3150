// The settings of a raw allocator's pool, in one type for every raw
// allocator (each reads its own): what HandleOptions::pool holds. Includes
// no allocator, so that a program of the SOA heap alone compiles none.
#pragma once

#include <cstdint>

#include "dynasoar/allocator/scatter/options.h"

namespace dynasoar::raw {

/// Settings of a pool, read once when the pool is made (PoolHandle's
/// constructor); each allocator reads its own and ignores the others.
struct PoolOptions {
  /// A chunk larger than request * max_frag is split (Alg. 3, MAX_FRAG).
  std::uint32_t max_frag = 2;
  /// Smallest chunk of the pre-split pattern (Eq. 1), header included.
  std::uint64_t min_chunk_bytes = 64;
  /// Heaps of the multi-offset variants; 0: heaps_per_processor per
  /// multiprocessor (Sec. 5.4 has one).
  std::uint32_t heaps = 0;
  /// Multi-offset variants: heaps per multiprocessor, which its warps share
  /// by their slot (not in Vinkler & Havran 2014; fewer walks meet on one offset).
  std::uint32_t heaps_per_processor = 1;
  /// Circular allocators: serve the lanes of a warp that allocate together
  /// with one walk of the list (CircularMalloc::malloc), and join the chunks
  /// of lanes that free together (CircularMalloc::free). Off: one walk and
  /// one merge per request, as in Vinkler & Havran 2014.
  bool coalesce = true;
  /// Circular allocators: merge on walk (CircularMalloc::walk). A walk that
  /// has passed kMergeAfterSmall free chunks too small for its request
  /// claims the next such chunk whose successor is free and absorbs the free
  /// chunks after it, so that free chunks left side by side are joined again.
  /// Off: chunks merge only on free and only with the next chunk, as in
  /// Vinkler & Havran 2014, and a pool that has seen many frees is cut ever finer.
  bool merge_on_walk = true;
  /// ScatterAlloc, and allocators built on it: pages per super block and
  /// region, max_frag, Eq. 3's factors and warp coalescing (scatter::Options).
  scatter::Options scatter{};
};

}  // namespace dynasoar::raw
