# NCCL for the distributed layer's transport between GPUs
# (include/dynasoar/distributed/nccl_transport.h). CUDA builds only; a host
# build never needs it.
#
# Looks for nccl.h and libnccl beside the CUDA Toolkit first, then in the
# system's directories (override with -DDYNASOAR_NCCL_INCLUDE_DIR=... and
# -DDYNASOAR_NCCL_LIBRARY=...). The library is searched first next to the
# header found, so that both come from one NCCL. Where both are found (NCCL
# 2.14 or later: non-blocking communicators), defines the INTERFACE target
# dynasoar::nccl (DYNASOAR_NCCL=1, links libnccl), which a distributed
# program links beside dynasoar::dynasoar; otherwise says so, and the
# distributed CUDA programs are left out. libnccl is the machine's own:
# never copied or installed by this project.
if(NOT DYNASOAR_ENABLE_CUDA)
  return()
endif()

find_path(DYNASOAR_NCCL_INCLUDE_DIR nccl.h
          HINTS ${CUDAToolkit_INCLUDE_DIRS}
          DOC "Directory of nccl.h (NCCL, for the distributed layer)")
if(DYNASOAR_NCCL_INCLUDE_DIR)
  get_filename_component(_dynasoar_nccl_prefix "${DYNASOAR_NCCL_INCLUDE_DIR}" DIRECTORY)
  find_library(DYNASOAR_NCCL_LIBRARY NAMES nccl libnccl.so.2
               HINTS ${CUDAToolkit_LIBRARY_DIR} "${_dynasoar_nccl_prefix}/lib64"
                     "${_dynasoar_nccl_prefix}/lib"
                     "${_dynasoar_nccl_prefix}/lib/${CMAKE_LIBRARY_ARCHITECTURE}"
               NO_DEFAULT_PATH)
  find_library(DYNASOAR_NCCL_LIBRARY NAMES nccl libnccl.so.2
               DOC "libnccl (NCCL, for the distributed layer)")
endif()

set(DYNASOAR_NCCL_VERSION "")
if(DYNASOAR_NCCL_INCLUDE_DIR AND EXISTS "${DYNASOAR_NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${DYNASOAR_NCCL_INCLUDE_DIR}/nccl.h" _dynasoar_nccl_defines
       REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*#define NCCL_${_part} +([0-9]+).*" "\\1" _dynasoar_nccl_${_part}
           "${_dynasoar_nccl_defines}")
  endforeach()
  set(DYNASOAR_NCCL_VERSION "${_dynasoar_nccl_MAJOR}.${_dynasoar_nccl_MINOR}.${_dynasoar_nccl_PATCH}")
endif()

if(DYNASOAR_NCCL_INCLUDE_DIR AND DYNASOAR_NCCL_LIBRARY AND DYNASOAR_NCCL_VERSION VERSION_LESS 2.14)
  message(STATUS "dynasoar: NCCL ${DYNASOAR_NCCL_VERSION} (${DYNASOAR_NCCL_INCLUDE_DIR}) is older than 2.14, "
                 "which the distributed layer needs (non-blocking communicators); distributed CUDA "
                 "programs are left out")
elseif(DYNASOAR_NCCL_INCLUDE_DIR AND DYNASOAR_NCCL_LIBRARY)
  message(STATUS "dynasoar: NCCL ${DYNASOAR_NCCL_VERSION}: ${DYNASOAR_NCCL_LIBRARY} "
                 "(header in ${DYNASOAR_NCCL_INCLUDE_DIR}); distributed CUDA programs are built")
  add_library(dynasoar_nccl INTERFACE)
  add_library(dynasoar::nccl ALIAS dynasoar_nccl)
  target_include_directories(dynasoar_nccl SYSTEM INTERFACE ${DYNASOAR_NCCL_INCLUDE_DIR})
  target_link_libraries(dynasoar_nccl INTERFACE ${DYNASOAR_NCCL_LIBRARY})
  target_compile_definitions(dynasoar_nccl INTERFACE DYNASOAR_NCCL=1)
else()
  message(STATUS "dynasoar: NCCL not found (nccl.h: ${DYNASOAR_NCCL_INCLUDE_DIR}, libnccl: "
                 "${DYNASOAR_NCCL_LIBRARY}); distributed CUDA programs and their tests are left out. "
                 "Install NCCL (apt-get install libnccl-dev) or set DYNASOAR_NCCL_INCLUDE_DIR and "
                 "DYNASOAR_NCCL_LIBRARY")
endif()
