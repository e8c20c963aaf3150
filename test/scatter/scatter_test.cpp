// ScatterAlloc's own invariants (Steinberger et al. 2012): page usage
// counts against their bits, chunk sizes that reset when a page empties,
// runs of pages for large requests, the search over regions and super
// blocks, and bad frees. The raw conformance suite
// (test/raw/raw_conformance_test.cpp) runs ScatterAlloc besides. Host tier
// and device tier.
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
using test::churn_slots;
using test::fill_user_data;
using test::FreeKept;
using test::Held;
using test::kSlots;
using test::random_size;
using test::user_data_intact;
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
// chunk is freed (Steinberger et al. 2012, Sec. 5.2, Alg. free lines 10-16); the region
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
