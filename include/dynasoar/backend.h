// Back ends: where objects live. User classes name their allocator as
// dynasoar::Allocator<Classes...>, and the back end is chosen when the
// program is built (CMake: DYNASOAR_BACKEND, or a per-target suffix, see
// docs/guide/backends.md), so the same source runs on every back end:
//
//   class Body;
//   using AllocatorT = dynasoar::Allocator<Body>;
//   class Body : public AllocatorT::Base { ... };
//   dynasoar::AllocatorHandle<AllocatorT> heap(1ull << 30);
//
// The back ends are listed once, in backend::All; a program is built for the
// one whose name the macro DYNASOAR_BACKEND holds (CMake sets it; without it
// the SOA heap):
//   dynasoar      the SOA object heap (the default)
//   cmalloc, cfmalloc, cmmalloc, cfmmalloc, atomic_malloc, aw_malloc, cuda_malloc,
//   scatter_alloc
//                 a raw allocator of allocator/ with objects in plain struct
//                 layout and the generic object registry
#pragma once

#include <cstddef>

#include "dynasoar/allocator/cmalloc/bump_malloc.h"
#include "dynasoar/allocator/cmalloc/circular_malloc.h"
#include "dynasoar/allocator/cuda_malloc/cuda_malloc.h"
#include "dynasoar/allocator/scatter/scatter_alloc.h"
#include "dynasoar/model/type_list.h"
#include "dynasoar/soa_allocator_handle.h"
#include "dynasoar/byte_allocator.h"
#include "dynasoar/byte_allocator_handle.h"
#include "dynasoar/soa_allocator.h"

namespace dynasoar::backend {

/// The SOA object heap (DynaSOAr).
struct Dynasoar {
  /// Name of the back end in messages and reports.
  static constexpr const char* kName = "dynasoar";
  /// Name of the back end in CMake's DYNASOAR_BACKEND.
  static constexpr const char* kBackend = "dynasoar";
  /// The allocator of this back end for the classes Ts.
  template <class... Ts>
  using Allocator = SoaAllocator<Ts...>;
};

/// Objects on a raw byte allocator Raw (malloc/free of 16-byte aligned
/// memory, with its host handle cmalloc::PoolHandle<Raw>).
template <class Raw>
struct Bytes {
  /// Name of the back end in messages and reports: the raw allocator's name.
  static constexpr const char* kName = Raw::kName;
  /// Name of the back end in CMake's DYNASOAR_BACKEND.
  static constexpr const char* kBackend = Raw::kBackend;
  /// The raw allocator, for programs that use it directly (the raw k-d tree).
  using RawAllocator = Raw;
  /// The allocator of this back end for the classes Ts.
  template <class... Ts>
  using Allocator = ByteAllocator<Raw, Ts...>;
};

using AtomicMalloc = Bytes<cmalloc::AtomicMalloc>;
using AWMalloc = Bytes<cmalloc::AWMalloc>;
using CMalloc = Bytes<cmalloc::CMalloc>;
using CFMalloc = Bytes<cmalloc::CFMalloc>;
using CMMalloc = Bytes<cmalloc::CMMalloc>;
using CFMMalloc = Bytes<cmalloc::CFMMalloc>;
using CudaMalloc = Bytes<cmalloc::CudaMalloc>;
using ScatterAlloc = Bytes<scatter::ScatterAlloc>;

/// Every back end, once. Tests, benchmarks and the back-end switch iterate
/// over this list; CMake's DYNASOAR_BACKENDS holds the same names, in the
/// same order (a test compares them).
using All = model::TypeList<Dynasoar, CMalloc, CFMalloc, CMMalloc, CFMMalloc, AtomicMalloc,
                            AWMalloc, CudaMalloc, ScatterAlloc>;

namespace detail {
constexpr bool same_name(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}
template <class... Bs>
constexpr std::size_t index_of_name(model::TypeList<Bs...>, const char* name) {
  const char* names[] = {Bs::kBackend...};
  for (std::size_t i = 0; i < sizeof...(Bs); ++i)
    if (same_name(names[i], name)) return i;
  return model::kNotFound;
}
}  // namespace detail

/// Position in All of the back end whose kBackend is `name`, or model::kNotFound.
constexpr std::size_t index_of(const char* name) { return detail::index_of_name(All{}, name); }

#ifndef DYNASOAR_BACKEND
#define DYNASOAR_BACKEND dynasoar
#endif
#define DYNASOAR_DETAIL_NAME(x) #x
#define DYNASOAR_DETAIL_STRING(x) DYNASOAR_DETAIL_NAME(x)
/// Name of the back end this program is built for (the macro DYNASOAR_BACKEND).
inline constexpr const char* kSelectedName = DYNASOAR_DETAIL_STRING(DYNASOAR_BACKEND);
#undef DYNASOAR_DETAIL_STRING
#undef DYNASOAR_DETAIL_NAME
static_assert(
    index_of(kSelectedName) != model::kNotFound,
    "DYNASOAR_BACKEND names no back end: use dynasoar, cmalloc, cfmalloc, cmmalloc, "
    "cfmmalloc, atomic_malloc, aw_malloc, cuda_malloc or scatter_alloc (dynasoar::backend::All)");

/// The back end this program is built for.
using Selected = model::At<All, index_of(kSelectedName)>;

}  // namespace dynasoar::backend

namespace dynasoar {

/// The allocator of the back end this program is built for.
template <class... Ts>
using Allocator = typename backend::Selected::template Allocator<Ts...>;

/// The host handle of an allocator, whatever its back end: it owns the
/// memory (RAII) and runs parallel_new, parallel_do, count and statistics
/// (HandleOps; the handle meets BackendHandle). Named before the classes are
/// complete, so it checks nothing itself.
///   dynasoar::AllocatorHandle<AllocatorT> heap(1ull << 30);
template <class Alloc>
using AllocatorHandle = typename Alloc::Handle;

}  // namespace dynasoar
