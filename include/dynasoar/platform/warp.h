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

// The special register %name of the PTX ISA (laneid, smid, ...) as an
// unsigned; device code only.
#define DYNASOAR_SPECIAL_REGISTER(name)                   \
  ([] {                                                   \
    unsigned value;                                       \
    asm("mov.u32 %0, %%" name ";" : "=r"(value));         \
    return value;                                         \
  }())

/// Threads in a warp: 32 on the GPU, 1 on the host.
DYNASOAR_HD DYNASOAR_FORCEINLINE unsigned size() { return DYNASOAR_DEVICE_OR_HOST(32u, 1u); }

/// Lane index of the calling thread within its warp.
DYNASOAR_HD DYNASOAR_FORCEINLINE unsigned lane_id() {
  return DYNASOAR_DEVICE_OR_HOST(DYNASOAR_SPECIAL_REGISTER("laneid"), 0u);
}

/// Mask of all lanes of a warp.
DYNASOAR_HD DYNASOAR_FORCEINLINE lane_mask full_mask() { return DYNASOAR_DEVICE_OR_HOST(0xFFFFFFFFu, 1u); }

/// Mask of the lanes below the calling lane.
DYNASOAR_HD DYNASOAR_FORCEINLINE lane_mask lanes_below() {
  return DYNASOAR_DEVICE_OR_HOST(DYNASOAR_SPECIAL_REGISTER("lanemask_lt"), 0u);
}

/// Lanes executing this call together with the calling lane, right now (the
/// set cooperative_groups::coalesced_threads() names). This is no promise
/// that other lanes will not arrive later; it is only safe to use as the mask
/// of a group whose members then run the same straight-line sequence of
/// primitives with exactly this mask, as allocation coalescing does. Lanes
/// that arrive later form a group of their own. On the host: one lane.
DYNASOAR_HD DYNASOAR_FORCEINLINE lane_mask present_lanes() { return DYNASOAR_DEVICE_OR_HOST(__activemask(), 1u); }

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
/// per-processor state (CMMalloc's offsets, Vinkler & Havran 2014 Sec. 5.4): the value
/// only steers where a thread starts, never what is correct.
DYNASOAR_HD inline unsigned processor_id() {
  return DYNASOAR_DEVICE_OR_HOST(DYNASOAR_SPECIAL_REGISTER("smid"), static_cast<unsigned>(warp_seed()));
}

/// The warp's slot on its multiprocessor (%warpid; a hint, since a warp may
/// be moved); 0 on the host.
DYNASOAR_HD inline unsigned warp_slot() {
  return DYNASOAR_DEVICE_OR_HOST(DYNASOAR_SPECIAL_REGISTER("warpid"), 0u);
}

/// Mask of the lanes in `mask` whose predicate is true.
DYNASOAR_HD DYNASOAR_FORCEINLINE lane_mask ballot([[maybe_unused]] lane_mask mask, bool predicate) {
  return DYNASOAR_DEVICE_OR_HOST(__ballot_sync(mask, predicate), predicate ? 1u : 0u);
}

/// Value of `v` in lane `src` (which must be in `mask`).
template <class T>
DYNASOAR_HD DYNASOAR_FORCEINLINE T shfl([[maybe_unused]] lane_mask mask, T v, [[maybe_unused]] unsigned src) {
  static_assert(std::is_trivially_copyable_v<T>, "shfl needs a trivially copyable type");
  return DYNASOAR_DEVICE_OR_HOST(__shfl_sync(mask, v, static_cast<int>(src)), v);
}

/// True in every lane of `mask` if `predicate` is true in every lane of it.
DYNASOAR_HD DYNASOAR_FORCEINLINE bool all([[maybe_unused]] lane_mask mask, bool predicate) {
  return DYNASOAR_DEVICE_OR_HOST(__all_sync(mask, predicate) != 0, predicate);
}

/// Mask of the lanes in `mask` that hold the same `v` as the calling lane.
template <class T>
DYNASOAR_HD DYNASOAR_FORCEINLINE lane_mask match_any([[maybe_unused]] lane_mask mask, [[maybe_unused]] T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "match_any takes 32- or 64-bit values");
  return DYNASOAR_DEVICE_OR_HOST(__match_any_sync(mask, v), 1u);
}

/// Barrier for the lanes in `mask`.
DYNASOAR_HD DYNASOAR_FORCEINLINE void sync([[maybe_unused]] lane_mask mask) {
#if DYNASOAR_DEVICE_CODE
  __syncwarp(mask);
#endif
}

/// Bit 0 of every word a lane hands over with handover(): set by the
/// source once its words are written.
inline constexpr std::uint64_t kHandedOver = 1;

/// Lane `src`'s `words` in every lane of `mask` (src in mask): the other
/// lanes' words are replaced by src's. src sets kHandedOver in every word
/// once they are computed (callers keep bit 0 of each free), and the barrier
/// and shuffles run in rounds until every lane of the mask read every word
/// marked; the lanes decide that together (all), so src takes every round.
///
/// Why not a barrier and a shuffle: src computes its words in a branch of
/// its own (a leader's search), and ptxas may drop the __syncwarp(mask)
/// after that branch, so that followers shuffle before src wrote its words;
/// in this loop ptxas keeps a check that every lane of the mask is present
/// before it shuffles (docs/design/xmalloc.md, "The handover").
///
/// Every word must carry the mark (a word handed over without it keeps the
/// lanes in the loop for ever), so a read of a register before src wrote it
/// is caught in any word that held 0; a stale register that held another
/// value with bit 0 set would not be.
///
/// Forward progress: the lanes of `mask` wait at the barrier for each other,
/// lanes of one warp (so resident whenever one of them runs). Callers give
/// every lane of `mask` a path to the handover that does not wait for the
/// other lanes of `mask` (a leader's search); independent thread scheduling
/// runs those paths while the others wait.
template <unsigned N>
DYNASOAR_HD DYNASOAR_FORCEINLINE void handover(lane_mask mask, std::uint64_t (&words)[N], unsigned src) {
  static_assert(N >= 1, "handover needs a word with the handed-over bit");
  std::uint64_t got[N];
  bool everyone_has_it = false;
  do {
    sync(mask);
    bool marked = true;
    for (unsigned i = 0; i < N; ++i) {
      got[i] = shfl(mask, words[i], src);
      marked = marked && (got[i] & kHandedOver) != 0;
    }
    // Decided by the whole mask, src included: every lane takes the same
    // number of rounds, so each round's barrier and shuffles are met by
    // all the lanes they name.
    everyone_has_it = all(mask, marked);
  } while (!everyone_has_it);
  for (unsigned i = 0; i < N; ++i) words[i] = got[i];
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
