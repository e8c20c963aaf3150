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

# dynasoar_choose_language(<out-var> <command>): ON for a CUDA build, OFF for a
# host build, for a project that uses dynasoar through <command>
# (add_subdirectory(dynasoar) or find_package(dynasoar)); one configure
# message says which and why. DYNASOAR_ENABLE_CUDA decides where the project
# set it; otherwise the project's languages do, on every configure: nothing is
# cached, so CUDA added to project() later takes effect. dynasoar cannot
# enable CUDA itself: CMake needs it enabled in the directory of the
# project's targets.
function(dynasoar_choose_language out command)
  dynasoar_cuda_enabled(cuda_enabled)
  string(CONCAT fix "add CUDA to the top-level project's languages, project(${CMAKE_PROJECT_NAME} LANGUAGES CXX CUDA), "
                    "or call enable_language(CUDA) before ${command}")
  if(DEFINED DYNASOAR_ENABLE_CUDA)
    if(DYNASOAR_ENABLE_CUDA)
      if(NOT cuda_enabled)
        message(FATAL_ERROR "dynasoar: DYNASOAR_ENABLE_CUDA is ON, but the project has not enabled the CUDA "
                            "language, and dynasoar cannot enable it for the project's targets. For the GPU "
                            "build, ${fix}. For the host build, set DYNASOAR_ENABLE_CUDA OFF.")
      endif()
      set(cuda ON)
      set(why "DYNASOAR_ENABLE_CUDA is ON")
    else()
      set(cuda OFF)
      set(why "DYNASOAR_ENABLE_CUDA is OFF")
    endif()
  elseif(cuda_enabled)
    set(cuda ON)
    set(why "the project enabled the CUDA language; -DDYNASOAR_ENABLE_CUDA=OFF chooses the host build")
  else()
    set(cuda OFF)
    set(why "the project did not enable the CUDA language; for the GPU build, ${fix}")
  endif()
  if(dynasoar_FIND_QUIETLY)  # find_package(dynasoar QUIET)
  elseif(cuda)
    message(STATUS "dynasoar: CUDA build, kernels on the GPU (${why})")
  else()
    message(STATUS "dynasoar: host build, parallel loops on std::thread, no GPU code (${why})")
  endif()
  set(${out} ${cuda} PARENT_SCOPE)
endfunction()

# dynasoar_check_build_type(<CXX|CUDA>): warns when a single-configuration
# build has neither a build type nor an -O flag of its own: CMake then
# compiles the language's sources without optimisation. The README's recipe
# sets Release where no build type is given.
function(dynasoar_check_build_type language)
  get_property(multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(multi_config OR CMAKE_BUILD_TYPE OR CMAKE_${language}_FLAGS MATCHES "(^|[ =,])-O")
    return()
  endif()
  message(WARNING "dynasoar: CMAKE_BUILD_TYPE is empty, so the program builds without optimisation (-O0), "
                  "which runs several times slower; set -DCMAKE_BUILD_TYPE=Release, or give a default "
                  "before project() as the README's recipe does.")
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
    # given to platform::parallel_for are __host__ __device__ lambdas. A
    # call from device code to a function not marked DYNASOAR_HD is an
    # error, not nvcc's warning (#20011, #20014): such a program would
    # build and then fail on the GPU.
    target_compile_options(${target} INTERFACE
      $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr --extended-lambda --diag-error=20011,20014>)
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
