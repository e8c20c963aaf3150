// Tests of the platform layer: bit operations, warp primitives, the executor
// and back-end buffers. In a CUDA build the device versions are compared
// with the host versions of the same functions.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#if defined(__unix__)
#include <sys/wait.h>
#include <unistd.h>
#endif
#if defined(__SANITIZE_THREAD__)
#define DYNASOAR_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DYNASOAR_TEST_TSAN 1
#endif
#endif

#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/select.h"
#include "dynasoar/platform/thread_pool.h"
#include "dynasoar/platform/warp.h"
#include "support/rng.h"

namespace dynasoar {
namespace {

TEST(Bits, HostReferenceValues) {
  using namespace platform;
  EXPECT_EQ(popc(0), 0);
  EXPECT_EQ(popc(~std::uint64_t{0}), 64);
  EXPECT_EQ(ctz(1), 0);
  EXPECT_EQ(ctz(std::uint64_t{1} << 63), 63);
  EXPECT_EQ(clz(0), 64);
  EXPECT_EQ(clz(1), 63);
  EXPECT_EQ(rotr(1, 1), std::uint64_t{1} << 63);
  EXPECT_EQ(rotr(0xF0, 64), 0xF0u);
  EXPECT_EQ(low_bits(0), 0u);
  EXPECT_EQ(low_bits(64), ~std::uint64_t{0});
  EXPECT_EQ(find_set_rotated(0b1001, 1), 3);
  EXPECT_EQ(find_set_rotated(0b1001, 4), 0);  // wraps around
  EXPECT_EQ(find_set_rotated(std::uint64_t{1} << 63, 63), 63);
  EXPECT_EQ(nth_set_bit(0b101100, 0), 2);
  EXPECT_EQ(nth_set_bit(0b101100, 2), 5);
  EXPECT_EQ(nth_set_bit(~std::uint64_t{0}, 63), 63);
  // Against the obvious definition: clear the n lowest set bits, take the first.
  for (std::uint64_t i = 0; i < 2000; ++i) {
    std::uint64_t x = mix64(i);
    if (i % 3 == 0) x &= mix64(i + 7);  // sparser words too
    if (x == 0) continue;
    std::uint64_t y = x;
    for (int n = 0; n < popc(x); ++n, y &= y - 1)
      ASSERT_EQ(nth_set_bit(x, n), ctz(y)) << "x=" << x << " n=" << n;
  }
}

// Evaluates every bit function on the back end for many inputs.
struct EvalBits {
  const std::uint64_t* in;
  std::int64_t* out;  // 6 results per input
  DYNASOAR_HD void operator()(std::size_t i) const {
    const std::uint64_t x = in[i] | 1u;  // nonzero for ctz / nth_set_bit
    std::int64_t* o = out + 6 * i;
    o[0] = platform::popc(in[i]);
    o[1] = platform::ctz(x);
    o[2] = platform::clz(in[i]);
    o[3] = static_cast<std::int64_t>(platform::rotr(in[i], static_cast<unsigned>(i)));
    o[4] = platform::find_set_rotated(x, static_cast<unsigned>(i * 7));
    o[5] = platform::nth_set_bit(x, static_cast<int>(i % platform::popc(x)));
  }
};

TEST(Bits, BackEndMatchesHost) {
  constexpr std::size_t n = 4096;
  std::vector<std::uint64_t> in(n);
  test::Rng rng(7, 0);
  for (auto& v : in) v = rng.next() >> rng.below(64);
  platform::Buffer<std::uint64_t> d_in(n);
  d_in.copy_from_host(in.data(), n);
  platform::Buffer<std::int64_t> d_out(6 * n);
  platform::parallel_for(n, EvalBits{d_in.data(), d_out.data()});
  const std::vector<std::int64_t> got = d_out.to_vector();
  std::vector<std::int64_t> want(6 * n);
  for (std::size_t i = 0; i < n; ++i) EvalBits{in.data(), want.data()}(i);
  EXPECT_TRUE(got == want);
}

// Exercises the warp primitives with the full mask; on the host a warp is one lane.
struct EvalWarp {
  std::uint32_t* out;  // 5 results per thread
  std::size_t n;       // threads with results: whole warps
  DYNASOAR_HD void operator()(std::size_t t, std::size_t) const {
    namespace warp = platform::warp;
    if (t >= n) return;  // the launch rounds up to whole thread blocks
    const auto all = warp::full_mask();
    const unsigned lane = warp::lane_id();
    std::uint32_t* o = out + 5 * t;
    o[0] = warp::inclusive_sum(lane + 1);
    o[1] = warp::ballot(all, lane % 3 == 0);
    o[2] = warp::shfl(all, lane * 10, warp::size() - 1);
    o[3] = warp::match_any(all, lane / 4);
    o[4] = warp::lanes_below();
  }
};

TEST(Warp, PrimitivesOverFullWarp) {
  platform::Buffer<std::uint32_t> d_out(5 * 64);
  const std::size_t threads = platform::parallel_workers(64, EvalWarp{d_out.data(), 64});
  ASSERT_GE(threads, 64u);
  const std::vector<std::uint32_t> o = d_out.to_vector();
  const unsigned lanes = platform::kCudaBuild ? 32 : 1;
  for (unsigned t = 0; t < 64; ++t) {
    const unsigned lane = t % lanes;
    SCOPED_TRACE("thread " + std::to_string(t));
    EXPECT_EQ(o[5 * t + 0], (lane + 1) * (lane + 2) / 2);
    std::uint32_t ballot = 0;
    for (unsigned l = 0; l < lanes; ++l) ballot |= (l % 3 == 0 ? 1u : 0u) << l;
    EXPECT_EQ(o[5 * t + 1], ballot);
    EXPECT_EQ(o[5 * t + 2], (lanes - 1) * 10);
    std::uint32_t group = 0;
    for (unsigned l = 0; l < lanes; ++l) group |= (l / 4 == lane / 4 ? 1u : 0u) << l;
    EXPECT_EQ(o[5 * t + 3], group);
    EXPECT_EQ(o[5 * t + 4], (1u << lane) - 1);
  }
}

// warp::handover: two groups per warp (even and odd lanes), each led by its
// highest lane, which computes its words on a long path of its own while
// the others go straight to the handover. Every lane must end with its
// leader's words. The lanes start converged here, so this is not the shape
// that needs the handover's loop (a group whose leader entered its branch
// apart from the others); CMallocXMalloc.WarpsThatFreeWholeBlocksTakeThemBack
// is.
struct EvalHandover {
  unsigned long long* wrong;
  std::size_t n;
  DYNASOAR_HD void operator()(std::size_t t, std::size_t) const {
    namespace warp = platform::warp;
    if (t >= n) return;
    const unsigned lane = warp::lane_id() % 32u;
    const warp::lane_mask group = warp::match_any(warp::full_mask(), lane % 2);
    const auto leader = static_cast<unsigned>(63 - platform::clz(std::uint64_t{group}));
    const std::uint64_t key = platform::mix64(t / warp::kBuildLanes * 2 + lane % 2) >> 1;
    const auto steps = static_cast<unsigned>(2000 + key % 1000);
    std::uint64_t words[2] = {0, 0};
    if (lane == leader) {
      std::uint64_t x = key;
      for (unsigned i = 0; i < steps; ++i) x = platform::mix64(x);
      words[0] = key << 1 | warp::kHandedOver;
      words[1] = (x >> 1) << 1 | warp::kHandedOver;  // every word carries the mark
    }
    warp::handover(group, words, leader);
    std::uint64_t x = key;
    for (unsigned i = 0; i < steps; ++i) x = platform::mix64(x);
    if (words[0] != (key << 1 | warp::kHandedOver) || words[1] != ((x >> 1) << 1 | warp::kHandedOver))
      platform::atomic_fetch_add(wrong, 1ull);
  }
};

TEST(Warp, HandoverGivesEveryLaneItsLeadersWords) {
  const std::size_t n = platform::kCudaBuild ? 65536 : 64;
  platform::Buffer<unsigned long long> wrong(1);
  wrong.zero();
  ASSERT_GE(platform::parallel_workers(n, EvalHandover{wrong.data(), n}), n);
  platform::synchronize();
  EXPECT_EQ(wrong.to_vector()[0], 0u) << "lanes used words their leader had not handed over";
}

// snippet-begin: parallel-for
struct CountVisits {
  std::uint32_t* visits;
  DYNASOAR_HD void operator()(std::size_t i) const { platform::atomic_fetch_add(visits + i, 1u); }
};

TEST(Executor, ParallelForVisitsEachIndexOnce) {
  for (const std::size_t n : {1u, 255u, 257u, 100000u, 3000000u}) {
    platform::Buffer<std::uint32_t> visits(n);
    visits.zero();
    platform::parallel_for(n, CountVisits{visits.data()});
    const std::vector<std::uint32_t> v = visits.to_vector();
    std::size_t wrong = 0;
    for (auto x : v) wrong += x != 1;
    EXPECT_EQ(wrong, 0u) << "n = " << n;
  }
}
// snippet-end: parallel-for

// A slow writer: each worker first reads a counter `rounds` times, one
// memory round trip after another, then writes i + 1 to its slots i. Its
// kernel lets the next early launch be scheduled at its start
// (parallel_workers kernels call allow_early_launch), so a reader launched
// with parallel_for_early is scheduled long before these writes land.
struct SlowWrite {
  std::uint32_t* data;
  std::size_t n;
  const unsigned* delay;
  unsigned rounds;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t workers) const {
    unsigned sum = 0;
    for (unsigned r = 0; r < rounds; ++r) sum += platform::atomic_load(delay);  // *delay is 0
    for (std::size_t i = w; i < n; i += workers) data[i] = static_cast<std::uint32_t>(i) + 1 + sum;
  }
};

// The same writes as a parallel_for body: entry i after `rounds` loads.
struct SlowWriteEach {
  std::uint32_t* data;
  const unsigned* delay;
  unsigned rounds;
  DYNASOAR_HD void operator()(std::size_t i) const {
    unsigned sum = 0;
    for (unsigned r = 0; r < rounds; ++r) sum += platform::atomic_load(delay);  // *delay is 0
    data[i] = static_cast<std::uint32_t>(i) + 1 + sum;
  }
};

struct CountStale {
  const std::uint32_t* data;
  std::uint32_t* stale;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (data[i] != static_cast<std::uint32_t>(i) + 1) platform::atomic_fetch_add(stale, 1u);
  }
};

// parallel_for_early may start while the kernel ahead of it runs, but must
// see every write of that kernel: no entry may be read before it is written.
TEST(Executor, EarlyLaunchSeesTheWritesOfTheKernelBefore) {
  const std::size_t n = platform::kCudaBuild ? (std::size_t{1} << 20) : 4096;
  const unsigned rounds = platform::kCudaBuild ? 2000 : 10;
  platform::Buffer<std::uint32_t> data(n);
  platform::Buffer<unsigned> delay(1);
  platform::Buffer<std::uint32_t> stale(1);
  delay.zero();
  for (int round = 0; round < 5; ++round) {
    data.zero();
    stale.zero();
    platform::parallel_workers_up_to(n, SlowWrite{data.data(), n, delay.data(), rounds});
    platform::parallel_for_early(n, CountStale{data.data(), stale.data()});
    EXPECT_EQ(stale.to_vector()[0], 0u) << "round " << round << ": entries read before the kernel ahead wrote them";
    // An early launch behind an early launch (the snapshot, then the do-all).
    data.zero();
    stale.zero();
    platform::parallel_for_early(n, SlowWriteEach{data.data(), delay.data(), rounds / 8});
    platform::parallel_for_early(n, CountStale{data.data(), stale.data()});
    EXPECT_EQ(stale.to_vector()[0], 0u) << "round " << round << ": an early kernel read before the early one ahead wrote";
  }
}

struct RecordWorker {
  std::uint32_t* seen;
  std::uint64_t* count_seen;
  DYNASOAR_HD void operator()(std::size_t id, std::size_t count) const {
    platform::atomic_fetch_add(seen + id, 1u);
    if (id == 0) *count_seen = count;
  }
};

TEST(Executor, ParallelWorkersRunsEveryWorkerOnce) {
  const std::size_t want = 300;
  platform::Buffer<std::uint32_t> seen(1024);
  platform::Buffer<std::uint64_t> count(1);
  seen.zero();
  const std::size_t got = platform::parallel_workers(want, RecordWorker{seen.data(), count.data()});
  ASSERT_GE(got, want);
  ASSERT_LE(got, 1024u);
  EXPECT_EQ(count.to_vector()[0], got);
  const std::vector<std::uint32_t> s = seen.to_vector();
  for (std::size_t i = 0; i < got; ++i) EXPECT_EQ(s[i], 1u) << "worker " << i;
  for (std::size_t i = got; i < s.size(); ++i) EXPECT_EQ(s[i], 0u) << "worker " << i;
}

// --- forward progress: workers that wait for one another -----------------------------------

DYNASOAR_HD inline std::uint64_t now_ns() {
#if DYNASOAR_DEVICE_CODE
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
#endif
}

// Every worker arrives, then waits until all have (or until limit_ns has
// passed: then it counts itself in timed_out and leaves, so a failure ends).
// On the GPU each block also holds 40 KiB of shared memory, so five blocks fit
// on a multiprocessor of an H100: 1280 of the 2048 threads it can hold.
struct HeavyRendezvous {
  std::uint32_t* arrived;
  std::uint32_t* timed_out;
  std::uint64_t limit_ns;
  DYNASOAR_HD void operator()(std::size_t id, std::size_t count) const {
#if DYNASOAR_DEVICE_CODE
    __shared__ volatile std::uint32_t pad[10 * 1024];
    pad[threadIdx.x] = static_cast<std::uint32_t>(id);
    if (pad[threadIdx.x] != static_cast<std::uint32_t>(id)) return;
#else
    (void)id;
#endif
    platform::atomic_fetch_add(arrived, 1u, platform::acq_rel);
    const std::uint64_t start = now_ns();
    while (platform::atomic_load(arrived, platform::acquire) < count) {
      if (now_ns() - start > limit_ns) {
        platform::atomic_fetch_add(timed_out, 1u);
        return;
      }
      platform::spin_pause();
    }
  }
};

// parallel_workers runs every worker it launches at once, however few of its
// kernel's blocks fit on a multiprocessor, so workers may wait for each
// other; one worker more than can be resident is refused. The GPU part also
// runs the request as parallel_workers launched it before grids were sized
// by occupancy (2048 threads per multiprocessor, an ordinary launch): there
// the workers that started wait for workers that cannot start until they
// leave, which only the time limit ends.
TEST(Executor, WorkersThatWaitForEachOtherAllRunAtOnce) {
  const std::size_t most = platform::max_workers<HeavyRendezvous>();
  ASSERT_GT(most, 0u);
  const std::size_t want = platform::kCudaBuild ? most : 64;
  platform::Buffer<std::uint32_t> arrived(1), timed_out(1);
  arrived.zero();
  timed_out.zero();
  constexpr std::uint64_t kSecond = 1000000000ull;
  const std::size_t got = platform::parallel_workers(
      want, HeavyRendezvous{arrived.data(), timed_out.data(), 10 * kSecond});
  platform::synchronize();
  EXPECT_EQ(got, want);
  EXPECT_EQ(arrived.to_vector()[0], got);
  EXPECT_EQ(timed_out.to_vector()[0], 0u) << "workers waited for workers that never ran";
  EXPECT_THROW(platform::parallel_workers(most + 1, HeavyRendezvous{nullptr, nullptr, 0}),
               std::invalid_argument);
#if DYNASOAR_CUDA
  const std::size_t old_grid = platform::concurrent_threads();
  if (old_grid <= most)
    GTEST_SKIP() << "this GPU holds the old grid of " << old_grid
                 << " threads at once: no contrast to show";
  arrived.zero();
  timed_out.zero();
  platform::detail::parallel_workers_kernel<<<old_grid / platform::kBlockThreads,
                                              platform::kBlockThreads>>>(
      HeavyRendezvous{arrived.data(), timed_out.data(), kSecond});
  platform::synchronize();
  EXPECT_GT(timed_out.to_vector()[0], 0u)
      << "the grid of " << old_grid << " threads (at most " << most
      << " resident) should have left workers waiting in vain";
#endif
}

TEST(Executor, HostRejectsTooManyWorkers) {
  if constexpr (platform::kCudaBuild) GTEST_SKIP() << "limit applies to host builds only";
  EXPECT_THROW(platform::parallel_workers(platform::kMaxHostWorkers + 1, RecordWorker{nullptr, nullptr}),
               std::invalid_argument);
}

// The registry's compaction: the non-null pointers in order, and their count,
// for lengths around the tile (4096 entries) and warp (512) boundaries,
// densities from none to all, a length of over 1024 tiles (the scan then
// carries its sum from one round of 1024 tiles to the next), and a second
// call on a smaller array with the scratch of the first (stale tile counts
// must not leak into it). Nothing may be written past the count.
TEST(Select, KeepsTheNonNullPointersInOrder) {
  platform::PointerCompactor compactor;
  platform::Stream stream;
  test::Rng rng(7, 0);
  struct Case {
    std::size_t n;
    unsigned per_mille;
  };
  std::vector<Case> cases;
  for (const std::size_t n : {0, 1, 31, 32, 511, 512, 513, 4095, 4096, 4097, 8192 + 77, 100000})
    for (const unsigned keep : {0u, 1u, 500u, 999u, 1000u}) cases.push_back({n, keep});
  cases.push_back({std::size_t{2} * 4096 * 1024 + 77, 500});
  cases.push_back({1000, 500});
  cases.push_back({5, 1000});
  for (const Case& c : cases) {
    std::vector<void*> in(c.n);
    std::vector<void*> expected;
    for (std::size_t i = 0; i < c.n; ++i) {
      if (rng.below(1000) < c.per_mille) in[i] = reinterpret_cast<void*>((i + 1) * 16);
      if (in[i] != nullptr) expected.push_back(in[i]);
    }
    platform::Buffer<void*> device_in(std::max<std::size_t>(c.n, 1)), device_out(std::max<std::size_t>(c.n, 1));
    platform::Buffer<unsigned long long> selected(1);
    if (c.n != 0) device_in.copy_from_host(in.data(), c.n, 0, stream);
    device_out.zero(stream);
    const unsigned long long sentinel = ~0ull;
    selected.copy_from_host(&sentinel, 1, 0, stream);
    compactor.select_nonnull(device_in.data(), device_out.data(), c.n, selected.data(), stream);
    const std::vector<unsigned long long> count = selected.to_vector(stream);
    ASSERT_EQ(count[0], expected.size()) << c.n << " entries, " << c.per_mille << " per mille kept";
    std::vector<void*> out = device_out.to_vector(stream);
    EXPECT_TRUE(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(expected.size()), out.end(),
                            [](void* p) { return p == nullptr; }))
        << c.n << " entries: something written past the count";
    out.resize(expected.size());
    EXPECT_EQ(out, expected) << c.n << " entries, " << c.per_mille << " per mille kept";
  }
}

TEST(Buffer, RoundTripAndBounds) {
  platform::Buffer<int> b(10);
  std::vector<int> in{1, 2, 3};
  b.zero();
  b.copy_from_host(in.data(), 3, 7);
  EXPECT_EQ(b.to_vector(), (std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 2, 3}));
  volatile std::size_t past_end = 8;  // opaque, so the compiler does not warn about the bad copy
  EXPECT_THROW(b.copy_from_host(in.data(), 3, past_end), std::out_of_range);
  platform::Buffer<int> moved = std::move(b);
  EXPECT_EQ(moved.size(), 10u);
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.data(), nullptr);
}

// The stream-only forms copy from element 0, as the forms with offset 0.
TEST(Buffer, CopiesOnAStreamWithoutAnOffset) {
  platform::Stream stream{};
  platform::Buffer<int> b(3);
  const std::vector<int> in{4, 5, 6};
  b.copy_from_host(in.data(), 3, stream);
  std::vector<int> out(2, 0);
  b.copy_to_host(out.data(), 2, stream);
  EXPECT_EQ(out, (std::vector<int>{4, 5}));
  b.copy_to_host(out.data(), 2, 1, stream);
  EXPECT_EQ(out, (std::vector<int>{5, 6})) << "the form with an offset is unchanged";
}

TEST(PinnedValue, ReceivesACopyAndMoves) {
  platform::PinnedValue<unsigned> v;
  EXPECT_EQ(*v.get(), 0u) << "value-initialised";
  platform::Buffer<unsigned> b(4);
  const std::vector<unsigned> in{5, 6, 7, 8};
  b.copy_from_host(in.data(), 4);
  b.copy_to_host(v.get(), 1, 2);
  EXPECT_EQ(*v.get(), 7u);
  unsigned* const where = v.get();
  platform::PinnedValue<unsigned> moved = std::move(v);
  EXPECT_EQ(moved.get(), where);
  EXPECT_EQ(v.get(), nullptr);
  v = std::move(moved);
  EXPECT_EQ(*v.get(), 7u);
}

// Kernels raise flags in an ErrorFlags word; the host reads them behind the
// queued work and clears them.
struct RaiseFlag {
  unsigned* flags;
  unsigned flag;
  DYNASOAR_HD void operator()(std::size_t) const { platform::atomic_fetch_or(flags, flag); }
};

TEST(ErrorFlags, KernelsRaiseWhatTheHostReadsAndClears) {
  platform::ErrorFlags e;
  const platform::Stream s{};
  e.reset(s);
  ASSERT_NE(e.data(), nullptr);
  EXPECT_EQ(e.read(s), 0u) << "zeroed by reset";
  platform::parallel_for(64, RaiseFlag{e.data(), 2u}, s);
  platform::parallel_for(1, RaiseFlag{e.data(), 8u}, s);
  EXPECT_EQ(e.read(s), 10u);
  e.clear(s);
  EXPECT_EQ(e.read(s), 0u);
}

// Kernels that raise through ErrorFlags::raise mark the mirror as well, so
// any_raised tells after a wait whether read() has anything to report: for
// a raise in an early-launched kernel across the whole device, for one made
// after 2 ms of spinning by the kernel's last item (the wait covers it), and
// not after a clear or for a kernel that raises nothing.
struct RaiseSeen {
  unsigned* flags;
  unsigned* seen;
  unsigned flag;
  std::size_t late;  // the item that spins first (none if out of range)
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (i == late) {
#ifdef __CUDA_ARCH__
      const long long start = clock64();
      while (clock64() - start < 4000000) {}  // about 2 ms at 2 GHz
#endif
    } else if (late != ~std::size_t{0}) {
      return;  // only the late item raises
    }
    platform::ErrorFlags::raise(flags, seen, flag);
  }
};

TEST(ErrorFlags, RaiseMarksTheMirrorThatAnyRaisedReads) {
  platform::ErrorFlags e;
  const platform::Stream s{};
  e.reset(s);
  ASSERT_TRUE(e.has_seen()) << "page-locked memory is mapped on every platform this runs on";
  const std::size_t many = platform::concurrent_threads() * 4;
  constexpr std::size_t kEvery = ~std::size_t{0};
  EXPECT_FALSE(e.any_raised(s));
  platform::parallel_for_early(many, RaiseSeen{e.data(), e.seen(), 0u, kEvery}, s);
  EXPECT_FALSE(e.any_raised(s)) << "no flag raised";
  platform::parallel_for_early(many, RaiseSeen{e.data(), e.seen(), 2u, kEvery}, s);
  EXPECT_TRUE(e.any_raised(s));
  EXPECT_EQ(e.read(s), 2u);
  e.clear(s);
  EXPECT_FALSE(e.any_raised(s)) << "cleared";
  platform::parallel_for_early(many, RaiseSeen{e.data(), e.seen(), 8u, many - 1}, s);
  EXPECT_TRUE(e.any_raised(s)) << "the wait did not cover the kernel's last item";
  EXPECT_EQ(e.read(s), 8u);
  e.clear(s);
  platform::parallel_for(1, RaiseFlag{e.data(), 4u}, s);
  EXPECT_FALSE(e.any_raised(s)) << "a plain atomic raise does not mark the mirror (read() shows it)";
  EXPECT_EQ(e.read(s), 4u);
}

// --- the host thread pool (dynasoar/platform/thread_pool.h) -----------------------------------------

// Every worker arrives, then waits until all have: possible only if all run
// at once. passed[id] = 1 once through. Both tiers (on the GPU 1024 threads
// are four resident blocks).
struct Barrier {
  std::uint32_t* arrived;
  std::uint32_t* passed;
  DYNASOAR_HD void operator()(std::size_t id, std::size_t count) const {
    platform::atomic_fetch_add(arrived, 1u, platform::acq_rel);
    while (platform::atomic_load(arrived, platform::acquire) < count) platform::spin_pause();
    passed[id] = 1;
  }
};

TEST(HostPool, ThousandWorkersMeetAtABarrier) {
  platform::Buffer<std::uint32_t> arrived(1), passed(platform::kMaxHostWorkers);
  for (int round = 0; round < 2; ++round) {  // the second round finds the grown pool
    arrived.zero();
    passed.zero();
    const std::size_t got = platform::parallel_workers(platform::kMaxHostWorkers,
                                                       Barrier{arrived.data(), passed.data()});
    ASSERT_EQ(got, platform::kMaxHostWorkers);
    EXPECT_EQ(arrived.to_vector()[0], got);
    const std::vector<std::uint32_t> p = passed.to_vector();
    EXPECT_EQ(std::count(p.begin(), p.end(), 1u), static_cast<std::ptrdiff_t>(got))
        << "round " << round;
  }
}

#if !DYNASOAR_CUDA
// Host threads have ids; the thread that ran each task.
std::set<std::thread::id> distinct(const std::vector<std::thread::id>& ids) {
  return {ids.begin(), ids.end()};
}
#endif

// parallel_workers never runs two workers one after the other on one
// thread, and a split loop runs each chunk on a thread of its own while the
// pool is idle.
TEST(HostPool, WorkersAndChunksRunOnDistinctThreads) {
#if DYNASOAR_CUDA
  GTEST_SKIP() << "host build only";
#else
  for (const std::size_t w : {std::size_t{2}, std::size_t{64}, platform::kMaxHostWorkers}) {
    std::vector<std::thread::id> ids(w);
    platform::parallel_workers(
        w, [&](std::size_t id, std::size_t) { ids[id] = std::this_thread::get_id(); });
    EXPECT_EQ(distinct(ids).size(), w) << w << " workers";
  }
  const std::size_t chunks = platform::host_threads();
  std::mutex m;
  std::vector<std::thread::id> ids;
  std::vector<std::size_t> covered(1000, 0);
  platform::host_parallel_chunks(covered.size(), chunks, [&](std::size_t begin, std::size_t end) {
    {
      const std::lock_guard<std::mutex> lock(m);
      ids.push_back(std::this_thread::get_id());
    }
    for (std::size_t i = begin; i < end; ++i) ++covered[i];
  });
  EXPECT_EQ(ids.size(), chunks);
  EXPECT_EQ(distinct(ids).size(), chunks);
  EXPECT_EQ(std::count(covered.begin(), covered.end(), 1u), 1000);
  EXPECT_EQ(platform::host_chunk_count(10, platform::kHostDoAllGrain), 1u)
      << "a small loop stays on its caller";
  EXPECT_EQ(platform::host_chunk_count(0, platform::kHostDoAllGrain), 0u);
#endif
}

// Loops inside loops (a parallel_for body that calls parallel_for and
// parallel_workers, three levels deep) complete: a call takes only idle
// threads and runs on its caller otherwise.
TEST(HostPool, NestedCallsComplete) {
#if DYNASOAR_CUDA
  GTEST_SKIP() << "host build only: kernels do not launch kernels here";
#else
  constexpr std::size_t kOuter = 16, kInner = std::size_t{1} << 15;
  std::atomic<std::uint64_t> sum{0}, met{0};
  platform::host_parallel_chunks(kOuter, kOuter, [&](std::size_t begin, std::size_t end) {
    for (std::size_t o = begin; o < end; ++o) {
      platform::parallel_for(kInner, [&](std::size_t i) {
        if (i % 8192 == 0)  // a third level
          platform::parallel_for(kInner,
                                 [&](std::size_t) { sum.fetch_add(1, std::memory_order_relaxed); });
        sum.fetch_add(1, std::memory_order_relaxed);
      });
      // Concurrent workers inside a loop: each one still gets a thread of its own.
      std::atomic<std::size_t> arrived{0};
      platform::parallel_workers(8, [&](std::size_t, std::size_t count) {
        arrived.fetch_add(1);
        while (arrived.load() < count) platform::spin_pause();
        met.fetch_add(1, std::memory_order_relaxed);
      });
    }
  });
  EXPECT_EQ(sum.load(), kOuter * (kInner + kInner / 8192 * kInner));
  EXPECT_EQ(met.load(), kOuter * 8);
#endif
}

// Several host threads use the executor at once (as tests and programs with
// threads of their own do): every call completes with the right result.
TEST(HostPool, CallsFromManyHostThreadsComplete) {
#if DYNASOAR_CUDA
  GTEST_SKIP() << "host build only";
#else
  constexpr int kCallers = 8, kRounds = 10;
  constexpr std::size_t n = std::size_t{1} << 15;
  std::vector<std::uint64_t> sums(kCallers, 0), met(kCallers, 0);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int r = 0; r < kRounds; ++r) {
        std::atomic<std::uint64_t> sum{0};
        platform::parallel_for(n,
                               [&](std::size_t i) { sum.fetch_add(i, std::memory_order_relaxed); });
        sums[c] += sum.load();
        std::atomic<std::size_t> arrived{0};
        const std::size_t w = platform::host_threads() + 2;
        platform::parallel_workers(w, [&](std::size_t, std::size_t count) {
          arrived.fetch_add(1);
          while (arrived.load() < count) platform::spin_pause();
        });
        met[c] += arrived.load();
      }
    });
  for (auto& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) {
    EXPECT_EQ(sums[c], kRounds * (n * (n - 1) / 2)) << "caller " << c;
    EXPECT_EQ(met[c], kRounds * (platform::host_threads() + 2)) << "caller " << c;
  }
#endif
}

// An exception thrown by a loop body reaches the caller once every thread
// has finished (the one of the lowest chunk or worker when several throw),
// and the pool works afterwards.
TEST(HostPool, ExceptionsReachTheCaller) {
#if DYNASOAR_CUDA
  GTEST_SKIP() << "host build only: device code does not throw";
#else
  constexpr std::size_t n = std::size_t{1} << 20;
  std::atomic<std::size_t> visited{0};
  try {
    platform::parallel_for(n, [&](std::size_t i) {
      if (i == n - 1) throw std::runtime_error("last item");
      visited.fetch_add(1, std::memory_order_relaxed);
    });
    ADD_FAILURE() << "parallel_for did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "last item");
  }
  EXPECT_EQ(visited.load(), n - 1) << "other chunks ran to their end";

  std::atomic<std::size_t> finished{0};
  try {
    platform::parallel_workers(16, [&](std::size_t id, std::size_t) {
      if (id == 5 || id == 11) throw std::runtime_error("worker " + std::to_string(id));
      finished.fetch_add(1);
    });
    ADD_FAILURE() << "parallel_workers did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "worker 5");
  }
  EXPECT_EQ(finished.load(), 14u);

  // Thrown in an inner loop, passed on by the outer one.
  EXPECT_THROW(platform::host_parallel_chunks(4, 4, [&](std::size_t begin, std::size_t) {
                 platform::parallel_for(n, [&](std::size_t i) {
                   if (begin == 2 && i == 7) throw std::logic_error("inner");
                 });
               }),
               std::logic_error);

  std::atomic<std::size_t> after{0};
  platform::parallel_for(n, [&](std::size_t) { after.fetch_add(1, std::memory_order_relaxed); });
  EXPECT_EQ(after.load(), n);
#endif
}

// A child of fork() has none of the pool's threads: its calls run on the
// caller and on dedicated threads instead of waiting for threads that are
// not there (GoogleTest's death tests fork).
TEST(HostPool, ForkedChildWorksWithoutThePool) {
#if DYNASOAR_CUDA || !defined(__unix__)
  GTEST_SKIP() << "host builds on POSIX systems only";
#elif defined(DYNASOAR_TEST_TSAN)
  GTEST_SKIP() << "ThreadSanitizer does not allow threads in the child of a multi-threaded fork";
#else
  platform::parallel_workers(4, [](std::size_t, std::size_t) {});  // the pool has threads now
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    std::atomic<std::size_t> visited{0}, arrived{0};
    platform::parallel_for(std::size_t{1} << 16, [&](std::size_t) { visited.fetch_add(1); });
    platform::parallel_workers(4, [&](std::size_t, std::size_t count) {
      arrived.fetch_add(1);
      while (arrived.load() < count) platform::spin_pause();
    });
    _exit(visited.load() == (std::size_t{1} << 16) && arrived.load() == 4 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
#endif
}

// exit() in a task while the call's other tasks wait for it: the process
// ends. The pool's teardown at exit joined every thread, also those whose
// task waited for the one that exited, and the exit hung.
TEST(HostPool, ExitInATaskWhileOthersWaitEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::atomic<int> waiting{0};
        platform::detail::run_gang(
            4,
            [&](std::size_t t) {
              if (t == 0) {
                while (waiting.load() < 3) platform::spin_pause();
                std::exit(0);
              }
              waiting.fetch_add(1);
              for (;;) platform::spin_pause();  // waits for task 0, which never returns
            },
            /*concurrent=*/true);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace dynasoar
