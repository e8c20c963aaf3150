// PoolHandle: owns the memory pool of one allocator of the CMalloc family
// (RAII) and gives kernels the allocator by value.
//
//   dynasoar::cmalloc::PoolHandle<dynasoar::cmalloc::CFMMalloc> pool(1ull << 30);
//   my_kernel<<<...>>>(pool.device());   // p = alloc.malloc(bytes); alloc.free(p);
//   pool.check_errors();                 // throws if a malloc returned nullptr
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dynasoar/allocator/cmalloc/bump_malloc.h"
#include "dynasoar/allocator/cmalloc/circular_malloc.h"
#include "dynasoar/allocator/cmalloc/presplit.h"
#include "dynasoar/allocator/cuda_malloc/cuda_malloc.h"
#include "dynasoar/allocator/raw/pool_error.h"
#include "dynasoar/allocator/raw/pool_options.h"
#include "dynasoar/allocator/scatter/scatter_alloc.h"
#include "dynasoar/platform/error.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar::cmalloc {

/// A raw allocator that lays out its own pool (e.g. ScatterAlloc): it
/// has its own settings type `Options`, which `options_from` fills from
/// these PoolOptions (a handle may also be given the Options themselves);
/// PoolHandle gives it the pool and a zeroed side table of
/// `metadata_words(bytes, options)` 64-bit words, and `attach` checks the
/// settings and lays the pool out. Its errors are the PoolError flags.
template <class Alloc>
concept SetsUpItsPool = requires(Alloc a, std::uint64_t n, std::uint64_t* meta,
                                 const raw::PoolOptions& po, const typename Alloc::Options& o) {
  { Alloc::options_from(po) } -> std::convertible_to<typename Alloc::Options>;
  { Alloc::metadata_words(n, o) } -> std::same_as<std::uint64_t>;
  a.attach(n, n, meta, o);
};

/// Fragmentation of a circular pool (Vinkler & Havran 2014 Sec. 8, after Steinberger et
/// al.): regions are the chunks of the list, header included.
struct PoolFragmentation {
  std::uint64_t used_chunks = 0;         ///< chunks marked used (the sentinel excluded)
  std::uint64_t free_chunks = 0;         ///< chunks marked free
  std::uint64_t free_bytes = 0;          ///< bytes of the free chunks, headers included
  std::uint64_t largest_free_bytes = 0;  ///< bytes of the largest free chunk
  /// Eq. 2: mean over used chunks of (size - requested) / size.
  double internal = 0;
  /// Eq. 3: 1 - largest free chunk / all free bytes (0: all free memory in one piece).
  double external = 0;
};

namespace detail {
template <class Alloc>
struct WriteChunks {  // the pre-split headers, one chunk per index
  Alloc alloc;
  PreSplit plan;
  DYNASOAR_HD void operator()(std::size_t k) const {
    const auto h = static_cast<std::uint32_t>(k / plan.chunks_per_heap());
    const std::uint64_t i = k % plan.chunks_per_heap();
    alloc.init_free(plan.chunk_start(h, i), plan.chunk_end(h, i));
    if (k == 0) alloc.init_sentinel();
  }
};
template <class Alloc>
struct DrainQueue {  // one queue's blocks back to the device heap
  Alloc alloc;
  DYNASOAR_HD void operator()(std::size_t q) const {
    alloc.drain_queue(static_cast<std::uint32_t>(q));
  }
};
}  // namespace detail

/// Owns the pool of one allocator of the CMalloc family (`Alloc`: AtomicMalloc,
/// AWMalloc, CudaMalloc or a CircularMalloc) and hands kernels the allocator by
/// value. Host only; move and copy are disabled.
template <class Alloc>
class PoolHandle {
 public:
  /// The stream that orders the pool's set-up and checks.
  using Stream = platform::Stream;

  /// A pool of `bytes` bytes (rounded down to 16). Throws std::invalid_argument
  /// for a pool the allocator cannot address or pre-split.
  explicit PoolHandle(std::uint64_t bytes, raw::PoolOptions options = {}, Stream s = {}) : stream_(s) {
    const std::uint64_t granules = take_pool(bytes, s);
    if constexpr (SetsUpItsPool<Alloc>) {
      attach(granules, Alloc::options_from(options), s);
    } else if constexpr (Alloc::kDeviceHeap) {
      device_heap_bytes_ = reserve_device_heap(bytes);
    } else {
      set_up_pool(granules, options, s);
    }
    platform::synchronize(s);
  }

  /// A pool of an allocator that lays out its own pool (SetsUpItsPool),
  /// with that allocator's own settings (e.g. scatter::Options).
  template <class Options>
  PoolHandle(std::uint64_t bytes, const Options& options, Stream s = {}) requires
      SetsUpItsPool<Alloc> && std::same_as<Options, typename Alloc::Options> : stream_(s) {
    attach(take_pool(bytes, s), options, s);
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
  /// Frees the pool. An allocator on CUDA's device heap that keeps blocks
  /// of it aside (XMallocOnCudaMalloc's queues) gives them back first: the
  /// heap outlives the pool. Allocations still live stay in the heap, as
  /// they would with CudaMalloc.
  ~PoolHandle() { give_back_held_blocks(); }

 private:
  // The error flag and (but for CUDA's device heap) the pool's memory;
  // returns the pool's granules.
  std::uint64_t take_pool(std::uint64_t bytes, Stream s) {
    const std::uint64_t granules = bytes / kAlignment;
    if (granules < 4)
      throw std::invalid_argument(std::string(Alloc::kName) + ": a pool of " +
                                  std::to_string(bytes) + " bytes is too small");
    error_.reset(s);
    alloc_.error = error_.data();
    if constexpr (!Alloc::kDeviceHeap) {
      pool_ = platform::Buffer<std::uint64_t>(granules * 2);  // 16 bytes per granule
      alloc_.mem = reinterpret_cast<std::uint64_t>(pool_.data());
    }
    return granules;
  }

  // The zeroed side table of an allocator that sets up its own pool (on
  // CUDA's device heap: of the heap's bytes, once it is sized).
  template <class Options>
  void attach(std::uint64_t granules, const Options& options, Stream s) {
    std::uint64_t bytes = granules * kAlignment;
    if constexpr (Alloc::kDeviceHeap) bytes = device_heap_bytes_ = reserve_device_heap(bytes);
    const std::uint64_t words = Alloc::metadata_words(bytes, options);
    metadata_ = platform::Buffer<std::uint64_t>(words == 0 ? 1 : words);
    metadata_.zero(s);
    alloc_.attach(alloc_.mem, bytes, metadata_.data(), options);
  }

  // The circular allocators' pre-split chunks and offsets; the bump
  // allocators' counter.
  void set_up_pool(std::uint64_t granules, const raw::PoolOptions& options, Stream s) {
    if constexpr (Alloc::kCircular) {
      if (granules > kMaxGranules)
        throw std::invalid_argument(std::string(Alloc::kName) + ": at most " +
                                    std::to_string(kMaxGranules * kAlignment) +
                                    " bytes (31-bit offsets)");
      if (options.max_frag < 1)
        throw std::invalid_argument(std::string(Alloc::kName) + ": max_frag must be >= 1");
      if (options.heaps_per_processor < 1)
        throw std::invalid_argument(std::string(Alloc::kName) +
                                    ": heaps_per_processor must be >= 1");
      const std::uint32_t heaps =
          Alloc::kMultiOffset
              ? (options.heaps != 0 ? options.heaps
                                    : platform::processors() * options.heaps_per_processor)
              : 1;
      plan_ = PreSplit::plan(
          granules, heaps,
          static_cast<std::uint32_t>((options.min_chunk_bytes + kAlignment - 1) / kAlignment));
      offsets_ = platform::Buffer<std::uint32_t>(heaps);
      std::vector<std::uint32_t> roots(heaps);
      for (std::uint32_t h = 0; h < heaps; ++h) roots[h] = plan_.heap_start(h);
      offsets_.copy_from_host(roots.data(), heaps, 0, s);
      alloc_.granules = static_cast<std::uint32_t>(granules);
      alloc_.heaps = heaps;
      alloc_.per_processor = options.heaps_per_processor;
      alloc_.region = plan_.region;
      alloc_.offsets = offsets_.data();
      alloc_.max_frag = options.max_frag;
      alloc_.coalesce = options.coalesce;
      alloc_.merge_after_small = options.merge_on_walk ? kMergeAfterSmall : ~std::uint32_t{0};
      platform::parallel_for(static_cast<std::size_t>(plan_.chunks_per_heap() * heaps),
                             detail::WriteChunks<Alloc>{alloc_, plan_}, s);
    } else {
      counter_ = platform::Buffer<unsigned long long>(1);
      counter_.zero(s);
      alloc_.bytes = granules * kAlignment;
      alloc_.offset = counter_.data();
    }
  }

 public:
  /// The allocator for kernels (pass by value): malloc(bytes), free(p).
  Alloc device() const { return alloc_; }

  /// Pool bytes (for CudaMalloc: the device heap's size, which may exceed
  /// the request if an earlier pool set it larger).
  std::uint64_t bytes() const {
    return Alloc::kDeviceHeap ? device_heap_bytes_ : pool_.size() * sizeof(std::uint64_t);
  }
  /// Address range of the pool, for tests: [begin, end) (not for CudaMalloc).
  std::uint64_t begin() const { return pool_address(); }
  /// End of that range (see begin()).
  std::uint64_t end() const { return pool_address() + bytes(); }
  /// The pre-split pattern (circular allocators).
  const PreSplit& presplit() const { return plan_; }

  /// Walks the chunk list of a circular pool (a copy on the host; no kernel
  /// may run meanwhile) and measures its fragmentation. `requested(data)`
  /// gives the bytes asked for by the allocation whose data starts at `data`
  /// (a host pointer into the copy), so that callers who store the size (the
  /// object API does, in its header) can report Eq. 2 exactly.
  template <class Requested>
  PoolFragmentation fragmentation(Requested&& requested) const {
    if constexpr (!Alloc::kCircular) {
      throw std::logic_error(std::string(Alloc::kName) +
                             ": fragmentation() is for the circular allocators");
    } else {
      const std::vector<std::uint64_t> words = pool_.to_vector(stream_);
      const auto* bytes = reinterpret_cast<const unsigned char*>(words.data());
      const std::uint32_t sentinel = alloc_.granules - 1;
      PoolFragmentation f;
      double internal_sum = 0;
      for (std::uint32_t g = 0; g < sentinel;) {
        std::uint32_t next = 0;
        bool used = false;
        if constexpr (Alloc::kFusedHeader) {
          std::uint64_t w = 0;
          std::memcpy(&w, bytes + kAlignment * g + 8, sizeof w);
          used = (w & Alloc::kUsedBit) != 0;
          next = static_cast<std::uint32_t>(w) & ~Alloc::kUsedBit;
        } else {
          std::uint32_t flag = 0;
          std::memcpy(&flag, bytes + kAlignment * g + 8, sizeof flag);
          std::memcpy(&next, bytes + kAlignment * g + 12, sizeof next);
          used = (flag & 1u) != 0;
        }
        if (next <= g || next > sentinel)
          throw std::runtime_error(std::string(Alloc::kName) + ": corrupt chunk list at granule " +
                                   std::to_string(g));
        const std::uint64_t size = std::uint64_t{next - g} * kAlignment;
        if (used) {
          ++f.used_chunks;
          const std::uint64_t asked = requested(bytes + kAlignment * (std::uint64_t{g} + 1));
          internal_sum +=
              static_cast<double>(size - std::min(asked, size)) / static_cast<double>(size);
        } else {
          ++f.free_chunks;
          f.free_bytes += size;
          f.largest_free_bytes = std::max(f.largest_free_bytes, size);
        }
        g = next;
      }
      f.internal = f.used_chunks == 0 ? 0.0 : internal_sum / static_cast<double>(f.used_chunks);
      f.external = f.free_bytes == 0 ? 0.0
                                     : 1.0 - static_cast<double>(f.largest_free_bytes) /
                                                 static_cast<double>(f.free_bytes);
      return f;
    }
  }

  /// Bump allocators (they cannot free): make the whole pool free again.
  /// Every pointer from the pool must be dead. Waits for the stream.
  void reset() {
    if constexpr (!Alloc::kCircular && !Alloc::kDeviceHeap && !SetsUpItsPool<Alloc>) {
      counter_.zero(stream_);
      platform::synchronize(stream_);
    } else {
      throw std::logic_error(std::string(Alloc::kName) +
                             ": reset() is for AtomicMalloc and AWMalloc; free instead");
    }
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
  bool bad_free() const { return (error_flags() & raw::kPoolBadFree) != 0; }

  /// Throws std::logic_error (and clears the flags) if a free was given a
  /// pointer that is no live allocation (see bad_free), else OutOfMemory (and
  /// clears the flag) if a malloc returned nullptr.
  void check_errors() {
    const unsigned e = error_flags();  // one copy for both flags
    if ((e & raw::kPoolBadFree) != 0) {
      clear_errors();
      throw std::logic_error(std::string("dynasoar: ") + Alloc::kName +
                             ": free was given a pointer that is no live allocation of this pool "
                             "(freed twice, from another pool, or not the start of an "
                             "allocation); nothing was freed");
    }
    if ((e & kPoolOutOfMemory) == 0) return;
    clear_errors();
    throw OutOfMemory(std::string("dynasoar: ") + Alloc::kName + " pool of " +
                      std::to_string(bytes()) +
                      " bytes is out of memory; at least one malloc returned nullptr");
  }

 private:
  // The PoolError flags after everything queued. Waits for the stream.
  unsigned error_flags() const { return error_.read(stream_); }

  // See the destructor. Nothing for a moved-from pool (no side table).
  void give_back_held_blocks() noexcept {
    if constexpr (Alloc::kDeviceHeap && SetsUpItsPool<Alloc>) {
      if (metadata_.size() == 0) return;
      try {
        platform::parallel_for(static_cast<std::size_t>(alloc_.queue_count()),
                               detail::DrainQueue<Alloc>{alloc_}, stream_);
        platform::synchronize(stream_);
      } catch (...) {  // a destructor must not throw; the blocks stay in CUDA's heap
      }
    }
  }

  std::uint64_t pool_address() const {
    if constexpr (Alloc::kDeviceHeap)
      return 0;
    else
      return alloc_.mem;
  }

  // CUDA fixes the device heap's size when the first kernel that calls
  // malloc runs; until then it can be set. Afterwards a pool no larger than
  // the current heap still works, a larger one cannot be had.
  static std::uint64_t reserve_device_heap(std::uint64_t bytes) {
#if DYNASOAR_CUDA
    std::size_t current = 0;
    DYNASOAR_CUDA_CHECK(cudaDeviceGetLimit(&current, cudaLimitMallocHeapSize));
    if (current < bytes && cudaDeviceSetLimit(cudaLimitMallocHeapSize, bytes) != cudaSuccess) {
      (void)cudaGetLastError();
      throw std::invalid_argument("CudaMalloc: the device heap is fixed at " +
                                  std::to_string(current) +
                                  " bytes (a kernel already allocated); " + std::to_string(bytes) +
                                  " requested. Create the largest pool first.");
    }
    DYNASOAR_CUDA_CHECK(cudaDeviceGetLimit(&current, cudaLimitMallocHeapSize));
    return current;
#else
    return bytes;  // the C library's heap
#endif
  }

  std::uint64_t device_heap_bytes_ = 0;
  Stream stream_;
  Alloc alloc_{};
  PreSplit plan_{};
  platform::Buffer<std::uint64_t> pool_;
  platform::Buffer<std::uint64_t> metadata_;  // a side table (SetsUpItsPool)
  platform::ErrorFlags error_;  // PoolError flags
  platform::Buffer<std::uint32_t> offsets_;
  platform::Buffer<unsigned long long> counter_;
};

}  // namespace dynasoar::cmalloc
