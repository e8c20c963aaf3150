// The back ends, listed once. Everything that runs on every back end takes
// them from here: dynasoar::backend::All and the back-end switch (backend.h),
// the conformance suites, the benchmarks, the raw k-d tree, and CMake, which
// reads the lines of DYNASOAR_BACKEND_LIST to know which programs to build
// (CMakeLists.txt). See docs/guide/extending.md, "A back end".
//
// Adding a back end is its folder under allocator/, its line here and the
// #include of its header in backend.h:
//
//   X(<build name>, <name>, <type>, <properties>)
//
//   <build name>  DYNASOAR_BACKEND's value and the suffix of the programs
//                 built for it; the allocator's kBackend
//   <name>        dynasoar::backend::<name>, an alias of <type>
//   <type>        the back end: DynasoarHeap and BitmapHeap (backend.h) for
//                 the block heap, Bytes<Raw> for a raw byte allocator Raw
//   <properties>  what CMake builds for it; backend.h checks each against
//                 the code at compile time:
//                   frees  objects can be destroyed: the simulations, which
//                          destroy objects, run on it
//                   raw    a raw byte allocator: the raw conformance suite
//                          and the raw benchmark run on it
//                   keeps  raw memory stays valid until it is freed: the raw
//                          k-d tree runs on it
#pragma once

// clang-format off
#define DYNASOAR_BACKEND_LIST(X)                                                  \
  X(dynasoar,      Dynasoar,     DynasoarHeap,                   frees)           \
  X(bitmap_alloc,  BitmapAlloc,  BitmapHeap,                     frees)           \
  X(cmalloc,       CMalloc,      Bytes<cmalloc::CMalloc>,        frees raw keeps) \
  X(cfmalloc,      CFMalloc,     Bytes<cmalloc::CFMalloc>,       frees raw keeps) \
  X(cmmalloc,      CMMalloc,     Bytes<cmalloc::CMMalloc>,       frees raw keeps) \
  X(cfmmalloc,     CFMMalloc,    Bytes<cmalloc::CFMMalloc>,      frees raw keeps) \
  X(atomic_malloc, AtomicMalloc, Bytes<cmalloc::AtomicMalloc>,   raw keeps)       \
  X(aw_malloc,     AWMalloc,     Bytes<cmalloc::AWMalloc>,       raw)             \
  X(cuda_malloc,   CudaMalloc,   Bytes<cuda_malloc::CudaMalloc>, frees raw keeps) \
  X(scatter_alloc, ScatterAlloc, Bytes<scatter::ScatterAlloc>,   frees raw keeps) \
  X(xmalloc,       XMalloc,      Bytes<xmalloc::XMalloc>,        frees raw keeps)
// clang-format on
