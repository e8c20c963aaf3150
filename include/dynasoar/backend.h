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
// The back ends are listed once, in DYNASOAR_BACKEND_LIST
// (dynasoar/backend_list.h), which gives backend::All; a program is built for
// the one whose build name the macro DYNASOAR_BACKEND holds (CMake sets it;
// without it the SOA heap, `dynasoar`).
#pragma once

#include <concepts>
#include <cstddef>
#include <string_view>
#include <type_traits>

// The allocator of every line of DYNASOAR_BACKEND_LIST, before the list is
// expanded below; a new back end adds its header here.
#include "dynasoar/allocator/cmalloc/bump_malloc.h"
#include "dynasoar/allocator/cmalloc/circular_malloc.h"
#include "dynasoar/allocator/cuda_malloc/cuda_malloc.h"
#include "dynasoar/allocator/raw/raw_allocator.h"
#include "dynasoar/allocator/scatter/scatter_alloc.h"
#include "dynasoar/allocator/xmalloc/xmalloc.h"
#include "dynasoar/backend_list.h"
#include "dynasoar/byte_allocator.h"
#include "dynasoar/byte_allocator_handle.h"
#include "dynasoar/model/type_list.h"
#include "dynasoar/soa_allocator.h"
#include "dynasoar/soa_allocator_handle.h"

namespace dynasoar::backend {

/// The DynaSOAr block heap with the block layout L: one descriptor for both
/// of its back ends below.
template <soa::Layout L>
struct Heap {
  /// The allocator of this back end for the classes Ts.
  template <class... Ts>
  using Allocator = HeapAllocator<L, Ts...>;
  /// Name of the back end in messages and reports.
  static constexpr const char* kName = soa::backend_name(L);
  /// Name of the back end in CMake's DYNASOAR_BACKEND.
  static constexpr const char* kBackend = kName;
  /// True: objects can be destroyed (property `frees`).
  static constexpr bool kFrees = true;
  /// The layout of the heap's blocks.
  static constexpr soa::Layout kLayout = L;
};

/// The SOA object heap (DynaSOAr), one array per field: backend::Dynasoar.
using DynasoarHeap = Heap<soa::Layout::kSoa>;

/// BitmapAlloc (paper Sec. 6) as this framework has it: the DynaSOAr heap,
/// its blocks, capacities and hierarchical bitmaps unchanged, with whole
/// objects (AOS) in each block instead of one array per field, so that a
/// program run on both shows what the SOA layout is worth
/// (docs/design/heap.md, "BitmapAlloc"). backend::BitmapAlloc.
using BitmapHeap = Heap<soa::Layout::kAos>;

/// A back end of the DynaSOAr block heap, in either layout (DynasoarHeap,
/// BitmapHeap): the heap's handle, options, statistics and error behaviour.
template <class B>
concept HeapBackend = requires {
  { B::kLayout } -> std::convertible_to<soa::Layout>;
};

/// Objects on a raw byte allocator Raw (malloc/free of 16-byte aligned
/// memory, with its host handle raw::PoolHandle<Raw>).
template <class Raw>
struct Bytes {
  static_assert(raw::RawAllocator<Raw>, "backend::Bytes<Raw>: Raw is no raw allocator (dynasoar/allocator/raw/raw_allocator.h)");
  /// Name of the back end in messages and reports: the raw allocator's name.
  static constexpr const char* kName = Raw::kName;
  /// Name of the back end in CMake's DYNASOAR_BACKEND.
  static constexpr const char* kBackend = Raw::kBackend;
  /// Whether objects can be destroyed (property `frees`): the allocator frees.
  static constexpr bool kFrees = Raw::kCanFree;
  /// Whether memory stays valid until it is freed (property `keeps`); false
  /// for an allocator that hands out memory still in use (AWMalloc wraps
  /// around its pool).
  static constexpr bool kKeepsMemory = !raw::kReusesLiveMemory<Raw>;
  /// The raw allocator, for programs that use it directly (the raw k-d tree).
  using RawAllocator = Raw;
  /// The allocator of this back end for the classes Ts.
  template <class... Ts>
  using Allocator = ByteAllocator<Raw, Ts...>;
};

/// A back end of a raw byte allocator (property `raw`).
template <class B>
concept RawBackend = requires { typename B::RawAllocator; };

/// A raw back end whose memory stays valid until it is freed (property `keeps`).
template <class B>
concept KeepingRawBackend = RawBackend<B> && B::kKeepsMemory;

// backend::<name> for every line of the list.
#define DYNASOAR_DETAIL_ALIAS(build_name, name, type, properties) using name = type;
DYNASOAR_BACKEND_LIST(DYNASOAR_DETAIL_ALIAS)
#undef DYNASOAR_DETAIL_ALIAS

namespace detail {
template <class List>
struct DropFirst;
template <class T, class... Ts>
struct DropFirst<model::TypeList<T, Ts...>> {
  using type = model::TypeList<Ts...>;
};

/// Whether `word` stands in the space-separated `words`.
constexpr bool has_word(std::string_view words, std::string_view word) {
  while (!words.empty()) {
    const std::size_t end = words.find(' ');
    if (words.substr(0, end) == word) return true;
    if (end == std::string_view::npos) return false;
    words.remove_prefix(end + 1);
  }
  return false;
}

/// The properties of a line of DYNASOAR_BACKEND_LIST, against the back end's code.
template <class B>
constexpr bool properties_match(std::string_view properties) {
  return has_word(properties, "frees") == B::kFrees && has_word(properties, "raw") == RawBackend<B> &&
         has_word(properties, "keeps") == KeepingRawBackend<B>;
}
}  // namespace detail

/// Every back end, once, in the order of DYNASOAR_BACKEND_LIST. Tests,
/// benchmarks and the back-end switch iterate over this list; CMake reads
/// the same lines (a test compares the lists).
#define DYNASOAR_DETAIL_AFTER_COMMA(build_name, name, type, properties) , name
using All = typename detail::DropFirst<model::TypeList<void DYNASOAR_BACKEND_LIST(DYNASOAR_DETAIL_AFTER_COMMA)>>::type;
#undef DYNASOAR_DETAIL_AFTER_COMMA

namespace detail {
template <class B>
struct RawOf {
  using type = model::TypeList<>;
};
template <RawBackend B>
struct RawOf<B> {
  using type = model::TypeList<typename B::RawAllocator>;
};
template <class... Lists>
struct Join {
  using type = model::TypeList<>;
};
template <class L, class... Ls>
struct Join<L, Ls...> {
  using type = model::Concat<L, typename Join<Ls...>::type>;
};
template <class List>
struct RawAllocatorsOf;
template <class... Bs>
struct RawAllocatorsOf<model::TypeList<Bs...>> {
  using type = typename Join<typename RawOf<Bs>::type...>::type;
};
}  // namespace detail

/// The raw allocators of the raw back ends of All (property `raw`), in its
/// order: the raw conformance suite and the raw benchmark run on these.
using RawAllocators = typename detail::RawAllocatorsOf<All>::type;

// Each line's build name is its allocator's kBackend, and its properties
// are what the code does.
#define DYNASOAR_DETAIL_CHECK(build_name, name, type, properties)                                     \
  static_assert(std::string_view(name::kBackend) == #build_name,                                      \
                "dynasoar/backend_list.h: " #build_name " is not the kBackend of " #type);            \
  static_assert(detail::properties_match<name>(#properties),                                          \
                "dynasoar/backend_list.h: the properties of " #build_name " (" #properties           \
                ") are not what its code says (kFrees, RawAllocator, kKeepsMemory)");
DYNASOAR_BACKEND_LIST(DYNASOAR_DETAIL_CHECK)
#undef DYNASOAR_DETAIL_CHECK

namespace detail {
template <class... Bs>
constexpr std::size_t index_of_name(model::TypeList<Bs...>, std::string_view name) {
  const std::string_view names[] = {Bs::kBackend...};
  for (std::size_t i = 0; i < sizeof...(Bs); ++i)
    if (names[i] == name) return i;
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
#define DYNASOAR_DETAIL_QUOTED(build_name, name, type, properties) " " #build_name
static_assert(index_of(kSelectedName) != model::kNotFound,
              "DYNASOAR_BACKEND names no back end; the back ends (dynasoar/backend_list.h):" DYNASOAR_BACKEND_LIST(
                  DYNASOAR_DETAIL_QUOTED));
#undef DYNASOAR_DETAIL_QUOTED

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
