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

# dynasoar_cuda20_flag(): lets CMAKE_CUDA_STANDARD 20 work in the calling
# directory with CMake versions that know no C++20 flag for nvcc (3.25 knows
# none; nvcc >= 12 takes -std=c++20). Call it as a macro, in the scope to fix.
macro(dynasoar_cuda20_flag)
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
endmacro()

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
    if("cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES)
      target_compile_features(${target} INTERFACE cuda_std_20)
    else()
      # This CMake knows no C++20 flag for nvcc (3.25 does not, and compiles
      # CUDA_STANDARD 20 as nvcc's default, C++17): give it directly, unless
      # the consuming target asks for another standard (then the headers'
      # #error says that C++20 is needed; two -std flags would make nvcc warn).
      set(std "$<TARGET_PROPERTY:CUDA_STANDARD>")
      target_compile_options(${target} INTERFACE
        "$<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<OR:$<STREQUAL:${std},>,$<STREQUAL:${std},20>>>:-std=c++20>")
    endif()
  else()
    target_compile_definitions(${target} INTERFACE DYNASOAR_CUDA=0)
  endif()
endfunction()
