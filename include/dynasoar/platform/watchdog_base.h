// The parts of the watchdog (dynasoar/platform/watchdog.h) that kernels and
// host-only code use: the progress counters, to which the do-all kernels add
// the objects whose method returned (so that the watchdog can say how far a
// do-all that does not end got), and the limit the environment sets.
#pragma once

#include <cstdlib>

#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/warp.h"

namespace dynasoar::platform {

/// Progress counters of one watched operation: threads add to counter
/// (thread block % kProgressCounters), each in a 32-byte sector of its own,
/// so that the adds of a large do-all spread over the L2 cache's slices.
inline constexpr unsigned kProgressCounters = 32;
inline constexpr unsigned kProgressStride = 4;
inline constexpr unsigned kProgressWords = kProgressCounters * kProgressStride;

/// Objects a do-all thread finishes before it adds them to the counters
/// (and once more at its end): larger batches cost large do-alls fewer
/// atomics, at a coarser progress count in the watchdog's message.
inline constexpr unsigned kProgressBatch = 16;

/// Adds the calling thread's `n` finished objects to a watched operation's
/// counters; nothing if `counters` is null (watchdog off). On the GPU the
/// lanes of a warp that arrive together add their sum with one atomic.
DYNASOAR_HD DYNASOAR_FORCEINLINE void count_finished(unsigned long long* counters, unsigned n = 1) {
  if (counters == nullptr) return;
#if DYNASOAR_DEVICE_CODE
#if __CUDA_ARCH__ >= 800
  const unsigned present = __activemask();
  const unsigned sum = __reduce_add_sync(present, n);
  if (warp::lane_id() != static_cast<unsigned>(__ffs(present) - 1)) return;
#else
  const unsigned sum = n;
#endif
  atomic_fetch_add(&counters[(blockIdx.x % kProgressCounters) * kProgressStride],
                   static_cast<unsigned long long>(sum));
#else
  atomic_fetch_add(&counters[(warp::warp_seed() % kProgressCounters) * kProgressStride],
                   static_cast<unsigned long long>(n));
#endif
}

/// The limit in seconds that the environment variable DYNASOAR_WATCHDOG
/// sets (0, the watchdog off, if it is unset or not a positive number).
inline double watchdog_seconds_from_environment() {
  const char* text = std::getenv("DYNASOAR_WATCHDOG");
  if (text == nullptr) return 0.0;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  return end != text && seconds > 0.0 ? seconds : 0.0;
}

}  // namespace dynasoar::platform
