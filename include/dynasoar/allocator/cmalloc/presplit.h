// The initial chunks of a circular pool (Vinkler & Havran 2014, Eq. 1 and Sec. 5.4).
//
// The pool is cut into `heaps` equal regions (one for CMalloc and CFMalloc,
// one per multiprocessor for CMMalloc and CFMMalloc). Each region holds a
// binary-heap pattern of chunks: one of R granules, two of R/2, four of R/4,
// ..., 2^L of R/2^L, C(i) = R / 2^floor(log2 i). L is the deepest level whose
// chunks still have `min_units` granules, and R = region / (L + 1) is the
// largest root for which the whole pattern fits; what the pattern leaves of
// a region goes to its last chunk. The last granule of the pool is the
// sentinel header.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::cmalloc {

/// The pre-split pattern of a circular pool (Eq. 1): where each initial chunk
/// starts and ends. Computed on the host by plan(); its queries may be called
/// from host and device code.
struct PreSplit {
  /// Capacity of level_start, more levels than a pool of 31-bit offsets can use.
  static constexpr int kMaxLevels = 32;

  std::uint32_t granules = 0;        ///< the pool, sentinel included
  std::uint32_t heaps = 1;           ///< number of regions, one per offset
  std::uint32_t region = 0;          ///< granules per heap region
  std::uint32_t root = 0;            ///< R
  int levels = 1;                    ///< L + 1
  std::uint32_t level_start[kMaxLevels] = {};  ///< offset of each level's first chunk in a region

  /// Chunks in one region: 2^(L+1) - 1.
  DYNASOAR_HD std::uint64_t chunks_per_heap() const { return (std::uint64_t{1} << levels) - 1; }

  /// First granule of region h.
  DYNASOAR_HD std::uint32_t heap_start(std::uint32_t h) const { return h * region; }
  /// Where region h ends: the next region, or the sentinel.
  DYNASOAR_HD std::uint32_t heap_end(std::uint32_t h) const {
    return h + 1 < heaps ? (h + 1) * region : granules - 1;
  }

  /// First granule of chunk i (0-based, in the order of Eq. 1) of region h.
  DYNASOAR_HD std::uint32_t chunk_start(std::uint32_t h, std::uint64_t i) const {
    const int level = 63 - platform::clz(i + 1);
    const std::uint64_t within = i + 1 - (std::uint64_t{1} << level);
    return heap_start(h) + level_start[level] + static_cast<std::uint32_t>(within * (root >> level));
  }
  /// Granule after chunk i of region h (the start of its successor).
  DYNASOAR_HD std::uint32_t chunk_end(std::uint32_t h, std::uint64_t i) const {
    return i + 1 < chunks_per_heap() ? chunk_start(h, i + 1) : heap_end(h);
  }

  /// The pattern for a pool of `granules` granules cut into `heaps` regions
  /// with chunks of at least `min_units` granules. Host code. Throws
  /// std::invalid_argument for no heaps or a pool too small for them.
  static PreSplit plan(std::uint64_t granules, std::uint32_t heaps, std::uint32_t min_units) {
    if (heaps == 0) throw std::invalid_argument("PreSplit: at least one heap");
    if (min_units < 2) min_units = 2;  // a header granule and data
    if (granules < 1 + static_cast<std::uint64_t>(heaps) * min_units)
      throw std::invalid_argument("PreSplit: a pool of " + std::to_string(granules) + " granules of 16 bytes " +
                                  "cannot hold " + std::to_string(heaps) + " heaps of chunks of " +
                                  std::to_string(min_units) + " granules");
    PreSplit p;
    p.granules = static_cast<std::uint32_t>(granules);
    p.heaps = heaps;
    p.region = static_cast<std::uint32_t>((granules - 1) / heaps);
    int depth = 0;  // L: the deepest level whose chunks keep min_units granules
    while (depth + 1 < kMaxLevels - 1 && (p.region / static_cast<std::uint64_t>(depth + 2)) >> (depth + 1) >= min_units)
      ++depth;
    p.levels = depth + 1;
    p.root = static_cast<std::uint32_t>(p.region / static_cast<std::uint64_t>(p.levels));
    std::uint64_t at = 0;
    for (int l = 0; l < p.levels; ++l) {
      p.level_start[l] = static_cast<std::uint32_t>(at);
      at += (std::uint64_t{1} << l) * (p.root >> l);
    }
    return p;
  }
};

}  // namespace dynasoar::cmalloc
