// Build configuration shared by every layer: which back end this translation
// unit targets and the function-space annotations.
//
// A build is either a CUDA build (everything that uses the framework is
// compiled by nvcc, data lives in device memory, parallel loops are kernels)
// or a host build (plain C++ compiler, data in host memory, parallel loops on
// std::thread). The CMake target `dynasoar::dynasoar` defines DYNASOAR_CUDA
// accordingly; without CMake it follows the compiler.
#pragma once

#ifndef DYNASOAR_CUDA
#if defined(__CUDACC__)
#define DYNASOAR_CUDA 1
#else
#define DYNASOAR_CUDA 0
#endif
#endif

// One clear error for the two ways a consumer's build can be set up wrong;
// the include of a header that does not exist then stops the compiler before
// the rest of the framework adds errors of its own.
#if DYNASOAR_CUDA && !defined(__CUDACC__)
#error "This is a CUDA build of dynasoar (DYNASOAR_CUDA=1): compile this file with nvcc (name it .cu, or set its LANGUAGE to CUDA in CMake), or build for the host (DYNASOAR_ENABLE_CUDA=OFF, or a project without CUDA)."
#include "dynasoar: compile with nvcc (see the #error above)"
#elif !defined(_MSVC_LANG) && __cplusplus <= 201703L
#error "dynasoar needs C++20: link the CMake target dynasoar::dynasoar (it sets the standard for C++ and CUDA sources; do not set CMAKE_CUDA_STANDARD or CMAKE_CXX_STANDARD below 20), or pass -std=c++20 to g++/clang++/nvcc."
#include "dynasoar: C++20 is required (see the #error above)"
#endif

#if DYNASOAR_CUDA
#define DYNASOAR_HD __host__ __device__
#define DYNASOAR_DEVICE __device__
#define DYNASOAR_FORCEINLINE __forceinline__
#else
#define DYNASOAR_HD
#define DYNASOAR_DEVICE
#define DYNASOAR_FORCEINLINE inline __attribute__((always_inline))
#endif

// True while compiling code that will run on the GPU (the device pass of nvcc).
#if defined(__CUDA_ARCH__)
#define DYNASOAR_DEVICE_CODE 1
#else
#define DYNASOAR_DEVICE_CODE 0
#endif

// DYNASOAR_DEVICE_OR_HOST(d, h): the expression d in code that runs on the
// GPU, h elsewhere. The other one is not compiled, so d may name device
// intrinsics. For primitives whose two forms are one expression each.
#if DYNASOAR_DEVICE_CODE
#define DYNASOAR_DEVICE_OR_HOST(device, host) (device)
#else
#define DYNASOAR_DEVICE_OR_HOST(device, host) (host)
#endif

namespace dynasoar::platform {

/// True in a CUDA build; usable in `if constexpr`.
inline constexpr bool kCudaBuild = DYNASOAR_CUDA != 0;

}  // namespace dynasoar::platform
