// The seam of a raw byte allocator: what raw::PoolHandle, the object
// registry (byte back ends, backend::Bytes<Raw>), the raw conformance suite,
// the raw benchmark and the raw k-d tree ask of every allocator under
// allocator/ that hands out bytes.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "dynasoar/allocator/raw/pool_options.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar::raw {

/// A raw allocator R: a trivially copyable device object, passed to kernels
/// by value, whose host handle is raw::PoolHandle<R>.
/// - `malloc(bytes)`: 16-byte aligned memory, or nullptr when the pool is
///   out of memory (the allocator then raises kPoolOutOfMemory, which the
///   handle turns into dynasoar::OutOfMemory); device and host code.
/// - `free(p)`: gives back memory from `malloc` (does nothing where kCanFree
///   is false).
/// - `error`: the PoolError flags it raises; the handle points it at its own.
/// - `kName` (messages), `kBackend` (its build name: DYNASOAR_BACKEND and the
///   programs' suffix), `kCanFree`.
/// - `Pool`: its host-side set-up, which the handle owns. The constructor
///   `Pool(bytes, options, stream, device_allocator)` takes the memory a
///   pool of `bytes` needs and fills the allocator's fields (but `error`),
///   queuing its work on `stream`; it throws std::invalid_argument for a
///   pool or options the allocator cannot use. `bytes()` is the pool's
///   size; a Pool moves (noexcept). The handle forwards what only some
///   pools offer: `begin()`/`end()`, `presplit()`, `fragmentation(requested)`,
///   `reset()` and a constructor from the allocator's own settings; and a
///   Pool whose memory outlives it (CUDA's device heap) says so with
///   `static constexpr bool kHeapOutlivesPool = true`.
/// Optional: `kReusesLiveMemory = true` for an allocator that may hand out
/// memory still in use (AWMalloc).
template <class R>
concept RawAllocator = std::is_trivially_copyable_v<R> && requires(const R r, std::uint64_t n, void* p) {
  { r.malloc(n) } -> std::same_as<void*>;
  r.free(p);
  { r.error } -> std::convertible_to<unsigned*>;
  { R::kName } -> std::convertible_to<const char*>;
  { R::kBackend } -> std::convertible_to<const char*>;
  { R::kCanFree } -> std::convertible_to<bool>;
  typename R::Pool;
  requires std::constructible_from<typename R::Pool, std::uint64_t, const PoolOptions&,
                                   platform::Stream, R&>;
  requires std::is_nothrow_move_constructible_v<typename R::Pool>;
  requires requires(const typename R::Pool& pool) {
    { pool.bytes() } -> std::same_as<std::uint64_t>;
  };
};

/// Whether R may hand out memory still in use (its optional kReusesLiveMemory).
template <class R>
inline constexpr bool kReusesLiveMemory = [] {
  if constexpr (requires { R::kReusesLiveMemory; })
    return static_cast<bool>(R::kReusesLiveMemory);
  else
    return false;
}();

}  // namespace dynasoar::raw
