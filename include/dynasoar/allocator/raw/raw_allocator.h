// The seam of a raw byte allocator: what the object registry (byte back ends,
// backend::Bytes<Raw>), the raw conformance suite, the raw benchmark and the
// raw k-d tree ask of every allocator under allocator/ that hands out bytes.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

namespace dynasoar::raw {

/// A raw allocator R: a trivially copyable device object, passed to kernels
/// by value, whose host handle is cmalloc::PoolHandle<R>.
/// - `malloc(bytes)`: 16-byte aligned memory, or nullptr when the pool is
///   out of memory (the allocator then raises its error flag, which the
///   handle turns into dynasoar::OutOfMemory); device and host code.
/// - `free(p)`: gives back memory from `malloc` (does nothing where kCanFree
///   is false).
/// - `kName` (messages), `kBackend` (its build name: DYNASOAR_BACKEND and the
///   programs' suffix), `kCanFree`.
/// - `kCircular` and `kDeviceHeap`: how PoolHandle sets up its pool (a chunk
///   list of the CMalloc family, CUDA's device heap, or a plain buffer; an
///   allocator that lays out its own pool also offers its `Options`,
///   `options_from`, `metadata_words` and `attach`, the concept
///   cmalloc::SetsUpItsPool).
/// Optional: `kReusesLiveMemory = true` for an allocator that may hand out
/// memory still in use (AWMalloc).
template <class R>
concept RawAllocator = std::is_trivially_copyable_v<R> && requires(const R r, std::uint64_t n, void* p) {
  { r.malloc(n) } -> std::same_as<void*>;
  r.free(p);
  { R::kName } -> std::convertible_to<const char*>;
  { R::kBackend } -> std::convertible_to<const char*>;
  { R::kCanFree } -> std::convertible_to<bool>;
  { R::kCircular } -> std::convertible_to<bool>;
  { R::kDeviceHeap } -> std::convertible_to<bool>;
};

}  // namespace dynasoar::raw
