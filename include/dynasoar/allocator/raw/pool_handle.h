// PoolHandle: owns the pool of one raw allocator (RAII) and gives kernels
// the allocator by value. How the pool is set up is the allocator's own
// business (its Pool, see raw_allocator.h); the handle adds the error flags
// and forwards what only that allocator's pool offers.
//
//   dynasoar::raw::PoolHandle<dynasoar::cmalloc::CFMMalloc> pool(1ull << 30);
//   my_kernel<<<...>>>(pool.device());   // p = alloc.malloc(bytes); alloc.free(p);
//   pool.check_errors();                 // throws if a malloc returned nullptr
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "dynasoar/allocator/raw/alignment.h"
#include "dynasoar/allocator/raw/pool_error.h"
#include "dynasoar/allocator/raw/pool_options.h"
#include "dynasoar/allocator/raw/raw_allocator.h"
#include "dynasoar/platform/error.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar::raw {

/// Owns the pool of the raw allocator R (its R::Pool) and hands kernels the
/// allocator by value. Host only; it moves but does not copy.
template <RawAllocator R>
class PoolHandle {
 public:
  /// The stream that orders the pool's set-up and checks.
  using Stream = platform::Stream;
  /// The allocator's host-side pool, which this handle owns.
  using Pool = typename R::Pool;
  /// True where the pool's memory is a heap that outlives the pool (CUDA's
  /// device heap): what is still allocated when the pool goes stays
  /// allocated, so owners of allocations free them first.
  static constexpr bool kHeapOutlivesPool = [] {
    if constexpr (requires { Pool::kHeapOutlivesPool; })
      return static_cast<bool>(Pool::kHeapOutlivesPool);
    else
      return false;
  }();

  /// A pool of `bytes` bytes (rounded down to 16). Throws std::invalid_argument
  /// for a pool the allocator cannot address or set up with these options.
  explicit PoolHandle(std::uint64_t bytes, PoolOptions options = {}, Stream s = {})
      : stream_(s), pool_(take_error_flags(bytes, s), options, s, alloc_) {
    platform::synchronize(s);
  }

  /// A pool of an allocator that has settings of its own (e.g.
  /// scatter::Options), made with those.
  template <class Options>
    requires(!std::same_as<Options, PoolOptions> &&
             std::constructible_from<Pool, std::uint64_t, const Options&, Stream, R&>)
  PoolHandle(std::uint64_t bytes, const Options& options, Stream s = {})
      : stream_(s), pool_(take_error_flags(bytes, s), options, s, alloc_) {
    platform::synchronize(s);
  }

  PoolHandle(const PoolHandle&) = delete;
  PoolHandle& operator=(const PoolHandle&) = delete;
  /// Pools move: the memory stays where it is, so `device()` allocators made
  /// before the move stay valid. The moved-from pool owns nothing; it may
  /// only be destroyed or assigned to. Host only; not while kernels run.
  PoolHandle(PoolHandle&&) noexcept = default;
  /// Frees this pool, then takes over `other`'s (see the move constructor).
  PoolHandle& operator=(PoolHandle&& other) noexcept {
    if (this != &other) {
      std::destroy_at(this);
      std::construct_at(this, std::move(other));
    }
    return *this;
  }
  /// Frees the pool (its Pool's destructor: an allocator on CUDA's device
  /// heap that keeps blocks of it aside gives them back there first).
  ~PoolHandle() = default;

  /// The allocator for kernels (pass by value): malloc(bytes), free(p).
  R device() const { return alloc_; }

  /// Pool bytes (for CudaMalloc: the device heap's size, which may exceed
  /// the request if an earlier pool set it larger).
  std::uint64_t bytes() const { return pool_.bytes(); }

  /// Address range of the pool, for tests: [begin, end) (pools of their own
  /// memory; not CUDA's device heap).
  std::uint64_t begin() const
    requires requires(const Pool& p) { p.begin(); }
  {
    return pool_.begin();
  }
  /// End of that range (see begin()).
  std::uint64_t end() const
    requires requires(const Pool& p) { p.end(); }
  {
    return pool_.end();
  }

  /// The pre-split pattern (circular allocators).
  decltype(auto) presplit() const
    requires requires(const Pool& p) { p.presplit(); }
  {
    return pool_.presplit();
  }

  /// Walks the chunk list of a circular pool (a copy on the host; no kernel
  /// may run meanwhile) and measures its fragmentation. `requested(data)`
  /// gives the bytes asked for by the allocation whose data starts at `data`
  /// (a host pointer into the copy), so that callers who store the size (the
  /// object API does, in its header) can report Eq. 2 exactly.
  template <class Requested>
  auto fragmentation(Requested&& requested) const
    requires requires(const Pool& p) { p.fragmentation(requested); }
  {
    return pool_.fragmentation(requested);
  }

  /// Bump allocators (they cannot free): make the whole pool free again.
  /// Every pointer from the pool must be dead. Waits for the stream.
  void reset()
    requires requires(Pool& p) { p.reset(); }
  {
    pool_.reset();
  }

  /// Whether a malloc returned nullptr since the flag was last cleared. Waits
  /// for the stream.
  bool out_of_memory() const { return (error_flags() & kPoolOutOfMemory) != 0; }

  /// Clears the out-of-memory flag (after the caller has reported it).
  void clear_errors() {
    error_.clear(stream_);
    platform::synchronize(stream_);
  }

  /// Whether a free was given a pointer that is no live allocation of the
  /// pool (allocators that check their pointers). Waits for the stream.
  bool bad_free() const { return (error_flags() & kPoolBadFree) != 0; }

  /// Throws std::logic_error (and clears the flags) if a free was given a
  /// pointer that is no live allocation (see bad_free), else OutOfMemory (and
  /// clears the flag) if a malloc returned nullptr.
  void check_errors() {
    const unsigned e = error_flags();  // one copy for both flags
    if ((e & kPoolBadFree) != 0) {
      clear_errors();
      throw std::logic_error(std::string("dynasoar: ") + R::kName +
                             ": free was given a pointer that is no live allocation of this pool "
                             "(freed twice, from another pool, or not the start of an "
                             "allocation); nothing was freed");
    }
    if ((e & kPoolOutOfMemory) == 0) return;
    clear_errors();
    throw OutOfMemory(std::string("dynasoar: ") + R::kName + " pool of " +
                      std::to_string(bytes()) +
                      " bytes is out of memory; at least one malloc returned nullptr");
  }

 private:
  // The error flags, before the allocator's Pool sets up the rest; refuses
  // a pool of fewer than four granules. Returns `bytes` for the Pool.
  std::uint64_t take_error_flags(std::uint64_t bytes, Stream s) {
    if (bytes / kAlignment < 4)
      throw std::invalid_argument(std::string(R::kName) + ": a pool of " +
                                  std::to_string(bytes) + " bytes is too small");
    error_.reset(s);
    alloc_.error = error_.data();
    return bytes;
  }

  // The PoolError flags after everything queued. Waits for the stream.
  unsigned error_flags() const { return error_.read(stream_); }

  Stream stream_;
  R alloc_{};
  platform::ErrorFlags error_;  // PoolError flags
  Pool pool_;                   // last: it is set up with the flags in place, and goes first
};

}  // namespace dynasoar::raw
