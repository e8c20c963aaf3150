// The executor: runs a parallel loop as a CUDA kernel in a CUDA build or on
// host threads (the persistent pool of dynasoar/platform/thread_pool.h) in a host
// build. Library code written against it runs unchanged in both tiers.
//
// - parallel_for(n, f):       f(i) for every i in [0, n), any order, any mapping to threads.
// - parallel_workers(w, f):   f(id, count) on at least w workers that run concurrently, so
//                             any worker may wait for any other (a barrier, a queue that
//                             another worker fills). On the GPU the workers are the threads of
//                             one grid (count is w rounded up to whole thread blocks, so every
//                             warp is complete), launched cooperatively: every block is resident
//                             at once, and a request for more workers than max_workers<F>()
//                             (the kernel's occupancy times the multiprocessors) is refused. On
//                             the host each worker is an OS thread of its own.
// - parallel_workers_up_to(w, f): the same with min(w, max_workers<F>()) workers, for loops
//                             that stride over their work and want concurrency, not a count.
// - parallel_for_early(n, f): parallel_for whose thread blocks may be scheduled while the
//                             kernel ahead of it finishes (Hopper's programmatic dependent
//                             launch); same results, one launch latency less.
//
// In a CUDA build all of them are asynchronous on the given stream; in a host build
// they return when the loop is done, and an exception thrown by `f` reaches
// the caller after every thread has finished. `f` is copied to the device by
// value: it must be trivially copyable and its call operator DYNASOAR_HD.
//
// Host builds also offer host_parallel_chunks(n, chunks, f): f(begin, end)
// over a fixed split of [0, n), each chunk on a thread of its own while the
// pool has idle threads. The do-alls use it to spread their objects over
// every hardware thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "dynasoar/platform/config.h"
#include "dynasoar/platform/error.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/thread_pool.h"

namespace dynasoar::platform {

/// Threads per block of the executor's kernels.
inline constexpr unsigned kBlockThreads = 256;

// kMaxHostWorkers and host_threads(): dynasoar/platform/thread_pool.h.

/// Objects per host thread below which a host do-all uses fewer threads: a
/// loop of a few objects runs on its caller alone, one of 2^11 * host_threads()
/// objects or more on every hardware thread. Waking a pool thread costs some
/// microseconds, about as much as a few thousand small method calls.
inline constexpr std::size_t kHostDoAllGrain = std::size_t{1} << 11;

/// Items per host thread below which a host parallel_for uses fewer
/// threads: its items are often a few instructions each (bitmap words,
/// registry entries), so small loops are not worth waking a thread.
inline constexpr std::size_t kHostForGrain = 1 << 14;

/// Chunks of at least `grain` items (the last may be smaller) for n items,
/// at most one per hardware thread; 0 for n = 0.
inline std::size_t host_chunk_count(std::size_t n, std::size_t grain) {
  const std::size_t wanted = n / grain + (n % grain != 0);
  return std::min<std::size_t>(host_threads(), wanted);
}

/// Host threads, in any build: f(begin, end) for the `chunks` contiguous
/// ranges [n * c / chunks, n * (c + 1) / chunks) of [0, n), c < chunks. The
/// split depends on n and chunks only; each chunk runs on a thread of its
/// own while the pool has idle threads (on the caller otherwise). Returns
/// when all are done; rethrows an exception of `f`.
template <class F>
void host_parallel_chunks(std::size_t n, std::size_t chunks, const F& f) {
  if (n == 0) return;
  chunks = std::clamp<std::size_t>(chunks, 1, n);
  detail::run_gang(
      chunks, [&](std::size_t c) { f(n * c / chunks, n * (c + 1) / chunks); }, false);
}

/// Host threads, in any build: f(i) for every i in [0, n), in contiguous
/// chunks of at least `grain` items, at most one chunk per hardware thread.
template <class F>
void host_for(std::size_t n, std::size_t grain, const F& f) {
  host_parallel_chunks(n, host_chunk_count(n, grain), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) f(i);
  });
}

/// In a kernel that parallel_for_early launched: waits until the kernel
/// ahead of it on the stream has completed and its memory writes are
/// visible (programmatic dependent launch; PTX griddepcontrol.wait). Returns
/// at once in any other kernel, on devices before compute capability 9.0
/// and in host code.
DYNASOAR_HD DYNASOAR_FORCEINLINE void wait_for_earlier_kernels() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// In a kernel: lets a kernel queued after it with parallel_for_early be
/// scheduled now rather than at this kernel's end, once every thread block
/// of this grid has called it or finished (PTX
/// griddepcontrol.launch_dependents). A hint: it changes no result, since
/// that kernel waits for this one before it reads anything. No-op where
/// unsupported and in host code.
DYNASOAR_HD DYNASOAR_FORCEINLINE void allow_early_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

namespace detail {

// Thread blocks of kBlockThreads that hold `threads` threads, at least one.
constexpr std::size_t whole_blocks(std::size_t threads) {
  return std::max<std::size_t>(1, (threads + kBlockThreads - 1) / kBlockThreads);
}

#if DYNASOAR_CUDA
template <class F>
__device__ DYNASOAR_FORCEINLINE void parallel_for_loop(std::size_t n, const F& f) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    f(i);
}

template <unsigned kThreads, class F>
__global__ void __launch_bounds__(kThreads) parallel_for_kernel(std::size_t n, F f) {
  parallel_for_loop(n, f);
}

// The same loop for a launch that may start before the kernel ahead of it
// on the stream has finished (parallel_for_early): every thread first waits
// until that kernel has completed and its writes are visible. It lets the
// next such launch be scheduled early in turn, so a chain of them overlaps
// each launch with the end of the kernel before.
template <unsigned kThreads, class F>
__global__ void __launch_bounds__(kThreads) parallel_for_early_kernel(std::size_t n, F f) {
  allow_early_launch();
  wait_for_earlier_kernels();
  parallel_for_loop(n, f);
}

template <class F>
__global__ void __launch_bounds__(kBlockThreads) parallel_workers_kernel(F f) {
  allow_early_launch();
  f(static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x,
    static_cast<std::size_t>(gridDim.x) * blockDim.x);
}

inline int current_device() {
  int device = 0;
  DYNASOAR_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

inline int device_attribute(int device, cudaDeviceAttr attr) {
  int value = 0;
  DYNASOAR_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

/// A figure of a device that never changes, computed on the device's first
/// use and read from `cache` afterwards (compute() must not return 0, which
/// marks "not yet known"). Launches ask for such figures every time, and
/// CUDA queries on every launch are a visible part of a short operation.
inline constexpr int kCachedDevices = 64;
template <class Compute>
std::uint64_t per_device(std::atomic<std::uint64_t> (&cache)[kCachedDevices], int device,
                         Compute compute) {
  std::uint64_t value = device < kCachedDevices ? cache[device].load(std::memory_order_relaxed) : 0;
  if (value == 0) {
    value = compute();
    if (device < kCachedDevices) cache[device].store(value, std::memory_order_relaxed);
  }
  return value;
}
#endif

}  // namespace detail

#if DYNASOAR_CUDA
namespace detail {
/// Multiprocessors and resident threads per multiprocessor of a device
/// (cached per device).
struct DeviceShape {
  unsigned multiprocessors;
  unsigned threads_per_multiprocessor;
};
inline DeviceShape device_shape(int device) {
  static std::atomic<std::uint64_t> cache[kCachedDevices] = {};  // both figures packed
  const std::uint64_t packed = per_device(cache, device, [device] {
    return static_cast<std::uint64_t>(device_attribute(device, cudaDevAttrMultiProcessorCount)) << 32 |
           static_cast<std::uint32_t>(device_attribute(device, cudaDevAttrMaxThreadsPerMultiProcessor));
  });
  return {static_cast<unsigned>(packed >> 32), static_cast<unsigned>(packed)};
}
inline DeviceShape device_shape() { return device_shape(current_device()); }

/// Whether parallel_for_early_kernel<kThreads, F> can be launched early on
/// the current device: the device supports it (compute capability 9.0 and
/// later, programmatic dependent launch) and the kernel's code was compiled for it (PTX 9.0 or later, so
/// that it holds the wait; a build for older GPUs runs on a newer one from
/// PTX compiled for the older, without it). Cached per device and kernel.
template <unsigned kThreads, class F>
bool early_launch_compiled() {
  static std::atomic<std::uint64_t> cache[kCachedDevices] = {};  // 1 no, 2 yes
  const int device = current_device();
  return per_device(cache, device, [device] {
    if (device_attribute(device, cudaDevAttrComputeCapabilityMajor) < 9) return std::uint64_t{1};
    cudaFuncAttributes a{};
    DYNASOAR_CUDA_CHECK(cudaFuncGetAttributes(&a, parallel_for_early_kernel<kThreads, F>));
    return std::uint64_t{a.ptxVersion >= 90 ? 2u : 1u};
  }) == 2;
}
}  // namespace detail
#endif

/// How many threads can run at once: on the GPU the resident threads of all
/// multiprocessors, on the host the hardware threads.
inline std::size_t concurrent_threads() {
#if DYNASOAR_CUDA
  const detail::DeviceShape d = detail::device_shape();
  return static_cast<std::size_t>(d.multiprocessors) * d.threads_per_multiprocessor;
#else
  return host_threads();
#endif
}

/// Multiprocessors of the GPU; hardware threads on the host.
inline unsigned processors() {
#if DYNASOAR_CUDA
  return detail::device_shape().multiprocessors;
#else
  return host_threads();
#endif
}

/// How many workers of F parallel_workers can run at once. On the GPU: the
/// blocks of its kernel that fit on a multiprocessor together (its
/// occupancy: registers, shared memory and stack decide, not only the 2048
/// threads a multiprocessor can hold), times the multiprocessors, times
/// kBlockThreads; cached per device. On the host: kMaxHostWorkers.
template <class F>
std::size_t max_workers() {
#if DYNASOAR_CUDA
  static std::atomic<std::uint64_t> cache[detail::kCachedDevices] = {};  // blocks per SM + 1
  const int device = detail::current_device();
  const std::uint64_t blocks_plus_one = detail::per_device(cache, device, [] {
    int blocks = 0;
    DYNASOAR_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, detail::parallel_workers_kernel<F>, static_cast<int>(kBlockThreads), 0));
    return static_cast<std::uint64_t>(blocks) + 1;
  });
  return static_cast<std::size_t>(blocks_plus_one - 1) * detail::device_shape(device).multiprocessors *
         kBlockThreads;
#else
  return kMaxHostWorkers;
#endif
}

#if DYNASOAR_CUDA
namespace detail {
// Thread blocks of kThreads for a loop over n items: one item per thread, at
// most as many blocks as can be resident (the kernel strides beyond that).
template <unsigned kThreads>
unsigned loop_blocks(std::size_t n) {
  const std::size_t needed = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min(needed, std::max<std::size_t>(concurrent_threads() / kThreads, 1)));
}
}  // namespace detail
#endif

/// Calls f(i) for every i in [0, n). On the GPU in thread blocks of
/// kThreads threads (default kBlockThreads): consecutive i share a block.
template <unsigned kThreads = kBlockThreads, class F>
void parallel_for(std::size_t n, const F& f, Stream s = {}) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 1024 threads");
  if (n == 0) return;
#if DYNASOAR_CUDA
  detail::parallel_for_kernel<kThreads><<<detail::loop_blocks<kThreads>(n), kThreads, 0, s.handle>>>(n, f);
  DYNASOAR_CHECK_LAUNCH();
#else
  (void)s;
  host_for(n, kHostForGrain, f);
#endif
}

/// parallel_for(n, f, s), launched so that its thread blocks may be
/// scheduled while the kernel ahead of it on `s` is still finishing: every
/// thread waits in hardware (wait_for_earlier_kernels) until that kernel has
/// completed and its memory writes are visible, then runs the loop. What it
/// saves is the launch latency of a dependent kernel, a few microseconds,
/// where the kernel ahead has allowed it (allow_early_launch: the
/// executor's parallel_workers kernels and parallel_for_early's own do, at
/// their start). The effects are those of parallel_for: the loop sees
/// everything queued before it, since the kernel ahead completes only after
/// everything before it (its own wait, if it was launched early too).
/// Forward progress: the blocks of this grid are scheduled only once every
/// block of the kernel ahead is running or done, so a block waiting here
/// never holds a place that one of that kernel's blocks still needs. On
/// devices before compute capability 9.0, and in host builds, this is
/// parallel_for.
template <unsigned kThreads = kBlockThreads, class F>
void parallel_for_early(std::size_t n, const F& f, Stream s = {}) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 1024 threads");
#if DYNASOAR_CUDA
  if (n == 0) return;
  if (!detail::early_launch_compiled<kThreads, F>()) return parallel_for<kThreads>(n, f, s);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(detail::loop_blocks<kThreads>(n));
  config.blockDim = dim3(kThreads);
  config.stream = s.handle;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  DYNASOAR_CUDA_CHECK(cudaLaunchKernelEx(&config, detail::parallel_for_early_kernel<kThreads, F>, n, f));
  DYNASOAR_CHECK_LAUNCH();
#else
  parallel_for<kThreads>(n, f, s);
#endif
}

/// Calls f(id, count) on `count >= workers` workers that all run at once,
/// and returns `count`. Any worker may wait for any other: on the GPU the
/// launch is cooperative, so every block of the grid is resident together
/// (forward progress of the waiting and the awaited thread is then up to the
/// hardware's independent thread scheduling), and more workers than
/// max_workers<F>() are refused with std::invalid_argument rather than
/// launched half-resident, where a wait for a worker that has not started
/// would never end. Host builds accept at most kMaxHostWorkers workers.
template <class F>
std::size_t parallel_workers(std::size_t workers, const F& f, Stream s = {}) {
  if (workers == 0) return 0;
  const std::size_t most = max_workers<F>();
#if DYNASOAR_CUDA
  const std::size_t blocks = detail::whole_blocks(workers);
  if (blocks * kBlockThreads > most)
    throw std::invalid_argument(
        "parallel_workers: " + std::to_string(workers) + " workers requested, but at most " +
        std::to_string(most) +
        " threads of this kernel are resident at once (its registers and shared memory decide); "
        "ask for at most max_workers<F>(), or use parallel_workers_up_to");
  F copy = f;
  void* args[] = {&copy};
  DYNASOAR_CUDA_CHECK(cudaLaunchCooperativeKernel(
      reinterpret_cast<const void*>(&detail::parallel_workers_kernel<F>),
      dim3(static_cast<unsigned>(blocks)), dim3(kBlockThreads), args, 0, s.handle));
  DYNASOAR_CHECK_LAUNCH();
  return blocks * kBlockThreads;
#else
  (void)s;
  if (workers > most)
    throw std::invalid_argument("parallel_workers: " + std::to_string(workers) +
                                " host workers requested, at most " + std::to_string(most) +
                                " (each is an OS thread)");
  detail::run_gang(workers, [&](std::size_t w) { f(w, workers); }, /*concurrent=*/true);
  return workers;
#endif
}

/// f(id, count) on min(workers, max_workers<F>()) workers (at least one; on
/// the GPU whole blocks), for loops that stride over their items by the
/// worker count and want as many threads as can run, not a given number.
/// Returns the count. The workers must not wait for one another (on the GPU
/// this is an ordinary launch; the library's snapshots, counts and
/// enumerations use it).
template <class F>
std::size_t parallel_workers_up_to(std::size_t workers, const F& f, Stream s = {}) {
  if (workers == 0) return 0;
  const std::size_t n = std::min(workers, max_workers<F>());
#if DYNASOAR_CUDA
  // max_workers is a whole number of blocks, so rounding up stays within it.
  const std::size_t blocks = detail::whole_blocks(n);
  detail::parallel_workers_kernel<<<static_cast<unsigned>(blocks), kBlockThreads, 0, s.handle>>>(f);
  DYNASOAR_CHECK_LAUNCH();
  return blocks * kBlockThreads;
#else
  return parallel_workers(n, f, s);
#endif
}

}  // namespace dynasoar::platform
