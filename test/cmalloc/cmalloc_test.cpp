// Conformance of the CMalloc family's raw API (paper 000): every allocator
// runs the same typed tests, on host threads (host tier) and in kernels
// (device tier). Allocations are filled with a pattern and checked later,
// so two threads given overlapping memory show up as a broken pattern, and
// the ranges handed out are checked for overlap, alignment and bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "dynasoar/allocator/cmalloc/bump_malloc.h"
#include "dynasoar/allocator/cmalloc/circular_malloc.h"
#include "dynasoar/allocator/cuda_malloc/cuda_malloc.h"
#include "dynasoar/allocator/raw/pool_handle.h"
#include "dynasoar/allocator/scatter/scatter_alloc.h"
#include "dynasoar/allocator/xmalloc/xmalloc.h"
#include "dynasoar/backend.h"
#include "support/backends.h"
#include "support/rng.h"
#include "support/sanitized.h"
#include "support/stress_rounds.h"
#include "support/user_data.h"

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

// --- the typed suite ------------------------------------------------------------------

using test::fill_user_data;
using test::Held;
using test::user_data_intact;

// Allocates `bytes` bytes and fills them with the pattern of `sig`; the
// address is 0 if malloc returned nullptr.
template <class Alloc>
DYNASOAR_HD Held allocate_filled(const Alloc& alloc, std::uint64_t bytes, std::uint64_t sig) {
  const auto address = reinterpret_cast<std::uint64_t>(alloc.malloc(bytes));
  if (address != 0) fill_user_data(address, bytes, sig);
  return {address, bytes, sig};
}
// A random size of 8..max_bytes bytes (a multiple of 8).
DYNASOAR_HD inline std::uint64_t random_size(test::Rng& rng, std::uint64_t max_bytes) {
  return 8 * (1 + rng.below(max_bytes / 8));
}
// allocate_filled for a random size of 8..max_bytes bytes.
template <class Alloc>
DYNASOAR_HD Held allocate_filled(const Alloc& alloc, test::Rng& rng, std::uint64_t max_bytes,
                                 std::uint64_t sig) {
  return allocate_filled(alloc, random_size(rng, max_bytes), sig);
}

// Each worker makes `per_worker` allocations of 8..max_bytes bytes, fills
// them, and keeps them. counters: [0] nullptrs, [1] misaligned.
template <class Alloc>
struct AllocateAndKeep {
  Alloc alloc;
  Held* held;
  unsigned long long* counters;
  std::size_t workers_wanted;
  int per_worker;
  std::uint64_t max_bytes;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t) const {
    if (w >= workers_wanted) return;
    test::Rng rng(0xC3A1, w);
    for (int i = 0; i < per_worker; ++i) {
      const Held h = allocate_filled(
          alloc, rng, max_bytes, platform::mix64(w * 1000003ull + static_cast<std::uint64_t>(i)));
      held[w * static_cast<std::size_t>(per_worker) + static_cast<std::size_t>(i)] = h;
      if (h.address == 0)
        platform::atomic_fetch_add(&counters[0], 1ull);
      else if (h.address % kAlignment != 0)
        platform::atomic_fetch_add(&counters[1], 1ull);
    }
  }
};

struct CheckKept {
  const Held* held;
  unsigned long long* broken;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (held[i].address != 0 && !user_data_intact(held[i].address, held[i].bytes, held[i].sig))
      platform::atomic_fetch_add(broken, 1ull);
  }
};

template <class Alloc>
struct FreeKept {
  Alloc alloc;
  const Held* held;
  DYNASOAR_HD void operator()(std::size_t i) const {
    alloc.free(reinterpret_cast<void*>(held[i].address));
  }
};

// CUDA's device heap outlives a pool: a test that keeps allocations frees
// them there, so that compute-sanitizer's leak check sees only what an
// allocator itself lost (XMallocOnCudaMalloc's queues are given back by
// the pool). A pool of its own is freed whole.
template <class Alloc>
void give_back_to_device_heap(const PoolHandle<Alloc>& pool, const Buffer<Held>& held) {
  if constexpr (PoolHandle<Alloc>::kHeapOutlivesPool && Alloc::kCanFree) {
    platform::parallel_for(held.size(), FreeKept<Alloc>{pool.device(), held.data()});
    platform::synchronize();
  }
}

// One worker's churn: `rounds` times, a random one of its kSlots slots is
// freed if it holds memory (its pattern checked first), else filled with
// next_bytes(rng) bytes. Counts the nullptrs and the broken patterns.
constexpr int kSlots = 4;
template <class Alloc, class NextBytes>
DYNASOAR_HD void churn_slots(const Alloc& alloc, test::Rng& rng, Held (&mine)[kSlots],
                             std::size_t w, int rounds, NextBytes next_bytes,
                             unsigned long long& nulls, unsigned long long& broken) {
  for (int r = 0; r < rounds; ++r) {
    Held& h = mine[rng.below(kSlots)];
    if (h.address != 0) {
      if (!user_data_intact(h.address, h.bytes, h.sig)) ++broken;
      alloc.free(reinterpret_cast<void*>(h.address));
      h.address = 0;
      continue;
    }
    h = allocate_filled(alloc, next_bytes(rng),
                        platform::mix64(w * 7919ull + static_cast<std::uint64_t>(r)));
    if (h.address == 0) ++nulls;
  }
}

// Workers that allocate, fill, check and free at random, holding up to
// kSlots allocations each. counters: [0] nullptrs, [1] broken patterns.
template <class Alloc>
struct Churn {
  Alloc alloc;
  unsigned long long* counters;
  std::size_t workers_wanted;
  int rounds;
  std::uint64_t max_bytes;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t) const {
    if (w >= workers_wanted) return;
    test::Rng rng(0x5EED, w);
    Held mine[kSlots] = {};
    unsigned long long nulls = 0, broken = 0;
    const std::uint64_t most = max_bytes;
    churn_slots(
        alloc, rng, mine, w, rounds, [most](test::Rng& g) { return random_size(g, most); }, nulls,
        broken);
    for (Held& h : mine)
      if (h.address != 0) {
        if (!user_data_intact(h.address, h.bytes, h.sig)) ++broken;
        alloc.free(reinterpret_cast<void*>(h.address));
      }
    platform::atomic_fetch_add(&counters[0], nulls);
    platform::atomic_fetch_add(&counters[1], broken);
  }
};

// The Sec. 6 [AD]/[ACD] test: workers, largest request, and its pool: room
// for every allocation of the largest case at once, four times over
// (headers, splits). The largest pool of the suite.
constexpr std::size_t kSec6Workers = platform::kCudaBuild ? 1024 : 16;
constexpr std::uint64_t kSec6Largest = platform::kCudaBuild ? 16384 : 131072;
constexpr int kMaxPerWorker = 10;
constexpr std::uint64_t kSec6PoolBytes =
    4 * kSec6Workers * std::uint64_t{kMaxPerWorker} * (kSec6Largest + 32) + (1u << 20);

template <class Alloc>
class CMallocConformance : public ::testing::Test {
 protected:
  // 8192 on the GPU; 1024 under compute-sanitizer (test::under_sanitizer()).
  static std::size_t workers() {
    if (!platform::kCudaBuild) return 16;
    return test::under_sanitizer() ? 1024 : 8192;
  }
};

// CUDA's device heap cannot grow once a kernel has allocated: it is sized
// for the largest pool of this program before any test runs, whichever
// test of CudaMalloc or XMallocOnCudaMalloc (xmalloc_test.cpp) comes first.
class SizeDeviceHeap : public ::testing::Environment {
 public:
  void SetUp() override { PoolHandle<cuda_malloc::CudaMalloc> largest(kSec6PoolBytes); }
};
[[maybe_unused]] ::testing::Environment* const kSizeDeviceHeap =
    ::testing::AddGlobalTestEnvironment(new SizeDeviceHeap);

// Every raw allocator of dynasoar/backend_list.h (the back ends marked
// `raw`), and XMalloc in front of CUDA's malloc (paper 002's set-up; no back
// end of its own).
using Allocators = test::GTestTypes<
    model::Concat<backend::RawAllocators, model::TypeList<xmalloc::XMallocOnCudaMalloc>>>::type;
struct AllocatorNames {
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};
TYPED_TEST_SUITE(CMallocConformance, Allocators, AllocatorNames);

// The circular allocators run their concurrent tests with warp coalescing
// (the default) and without it (paper 000 as written).
template <class Alloc>
std::vector<PoolOptions> pool_variants() {
  if constexpr (!kIsCircular<Alloc>) return {PoolOptions{}};
  PoolOptions plain;
  plain.coalesce = false;
  return {PoolOptions{}, plain};
}

// Concurrent allocations in a pool with room for all of them: none fails,
// every range is 16-byte aligned, inside the pool and disjoint from all
// others, and every pattern survives the other workers' writes.
TYPED_TEST(CMallocConformance, ConcurrentAllocationsAreDisjointAlignedAndIntact) {
  const std::size_t workers = this->workers();
  constexpr int per_worker = 16;
  constexpr std::uint64_t max_bytes = 256;
  // Four times the largest possible demand (with headers), so that no
  // variant fills up and AWMalloc never wraps.
  for (const PoolOptions& options : pool_variants<TypeParam>()) {
    SCOPED_TRACE(options.coalesce ? "with warp coalescing" : "without warp coalescing");
    PoolHandle<TypeParam> pool(4 * workers * per_worker * (max_bytes + 32), options);
    Buffer<Held> held(workers * per_worker);
    Buffer<unsigned long long> counters(2);
    counters.zero();
    platform::parallel_workers(
        workers, AllocateAndKeep<TypeParam>{pool.device(), held.data(), counters.data(), workers,
                                            per_worker, max_bytes});
    platform::synchronize();
    std::vector<unsigned long long> c = counters.to_vector();
    EXPECT_EQ(c[0], 0u) << "allocations failed in a pool with room";
    EXPECT_EQ(c[1], 0u) << "allocations not 16-byte aligned";
    EXPECT_NO_THROW(pool.check_errors());

    counters.zero();
    platform::parallel_for(workers * per_worker, CheckKept{held.data(), counters.data()});
    EXPECT_EQ(counters.to_vector()[0], 0u) << "patterns overwritten: two allocations overlap";

    std::vector<Held> h = held.to_vector();
    std::sort(h.begin(), h.end(),
              [](const Held& a, const Held& b) { return a.address < b.address; });
    for (std::size_t i = 0; i < h.size(); ++i) {
      if constexpr (requires { pool.begin(); }) {  // CUDA's heap lies where CUDA puts it
        ASSERT_GE(h[i].address, pool.begin());
        ASSERT_LE(h[i].address + h[i].bytes, pool.end());
      }
      if (i > 0) {
        ASSERT_LE(h[i - 1].address + h[i - 1].bytes, h[i].address) << "overlapping ranges";
      }
    }
    give_back_to_device_heap(pool, held);
  }
}

// Many rounds of allocate / check / free by many workers move far more bytes
// through the pool than it holds: memory must be reused, and no pattern may
// break while its owner holds it.
TYPED_TEST(CMallocConformance, FreedMemoryIsReusedWithoutOverlap) {
  if (!TypeParam::kCanFree)
    GTEST_SKIP() << TypeParam::kName << " cannot free (paper 000 Sec. 4.1, 5.1)";
  const std::size_t workers = this->workers();
  // At least 320 rounds: fewer would not move twice the pool through it (checked below).
  const int rounds = std::max(test::stress_rounds(platform::kCudaBuild ? 640 : 20000), 320);
  constexpr std::uint64_t max_bytes = 512;
  // Eight times what the workers can hold at once.
  const std::uint64_t pool_bytes = 8 * workers * kSlots * (max_bytes + 32);
  for (const PoolOptions& options : pool_variants<TypeParam>()) {
    SCOPED_TRACE(options.coalesce ? "with warp coalescing" : "without warp coalescing");
    PoolHandle<TypeParam> pool(pool_bytes, options);
    Buffer<unsigned long long> counters(2);
    counters.zero();
    platform::parallel_workers(
        workers, Churn<TypeParam>{pool.device(), counters.data(), workers, rounds, max_bytes});
    platform::synchronize();
    const std::vector<unsigned long long> c = counters.to_vector();
    EXPECT_EQ(c[1], 0u) << "patterns broken: memory was handed out twice";
    EXPECT_EQ(c[0], 0u) << "allocations failed although the pool had room";
    const double moved = static_cast<double>(workers) * rounds / 2 * (max_bytes / 2);
    EXPECT_GT(moved, 2.0 * static_cast<double>(pool_bytes)) << "the test must cycle the pool";

    // Everything is free again: one more round of allocations succeeds.
    Buffer<Held> held(workers);
    counters.zero();
    platform::parallel_workers(
        workers, AllocateAndKeep<TypeParam>{pool.device(), held.data(), counters.data(), workers, 1,
                                            max_bytes});
    platform::synchronize();
    EXPECT_EQ(counters.to_vector()[0], 0u);
    give_back_to_device_heap(pool, held);
  }
}

// Out of memory: malloc returns nullptr and raises the flag; allocations made
// before are intact, and the pool works again once memory is freed.
TYPED_TEST(CMallocConformance, OutOfMemoryReturnsNullAndCorruptsNothing) {
  if (std::string(TypeParam::kName) == "AWMalloc")
    GTEST_SKIP() << "AWMalloc wraps instead of running out (Sec. 5.1)";
  if (PoolHandle<TypeParam>::kHeapOutlivesPool)
    GTEST_SKIP() << "CudaMalloc: the device heap's size is fixed once a kernel allocated (an "
                    "earlier test did), "
                    "and the host's C library malloc does not run out";
  const std::size_t workers = this->workers();
  constexpr int per_worker = 16;
  constexpr std::uint64_t max_bytes = 256;
  // Room for about half of the requests.
  PoolHandle<TypeParam> pool(workers * per_worker * (max_bytes / 2 + 16) / 2);
  Buffer<Held> held(workers * per_worker);
  Buffer<unsigned long long> counters(2);
  counters.zero();
  platform::parallel_workers(
      workers, AllocateAndKeep<TypeParam>{pool.device(), held.data(), counters.data(), workers,
                                          per_worker, max_bytes});
  platform::synchronize();
  const std::vector<unsigned long long> c = counters.to_vector();
  EXPECT_GT(c[0], 0u) << "the pool must run out in this test";
  EXPECT_LT(c[0], workers * per_worker) << "some allocations must succeed";
  EXPECT_THROW(pool.check_errors(), OutOfMemory);
  EXPECT_FALSE(pool.out_of_memory()) << "check_errors clears the flag";
  counters.zero();
  platform::parallel_for(workers * per_worker, CheckKept{held.data(), counters.data()});
  EXPECT_EQ(counters.to_vector()[0], 0u)
      << "allocations made before the pool ran out were overwritten";
  if (!TypeParam::kCanFree) return;
  platform::parallel_for(workers * per_worker, FreeKept<TypeParam>{pool.device(), held.data()});
  counters.zero();
  // ScatterAlloc splits a page for one size: the few pages of this pool
  // cannot serve as many sizes at once as there are workers, so they ask for
  // one size (16 bytes) here. ScatterAllocPages tests the pages' reset.
  // XMalloc takes its blocks from ScatterAlloc's pages.
  constexpr bool kPaged = std::is_same_v<TypeParam, scatter::ScatterAlloc> ||
                          std::is_same_v<TypeParam, xmalloc::XMalloc>;
  platform::parallel_workers(
      workers, AllocateAndKeep<TypeParam>{pool.device(), held.data(), counters.data(), workers, 1,
                                          kPaged ? 16 : max_bytes});
  platform::synchronize();
  EXPECT_EQ(counters.to_vector()[0], 0u) << "freed memory serves new requests";
}

// Fills the pool with 16-byte requests until one fails, frees them in the
// order they were made, then asks for half the pool.
template <class Alloc>
struct FillFreeThenAskBig {
  Alloc alloc;
  void** small;
  int capacity;
  std::uint64_t big_bytes;
  Held* big;
  int* made;
  DYNASOAR_HD void operator()(std::size_t) const {
    int n = 0;
    while (n < capacity && (small[n] = alloc.malloc(16)) != nullptr) ++n;
    *made = n;
    for (int i = 0; i < n; ++i) alloc.free(small[i]);
    *big = allocate_filled(alloc, big_bytes, 0xB16);
  }
};

// Whether Alloc is a multi-offset circular allocator (it has heaps).
template <class Alloc>
constexpr bool multi_offset() {
  if constexpr (kIsCircular<Alloc>)
    return Alloc::kMultiOffset;
  else
    return false;
}

// Freeing chunks one by one merges each only with a free successor (Alg. 3),
// so freeing in allocation order leaves the pool cut into small free chunks.
// Merge on walk (PoolOptions::merge_on_walk, on by default) joins them when a
// larger request needs the room: an empty pool serves half its size. As the
// paper has it (the option off) the same request fails.
TYPED_TEST(CMallocConformance, EmptiedPoolServesALargeRequest) {
  if constexpr (!kIsCircular<TypeParam>) {
    GTEST_SKIP() << TypeParam::kName << ": the chunk list is specific to the circular allocators";
  } else {
    for (const bool merge : {true, false}) {
      SCOPED_TRACE(merge ? "merge on walk (default)" : "merge on free only (paper 000)");
      PoolOptions options;
      options.heaps = 1;
      options.merge_on_walk = merge;
      constexpr std::uint64_t kPool = std::uint64_t{1} << 20;
      PoolHandle<TypeParam> pool(kPool, options);
      constexpr int kCapacity = 1 << 16;  // more than the pool's 32-byte chunks
      Buffer<void*> small(kCapacity);
      Buffer<Held> big(1);
      Buffer<int> made(1);
      platform::parallel_for(
          1, FillFreeThenAskBig<decltype(pool.device())>{pool.device(), small.data(), kCapacity,
                                                         kPool / 2, big.data(), made.data()});
      platform::synchronize();
      EXPECT_GT(made.to_vector()[0], static_cast<int>(kPool / 64)) << "the pool was filled";
      EXPECT_LT(made.to_vector()[0], kCapacity) << "a request failed once the pool was full";
      pool.clear_errors();  // the failure that ended the filling
      const Held h = big.to_vector()[0];
      if (!merge) {
        EXPECT_EQ(h.address, 0u) << "without merge on walk the emptied pool stays cut into small "
                                    "chunks (if this passes, the test no longer shows the repair)";
        continue;
      }
      ASSERT_NE(h.address, 0u) << "half of an empty pool could not be served";
      EXPECT_GE(h.address, pool.begin());
      EXPECT_LE(h.address + h.bytes, pool.begin() + pool.bytes());
      EXPECT_EQ(
          pool.fragmentation([](const unsigned char*) { return std::uint64_t{0}; }).used_chunks,
          1u);
    }
  }
}

// One thread fills the pool with 16-byte requests; returns them in `out`.
template <class Alloc>
struct FillSmall {
  Alloc alloc;
  void** out;
  int capacity;
  int* made;
  DYNASOAR_HD void operator()(std::size_t) const {
    int n = 0;
    while (n < capacity && (out[n] = alloc.malloc(16)) != nullptr) ++n;
    *made = n;
  }
};

struct ReadWord {
  const std::uint64_t* from;
  std::uint64_t* to;
  DYNASOAR_HD void operator()(std::size_t) const { *to = *from; }
};

// Lanes 0 and 1 of one warp free a and b together; the other lanes free nullptr.
template <class Alloc>
struct FreeTwoTogether {
  Alloc alloc;
  void* a;
  void* b;
  DYNASOAR_HD void operator()(std::size_t i) const {
    alloc.free(i == 0 ? a : i == 1 ? b : nullptr);
  }
};

// A warp that frees the last chunk of one heap and the first chunk of the
// next together must not join them: walks that meet a stale header restart
// from their heap's first chunk, which is therefore never absorbed. (Joining
// them invalidated that header, and every walk from the heap then failed
// after millions of restarts: whole thread blocks' requests failed on an
// empty pool, and the churn test above ran for minutes.)
TYPED_TEST(CMallocConformance, WarpThatFreesAcrossAHeapStartKeepsIt) {
  if constexpr (!multi_offset<TypeParam>()) {
    GTEST_SKIP() << TypeParam::kName << ": heaps are for CMMalloc and CFMMalloc";
  } else {
    if (!platform::kCudaBuild) GTEST_SKIP() << "on the host a warp has one lane";
    PoolOptions options;
    options.heaps = 2;
    constexpr std::uint64_t kPool = std::uint64_t{1} << 16;
    PoolHandle<TypeParam> pool(kPool, options);
    const auto alloc = pool.device();
    constexpr int kCapacity = 1 << 13;  // more than the pool's 32-byte chunks
    Buffer<void*> small(kCapacity);
    Buffer<int> made(1);
    platform::parallel_for(1, FillSmall<TypeParam>{alloc, small.data(), kCapacity, made.data()});
    platform::synchronize();
    pool.clear_errors();
    const int n = made.to_vector()[0];
    ASSERT_LT(n, kCapacity) << "the pool was filled";
    // The chunk that starts heap 1, and the last chunk before it.
    const std::uint64_t start = pool.begin() + kAlignment * (std::uint64_t{alloc.region} + 1);
    void* first = nullptr;
    void* last = nullptr;
    for (void* p : small.to_vector()) {
      const auto a = reinterpret_cast<std::uint64_t>(p);
      if (a == start) first = p;
      if (a != 0 && a < start && (last == nullptr || a > reinterpret_cast<std::uint64_t>(last)))
        last = p;
    }
    ASSERT_NE(first, nullptr) << "the full pool has a chunk at heap 1's start";
    ASSERT_NE(last, nullptr);
    const auto none = [](const unsigned char*) { return std::uint64_t{0}; };
    const PoolFragmentation full = pool.fragmentation(none);
    // The header word (flag/tag and next) of the chunk whose data starts at `data`.
    const auto header = [&](std::uint64_t data) {
      Buffer<std::uint64_t> word(1);
      platform::parallel_for(
          1, ReadWord{reinterpret_cast<const std::uint64_t*>(data - 8), word.data()});
      return word.to_vector()[0];
    };
    const auto next_of = [](std::uint64_t w) {
      return TypeParam::kFusedHeader ? static_cast<std::uint32_t>(w) & ~TypeParam::kUsedBit
                                     : static_cast<std::uint32_t>(w >> 32);
    };
    ASSERT_EQ(next_of(header(reinterpret_cast<std::uint64_t>(last))), alloc.region)
        << "the last chunk of heap 0 ends where heap 1 starts";
    platform::parallel_for(platform::warp::kBuildLanes,
                           FreeTwoTogether<TypeParam>{alloc, last, first});
    platform::synchronize();
    // Heap 1's first header is still a header (its tag is intact).
    const std::uint64_t w = header(start);
    const std::uint32_t tag = TypeParam::kFusedHeader ? static_cast<std::uint32_t>(w >> 32)
                                                      : static_cast<std::uint32_t>(w) | 1u;
    EXPECT_EQ(tag, TypeParam::tag(alloc.region) | (TypeParam::kFusedHeader ? 0u : 1u))
        << "the first chunk of heap 1 was absorbed by the last chunk of heap 0";
    const PoolFragmentation after = pool.fragmentation(none);
    EXPECT_EQ(after.used_chunks, full.used_chunks - 2) << "both chunks are free";
    EXPECT_EQ(after.free_chunks, full.free_chunks + 2) << "and they stay two chunks";
  }
}

}  // namespace
}  // namespace dynasoar::cmalloc

namespace dynasoar::cmalloc {
namespace {

using raw::PoolHandle;
using raw::PoolOptions;

// snippet-begin: pool-kernel
// One thread allocates n requests of `bytes` each, and frees every other one.
template <class Alloc>
struct AllocateSome {
  Alloc alloc;
  void** out;
  int n;
  std::uint64_t bytes;
  DYNASOAR_HD void operator()(std::size_t) const {
    for (int i = 0; i < n; ++i) out[i] = alloc.malloc(bytes);
    for (int i = 0; i < n; i += 2) alloc.free(out[i]);
  }
};
// snippet-end: pool-kernel

// Each thread allocates 16 bytes and frees them again.
template <class Alloc>
struct AllocateAndFree {
  Alloc alloc;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const Held h = allocate_filled(alloc, 16, i);  // the writes tsan.supp names
    if (h.address != 0) alloc.free(reinterpret_cast<void*>(h.address));
  }
};

// The lanes of a warp that allocate together get one chunk cut into one
// chunk per lane; when they free together, the chunks are joined again and
// the remainder of the split is absorbed, so the pool is cut as before.
// (Freeing lane by lane, each lane finds the next lane's chunk still used
// and the pool keeps 32 chunks more; on the host a warp has one lane.)
TYPED_TEST(CMallocConformance, WarpThatFreesTogetherLeavesThePoolAsItWas) {
  if constexpr (!kIsCircular<TypeParam>) {
    GTEST_SKIP() << TypeParam::kName << ": the chunk list is specific to the circular allocators";
  } else {
    PoolOptions options;
    options.heaps = 1;
    PoolHandle<TypeParam> pool(std::uint64_t{1} << 20, options);
    const auto none = [](const unsigned char*) { return std::uint64_t{0}; };
    const PoolFragmentation fresh = pool.fragmentation(none);
    platform::parallel_for(platform::warp::kBuildLanes,
                           AllocateAndFree<decltype(pool.device())>{pool.device()});
    platform::synchronize();
    EXPECT_NO_THROW(pool.check_errors());
    const PoolFragmentation after = pool.fragmentation(none);
    EXPECT_EQ(after.used_chunks, 0u);
    EXPECT_EQ(after.free_chunks, fresh.free_chunks) << "the freed chunks were not joined again";
    EXPECT_EQ(after.largest_free_bytes, fresh.largest_free_bytes);
  }
}

// PoolOptions::heaps_per_processor: the multi-offset variants cut the pool
// into that many heaps per multiprocessor, and serve requests from them;
// zero is refused.
TYPED_TEST(CMallocConformance, HeapsPerProcessorSetsTheNumberOfHeaps) {
  if constexpr (!multi_offset<TypeParam>()) {
    GTEST_SKIP() << TypeParam::kName << ": heaps per multiprocessor are for CMMalloc and CFMMalloc";
  } else {
    // snippet-begin: heaps-per-processor
    PoolOptions options;
    options.heaps_per_processor = 3;
    PoolHandle<TypeParam> pool(std::uint64_t{64} << 20, options);
    EXPECT_EQ(pool.presplit().heaps, 3 * platform::processors());
    platform::parallel_for(4 * platform::warp::kBuildLanes,
                           AllocateAndFree<decltype(pool.device())>{pool.device()});
    platform::synchronize();
    EXPECT_NO_THROW(pool.check_errors());
    // snippet-end: heaps-per-processor
    EXPECT_EQ(pool.fragmentation([](const unsigned char*) { return std::uint64_t{0}; }).used_chunks,
              0u);
    options.heaps_per_processor = 0;
    EXPECT_THROW(PoolHandle<TypeParam>(std::uint64_t{1} << 20, options), std::invalid_argument);
  }
}

// Paper 000 Sec. 8: Eq. 2 and 3 on a fresh pool (nothing used; the free
// chunks are the Eq. 1 pattern) and after 16-byte requests, each of which
// takes a chunk of 32 bytes (one header granule, one data granule), so that
// the internal fragmentation is exactly (32 - 16) / 32.
TYPED_TEST(CMallocConformance, FragmentationFollowsEquations2And3) {
  if constexpr (!kIsCircular<TypeParam>) {
    GTEST_SKIP() << TypeParam::kName
                 << ": fragmentation is measured for the circular allocators (paper 000 Sec. 8)";
  } else {
    PoolOptions options;
    options.heaps = 1;
    PoolHandle<TypeParam> pool(std::uint64_t{1} << 20, options);
    const PreSplit& plan = pool.presplit();
    const PoolFragmentation fresh =
        pool.fragmentation([](const unsigned char*) { return std::uint64_t{0}; });
    EXPECT_EQ(fresh.used_chunks, 0u);
    EXPECT_EQ(fresh.free_chunks, plan.chunks_per_heap());
    EXPECT_EQ(fresh.free_bytes, (std::uint64_t{plan.granules} - 1) * kAlignment);
    std::uint64_t largest = 0;
    for (std::uint64_t i = 0; i < plan.chunks_per_heap(); ++i)
      largest = std::max<std::uint64_t>(
          largest, std::uint64_t{plan.chunk_end(0, i) - plan.chunk_start(0, i)} * kAlignment);
    EXPECT_EQ(fresh.largest_free_bytes, largest);
    EXPECT_DOUBLE_EQ(fresh.external,
                     1.0 - static_cast<double>(largest) / static_cast<double>(fresh.free_bytes));

    constexpr int kRequests = 100;
    Buffer<void*> out(kRequests);
    platform::parallel_for(
        1, AllocateSome<decltype(pool.device())>{pool.device(), out.data(), kRequests, 16});
    platform::synchronize();
    const PoolFragmentation after =
        pool.fragmentation([](const unsigned char*) { return std::uint64_t{16}; });
    EXPECT_EQ(after.used_chunks, kRequests / 2u);
    EXPECT_DOUBLE_EQ(after.internal, 0.5);
    EXPECT_GT(after.external, 0.0);
    EXPECT_LT(after.external, 1.0);
  }
}

}  // namespace
}  // namespace dynasoar::cmalloc

namespace dynasoar::cmalloc {
namespace {

using raw::PoolHandle;

// Paper 000 Sec. 6 as tests: the generic patterns with every byte range
// filled and checked. counters: [0] nullptrs, [1] broken patterns,
// [2] allocations, [3] frees.

// [AD] (k = 1) and [ACD] (k = 10): allocate k blocks of `bytes`, then check
// and free them all.
template <class Alloc>
struct AllocThenFree {
  Alloc alloc;
  int k;
  std::uint64_t bytes;
  unsigned long long* counters;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t) const {
    Held held[kMaxPerWorker] = {};
    for (int i = 0; i < k; ++i) {
      held[i] = allocate_filled(alloc, bytes,
                                platform::mix64(w * 131ull + static_cast<std::uint64_t>(i)));
      if (held[i].address == 0) platform::atomic_fetch_add(&counters[0], 1ull);
    }
    for (int i = 0; i < k; ++i) {
      if (held[i].address == 0) continue;
      if (!user_data_intact(held[i].address, held[i].bytes, held[i].sig))
        platform::atomic_fetch_add(&counters[1], 1ull);
      alloc.free(reinterpret_cast<void*>(held[i].address));
    }
  }
};

// [P], one launch: a worker holding nothing allocates with probability
// 0.75, a worker holding memory checks and frees it with probability 0.75.
template <class Alloc>
struct ProbabilityStep {
  Alloc alloc;
  Held* slot;
  unsigned launch;
  std::uint64_t bytes;
  unsigned long long* counters;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t) const {
    const std::uint64_t r = platform::mix64(w * 0x9E3779B97F4A7C15ull + launch);
    if ((r >> 40) % 4 == 0) return;  // the coin says no (probability 0.25)
    Held& h = slot[w];
    if (h.address == 0) {
      h = allocate_filled(alloc, bytes, platform::mix64(r));
      platform::atomic_fetch_add(&counters[h.address == 0 ? 0 : 2], 1ull);
    } else {
      if (!user_data_intact(h.address, h.bytes, h.sig))
        platform::atomic_fetch_add(&counters[1], 1ull);
      alloc.free(reinterpret_cast<void*>(h.address));
      h = {};
      platform::atomic_fetch_add(&counters[3], 1ull);
    }
  }
};

// After a test that freed everything, a circular pool has no used chunk.
template <class Alloc>
void expect_all_free(const PoolHandle<Alloc>& pool) {
  if constexpr (kIsCircular<Alloc>) {
    EXPECT_EQ(pool.fragmentation([](const unsigned char*) { return std::uint64_t{0}; }).used_chunks,
              0u)
        << "memory still marked used after every allocation was freed";
  }
}

// One run of [AD] (k = 1) or [ACD] (k > 1) of `bytes` by kSec6Workers
// workers in a fresh pool of kSec6PoolBytes, with its checks.
template <class Alloc>
void expect_section6_run(std::uint64_t bytes, int k) {
  PoolHandle<Alloc> pool(kSec6PoolBytes);
  Buffer<unsigned long long> counters(4);
  counters.zero();
  platform::parallel_workers(kSec6Workers,
                             AllocThenFree<Alloc>{pool.device(), k, bytes, counters.data()});
  platform::synchronize();
  const std::vector<unsigned long long> c = counters.to_vector();
  EXPECT_EQ(c[0], 0u) << "allocations failed in a pool with room";
  EXPECT_EQ(c[1], 0u) << "patterns broken: memory was handed out twice";
  EXPECT_NO_THROW(pool.check_errors());
  expect_all_free(pool);
}

TYPED_TEST(CMallocConformance, AllocDeallocPatternsOfSection6) {
  for (const std::uint64_t bytes : {std::uint64_t{16}, std::uint64_t{1024}, kSec6Largest}) {
    for (const int k : {1, kMaxPerWorker}) {
      std::string label = k == 1 ? "[AD] " : "[ACD] ";  // appended, not concatenated:
      label += std::to_string(bytes);                   // GCC 12 -Wrestrict false positive
      SCOPED_TRACE(label + " bytes");
      expect_section6_run<TypeParam>(bytes, k);
    }
  }
}

// A walk that trails a merge on walk steps back to the merging chunk every
// time the merge invalidates the header after it. Counting that chunk's whole
// size at each step back would use up a walk's two circles on a pool with
// room, so that [ACD] of the largest size failed requests now and then in a
// pool with four times the room. Twenty runs, since the failure needs a rare
// schedule; under compute-sanitizer two, since the tools do not make that
// schedule likelier and each run is slow there.
TEST(CMallocWalk, WalksThatTrailAMergeFindRoomForSection6) {
  const int runs = platform::kCudaBuild && !test::under_sanitizer() ? 20 : 2;
  for (int r = 0; r < runs && !::testing::Test::HasFailure(); ++r) {
    SCOPED_TRACE("run " + std::to_string(r) + " of [ACD] " + std::to_string(kSec6Largest) +
                 " bytes");
    expect_section6_run<CFMMalloc>(kSec6Largest, kMaxPerWorker);
  }
}

TYPED_TEST(CMallocConformance, ProbabilityPatternOfSection6) {
  const std::size_t workers = this->workers();
  constexpr std::uint64_t kBytes = 64;
  constexpr unsigned kLaunches = 10;
  PoolHandle<TypeParam> pool(4 * workers * kLaunches * (kBytes + 32) + (1u << 20));
  Buffer<Held> slot(workers);
  slot.zero();
  Buffer<unsigned long long> counters(4);
  counters.zero();
  for (unsigned launch = 0; launch < kLaunches; ++launch)
    platform::parallel_workers(
        workers,
        ProbabilityStep<TypeParam>{pool.device(), slot.data(), launch, kBytes, counters.data()});
  platform::synchronize();
  const std::vector<unsigned long long> c = counters.to_vector();
  EXPECT_EQ(c[0], 0u) << "allocations failed in a pool with room";
  EXPECT_EQ(c[1], 0u) << "patterns broken: memory was handed out twice";
  std::uint64_t holding = 0;
  for (const Held& h : slot.to_vector()) holding += h.address != 0;
  EXPECT_EQ(c[2] - c[3], holding) << "allocations minus frees differ from the memory held";
  EXPECT_GT(c[3], 0u);
  platform::parallel_for(workers, FreeKept<TypeParam>{pool.device(), slot.data()});
  platform::synchronize();
  expect_all_free(pool);
}

}  // namespace
}  // namespace dynasoar::cmalloc

// --- ScatterAlloc's own invariants (paper 003) ---------------------------------------------

namespace dynasoar::cmalloc {
namespace {

using raw::PoolHandle;
using raw::PoolOptions;
using scatter::kPageBytes;
using scatter::PageUsage;
using scatter::ScatterAlloc;

// Reads the usage table after the kernels are done: for every page, its
// count equals its set bits, bits lie within its chunks, a counted page is
// split, and a page of a run holds no chunks. counters: [0] count != bits,
// [1] bits beyond the chunks, [2] count on an unsplit page, [3] a run page
// with a count or bits, [4] set bits, [5] run heads, [6] split pages, [9]
// pages flagged as counted full.
struct AuditPages {
  ScatterAlloc alloc;
  unsigned long long* counters;
  DYNASOAR_HD void operator()(std::size_t q) const {
    PageUsage& p = alloc.pages[q];
    const std::uint32_t chunk = platform::atomic_load(&p.chunk);
    const std::uint32_t count = platform::atomic_load(&p.count);
    const std::uint32_t spots = ScatterAlloc::spots_of(chunk);
    std::uint32_t set = 0;
    bool beyond = false;
    for (std::uint32_t w = 0; w < scatter::kPageWords; ++w) {
      const std::uint64_t bits = platform::atomic_load(&p.bits[w]);
      set += static_cast<std::uint32_t>(platform::popc(bits));
      const std::uint32_t in_word = spots > 64 * w ? spots - 64 * w : 0;
      if ((bits & ~platform::low_bits(in_word < 64 ? in_word : 64)) != 0) beyond = true;
    }
    if (chunk >= ScatterAlloc::kRunHead) {
      if (count != 0 || set != 0) platform::atomic_fetch_add(&counters[3], 1ull);
      if (chunk != ScatterAlloc::kRunTail) platform::atomic_fetch_add(&counters[5], 1ull);
      return;
    }
    if (count != set) platform::atomic_fetch_add(&counters[0], 1ull);
    if (beyond) platform::atomic_fetch_add(&counters[1], 1ull);
    if (count != 0 && spots == 0) platform::atomic_fetch_add(&counters[2], 1ull);
    if (chunk != 0) platform::atomic_fetch_add(&counters[6], 1ull);
    if (platform::atomic_load(&p.counted_full) != 0u)
      platform::atomic_fetch_add(&counters[9], 1ull);
    platform::atomic_fetch_add(&counters[4], static_cast<unsigned long long>(set));
  }
};

// Reads the fill levels after the kernels are done (Sec. 5.4): each group of
// `group_pages` pages (a region, or a super block) counts its pages flagged
// full and the pages of runs, no more and no fewer. counters[slot] gets the
// groups whose counter differs.
struct AuditFillLevels {
  ScatterAlloc alloc;
  const std::int32_t* levels;
  std::uint32_t group_pages;
  unsigned long long* counters;
  int slot;
  DYNASOAR_HD void operator()(std::size_t g) const {
    const std::uint64_t first = g * group_pages;
    const std::uint64_t end = std::min<std::uint64_t>(first + group_pages, alloc.page_count);
    std::int32_t full = 0;
    for (std::uint64_t q = first; q < end; ++q) {
      const PageUsage& p = alloc.pages[q];
      if (platform::atomic_load(&p.counted_full) != 0u ||
          platform::atomic_load(&p.chunk) >= ScatterAlloc::kRunHead)
        ++full;
    }
    if (platform::atomic_load(&levels[g]) != full)
      platform::atomic_fetch_add(&counters[slot], 1ull);
  }
};

// The AuditPages counters, then [7] regions and [8] super blocks whose fill
// level is not their count of full pages.
std::vector<unsigned long long> audit(const PoolHandle<ScatterAlloc>& pool) {
  const ScatterAlloc a = pool.device();
  Buffer<unsigned long long> counters(10);
  counters.zero();
  platform::parallel_for(a.page_count, AuditPages{a, counters.data()});
  platform::parallel_for((a.page_count + a.region_pages - 1) / a.region_pages,
                         AuditFillLevels{a, a.region_full, a.region_pages, counters.data(), 7});
  platform::parallel_for(a.super_blocks,
                         AuditFillLevels{a, a.super_full, a.super_pages, counters.data(), 8});
  platform::synchronize();
  return counters.to_vector();
}

void expect_consistent(const std::vector<unsigned long long>& a) {
  EXPECT_EQ(a[0], 0u) << "pages whose count differs from their set bits";
  EXPECT_EQ(a[1], 0u) << "pages with bits beyond their chunks";
  EXPECT_EQ(a[2], 0u) << "unsplit pages with a count";
  EXPECT_EQ(a[3], 0u) << "pages of a run with a count or bits";
  EXPECT_EQ(a[7], 0u) << "regions whose fill level is not their count of full pages";
  EXPECT_EQ(a[8], 0u) << "super blocks whose fill level is not their count of full pages";
}

// One thread runs a sequence; out[i] records what step i saw.
struct ResetScript {
  ScatterAlloc a;
  std::uint64_t* out;
  DYNASOAR_HD void operator()(std::size_t) const {
    auto at = [](void* p) { return reinterpret_cast<std::uint64_t>(p); };
    void* small = a.malloc(16);
    out[0] = at(small);
    out[1] = at(a.malloc(1000));  // the only page is split for 16 bytes
    a.free(small);
    out[2] = platform::atomic_load(&a.pages[0].chunk);  // reset when it emptied
    void* big[4];
    for (int i = 0; i < 4; ++i) big[i] = a.malloc(1000);
    for (int i = 0; i < 4; ++i) out[3 + i] = at(big[i]);
    out[7] = at(a.malloc(1000));  // four chunks of 1008 bytes: the page is full
    out[8] = platform::atomic_load(&a.pages[0].chunk);
    out[9] = platform::atomic_load(&a.pages[0].count);
    out[10] = static_cast<std::uint64_t>(platform::atomic_load(&a.region_full[0]));
    a.free(big[1]);
    out[11] = static_cast<std::uint64_t>(platform::atomic_load(&a.region_full[0]));
    out[12] = at(a.malloc(1008));  // the freed spot
    a.free(big[0]);
    a.free(big[2]);
    a.free(big[3]);
    a.free(reinterpret_cast<void*>(out[12]));
    out[13] = platform::atomic_load(&a.pages[0].chunk);
    out[14] = platform::atomic_load(&a.pages[0].count);
  }
};

// A page's chunk size is set by the first request and reset when its last
// chunk is freed (paper 003 Sec. 5.2, Alg. free lines 10-16); the region
// counts the page as full while it is (Sec. 5.4).
TEST(CMallocScatter, ChunkSizeOfAPageResetsWhenItEmpties) {
  PoolHandle<ScatterAlloc> pool(kPageBytes);  // one page
  ASSERT_EQ(pool.device().page_count, 1u);
  Buffer<std::uint64_t> out(15);
  platform::parallel_for(1, ResetScript{pool.device(), out.data()});
  platform::synchronize();
  const std::vector<std::uint64_t> r = out.to_vector();
  EXPECT_EQ(r[0], pool.begin());
  EXPECT_EQ(r[1], 0u) << "a page split for 16 bytes served 1000";
  EXPECT_EQ(r[2], 0u) << "the chunk size stayed after the page emptied";
  std::vector<std::uint64_t> spots(r.begin() + 3, r.begin() + 7);
  std::sort(spots.begin(), spots.end());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(spots[i], pool.begin() + 1008u * i) << i;
  EXPECT_EQ(r[7], 0u) << "a fifth chunk of 1008 bytes on a 4096-byte page";
  EXPECT_EQ(r[8], 1008u);
  EXPECT_EQ(r[9], 4u);
  EXPECT_EQ(r[10], 1u) << "the full page is counted in its region";
  EXPECT_EQ(r[11], 0u) << "a free on a full page uncounts it";
  EXPECT_EQ(r[12], r[4]) << "the freed chunk is the only one";
  EXPECT_EQ(r[13], 0u);
  EXPECT_EQ(r[14], 0u);
  EXPECT_THROW(pool.check_errors(), OutOfMemory);  // the two nullptrs raised the flag
  expect_consistent(audit(pool));
}

struct LargeScript {
  ScatterAlloc a;
  std::uint64_t* out;
  DYNASOAR_HD void operator()(std::size_t) const {
    auto at = [](void* p) { return reinterpret_cast<std::uint64_t>(p); };
    const std::uint64_t pool = std::uint64_t{a.page_count} * kPageBytes;
    void* run = a.malloc(11 * kPageBytes - 100);  // 11 pages
    out[0] = at(run);
    if (run != nullptr) fill_user_data(at(run), 11 * kPageBytes - 104, 0xA11);
    out[1] = at(a.malloc(pool + 1));
    std::int32_t full = 0;  // the run's pages count as full in their regions
    for (std::uint32_t r = 0; r < a.page_count / a.region_pages; ++r)
      full += platform::atomic_load(&a.region_full[r]);
    out[7] = static_cast<std::uint64_t>(full);
    void* small = a.malloc(16);
    out[2] = at(small);
    if (small != nullptr) fill_user_data(at(small), 16, 0x5A);
    out[3] = at(a.malloc(pool));  // a page is split and 11 are a run
    out[4] = run != nullptr && user_data_intact(at(run), 11 * kPageBytes - 104, 0xA11);
    out[5] = small != nullptr && user_data_intact(at(small), 16, 0x5A);
    a.free(run);
    a.free(small);
    void* all = a.malloc(pool);
    out[6] = at(all);
    a.free(all);
    full = 0;
    for (std::uint32_t r = 0; r < a.page_count / a.region_pages; ++r)
      full += platform::atomic_load(&a.region_full[r]);
    out[8] = static_cast<std::uint64_t>(full);
  }
};

// Sec. 6.3: a request larger than a page takes a run of whole pages (from
// the top of the pool here); a request larger than the pool, or than the
// longest free run, fails; once everything is freed the whole pool is one run.
TEST(CMallocScatter, RequestLargerThanAPageTakesARunOfPages) {
  constexpr std::uint32_t kPages = 64;
  PoolHandle<ScatterAlloc> pool(std::uint64_t{kPages} * kPageBytes);
  Buffer<std::uint64_t> out(9);
  platform::parallel_for(1, LargeScript{pool.device(), out.data()});
  platform::synchronize();
  const std::vector<std::uint64_t> r = out.to_vector();
  EXPECT_EQ(r[0], pool.begin() + std::uint64_t{kPages - 11} * kPageBytes) << "the top 11 pages";
  EXPECT_EQ(r[1], 0u) << "more than the pool";
  ASSERT_NE(r[2], 0u);
  EXPECT_TRUE(r[2] + 16 <= r[0] || r[2] >= r[0] + 11 * kPageBytes) << "a chunk inside the run";
  EXPECT_EQ(r[3], 0u) << "the whole pool while pages are in use";
  EXPECT_EQ(r[4], 1u) << "the run's bytes were overwritten";
  EXPECT_EQ(r[5], 1u) << "the chunk's bytes were overwritten";
  EXPECT_EQ(r[6], pool.begin()) << "the emptied pool is one run again";
  EXPECT_EQ(r[7], 11u) << "the run's pages count as full in their regions";
  EXPECT_EQ(r[8], 0u) << "and no longer once it is freed";
  EXPECT_THROW(pool.check_errors(), OutOfMemory);
  const std::vector<unsigned long long> a = audit(pool);
  expect_consistent(a);
  EXPECT_EQ(a[5], 0u) << "run pages left after every run was freed";
  EXPECT_EQ(a[6], 0u) << "pages still split after every chunk was freed";
}

// A request of a size that no page holds lands on the page of Eq. 3 (each is
// freed before the next, so its page is reset): out[2k] the page it got,
// out[2k + 1] the page Eq. 3 names.
struct FirstRequestOfEachSize {
  ScatterAlloc a;
  std::uint64_t* out;
  int sizes;
  DYNASOAR_HD void operator()(std::size_t) const {
    const auto mp = static_cast<std::uint32_t>(platform::warp::processor_id());
    for (int k = 0; k < sizes; ++k) {
      const auto size = static_cast<std::uint32_t>(16 * (k + 1));
      const auto p = reinterpret_cast<std::uint64_t>(a.malloc(size));
      out[2 * k] = p == 0 ? ~std::uint64_t{0} : (p - a.mem) / kPageBytes;
      out[2 * k + 1] = a.hash_page(size, mp, platform::warp::warp_slot(), 0);
      a.free(reinterpret_cast<void*>(p));  // the page empties and is reset
    }
  }
};

// Three requests on a two-page pool: 64 bytes split one page; 16 bytes do
// not fit its chunks (64 > max_frag * 16) and split the other page; 48
// bytes fit the first page's chunks (64 <= 2 * 48), not the second's.
// Wherever Eq. 3 starts them, this is the only outcome. out: the pages of
// the 64, 48 and 16-byte requests, and the sum of the pages' chunk sizes.
struct MaxFragDecides {
  ScatterAlloc a;
  std::uint64_t* out;
  DYNASOAR_HD void operator()(std::size_t) const {
    void* p64 = a.malloc(64);
    void* p16 = a.malloc(16);
    void* p[3] = {p64, a.malloc(48), p16};
    for (int i = 0; i < 3; ++i)
      out[i] = p[i] == nullptr ? ~std::uint64_t{0}
                               : (reinterpret_cast<std::uint64_t>(p[i]) - a.mem) / kPageBytes;
    out[3] = platform::atomic_load(&a.pages[0].chunk) + platform::atomic_load(&a.pages[1].chunk);
  }
};

// Sec. 5.3: a request starts at the page Eq. 3 hashes its size and
// multiprocessor to, so requests of different sizes scatter over the super
// block; Alg. alloc line 11: a page serves requests whose size is within
// max_frag of its chunks.
TEST(CMallocScatter, RequestsStartAtTheirEq3PageAndMaxFragPicksThePage) {
  constexpr int kSizes = 16;
  PoolHandle<ScatterAlloc> pool(std::uint64_t{256} * kPageBytes);
  Buffer<std::uint64_t> out(2 * kSizes);
  platform::parallel_for(1, FirstRequestOfEachSize{pool.device(), out.data(), kSizes});
  platform::synchronize();
  const std::vector<std::uint64_t> r = out.to_vector();
  std::vector<std::uint64_t> pages;
  for (int k = 0; k < kSizes; ++k) {
    EXPECT_EQ(r[2 * k], r[2 * k + 1]) << "size " << 16 * (k + 1);
    pages.push_back(r[2 * k]);
  }
  std::sort(pages.begin(), pages.end());
  EXPECT_GE(std::unique(pages.begin(), pages.end()) - pages.begin(), kSizes / 2)
      << "sizes do not scatter over the pages";

  PoolHandle<ScatterAlloc> two(2 * kPageBytes);
  Buffer<std::uint64_t> p(4);
  platform::parallel_for(1, MaxFragDecides{two.device(), p.data()});
  platform::synchronize();
  const std::vector<std::uint64_t> q = p.to_vector();
  ASSERT_LT(q[0], 2u);
  EXPECT_EQ(q[1], q[0]) << "48 bytes fit chunks of 64";
  EXPECT_EQ(q[2], 1 - q[0]) << "16 bytes split the other page";
  EXPECT_EQ(q[3], 64u + 16u);
  EXPECT_NO_THROW(two.check_errors());
}

// One thread fills every page of a pool with a page-sized chunk, then frees
// one page at a time and asks for a page again: the request must find the
// freed page wherever it lies, so the search visits every region (with
// Options::spread in strides of a per-warp step, which must be coprime to
// the regions). out[k]: the page the request got after page k was freed.
struct FindsTheOnlyFreePage {
  ScatterAlloc a;
  std::uint64_t* out;
  DYNASOAR_HD void operator()(std::size_t) const {
    void* held[64] = {};
    const std::uint32_t n = a.page_count < 64 ? a.page_count : 64;
    for (std::uint32_t i = 0; i < n; ++i) held[i] = a.malloc(kPageBytes);
    for (std::uint32_t k = 0; k < n; ++k) {
      if (held[k] == nullptr) {
        out[k] = ~std::uint64_t{0};
        continue;
      }
      const std::uint64_t page = (reinterpret_cast<std::uint64_t>(held[k]) - a.mem) / kPageBytes;
      a.free(held[k]);
      held[k] = a.malloc(kPageBytes);
      out[k] = held[k] == nullptr
                   ? ~std::uint64_t{0}
                   : ((reinterpret_cast<std::uint64_t>(held[k]) - a.mem) / kPageBytes) -
                         page;  // 0: the freed page
    }
    for (std::uint32_t i = 0; i < n; ++i) a.free(held[i]);
  }
};

// Sec. 5.4 with the spread search: in a super block of 15 regions (a count
// with odd factors, so a careless stride would skip some) the only free page
// is found wherever it is, as it is by the paper's linear scan.
TEST(CMallocScatter, SearchVisitsEveryRegionOfASuperBlock) {
  for (const bool spread : {true, false}) {
    SCOPED_TRACE(spread ? "spread search" : "linear search");
    scatter::Options o;
    o.super_block_pages = 60;
    o.region_pages = 4;
    o.spread = spread;
    PoolOptions po;
    po.scatter = o;
    PoolHandle<ScatterAlloc> pool(60 * kPageBytes, po);
    Buffer<std::uint64_t> out(60);
    platform::parallel_for(1, FindsTheOnlyFreePage{pool.device(), out.data()});
    platform::synchronize();
    const std::vector<std::uint64_t> r = out.to_vector();
    for (std::size_t k = 0; k < r.size(); ++k) EXPECT_EQ(r[k], 0u) << "freed page " << k;
    EXPECT_NO_THROW(pool.check_errors());
    expect_consistent(audit(pool));
  }
}

// Not in the paper (Options::active_window): multiprocessor mp starts its
// search in super block active + mp mod window. out[3i]: the calling
// thread's multiprocessor, out[3i + 1]: the super block of its request,
// out[3i + 2]: the request (for the free).
struct StartSuperBlock {
  ScatterAlloc a;
  std::uint64_t* out;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const auto mp = static_cast<std::uint64_t>(platform::warp::processor_id());
    const auto p = reinterpret_cast<std::uint64_t>(a.malloc(16));
    out[3 * i] = mp;
    out[3 * i + 1] = p == 0 ? ~std::uint64_t{0} : (p - a.mem) / kPageBytes / a.super_pages;
    out[3 * i + 2] = p;
  }
};

struct FreeRecorded {
  ScatterAlloc a;
  const std::uint64_t* out;
  DYNASOAR_HD void operator()(std::size_t i) const {
    a.free(reinterpret_cast<void*>(out[3 * i + 2]));
  }
};

// The warps of a GPU spread over a window of super blocks instead of the
// paper's one active super block: in a pool of 8 super blocks with a window
// of 4, every request that finds room in its start super block lands in
// super block mp mod 4 (none fills: 4 096 requests of 16 bytes against 16 384
// chunks per super block), and on the GPU several super blocks are used.
// The search still reaches every page: the only free page of a full pool is
// found wherever it is, with a window over every super block and with one
// over two of three, the last of which is short.
TEST(CMallocScatter, MultiprocessorsStartInTheirSuperBlockOfTheWindow) {
  scatter::Options o;
  o.super_block_pages = 64;
  o.region_pages = 16;
  o.active_window = 4;
  PoolOptions po;
  po.scatter = o;
  PoolHandle<ScatterAlloc> pool(8 * 64 * kPageBytes, po);
  ASSERT_EQ(pool.device().window, 4u);
  constexpr std::size_t kRequests = 4096;
  Buffer<std::uint64_t> out(3 * kRequests);
  platform::parallel_for(kRequests, StartSuperBlock{pool.device(), out.data()});
  platform::synchronize();
  const std::vector<std::uint64_t> r = out.to_vector();
  std::set<std::uint64_t> used, expected;
  for (std::size_t i = 0; i < kRequests; ++i) {
    ASSERT_NE(r[3 * i + 2], 0u) << "request " << i << " failed";
    EXPECT_EQ(r[3 * i + 1], r[3 * i] % 4) << "request " << i << " of multiprocessor " << r[3 * i];
    used.insert(r[3 * i + 1]);
    expected.insert(r[3 * i] % 4);
  }
  EXPECT_EQ(used, expected);
  // 4 096 threads over the GPU's multiprocessors; the host's threads may be
  // too few to reach two super blocks.
  if (platform::kCudaBuild) {
    EXPECT_GT(used.size(), 1u) << "the window was not used";
  }
  platform::parallel_for(kRequests, FreeRecorded{pool.device(), out.data()});
  platform::synchronize();
  EXPECT_NO_THROW(pool.check_errors());
  expect_consistent(audit(pool));

  // 4 super blocks of 16 pages with a window of 4; 3 super blocks, the
  // last of 8 pages, with a window of 2.
  struct Full {
    std::uint32_t pages, window;
  };
  for (const Full c : {Full{64, 4}, Full{40, 2}}) {
    SCOPED_TRACE(std::to_string(c.pages) + " pages, window " + std::to_string(c.window));
    o.super_block_pages = 16;
    o.region_pages = 4;
    o.active_window = c.window;
    po.scatter = o;
    PoolHandle<ScatterAlloc> full(std::uint64_t{c.pages} * kPageBytes, po);
    ASSERT_EQ(full.device().window, c.window);
    Buffer<std::uint64_t> found(c.pages);
    platform::parallel_for(1, FindsTheOnlyFreePage{full.device(), found.data()});
    platform::synchronize();
    const std::vector<std::uint64_t> f = found.to_vector();
    for (std::size_t k = 0; k < f.size(); ++k) EXPECT_EQ(f[k], 0u) << "freed page " << k;
    EXPECT_NO_THROW(full.check_errors());
    expect_consistent(audit(full));
  }
}

// Whole pages (4 048-byte requests), allocated each round and freed every
// other round (test::FreeEveryOtherRound), in a pool of 1.28 times the
// pages held at the peak (rounds / 2 per worker: a page in flight in an
// even round comes with one kept page less), the slack of
// CMallocXMalloc.WarpsThatFreeWholeBlocksTakeThemBack, whose blocks are
// whole ScatterAlloc pages, without XMalloc's queues.
TEST(CMallocScatter, WholePageChurnInATightPoolFindsEveryFreePage) {
  const std::size_t workers = platform::kCudaBuild ? 8192 : 16;
  const int rounds = test::stress_rounds(platform::kCudaBuild ? 16 : 400);
  const std::size_t kept = workers * static_cast<std::size_t>(rounds / 2);
  for (const std::uint32_t window : {1u, 8u}) {
    SCOPED_TRACE("active window " + std::to_string(window));
    PoolOptions po;
    po.scatter.active_window = window;
    // 1.14 times what is kept plus a page in flight per worker: 1.28 times
    // the peak, rounds / 2 pages per worker.
    PoolHandle<ScatterAlloc> pool((kept + workers) * kPageBytes * 114 / 100, po);
    Buffer<Held> held(kept);
    held.zero();
    Buffer<unsigned long long> counters(2);
    counters.zero();
    platform::parallel_workers(
        workers, test::FreeEveryOtherRound<ScatterAlloc>{pool.device(), held.data(),
                                                         counters.data(), workers, rounds, 4048});
    platform::synchronize();
    const std::vector<unsigned long long> c = counters.to_vector();
    EXPECT_EQ(c[0], 0u) << "patterns broken: a page was handed out twice";
    EXPECT_EQ(c[1], 0u) << "allocations failed although the pool had room";
    EXPECT_NO_THROW(pool.check_errors());
    expect_consistent(audit(pool));
  }
}

// The stride of the spread search, for every multiprocessor and warp slot of
// an H100 (and more) and many region counts: in [1, regions) (1 for up to two
// regions) and coprime to the regions, so that stepping by it from any region
// visits every region once. (SearchVisitsEveryRegionOfASuperBlock sees only
// the stride of the thread that runs it.)
TEST(CMallocScatter, RegionStrideVisitsEveryRegionOnce) {
  std::vector<std::uint32_t> counts;
  for (std::uint32_t r = 1; r <= 70; ++r) counts.push_back(r);
  for (const std::uint32_t r : {105u, 128u, 210u, 1000u, 1155u, 2048u}) counts.push_back(r);
  for (const std::uint32_t regions : counts) {
    std::vector<char> seen(regions);
    for (std::uint32_t mp = 0; mp < 160; ++mp) {
      for (std::uint32_t slot = 0; slot < 64; ++slot) {
        const std::uint32_t step = ScatterAlloc::region_step(mp, slot, regions);
        ASSERT_GE(step, 1u);
        ASSERT_LT(step, regions <= 2 ? 2u : regions) << regions << " regions";
        std::fill(seen.begin(), seen.end(), 0);
        std::uint32_t r = (mp * 7 + slot) % regions, visited = 0;
        for (std::uint32_t k = 0; k < regions; ++k, r = (r + step) % regions)
          if (!seen[r]) seen[r] = 1, ++visited;
        ASSERT_EQ(visited, regions)
            << "step " << step << " of " << regions << " regions skips some";
      }
    }
  }
}

// Frees `p` (out[0] gets the first page's count and bits after) in one thread.
struct FreeOne {
  ScatterAlloc a;
  std::uint64_t p;
  DYNASOAR_HD void operator()(std::size_t) const { a.free(reinterpret_cast<void*>(p)); }
};
struct MallocOne {
  ScatterAlloc a;
  std::uint64_t bytes;
  std::uint64_t* out;
  DYNASOAR_HD void operator()(std::size_t) const {
    *out = reinterpret_cast<std::uint64_t>(a.malloc(bytes));
  }
};

// A free of a pointer that is no live allocation (freed before, inside a
// chunk, in a run's later page, outside the pool) raises the flag, which
// check_errors turns into std::logic_error, and changes no page.
TEST(CMallocScatter, BadFreesAreReportedAndChangeNothing) {
  PoolHandle<ScatterAlloc> pool(16 * kPageBytes);
  Buffer<std::uint64_t> out(1);
  Buffer<std::uint64_t> elsewhere(8);
  auto malloc_one = [&](std::uint64_t bytes) {
    platform::parallel_for(1, MallocOne{pool.device(), bytes, out.data()});
    return out.to_vector()[0];
  };
  auto free_one = [&](std::uint64_t p) {
    platform::parallel_for(1, FreeOne{pool.device(), p});
    platform::synchronize();
  };
  const std::uint64_t chunk = malloc_one(48);
  const std::uint64_t run = malloc_one(2 * kPageBytes);
  ASSERT_NE(chunk, 0u);
  ASSERT_NE(run, 0u);
  EXPECT_NO_THROW(pool.check_errors());
  const std::uint64_t bad[] = {chunk + 16, run + kPageBytes, run + 16,
                               reinterpret_cast<std::uint64_t>(elsewhere.data()), pool.end()};
  for (const std::uint64_t p : bad) {
    SCOPED_TRACE(p);
    free_one(p);
    EXPECT_THROW(pool.check_errors(), std::logic_error);
    const std::vector<unsigned long long> a = audit(pool);
    expect_consistent(a);
    EXPECT_EQ(a[4], 1u) << "the chunk's bit";
    EXPECT_EQ(a[5], 1u) << "the run";
  }
  free_one(chunk);
  free_one(run);
  EXPECT_NO_THROW(pool.check_errors());
  for (const std::uint64_t p : {chunk, run}) {  // again
    free_one(p);
    EXPECT_THROW(pool.check_errors(), std::logic_error) << "a second free of " << p;
  }
  const std::vector<unsigned long long> a = audit(pool);
  expect_consistent(a);
  EXPECT_EQ(a[4] + a[5] + a[6], 0u) << "the pool is empty";
  EXPECT_NE(malloc_one(16 * kPageBytes), 0u) << "and serves the whole pool as one run";
}

// Workers that allocate (now and then more than a page), check and free at
// random, then keep what they hold: afterwards each page's count equals its
// set bits, the bits equal the kept chunks, and the runs the kept runs.
// counters: [0] nullptrs, [1] broken patterns.
struct ScatterChurn {
  ScatterAlloc alloc;
  unsigned long long* counters;
  Held* kept;
  int rounds;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t) const {
    test::Rng rng(0x5CA7, w);
    Held mine[kSlots] = {};
    unsigned long long nulls = 0, broken = 0;
    churn_slots(
        alloc, rng, mine, w, rounds,
        [](test::Rng& g) -> std::uint64_t {
          return g.below(16) == 0 ? kPageBytes + 8 * g.below(3 * kPageBytes / 8)
                                  : random_size(g, 256);
        },
        nulls, broken);
    for (int s = 0; s < kSlots; ++s) {
      if (mine[s].address != 0 && !user_data_intact(mine[s].address, mine[s].bytes, mine[s].sig))
        ++broken;
      kept[w * kSlots + static_cast<std::size_t>(s)] = mine[s];
    }
    platform::atomic_fetch_add(&counters[0], nulls);
    platform::atomic_fetch_add(&counters[1], broken);
  }
};

TEST(CMallocScatter, PageCountsEqualTheirBitsAfterContendedChurn) {
  const std::size_t workers = platform::kCudaBuild ? (test::under_sanitizer() ? 256 : 2048) : 16;
  const int rounds = test::stress_rounds(platform::kCudaBuild ? 400 : 20000);
  // Roomy: twice the pages the workers can hold (each slot at most 4 pages).
  // Tight: one page per eight workers, so that requests meet full pages and
  // fail. (One page per two slots was not tight on the GPU: 2 048 workers
  // hold about 0.35 pages of runs each, and the small chunks share pages.)
  for (const bool tight : {false, true}) {
    SCOPED_TRACE(tight ? "tight pool" : "roomy pool");
    const std::uint64_t pages =
        tight ? std::max<std::uint64_t>(workers / 8, 4) : std::uint64_t{workers} * kSlots * 8;
    scatter::Options options;
    options.super_block_pages = 64;  // several super blocks, also for a small pool
    options.region_pages = 8;
    PoolOptions po;
    po.scatter = options;
    PoolHandle<ScatterAlloc> pool(pages * kPageBytes, po);
    Buffer<unsigned long long> counters(2);
    counters.zero();
    Buffer<Held> kept(workers * kSlots);
    platform::parallel_workers(workers,
                               ScatterChurn{pool.device(), counters.data(), kept.data(), rounds});
    platform::synchronize();
    const std::vector<unsigned long long> c = counters.to_vector();
    EXPECT_EQ(c[1], 0u) << "patterns broken: memory was handed out twice";
    if (tight) {
      EXPECT_GT(c[0], 0u) << "the tight pool must run out in this test";
    } else {
      EXPECT_EQ(c[0], 0u) << "allocations failed in a roomy pool";
    }
    pool.clear_errors();
    unsigned long long small = 0, runs = 0;
    for (const Held& h : kept.to_vector())
      if (h.address != 0) ++(h.bytes > kPageBytes ? runs : small);
    std::vector<unsigned long long> a = audit(pool);
    expect_consistent(a);
    EXPECT_EQ(a[4], small) << "set bits differ from the chunks held";
    EXPECT_EQ(a[5], runs) << "runs differ from the runs held";
    platform::parallel_for(workers * kSlots, FreeKept<ScatterAlloc>{pool.device(), kept.data()});
    platform::synchronize();
    EXPECT_NO_THROW(pool.check_errors()) << "a free was reported bad";
    a = audit(pool);
    expect_consistent(a);
    EXPECT_EQ(a[4] + a[5], 0u) << "chunks or runs left after every allocation was freed";
    EXPECT_EQ(a[9], 0u) << "pages still counted as full after every allocation was freed";
  }
}

}  // namespace
}  // namespace dynasoar::cmalloc
