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
// Back ends (the macro that selects each):
//   dynasoar      the SOA object heap (DYNASOAR_BACKEND_DYNASOAR, the default)
//   cmalloc, cfmalloc, cmmalloc, cfmmalloc, atomic_malloc, aw_malloc, cuda_malloc
//                 a byte allocator of allocator/cmalloc with objects in plain
//                 struct layout and the generic object registry
//                 (DYNASOAR_BACKEND_CMALLOC, ...)
#pragma once

#include "dynasoar/allocator/cmalloc/bump_malloc.h"
#include "dynasoar/allocator/cmalloc/circular_malloc.h"
#include "dynasoar/allocator/cuda_malloc/cuda_malloc.h"
#include "dynasoar/allocator_handle.h"
#include "dynasoar/byte_allocator.h"
#include "dynasoar/byte_handle.h"
#include "dynasoar/soa_allocator.h"

namespace dynasoar::backend {

/// The SOA object heap (DynaSOAr).
struct Dynasoar {
  /// Name of the back end in messages and reports.
  static constexpr const char* kName = "dynasoar";
  /// The allocator of this back end for the classes Ts.
  template <class... Ts>
  using Allocator = SoaAllocator<Ts...>;
};

/// Objects on a raw byte allocator of allocator/cmalloc.
template <class Raw>
struct Bytes {
  /// Name of the back end in messages and reports: the raw allocator's name.
  static constexpr const char* kName = Raw::kName;
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

#if (defined(DYNASOAR_BACKEND_DYNASOAR) + defined(DYNASOAR_BACKEND_CMALLOC) +        \
     defined(DYNASOAR_BACKEND_CFMALLOC) + defined(DYNASOAR_BACKEND_CMMALLOC) +       \
     defined(DYNASOAR_BACKEND_CFMMALLOC) + defined(DYNASOAR_BACKEND_ATOMIC_MALLOC) + \
     defined(DYNASOAR_BACKEND_AW_MALLOC) + defined(DYNASOAR_BACKEND_CUDA_MALLOC)) > 1
#error "more than one DYNASOAR_BACKEND_* macro is defined: a program is built for one back end"
#endif
#if defined(DYNASOAR_BACKEND_CMALLOC)
using Selected = CMalloc;
#elif defined(DYNASOAR_BACKEND_CFMALLOC)
using Selected = CFMalloc;
#elif defined(DYNASOAR_BACKEND_CMMALLOC)
using Selected = CMMalloc;
#elif defined(DYNASOAR_BACKEND_CFMMALLOC)
using Selected = CFMMalloc;
#elif defined(DYNASOAR_BACKEND_ATOMIC_MALLOC)
using Selected = AtomicMalloc;
#elif defined(DYNASOAR_BACKEND_AW_MALLOC)
using Selected = AWMalloc;
#elif defined(DYNASOAR_BACKEND_CUDA_MALLOC)
using Selected = CudaMalloc;
#else
using Selected = Dynasoar;
#endif

}  // namespace dynasoar::backend

namespace dynasoar {

/// The allocator of the back end this program is built for.
template <class... Ts>
using Allocator = typename backend::Selected::template Allocator<Ts...>;

}  // namespace dynasoar
