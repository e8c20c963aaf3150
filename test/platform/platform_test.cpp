// Tests of the platform layer: bit operations, warp primitives, the executor
// and back-end buffers. In a CUDA build the device versions are compared
// with the host versions of the same functions.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "platform/atomic.h"
#include "platform/bits.h"
#include "platform/executor.h"
#include "platform/memory.h"
#include "platform/warp.h"
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
  DYNASOAR_HD void operator()(std::size_t t, std::size_t) const {
    namespace warp = platform::warp;
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
  const std::size_t threads = platform::parallel_workers(64, EvalWarp{d_out.data()});
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

TEST(Executor, HostRejectsTooManyWorkers) {
  if constexpr (platform::kCudaBuild) GTEST_SKIP() << "limit applies to host builds only";
  EXPECT_THROW(platform::parallel_workers(platform::kMaxHostWorkers + 1, RecordWorker{nullptr, nullptr}),
               std::invalid_argument);
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

}  // namespace
}  // namespace dynasoar
