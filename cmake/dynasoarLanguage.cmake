# How the dynasoar::dynasoar target compiles a consumer's sources, shared by
# both ways of using the library: add_subdirectory (CMakeLists.txt) and
# find_package after an install (dynasoarConfig.cmake).
#
# The build follows the consumer project's languages: with CUDA enabled it is a
# CUDA build (DYNASOAR_CUDA=1; every source that includes the framework is
# compiled by nvcc), otherwise a host build on std::thread (DYNASOAR_CUDA=0).
# The headers need C++20 on both sides.
include_guard(GLOBAL)

# dynasoar_cuda_enabled(<out-var>): whether the calling project enabled CUDA.
function(dynasoar_cuda_enabled out)
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(CUDA IN_LIST languages)
    set(${out} ON PARENT_SCOPE)
  else()
    set(${out} OFF PARENT_SCOPE)
  endif()
endfunction()

# dynasoar_cuda20_flag(): gives CMake nvcc's C++20 flag where it knows none
# (3.25 knows none; nvcc >= 12 takes -std=c++20). Without it CMake stops at
# generation on a CUDA source whose standard is 20 and required, which
# CMAKE_CXX_STANDARD 20 with CMAKE_CXX_STANDARD_REQUIRED ON asks for: where
# CUDA_STANDARD is unset, CMake gives CUDA sources the target's CXX_STANDARD.
# A cache entry, so that every directory of the project sees it, whichever
# order they come in.
function(dynasoar_cuda20_flag)
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20" CACHE INTERNAL "nvcc's C++20 flag, given by dynasoar")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20" CACHE INTERNAL "nvcc's C++20 flag, given by dynasoar")
    set(DYNASOAR_GAVE_CUDA20_FLAG ON CACHE INTERNAL "dynasoar set CMAKE_CUDA20_STANDARD_COMPILE_OPTION")
  endif()
  if(DYNASOAR_GAVE_CUDA20_FLAG AND NOT dynasoar_FIND_QUIETLY)
    message(STATUS "dynasoar: CMake ${CMAKE_VERSION} knows no C++20 flag for nvcc; dynasoar gives it "
                   "-std=c++20 (CMAKE_CUDA20_STANDARD_COMPILE_OPTION), so CUDA_STANDARD 20 and "
                   "CXX_STANDARD 20 work for CUDA sources")
  endif()
endfunction()

# dynasoar_set_language(<target> <cuda ON|OFF>): the definitions, flags and
# standard of a CUDA or a host build, as usage requirements of <target>.
function(dynasoar_set_language target cuda)
  if(cuda)
    target_compile_definitions(${target} INTERFACE DYNASOAR_CUDA=1)
    # constexpr functions of the standard library in device code; lambdas
    # given to platform::parallel_for are __host__ __device__ lambdas.
    target_compile_options(${target} INTERFACE
      $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr --extended-lambda>)
    # The C++20 standard: where CUDA_STANDARD is unset, CMake gives CUDA
    # sources the standard of C++ ones, which dynasoar::dynasoar's cxx_std_20
    # raises to 20; dynasoar_cuda20_flag() gives CMake the flag where it knows
    # none. A consumer that sets CUDA_STANDARD below 20 meets the headers'
    # #error, which names the fix.
    if("cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES)
      target_compile_features(${target} INTERFACE cuda_std_20)
    endif()
  else()
    target_compile_definitions(${target} INTERFACE DYNASOAR_CUDA=0)
  endif()
endfunction()
