cmake_minimum_required(VERSION 3.24)
# Release unless a build type is given: CMake's default, none, compiles without optimisation
if(NOT DEFINED ENV{CMAKE_BUILD_TYPE})
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type")
endif()
project(app LANGUAGES CXX CUDA)       # leave out CUDA for a CPU-only (host) build
add_subdirectory(dynasoar)            # or: find_package(dynasoar REQUIRED) after cmake --install
add_executable(app app.cu)            # app.cpp in a host build
target_link_libraries(app PRIVATE dynasoar::dynasoar)
