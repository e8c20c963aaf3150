// The CMalloc family's own patterns (Vinkler & Havran 2014): the pre-split
// of Eq. 1 and AWMalloc's wrap to the pool's start. The raw conformance
// suite (test/raw/raw_conformance_test.cpp) runs every allocator of the
// family besides. Host tier and device tier.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dynasoar/allocator/cmalloc/bump_malloc.h"
#include "dynasoar/allocator/cmalloc/circular_malloc.h"
#include "dynasoar/allocator/raw/pool_handle.h"

namespace dynasoar::cmalloc {
namespace {

using platform::Buffer;
using raw::PoolHandle;
using raw::PoolOptions;

// --- the pre-split pattern (Eq. 1) ----------------------------------------------------

TEST(CMallocPreSplit, BinaryHeapPatternCoversThePool) {
  for (std::uint32_t heaps : {1u, 3u, 132u}) {
    for (std::uint64_t granules : {4096ull + 1, 100000ull, (1ull << 22) + 7}) {
      if (granules < 1 + 4ull * heaps) continue;
      SCOPED_TRACE("heaps " + std::to_string(heaps) + " granules " + std::to_string(granules));
      const PreSplit p = PreSplit::plan(granules, heaps, 4);
      EXPECT_GE(p.root >> (p.levels - 1), 4u) << "the deepest level keeps the minimum chunk";
      EXPECT_LT((p.region / (p.levels + 1)) >> p.levels, 4u) << "one level more would not";
      std::uint32_t at = 0;
      for (std::uint32_t h = 0; h < heaps; ++h) {
        for (std::uint64_t i = 0; i < p.chunks_per_heap(); ++i) {
          ASSERT_EQ(p.chunk_start(h, i), at)
              << "chunks are contiguous, heap " << h << " chunk " << i;
          const std::uint32_t size = p.chunk_end(h, i) - at;
          const int level = 63 - platform::clz(i + 1);
          if (i + 1 < p.chunks_per_heap()) {
            EXPECT_EQ(size, p.root >> level) << "C(i) = R / 2^floor(log2 i)";
          } else {
            EXPECT_GE(size, p.root >> level) << "the last chunk takes what is left";
          }
          at = p.chunk_end(h, i);
        }
      }
      EXPECT_EQ(at, granules - 1) << "the sentinel follows the last chunk";
    }
  }
  EXPECT_THROW(PreSplit::plan(10, 4, 4), std::invalid_argument);
}

// AWMalloc (Alg. 2): a request that does not fit at the end of the pool
// wraps to its start.
struct SequentialAllocations {
  AWMalloc alloc;
  std::uint64_t* out;
  int n;
  std::uint64_t bytes;
  DYNASOAR_HD void operator()(std::size_t) const {
    for (int i = 0; i < n; ++i) out[i] = reinterpret_cast<std::uint64_t>(alloc.malloc(bytes));
  }
};

TEST(CMallocAWMalloc, WrapsToThePoolStart) {
  PoolHandle<AWMalloc> pool(1024);
  Buffer<std::uint64_t> out(20);
  platform::parallel_for(1, SequentialAllocations{pool.device(), out.data(), 20, 96});
  const std::vector<std::uint64_t> p = out.to_vector();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(p[i], pool.begin() + 96u * i) << i;
  EXPECT_EQ(p[10], pool.begin()) << "the 11th request does not fit in the 64 bytes left: it wraps";
  EXPECT_EQ(p[11], pool.begin() + 96u);
  EXPECT_FALSE(pool.out_of_memory());
}

}  // namespace
}  // namespace dynasoar::cmalloc
