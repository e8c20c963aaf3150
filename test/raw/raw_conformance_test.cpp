// Conformance of the raw API (malloc/free of 16-byte aligned memory, an
// error flag): every raw allocator of the back-end list runs the same typed
// tests, on host threads (host tier) and in kernels (device tier), with the
// CMalloc family's patterns of Vinkler & Havran 2014, Sec. 6. Allocations
// are filled with a pattern and checked later, so two threads given
// overlapping memory show up as a broken pattern, and the ranges handed out
// are checked for overlap, alignment and bounds. Tests of one family's own
// structures are beside it: test/cmalloc/, test/scatter/, test/xmalloc/.
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
#include "support/raw_churn.h"
#include "support/rng.h"
#include "support/sanitized.h"
#include "support/stress_rounds.h"
#include "support/user_data.h"


namespace dynasoar::cmalloc {
namespace {

using platform::Buffer;
using raw::PoolHandle;
using raw::PoolOptions;

// --- the typed suite ------------------------------------------------------------------

using test::allocate_filled;
using test::churn_slots;
using test::fill_user_data;
using test::FreeKept;
using test::Held;
using test::kSlots;
using test::random_size;
using test::user_data_intact;

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
// `raw`), and XMalloc in front of CUDA's malloc (Huang et al. 2013's set-up; no back
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
// (the default) and without it (Vinkler & Havran 2014, as written).
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
    GTEST_SKIP() << TypeParam::kName << " cannot free (Vinkler & Havran 2014, Sec. 4.1, 5.1)";
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
      SCOPED_TRACE(merge ? "merge on walk (default)" : "merge on free only (Vinkler & Havran 2014)");
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
                 << ": fragmentation is measured for the circular allocators (Vinkler & Havran 2014, Sec. 8)";
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
