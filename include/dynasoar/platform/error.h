// Error reporting: every CUDA runtime call is checked and turned into a C++
// exception that names the call, the file and the line.
#pragma once

#include <stdexcept>
#include <string>

#include "dynasoar/platform/config.h"

#if DYNASOAR_CUDA
#include <cuda_runtime.h>
#endif

namespace dynasoar {

/// Thrown when a CUDA runtime call fails or a kernel launch is rejected.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An allocation in device code found its heap or pool full (it returned
/// nullptr); raised by the host handle after the kernel.
class OutOfMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace platform::detail {

#if DYNASOAR_CUDA
[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* what, const char* file,
                                          int line) {
  throw CudaError(std::string(what) + " failed at " + file + ":" + std::to_string(line) + ": " +
                  cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}
#endif

}  // namespace platform::detail
}  // namespace dynasoar

#if DYNASOAR_CUDA
/// Evaluates a CUDA runtime call and throws dynasoar::CudaError if it failed.
#define DYNASOAR_CUDA_CHECK(call)                                                      \
  do {                                                                                 \
    cudaError_t dynasoar_err_ = (call);                                                \
    if (dynasoar_err_ != cudaSuccess)                                                  \
      ::dynasoar::platform::detail::throw_cuda_error(dynasoar_err_, #call, __FILE__, \
                                                     __LINE__);                        \
  } while (0)

/// Checks that the last kernel launch was accepted (configuration errors).
#define DYNASOAR_CHECK_LAUNCH() DYNASOAR_CUDA_CHECK(cudaGetLastError())
#else
#define DYNASOAR_CHECK_LAUNCH() \
  do {                          \
  } while (0)
#endif
