// CUDA's built-in device heap (malloc/free in kernels) as a raw allocator,
// the baseline of Vinkler & Havran 2014 Sec. 4.2. Its size is
// the device's cudaLimitMallocHeapSize, set by PoolHandle<CudaMalloc> before
// the first kernel that allocates (CUDA fixes it at that point). In host
// builds the C library's malloc stands in (it does not run out).
#pragma once

#include <cstdint>
#include <cstdlib>

#include "dynasoar/allocator/raw/alignment.h"
#include "dynasoar/allocator/raw/pool_error.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::cuda_malloc {

/// The baseline allocator: malloc and free of CUDA's device heap (of the C
/// library in a host build), with the raw allocators' interface.
struct CudaMalloc {
  /// Name used in error messages.
  static constexpr const char* kName = "CudaMalloc";
  /// Name of the back end (CMake's DYNASOAR_BACKEND).
  static constexpr const char* kBackend = "cuda_malloc";
  /// True: free() returns memory to the device heap.
  static constexpr bool kCanFree = true;
  /// False: no chunk list of the circular allocators.
  static constexpr bool kCircular = false;
  static constexpr bool kDeviceHeap = true;  ///< the pool is CUDA's, not ours

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

}  // namespace dynasoar::cuda_malloc
