// The settings of a ScatterAlloc pool, apart from the allocator, so that
// raw::PoolOptions can hold them without including any allocator.
#pragma once

#include <cstdint>

namespace dynasoar::scatter {

/// Settings of a ScatterAlloc pool (raw::PoolOptions::scatter), read when the
/// pool is made.
struct Options {
  /// Pages per super block (Sec. 8: 8 MiB super blocks of 4 KiB pages).
  /// Larger super blocks give the searches that start in one more room, but
  /// a nearly full one is searched region by region.
  std::uint32_t super_block_pages = 2048;
  /// Pages per region, whose count of full pages lets a search skip it
  /// (Sec. 5.4; the paper gives no size): smaller regions skip more
  /// precisely, at more counters to read. Must divide super_block_pages.
  std::uint32_t region_pages = 16;
  /// A page whose chunks are at most max_frag times the request serves it
  /// (Alg. alloc line 3): larger values find a page sooner, at more internal
  /// fragmentation.
  std::uint32_t max_frag = 2;
  /// k_S of Eq. 3 (Sec. 8: 38183).
  std::uint32_t k_size = 38183;
  /// k_mp of Eq. 3 (Sec. 8: 17497).
  std::uint32_t k_mp = 17497;
  /// Not in the paper: each warp slot (%warpid) of a multiprocessor starts
  /// as many pages further as a warp's requests of the size fill, and visits
  /// the regions of a super block in steps of a per-warp stride. Eq. 3 alone
  /// sends every warp of a multiprocessor to one page, and a linear scan
  /// then walks past every page the warps before it filled. Off: Eq. 3 and
  /// a linear scan, as in the paper.
  bool spread = true;
  /// Serve the lanes of a warp that ask for the same size with one search
  /// and one reservation (malloc). Off: every lane for itself.
  bool coalesce = true;
  /// Not in the paper: super blocks in which searches start. Multiprocessor
  /// mp starts in super block active + mp mod active_window (at most the
  /// pool's super blocks), so that the warps of a large GPU spread over
  /// this many super blocks instead of filling the paper's one active super
  /// block (Sec. 5.4). A wider window spreads the searches further, at a
  /// slower fill of the pool to exhaustion; 1: the paper's single active
  /// super block.
  std::uint32_t active_window = 8;
};

}  // namespace dynasoar::scatter
