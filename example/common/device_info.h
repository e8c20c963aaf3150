// One line naming what the examples run on.
#pragma once

#include <string>
#include <thread>

#include "dynasoar/platform/config.h"
#include "dynasoar/platform/error.h"

namespace dynasoar::example {

inline std::string device_description() {
#if DYNASOAR_CUDA
  int device = 0;
  DYNASOAR_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp p{};
  DYNASOAR_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  return std::string(p.name) + ", " + std::to_string(p.multiProcessorCount) + " SMs";
#else
  return "CPU, " + std::to_string(std::thread::hardware_concurrency()) + " threads";
#endif
}

}  // namespace dynasoar::example
