// PoolHandle: owns the memory pool of one allocator of the CMalloc family
// (RAII) and gives kernels the allocator by value.
//
//   dynasoar::cmalloc::PoolHandle<dynasoar::cmalloc::CFMMalloc> pool(1ull << 30);
//   my_kernel<<<...>>>(pool.device());   // p = alloc.malloc(bytes); alloc.free(p);
//   pool.check_errors();                 // throws if a malloc returned nullptr
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "allocator/cmalloc/bump_malloc.h"
#include "allocator/cmalloc/circular_malloc.h"
#include "allocator/cmalloc/presplit.h"
#include "platform/error.h"
#include "platform/executor.h"
#include "platform/memory.h"

namespace dynasoar::cmalloc {

struct PoolOptions {
  /// A chunk larger than request * max_frag is split (Alg. 3, MAX_FRAG).
  std::uint32_t max_frag = 2;
  /// Smallest chunk of the pre-split pattern (Eq. 1), header included.
  std::uint64_t min_chunk_bytes = 64;
  /// Heaps of the multi-offset variants; 0: one per multiprocessor (Sec. 5.4).
  std::uint32_t heaps = 0;
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
}  // namespace detail

template <class Alloc>
class PoolHandle {
 public:
  using Stream = platform::Stream;

  /// A pool of `bytes` bytes (rounded down to 16). Throws std::invalid_argument
  /// for a pool the allocator cannot address or pre-split.
  explicit PoolHandle(std::uint64_t bytes, PoolOptions options = {}, Stream s = {}) : stream_(s) {
    const std::uint64_t granules = bytes / kAlignment;
    if (granules < 4)
      throw std::invalid_argument(std::string(Alloc::kName) + ": a pool of " + std::to_string(bytes) +
                                  " bytes is too small");
    error_ = platform::Buffer<unsigned>(1);
    error_.zero(s);
    pool_ = platform::Buffer<std::uint64_t>(granules * 2);  // 16 bytes per granule
    alloc_.mem = reinterpret_cast<std::uint64_t>(pool_.data());
    alloc_.error = error_.data();
    if constexpr (Alloc::kCircular) {
      if (granules > kMaxGranules)
        throw std::invalid_argument(std::string(Alloc::kName) + ": at most " +
                                    std::to_string(kMaxGranules * kAlignment) + " bytes (31-bit offsets)");
      if (options.max_frag < 1) throw std::invalid_argument(std::string(Alloc::kName) + ": max_frag must be >= 1");
      const std::uint32_t heaps =
          Alloc::kMultiOffset ? (options.heaps != 0 ? options.heaps : platform::processors()) : 1;
      plan_ = PreSplit::plan(granules, heaps,
                             static_cast<std::uint32_t>((options.min_chunk_bytes + kAlignment - 1) / kAlignment));
      offsets_ = platform::Buffer<std::uint32_t>(heaps);
      std::vector<std::uint32_t> roots(heaps);
      for (std::uint32_t h = 0; h < heaps; ++h) roots[h] = plan_.heap_start(h);
      offsets_.copy_from_host(roots.data(), heaps, 0, s);
      alloc_.granules = static_cast<std::uint32_t>(granules);
      alloc_.heaps = heaps;
      alloc_.offsets = offsets_.data();
      alloc_.max_frag = options.max_frag;
      platform::parallel_for(static_cast<std::size_t>(plan_.chunks_per_heap() * heaps),
                             detail::WriteChunks<Alloc>{alloc_, plan_}, s);
    } else {
      counter_ = platform::Buffer<unsigned long long>(1);
      counter_.zero(s);
      alloc_.bytes = granules * kAlignment;
      alloc_.offset = counter_.data();
    }
    platform::synchronize(s);
  }

  PoolHandle(const PoolHandle&) = delete;
  PoolHandle& operator=(const PoolHandle&) = delete;

  /// The allocator for kernels (pass by value): malloc(bytes), free(p).
  Alloc device() const { return alloc_; }

  std::uint64_t bytes() const { return pool_.size() * sizeof(std::uint64_t); }
  /// Address range of the pool, for tests: [begin, end).
  std::uint64_t begin() const { return alloc_.mem; }
  std::uint64_t end() const { return alloc_.mem + bytes(); }
  /// The pre-split pattern (circular allocators).
  const PreSplit& presplit() const { return plan_; }

  bool out_of_memory() const {
    unsigned e = 0;
    error_.copy_to_host(&e, 1, 0, stream_);
    return (e & kPoolOutOfMemory) != 0;
  }

  /// Throws OutOfMemory (and clears the flag) if a malloc returned nullptr.
  void check_errors() {
    if (!out_of_memory()) return;
    error_.zero(stream_);
    platform::synchronize(stream_);
    throw OutOfMemory(std::string("dynasoar: ") + Alloc::kName + " pool of " + std::to_string(bytes()) +
                      " bytes is out of memory; at least one malloc returned nullptr");
  }

 private:
  Stream stream_;
  Alloc alloc_{};
  PreSplit plan_{};
  platform::Buffer<std::uint64_t> pool_;
  platform::Buffer<unsigned> error_;
  platform::Buffer<std::uint32_t> offsets_;
  platform::Buffer<unsigned long long> counter_;
};

}  // namespace dynasoar::cmalloc
