// Stream compaction of pointer arrays: the non-null entries of an array,
// in order, with their count. Three kernels in a CUDA build (count per tile,
// scan of the tile counts, scatter); a plain loop in a host build.
//
// Not CUB's DeviceSelect, which does this in one pass: its header would add
// much compile time to every file that includes the framework, since every
// back end's header is included everywhere. The compaction runs where a byte
// allocator enumerates its registry, after a wait for the stream and a copy
// to the host, so two more launches do not matter there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dynasoar/platform/config.h"
#include "dynasoar/platform/error.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/warp.h"

namespace dynasoar::platform {

#if DYNASOAR_CUDA
namespace detail {

/// Threads per block of the compaction kernels: 8 warps.
inline constexpr unsigned kSelectThreads = 256;
/// Entries per warp and per block (tile): each warp takes 16 rounds of 32
/// consecutive entries.
inline constexpr unsigned kSelectWarpItems = 512;
inline constexpr unsigned kSelectTile = kSelectWarpItems * (kSelectThreads / 32);

/// Non-null entries among the warp's kSelectWarpItems entries from `first`.
/// Every lane gets the count. Whole warps only.
template <class P>
__device__ inline unsigned count_warp_items(P const* in, std::size_t n, std::size_t first) {
  const unsigned lane = threadIdx.x % 32;
  unsigned count = 0;
  for (unsigned r = 0; r < kSelectWarpItems; r += 32) {
    const std::size_t i = first + r + lane;
    count += static_cast<unsigned>(__popc(warp::ballot(warp::full_mask(), i < n && in[i] != nullptr)));
  }
  return count;
}

/// Offsets of the block's warps among its non-null entries (exclusive sums
/// of the warp counts, in shared memory), and the block's count. Called by
/// every thread of the block.
__device__ inline unsigned block_warp_offsets(unsigned warp_count, unsigned* offsets) {
  const unsigned warp_id = threadIdx.x / 32;
  constexpr unsigned kWarps = kSelectThreads / 32;
  if (threadIdx.x % 32 == 0) offsets[warp_id] = warp_count;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned sum = 0;
    for (unsigned w = 0; w < kWarps; ++w) {
      const unsigned c = offsets[w];
      offsets[w] = sum;
      sum += c;
    }
    offsets[kWarps] = sum;
  }
  __syncthreads();
  return offsets[kWarps];
}

// The kernels are templates (instantiated with P = void*) so that every file
// that includes this header may define them: a plain __global__ function
// defined in a header is defined again by each CUDA file, and two such files
// in one program do not link.

/// counts[b] = the non-null entries of tile b.
template <class P>
__global__ void __launch_bounds__(kSelectThreads)
    select_count_kernel(P const* in, std::size_t n, unsigned long long* counts) {
  __shared__ unsigned offsets[kSelectThreads / 32 + 1];
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * kSelectTile + threadIdx.x / 32 * kSelectWarpItems;
  const unsigned total = block_warp_offsets(count_warp_items(in, n, first), offsets);
  if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

/// One block: counts[0, tiles) becomes its exclusive sums; *selected the total.
template <class Count>
__global__ void __launch_bounds__(1024) select_scan_kernel(Count* counts, std::size_t tiles, Count* selected) {
  __shared__ Count warp_sums[32];
  __shared__ Count carry;
  const unsigned lane = threadIdx.x % 32, warp_id = threadIdx.x / 32;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  for (std::size_t base = 0; base < tiles; base += 1024) {
    const std::size_t t = base + threadIdx.x;
    const Count mine = t < tiles ? counts[t] : 0;
    const Count inclusive = warp::inclusive_sum(mine);
    if (lane == 31) warp_sums[warp_id] = inclusive;
    __syncthreads();
    if (warp_id == 0) warp_sums[lane] = warp::inclusive_sum(warp_sums[lane]);
    __syncthreads();
    const Count before = carry + (warp_id == 0 ? 0 : warp_sums[warp_id - 1]);
    if (t < tiles) counts[t] = before + inclusive - mine;
    __syncthreads();  // everyone has read carry and warp_sums
    if (threadIdx.x == 0) carry += warp_sums[31];
    __syncthreads();
  }
  if (threadIdx.x == 0) *selected = carry;
}

/// Tile b's non-null entries, in order, to out[offsets[b]...]. Each warp
/// counts its entries again (the count kernel kept only the tile's sum):
/// keeping every warp's count would take eight times the scratch, and the
/// second read of a tile mostly hits L2.
template <class P>
__global__ void __launch_bounds__(kSelectThreads)
    select_scatter_kernel(P const* in, std::size_t n, const unsigned long long* tile_offsets, P* out) {
  __shared__ unsigned offsets[kSelectThreads / 32 + 1];
  const unsigned lane = threadIdx.x % 32;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * kSelectTile + threadIdx.x / 32 * kSelectWarpItems;
  block_warp_offsets(count_warp_items(in, n, first), offsets);
  unsigned long long next = tile_offsets[blockIdx.x] + offsets[threadIdx.x / 32];
  for (unsigned r = 0; r < kSelectWarpItems; r += 32) {
    const std::size_t i = first + r + lane;
    const P p = i < n ? in[i] : nullptr;
    const warp::lane_mask keep = warp::ballot(warp::full_mask(), p != nullptr);
    if (p != nullptr) out[next + static_cast<unsigned>(__popc(keep & warp::lanes_below()))] = p;
    next += static_cast<unsigned>(__popc(keep));
  }
}

}  // namespace detail
#endif

/// Keeps the scratch memory of the compaction (a count per tile) between calls.
class PointerCompactor {
 public:
  /// out[0, k) = the non-null entries of in[0, n), in order; *selected = k
  /// (device memory). Asynchronous on `s` in a CUDA build.
  void select_nonnull(void* const* in, void** out, std::size_t n, unsigned long long* selected,
                      Stream s = {}) {
#if DYNASOAR_CUDA
    const std::size_t tiles = (n + detail::kSelectTile - 1) / detail::kSelectTile;
    if (tiles > scratch_.size()) scratch_ = Buffer<unsigned long long>(tiles);
    if (tiles != 0) {
      detail::select_count_kernel<<<static_cast<unsigned>(tiles), detail::kSelectThreads, 0, s.handle>>>(
          in, n, scratch_.data());
      DYNASOAR_CHECK_LAUNCH();
    }
    detail::select_scan_kernel<<<1, 1024, 0, s.handle>>>(scratch_.data(), tiles, selected);
    DYNASOAR_CHECK_LAUNCH();
    if (tiles != 0) {
      detail::select_scatter_kernel<<<static_cast<unsigned>(tiles), detail::kSelectThreads, 0, s.handle>>>(
          in, n, scratch_.data(), out);
      DYNASOAR_CHECK_LAUNCH();
    }
#else
    (void)s;
    unsigned long long k = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (in[i] != nullptr) out[k++] = in[i];
    *selected = k;
#endif
  }

 private:
  Buffer<unsigned long long> scratch_;
};

}  // namespace dynasoar::platform
