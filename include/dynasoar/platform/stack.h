// The call stack of GPU threads. Methods that recurse (a tree walk, say a
// Barnes-Hut force computation that descends one level per call) need more
// than the CUDA default of 1 KiB per thread; a kernel whose threads overflow
// their stack fails with an illegal address. On the host every worker is an
// OS thread with a stack of megabytes, so there is nothing to set.
#pragma once

#include <cstddef>

#include "dynasoar/platform/config.h"
#include "dynasoar/platform/error.h"

namespace dynasoar {

/// Stack bytes per GPU thread in force now; 0 in a host build.
inline std::size_t device_stack_size() {
#if DYNASOAR_CUDA
  std::size_t bytes = 0;
  DYNASOAR_CUDA_CHECK(cudaDeviceGetLimit(&bytes, cudaLimitStackSize));
  return bytes;
#else
  return 0;
#endif
}

/// Gives every GPU thread of later kernels at least `bytes` of stack
/// (cudaLimitStackSize; the driver reserves it for every resident thread, so
/// ask for what the deepest recursion needs, e.g. levels x frame bytes).
/// Call it on the host before the kernels that need it, outside any stream
/// capture; it never lowers the limit. Returns the limit in force (0 in a
/// host build, where it does nothing). Throws CudaError if the device
/// cannot grant it.
inline std::size_t set_device_stack_size(std::size_t bytes) {
#if DYNASOAR_CUDA
  if (device_stack_size() < bytes) DYNASOAR_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitStackSize, bytes));
  return device_stack_size();
#else
  (void)bytes;
  return 0;
#endif
}

}  // namespace dynasoar
