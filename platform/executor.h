// The executor: runs a parallel loop as a CUDA kernel in a CUDA build or on
// std::thread workers in a host build. Library code written against it runs
// unchanged in both tiers.
//
// - parallel_for(n, f):       f(i) for every i in [0, n), any order, any mapping to threads.
// - parallel_workers(w, f):   f(id, count) on at least w workers that run concurrently, so
//                             they may wait for one another's in-flight work. On the GPU the
//                             workers are the threads of one grid (count is w rounded up to
//                             whole thread blocks, so every warp is complete); on the host each
//                             worker is an OS thread.
//
// In a CUDA build both are asynchronous on the given stream; in a host build
// they return when the loop is done. `f` is copied to the device by value:
// it must be trivially copyable and its call operator DYNASOAR_HD.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "platform/config.h"
#include "platform/error.h"
#include "platform/memory.h"

namespace dynasoar::platform {

/// Threads per block of the executor's kernels.
inline constexpr unsigned kBlockThreads = 256;

/// Upper limit of host workers in parallel_workers (each is an OS thread).
inline constexpr std::size_t kMaxHostWorkers = 1024;

/// Worker threads the host executor uses for parallel_for.
inline unsigned host_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1u : n;
}

namespace detail {

/// Runs body(t) for t in [0, threads) on `threads` OS threads (the caller is
/// one of them) and rethrows the first exception after all have joined.
template <class Body>
void run_host_threads(std::size_t threads, const Body& body) {
  if (threads <= 1) {
    if (threads == 1) body(std::size_t{0});
    return;
  }
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  auto guarded = [&](std::size_t t) {
    try {
      body(t);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(guarded, t);
  guarded(0);
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

#if DYNASOAR_CUDA
template <unsigned kThreads, class F>
__global__ void __launch_bounds__(kThreads) parallel_for_kernel(std::size_t n, F f) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    f(i);
}

template <class F>
__global__ void __launch_bounds__(kBlockThreads) parallel_workers_kernel(F f) {
  f(static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x,
    static_cast<std::size_t>(gridDim.x) * blockDim.x);
}

inline int current_device_attribute(cudaDeviceAttr attr) {
  int device = 0, value = 0;
  DYNASOAR_CUDA_CHECK(cudaGetDevice(&device));
  DYNASOAR_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}
#endif

}  // namespace detail

#if DYNASOAR_CUDA
namespace detail {
/// Multiprocessors and resident threads per multiprocessor of the current
/// device, cached per device: every launch asks, and two attribute queries
/// per launch are a visible part of a short operation.
struct DeviceShape {
  unsigned multiprocessors;
  unsigned threads_per_multiprocessor;
};
inline DeviceShape device_shape() {
  constexpr int kCachedDevices = 64;
  static std::atomic<std::uint64_t> cache[kCachedDevices] = {};  // both figures packed; 0: not yet known
  int device = 0;
  DYNASOAR_CUDA_CHECK(cudaGetDevice(&device));
  std::uint64_t packed = device < kCachedDevices ? cache[device].load(std::memory_order_relaxed) : 0;
  if (packed == 0) {
    packed = static_cast<std::uint64_t>(current_device_attribute(cudaDevAttrMultiProcessorCount)) << 32 |
             static_cast<std::uint32_t>(current_device_attribute(cudaDevAttrMaxThreadsPerMultiProcessor));
    if (device < kCachedDevices) cache[device].store(packed, std::memory_order_relaxed);
  }
  return {static_cast<unsigned>(packed >> 32), static_cast<unsigned>(packed)};
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

/// Calls f(i) for every i in [0, n). On the GPU in thread blocks of
/// kThreads threads (default kBlockThreads): consecutive i share a block.
template <unsigned kThreads = kBlockThreads, class F>
void parallel_for(std::size_t n, const F& f, Stream s = {}) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 1024 threads");
  if (n == 0) return;
#if DYNASOAR_CUDA
  const std::size_t blocks_needed = (n + kThreads - 1) / kThreads;
  const std::size_t max_blocks = concurrent_threads() / kThreads;
  const unsigned blocks = static_cast<unsigned>(std::min(blocks_needed, std::max<std::size_t>(max_blocks, 1)));
  detail::parallel_for_kernel<kThreads><<<blocks, kThreads, 0, s.handle>>>(n, f);
  DYNASOAR_CHECK_LAUNCH();
#else
  (void)s;
  // Small loops are not worth a thread start (~20 us each).
  constexpr std::size_t kMinPerThread = 1 << 14;
  const std::size_t threads =
      std::min<std::size_t>(host_threads(), (n + kMinPerThread - 1) / kMinPerThread);
  detail::run_host_threads(threads, [&](std::size_t t) {
    const std::size_t begin = n * t / threads, end = n * (t + 1) / threads;
    for (std::size_t i = begin; i < end; ++i) f(i);
  });
#endif
}

/// Calls f(id, count) on `count >= workers` concurrently running workers and
/// returns `count`. Host builds accept at most kMaxHostWorkers workers.
template <class F>
std::size_t parallel_workers(std::size_t workers, const F& f, Stream s = {}) {
  if (workers == 0) return 0;
#if DYNASOAR_CUDA
  const std::size_t blocks = (workers + kBlockThreads - 1) / kBlockThreads;
  if (blocks > 0x7FFFFFFFu) throw std::invalid_argument("parallel_workers: too many workers");
  detail::parallel_workers_kernel<<<static_cast<unsigned>(blocks), kBlockThreads, 0, s.handle>>>(f);
  DYNASOAR_CHECK_LAUNCH();
  return blocks * kBlockThreads;
#else
  (void)s;
  if (workers > kMaxHostWorkers)
    throw std::invalid_argument("parallel_workers: " + std::to_string(workers) +
                                " host workers requested, at most " +
                                std::to_string(kMaxHostWorkers) + " (each is an OS thread)");
  detail::run_host_threads(workers, [&](std::size_t w) { f(w, workers); });
  return workers;
#endif
}

}  // namespace dynasoar::platform
