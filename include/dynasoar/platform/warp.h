// Warp-level primitives with explicit lane masks. On the GPU they map to the
// `*_sync` intrinsics; on the host a "warp" is a group of one lane, so code
// written once against these functions runs in both places.
//
// Every primitive takes the mask of lanes that participate. Callers pass the
// mask they know (`full_mask()` in warp-uniform code, or a mask obtained from
// `ballot`); nothing here guesses convergence with __activemask(), because on
// Volta and later GPUs (independent thread scheduling) the active lanes at a
// point are not a promise that the others will arrive. present_lanes() is the
// one exception, with a narrow contract (see there).
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "dynasoar/platform/config.h"

namespace dynasoar::platform::warp {

using lane_mask = std::uint32_t;

/// Lanes of a warp in this build, for host code that sizes a launch (32 in a
/// CUDA build, 1 in a host build). size() answers for the code that calls
/// it: called from host code in a CUDA build it says 1.
inline constexpr unsigned kBuildLanes = kCudaBuild ? 32u : 1u;

/// Threads in a warp: 32 on the GPU, 1 on the host.
DYNASOAR_HD DYNASOAR_FORCEINLINE unsigned size() {
#if DYNASOAR_DEVICE_CODE
  return 32u;
#else
  return 1u;
#endif
}

/// Lane index of the calling thread within its warp.
DYNASOAR_HD DYNASOAR_FORCEINLINE unsigned lane_id() {
#if DYNASOAR_DEVICE_CODE
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
#else
  return 0u;
#endif
}

/// Mask of all lanes of a warp.
DYNASOAR_HD DYNASOAR_FORCEINLINE lane_mask full_mask() {
#if DYNASOAR_DEVICE_CODE
  return 0xFFFFFFFFu;
#else
  return 1u;
#endif
}

/// Mask of the lanes below the calling lane.
DYNASOAR_HD DYNASOAR_FORCEINLINE lane_mask lanes_below() {
#if DYNASOAR_DEVICE_CODE
  lane_mask m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
#else
  return 0u;
#endif
}

/// Lanes executing this call together with the calling lane, right now (the
/// set cooperative_groups::coalesced_threads() names). This is no promise
/// that other lanes will not arrive later; it is only safe to use as the mask
/// of a group whose members then run the same straight-line sequence of
/// primitives with exactly this mask, as allocation coalescing does. Lanes
/// that arrive later form a group of their own. On the host: one lane.
DYNASOAR_HD DYNASOAR_FORCEINLINE lane_mask present_lanes() {
#if DYNASOAR_DEVICE_CODE
  return __activemask();
#else
  return 1u;
#endif
}

/// A value that differs between the warps running at one time: the global
/// warp index on the GPU, a per-thread number on the host. Seeds the bitmap
/// rotation of allocation (DynaSOAr Sec. 4.2).
DYNASOAR_HD inline std::uint64_t warp_seed() {
#if DYNASOAR_DEVICE_CODE
  const std::uint64_t block =
      (static_cast<std::uint64_t>(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  const unsigned block_threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  return (block * block_threads + tid) / 32;
#else
  static std::atomic<std::uint64_t> next{0};
  thread_local const std::uint64_t id = next.fetch_add(1, std::memory_order_relaxed);
  return id;
#endif
}

/// The multiprocessor the calling thread runs on (SM id) on the GPU; the
/// per-thread number of warp_seed() on the host. For spreading threads over
/// per-processor state (CMMalloc's offsets, paper 000 Sec. 5.4): the value
/// only steers where a thread starts, never what is correct.
DYNASOAR_HD inline unsigned processor_id() {
#if DYNASOAR_DEVICE_CODE
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
#else
  return static_cast<unsigned>(warp_seed());
#endif
}

/// The warp's slot on its multiprocessor (%warpid; a hint, since a warp may
/// be moved); 0 on the host.
DYNASOAR_HD inline unsigned warp_slot() {
#if DYNASOAR_DEVICE_CODE
  unsigned id;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(id));
  return id;
#else
  return 0u;
#endif
}

/// Mask of the lanes in `mask` whose predicate is true.
DYNASOAR_HD DYNASOAR_FORCEINLINE lane_mask ballot(lane_mask mask, bool predicate) {
#if DYNASOAR_DEVICE_CODE
  return __ballot_sync(mask, predicate);
#else
  (void)mask;
  return predicate ? 1u : 0u;
#endif
}

/// Value of `v` in lane `src` (which must be in `mask`).
template <class T>
DYNASOAR_HD DYNASOAR_FORCEINLINE T shfl(lane_mask mask, T v, unsigned src) {
  static_assert(std::is_trivially_copyable_v<T>, "shfl needs a trivially copyable type");
#if DYNASOAR_DEVICE_CODE
  return __shfl_sync(mask, v, static_cast<int>(src));
#else
  (void)mask;
  (void)src;
  return v;
#endif
}

/// Mask of the lanes in `mask` that hold the same `v` as the calling lane.
template <class T>
DYNASOAR_HD DYNASOAR_FORCEINLINE lane_mask match_any(lane_mask mask, T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "match_any takes 32- or 64-bit values");
#if DYNASOAR_DEVICE_CODE
  return __match_any_sync(mask, v);
#else
  (void)mask;
  (void)v;
  return 1u;
#endif
}

/// Barrier for the lanes in `mask`.
DYNASOAR_HD DYNASOAR_FORCEINLINE void sync(lane_mask mask) {
#if DYNASOAR_DEVICE_CODE
  __syncwarp(mask);
#else
  (void)mask;
#endif
}

/// Inclusive prefix sum over all lanes of the warp; every lane must call it.
template <class T>
DYNASOAR_HD DYNASOAR_FORCEINLINE T inclusive_sum(T v) {
#if DYNASOAR_DEVICE_CODE
  const unsigned lane = lane_id();
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const T other = __shfl_up_sync(0xFFFFFFFFu, v, d);
    if (lane >= d) v += other;
  }
#endif
  return v;
}

}  // namespace dynasoar::platform::warp
