cmake_minimum_required(VERSION 3.24)
project(app LANGUAGES CXX CUDA)       # leave out CUDA for a CPU-only (host) build
add_subdirectory(dynasoar)            # or: find_package(dynasoar REQUIRED) after cmake --install
add_executable(app app.cu)            # app.cpp in a host build
target_link_libraries(app PRIVATE dynasoar::dynasoar)
