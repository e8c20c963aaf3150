// CUDA's built-in device heap (malloc/free in kernels) as a raw allocator,
// the baseline of Vinkler & Havran 2014 Sec. 4.2. Its size is
// the device's cudaLimitMallocHeapSize, set by its pool (DeviceHeapPool) before
// the first kernel that allocates (CUDA fixes it at that point). In host
// builds the C library's malloc stands in (it does not run out).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "dynasoar/allocator/raw/alignment.h"
#include "dynasoar/allocator/raw/pool_error.h"
#include "dynasoar/allocator/raw/pool_options.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/error.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar::cuda_malloc {

class DeviceHeapPool;

/// The baseline allocator: malloc and free of CUDA's device heap (of the C
/// library in a host build), with the raw allocators' interface.
struct CudaMalloc {
  /// Name used in error messages.
  static constexpr const char* kName = "CudaMalloc";
  /// Name of the back end (CMake's DYNASOAR_BACKEND).
  static constexpr const char* kBackend = "cuda_malloc";
  /// True: free() returns memory to the device heap.
  static constexpr bool kCanFree = true;
  /// The host side of the pool: the size of CUDA's device heap.
  using Pool = DeviceHeapPool;

  unsigned* error;  ///< raw::PoolError flags, set when malloc returns nullptr

  /// 16-byte aligned memory for `n` bytes, or nullptr (and the error flag).
  DYNASOAR_HD void* malloc(std::uint64_t n) const {
    void* p = ::malloc(raw::aligned_size(n));  // CUDA aligns to 16; so does glibc on 64-bit hosts
    if (p == nullptr) platform::atomic_fetch_or(error, static_cast<unsigned>(raw::kPoolOutOfMemory));
    return p;
  }
  /// Returns memory from malloc(); nullptr is ignored. Host and device code.
  DYNASOAR_HD void free(void* p) const { ::free(p); }
};

/// Sizes CUDA's device heap for a pool of `bytes` and returns its size,
/// which may exceed `bytes` if an earlier pool set it larger (in a host
/// build: `bytes`, the C library's heap). CUDA fixes the heap's size when
/// the first kernel that calls malloc runs; until then it can be set.
/// Afterwards a pool no larger than the current heap still works; for a
/// larger one this throws std::invalid_argument.
inline std::uint64_t reserve_device_heap(std::uint64_t bytes) {
#if DYNASOAR_CUDA
  std::size_t current = 0;
  DYNASOAR_CUDA_CHECK(cudaDeviceGetLimit(&current, cudaLimitMallocHeapSize));
  if (current < bytes && cudaDeviceSetLimit(cudaLimitMallocHeapSize, bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    throw std::invalid_argument("CudaMalloc: the device heap is fixed at " +
                                std::to_string(current) +
                                " bytes (a kernel already allocated); " + std::to_string(bytes) +
                                " requested. Create the largest pool first.");
  }
  DYNASOAR_CUDA_CHECK(cudaDeviceGetLimit(&current, cudaLimitMallocHeapSize));
  return current;
#else
  return bytes;  // the C library's heap
#endif
}

/// The pool of CudaMalloc on the host: CUDA's device heap, sized for it.
/// The heap is CUDA's and outlives the pool.
class DeviceHeapPool {
 public:
  /// True: allocations still live when the pool goes stay in CUDA's heap.
  static constexpr bool kHeapOutlivesPool = true;

  /// Sizes the device heap for `bytes` (reserve_device_heap).
  DeviceHeapPool(std::uint64_t bytes, const raw::PoolOptions&, platform::Stream, CudaMalloc&)
      : bytes_(reserve_device_heap(bytes)) {}

  /// The device heap's size, which may exceed the request if an earlier
  /// pool set it larger.
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::uint64_t bytes_ = 0;
};

}  // namespace dynasoar::cuda_malloc
