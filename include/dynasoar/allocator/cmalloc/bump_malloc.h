// The two bump-pointer allocators of Vinkler & Havran (2014): one
// atomicAdd per request, no headers. They are the lower bound the other
// allocators are measured against; neither is a full allocator.
//
//   AtomicMalloc (Alg. 1): the offset only grows; memory is never reused and
//                          free() does nothing.
//   AWMalloc (Alg. 2):     the offset wraps to the start of the pool when a
//                          request does not fit at the end. Memory that is
//                          still in use is then handed out again: correct
//                          only if every allocation dies before the pool
//                          wraps around to it (Sec. 5.1). free() does nothing.
#pragma once

#include <cstdint>

#include "dynasoar/allocator/raw/alignment.h"
#include "dynasoar/allocator/raw/pool_error.h"
#include "dynasoar/allocator/raw/pool_memory.h"
#include "dynasoar/allocator/raw/pool_options.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar::cmalloc {

// The raw layer's alignment and out-of-memory flag, which this family's
// code names unqualified.
using raw::aligned_size;
using raw::kAlignment;
using raw::kPoolOutOfMemory;

class BumpPool;

/// What both bump allocators are: a pool with one offset counter that every
/// request advances, and no list of chunks.
struct BumpMalloc {
  /// False: free() does nothing and memory comes back only through reset().
  static constexpr bool kCanFree = false;
  /// The host side of the pool: its memory and the offset counter.
  using Pool = BumpPool;

  std::uint64_t mem;           ///< address of the pool (16-byte aligned)
  std::uint64_t bytes;         ///< pool size, a multiple of 16
  unsigned long long* offset;  ///< the paper's memOffset
  unsigned* error;             ///< raw::PoolError flags (see each allocator)

  /// Does nothing: a bump allocator cannot free (device and host code).
  DYNASOAR_HD void free(void*) const {}
};

/// Alg. 1: the offset only grows; the error flag is set once the pool is used up.
struct AtomicMalloc : BumpMalloc {
  /// Name used in error messages.
  static constexpr const char* kName = "AtomicMalloc";
  /// Name of the back end (CMake's DYNASOAR_BACKEND).
  static constexpr const char* kBackend = "atomic_malloc";

  /// 16-byte aligned memory for `n` bytes, or nullptr once the pool is used up.
  DYNASOAR_HD void* malloc(std::uint64_t n) const {
    const std::uint64_t size = aligned_size(n);
    const std::uint64_t at = platform::atomic_fetch_add(offset, static_cast<unsigned long long>(size));
    if (size > bytes || at > bytes - size) {  // the offset keeps growing; 64 bits do not wrap
      platform::atomic_fetch_or(error, static_cast<unsigned>(kPoolOutOfMemory));
      return nullptr;
    }
    return reinterpret_cast<void*>(mem + at);
  }
};

/// Alg. 2, with 64-bit offsets: the offset wraps to the start of the pool;
/// the error flag is set only for a request larger than the pool.
struct AWMalloc : BumpMalloc {
  /// Name used in error messages.
  static constexpr const char* kName = "AWMalloc";
  /// Name of the back end (CMake's DYNASOAR_BACKEND).
  static constexpr const char* kBackend = "aw_malloc";
  /// True: once the offset wraps, malloc hands out memory that an earlier
  /// allocation may still use (programs that keep memory cannot run on it).
  static constexpr bool kReusesLiveMemory = true;

  /// 16-byte aligned memory for `n` bytes; nullptr only if n exceeds the pool.
  /// May return memory that an earlier allocation still uses (see above).
  DYNASOAR_HD void* malloc(std::uint64_t n) const {
    const std::uint64_t size = aligned_size(n);
    if (size > bytes) {
      platform::atomic_fetch_or(error, static_cast<unsigned>(kPoolOutOfMemory));
      return nullptr;
    }
    const auto step = static_cast<unsigned long long>(size);
    unsigned long long at = platform::atomic_fetch_add(offset, step);
    if (at + size <= bytes) return reinterpret_cast<void*>(mem + at);
    // Past the end: wrap to the start, unless another thread already did.
    // Alg. 2 leaves the loop when the offset it saw is inside the pool and
    // then returns the `size` bytes below that offset, which another thread
    // has just been given; here a request that does not fit always wraps.
    unsigned long long expected = at + size;
    for (;;) {
      if (platform::atomic_compare_exchange(offset, expected, step)) return reinterpret_cast<void*>(mem);
      if (expected + size <= bytes) {  // wrapped by another thread: allocate normally
        at = platform::atomic_fetch_add(offset, step);
        if (at + size <= bytes) return reinterpret_cast<void*>(mem + at);
        expected = at + size;
      }
    }
  }
};

/// The pool of a bump allocator on the host: its memory and the offset
/// counter, owned by the raw::PoolHandle of AtomicMalloc or AWMalloc.
class BumpPool {
 public:
  /// A pool of `bytes` (rounded down to 16) for `alloc`, its counter zeroed
  /// on `s`.
  BumpPool(std::uint64_t bytes, const raw::PoolOptions&, platform::Stream s, BumpMalloc& alloc)
      : memory_(bytes), counter_(1), stream_(s) {
    alloc.mem = memory_.address();
    counter_.zero(s);
    alloc.bytes = memory_.bytes();
    alloc.offset = counter_.data();
  }

  /// Pool bytes.
  std::uint64_t bytes() const { return memory_.bytes(); }
  /// Address range of the pool, for tests: [begin, end).
  std::uint64_t begin() const { return memory_.address(); }
  /// End of that range (see begin()).
  std::uint64_t end() const { return memory_.address() + memory_.bytes(); }

  /// Makes the whole pool free again (the allocators cannot free). Every
  /// pointer from the pool must be dead. Waits for the stream.
  void reset() {
    counter_.zero(stream_);
    platform::synchronize(stream_);
  }

 private:
  raw::PoolMemory memory_;
  platform::Buffer<unsigned long long> counter_;  // the paper's memOffset
  platform::Stream stream_;
};

}  // namespace dynasoar::cmalloc
