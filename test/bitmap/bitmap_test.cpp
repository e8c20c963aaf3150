// Unit tests of the hierarchical bitmap: every operation against a plain
// std::vector<bool> model, at sizes around container and level boundaries.
// The same file is the host tier (host build) and the device tier (CUDA
// build, operations run in kernels).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "dynasoar/bitmap/bitmap_handle.h"
#include "support/rng.h"
#include "support/sanitized.h"

namespace dynasoar {
namespace {

using test::Rng;

enum class OpKind : std::uint32_t {
  kTrySet, kSet, kTryClear, kClear, kGet, kFindSet, kFindAndClear, kScanAndClear,
  kRawSet,  // sets bit `pos` of level `seed` alone, as a thread half-way through set() does
};

struct Op {
  OpKind kind;
  bit_index pos;
  std::uint64_t seed;
};

// Applies a list of operations in order on one thread of the back end and
// records each result.
struct RunOps {
  Bitmap bitmap;
  const Op* ops;
  std::size_t n;
  bit_index* results;

  DYNASOAR_HD void operator()(std::size_t i) const {
    if (i != 0) return;
    for (std::size_t k = 0; k < n; ++k) {
      const Op op = ops[k];
      bit_index r = 0;
      switch (op.kind) {
        case OpKind::kTrySet: r = bitmap.try_set(op.pos); break;
        case OpKind::kSet: bitmap.set(op.pos); break;
        case OpKind::kTryClear: r = bitmap.try_clear(op.pos); break;
        case OpKind::kClear: bitmap.clear(op.pos); break;
        case OpKind::kGet: r = bitmap.get(op.pos); break;
        case OpKind::kFindSet: r = bitmap.try_find_set(op.seed); break;
        case OpKind::kFindAndClear: r = bitmap.try_find_and_clear(op.seed); break;
        case OpKind::kScanAndClear: r = bitmap.scan_and_clear(op.seed); break;
        case OpKind::kRawSet:
          platform::atomic_fetch_or(bitmap.level_data(static_cast<int>(op.seed)) + op.pos / 64,
                                    Bitmap::word{1} << (op.pos % 64));
          break;
      }
      results[k] = r;
    }
  }
};

std::vector<bit_index> run_ops(BitmapHandle& bm, const std::vector<Op>& ops) {
  platform::Buffer<Op> d_ops(ops.size());
  d_ops.copy_from_host(ops.data(), ops.size());
  platform::Buffer<bit_index> d_results(ops.size());
  platform::parallel_for(1, RunOps{bm.device(), d_ops.data(), ops.size(), d_results.data()});
  return d_results.to_vector();
}

// Sets bit p iff pattern(p); the host model uses the same predicate.
struct Pattern {
  enum Kind : std::uint32_t { kNone, kFirst, kLast, kEveryThird, kRandom } kind;
  std::uint32_t permille;
  bit_index capacity;

  DYNASOAR_HD bool operator()(std::uint64_t p) const {
    switch (kind) {
      case kNone: return false;
      case kFirst: return p == 0;
      case kLast: return p + 1 == capacity;
      case kEveryThird: return p % 3 == 1;
      case kRandom: return platform::mix64(p * 7919 + permille) % 1000 < permille;
    }
    return false;
  }
};

struct SetPattern {
  Bitmap bitmap;
  Pattern pattern;
  bit_index* failures;

  DYNASOAR_HD void operator()(std::size_t p) const {
    if (pattern(p) && !bitmap.try_set(static_cast<bit_index>(p)))
      platform::atomic_fetch_add(failures, bit_index{1});
  }
};

std::vector<bit_index> positions_where(std::uint64_t capacity, const Pattern& pattern) {
  std::vector<bit_index> v;
  for (std::uint64_t p = 0; p < capacity; ++p)
    if (pattern(p)) v.push_back(static_cast<bit_index>(p));
  return v;
}

// Every observable view of the bitmap agrees with the model of set positions.
// indices() is checked with the default flat-scan limit and with the full
// descent from a middle level (4096) and from the top level (1), so every
// enumeration step is covered.
void expect_matches(BitmapHandle& bm, const std::vector<bit_index>& expected) {
  EXPECT_EQ(bm.check_consistency(), "");
  EXPECT_EQ(bm.count(), expected.size());
  for (const std::size_t limit :
       {BitmapHandle::kDefaultFlatScanLimit, std::size_t{4096}, std::size_t{1}}) {
    SCOPED_TRACE("flat scan limit " + std::to_string(limit));
    bm.set_flat_scan_limit(limit);
    const std::vector<bit_index> got = bm.indices();
    ASSERT_EQ(got.size(), expected.size());
    EXPECT_TRUE(got == expected) << "indices() differs from the model";
  }
  bm.set_flat_scan_limit(BitmapHandle::kDefaultFlatScanLimit);
  std::vector<Bitmap::word> words((bm.capacity() + 63) / 64, 0);
  for (bit_index p : expected) words[p / 64] |= Bitmap::word{1} << (p % 64);
  EXPECT_TRUE(bm.copy_level(0) == words) << "level 0 containers differ from the model";
}

// The 2^24-bit case takes about 30 s per test under ThreadSanitizer (CI's
// budget); the host and device tiers run it, the sanitized build skips it.
class BitmapSizeTest : public ::testing::TestWithParam<std::uint64_t> {
 protected:
  void SetUp() override {
    if (dynasoar::test::kSanitized && GetParam() > (std::uint64_t{1} << 20))
      GTEST_SKIP() << "2^24 bits are too slow under the sanitizers; the unsanitized tiers run it";
  }
};

TEST_P(BitmapSizeTest, StartsEmptyOrFull) {
  const std::uint64_t n = GetParam();
  BitmapHandle empty(n);
  EXPECT_EQ(empty.capacity(), n);
  expect_matches(empty, {});
  EXPECT_EQ(run_ops(empty, {{OpKind::kFindSet, 0, 1}, {OpKind::kFindAndClear, 0, 2}}),
            (std::vector<bit_index>{kNoBit, kNoBit}));

  BitmapHandle full(n, BitmapHandle::Init::kAllSet);
  std::vector<bit_index> all(n);
  std::iota(all.begin(), all.end(), bit_index{0});
  expect_matches(full, all);

  full.fill(BitmapHandle::Init::kAllClear);
  expect_matches(full, {});
  full.fill(BitmapHandle::Init::kAllSet);
  expect_matches(full, all);
}

TEST_P(BitmapSizeTest, EnumeratesPatterns) {
  const std::uint64_t n = GetParam();
  const auto cap = static_cast<bit_index>(n);
  for (const Pattern pattern : {Pattern{Pattern::kFirst, 0, cap}, Pattern{Pattern::kLast, 0, cap},
                                Pattern{Pattern::kEveryThird, 0, cap}, Pattern{Pattern::kRandom, 1, cap},
                                Pattern{Pattern::kRandom, 100, cap},
                                Pattern{Pattern::kRandom, 999, cap}}) {
    SCOPED_TRACE("pattern " + std::to_string(pattern.kind) + " permille " +
                 std::to_string(pattern.permille));
    BitmapHandle bm(n);
    platform::Buffer<bit_index> failures(1);
    failures.zero();
    // Concurrent try_set of distinct bits: containers and levels fill up in parallel.
    platform::parallel_for(n, SetPattern{bm.device(), pattern, failures.data()});
    EXPECT_EQ(failures.to_vector()[0], 0u) << "try_set of a clear bit failed";
    expect_matches(bm, positions_where(n, pattern));
  }
}

// enumerate() with an AlternatingCount, called again and again on one
// count: each call must count from zero although no memset precedes it
// (the call before zeroed the other counter). A count that is not reset
// shows up as the sum of the rounds' sizes. Every step structure is
// covered (one step, descent from a middle level and from the top).
TEST_P(BitmapSizeTest, AlternatingCountStartsFromZeroEveryCall) {
  const std::uint64_t n = GetParam();
  const auto cap = static_cast<bit_index>(n);
  for (const std::size_t limit :
       {BitmapHandle::kDefaultFlatScanLimit, std::size_t{4096}, std::size_t{1}}) {
    SCOPED_TRACE("flat scan limit " + std::to_string(limit));
    BitmapHandle bm(n);
    bm.set_flat_scan_limit(limit);
    AlternatingCount count(platform::Stream{});
    platform::Buffer<bit_index> out(n);
    platform::Buffer<bit_index> failures(1);
    for (const Pattern pattern : {Pattern{Pattern::kEveryThird, 0, cap}, Pattern{Pattern::kRandom, 100, cap},
                                  Pattern{Pattern::kFirst, 0, cap}, Pattern{Pattern::kRandom, 999, cap},
                                  Pattern{Pattern::kNone, 0, cap}, Pattern{Pattern::kLast, 0, cap}}) {
      SCOPED_TRACE("pattern " + std::to_string(pattern.kind) + " permille " + std::to_string(pattern.permille));
      bm.fill(BitmapHandle::Init::kAllClear);
      failures.zero();
      platform::parallel_for(n, SetPattern{bm.device(), pattern, failures.data()});
      ASSERT_EQ(failures.to_vector()[0], 0u);
      bm.enumerate(out.data(), count);
      const std::vector<bit_index> expected = positions_where(n, pattern);
      const bit_index got_count = count.read();
      ASSERT_EQ(got_count, expected.size());
      std::vector<bit_index> got(got_count);
      out.copy_to_host(got.data(), got_count);
      std::sort(got.begin(), got.end());
      EXPECT_TRUE(got == expected) << "the enumerated positions differ from the model";
    }
  }
}

// one_step() (the heap's own form of enumerate's single step): only where
// enumerate takes one step; it names the lowest level, a zero counter and
// the counter to zero, and advances the AlternatingCount as enumerate does,
// so an enumerate after it counts from zero into the other counter.
TEST(Bitmap, OneStepNamesTheLowestLevelAndAdvancesTheCount) {
  const std::uint64_t n = std::uint64_t{1} << 16;  // 1024 containers at the lowest level, two levels
  BitmapHandle bm(n);
  ASSERT_GT(bm.levels(), 1);
  AlternatingCount count(platform::Stream{});
  EXPECT_TRUE(bm.enumerates_in_one_step());
  bit_index* const first = count.get();
  const BitmapHandle::OneStep step = bm.one_step(count);
  EXPECT_EQ(step.words, bm.device().level_data(0));
  EXPECT_EQ(step.containers, std::size_t{1024});
  EXPECT_NE(step.count, first) << "counts into the counter that is not the current one";
  EXPECT_EQ(step.zero_after, first) << "zeroes the previous count";
  EXPECT_EQ(count.get(), step.count) << "the count now names the step's counter";
  EXPECT_EQ(count.read(), 0u);

  // enumerate after it: the other counter again, from zero.
  bm.fill(BitmapHandle::Init::kAllSet);
  platform::Buffer<bit_index> out(n);
  bm.enumerate(out.data(), count);
  EXPECT_EQ(count.get(), first);
  EXPECT_EQ(count.read(), static_cast<bit_index>(n));

  bm.set_flat_scan_limit(1);  // now several steps: one_step refuses
  EXPECT_FALSE(bm.enumerates_in_one_step());
  EXPECT_THROW(bm.one_step(count), std::logic_error);
  EXPECT_EQ(count.get(), first) << "a refused call leaves the count as it was";
}

struct SetListed {
  Bitmap bitmap;
  const bit_index* positions;
  DYNASOAR_HD void operator()(std::size_t i) const { bitmap.try_set(positions[i]); }
};

// find_run: the first run of set bits at least as long as asked for, also
// across containers and in the last, partial one; none where no run is long
// enough.
TEST(Bitmap, FindRunReturnsTheFirstLongEnoughRun) {
  BitmapHandle bm(300);
  std::vector<bit_index> set;
  for (bit_index p = 5; p < 10; ++p) set.push_back(p);     // 5 bits
  for (bit_index p = 60; p < 201; ++p) set.push_back(p);   // 141, over a full container
  for (bit_index p = 250; p < 300; ++p) set.push_back(p);  // 50, to the end
  platform::Buffer<bit_index> positions(set.size());
  positions.copy_from_host(set.data(), set.size());
  platform::parallel_for(set.size(), SetListed{bm.device(), positions.data()});
  const auto run = [](const BitmapHandle& b, std::uint64_t length) {
    return BitmapHandle::find_run(b.copy_level(0), b.capacity(), length);
  };
  EXPECT_EQ(run(bm, 1), 5u);
  EXPECT_EQ(run(bm, 5), 5u);
  EXPECT_EQ(run(bm, 6), 60u);
  EXPECT_EQ(run(bm, 141), 60u);
  EXPECT_EQ(run(bm, 142), kNoBit);
  EXPECT_EQ(run(bm, 0), kNoBit);
  EXPECT_EQ(run(bm, 301), kNoBit);
  BitmapHandle full(300, BitmapHandle::Init::kAllSet);
  EXPECT_EQ(run(full, 300), 0u);
  BitmapHandle empty(300);
  EXPECT_EQ(run(empty, 1), kNoBit);
}

// Random sequences of every operation, checked step by step against the
// model. set/clear are only issued where the model makes them legal (they
// would wait forever otherwise), find results are checked for validity and
// then applied to the model.
TEST_P(BitmapSizeTest, SequentialOperationsMatchModel) {
  const std::uint64_t n = GetParam();
  BitmapHandle bm(n);
  std::vector<bool> model(n, false);
  std::uint64_t model_count = 0;
  Rng rng(42, n);
  // Positions are drawn from a small window half of the time so that the
  // same containers are filled and emptied again (level updates both ways).
  auto draw = [&]() -> bit_index {
    const std::uint64_t window = std::min<std::uint64_t>(n, 130);
    return static_cast<bit_index>(rng.below(2) ? rng.below(window) : rng.below(n));
  };
  for (int batch = 0; batch < 40; ++batch) {
    std::vector<Op> ops;
    std::vector<bool> planned = model;  // model after the non-find ops of this batch
    for (int k = 0; k < 60; ++k) {
      const bit_index p = draw();
      switch (rng.below(5)) {
        case 0: ops.push_back({OpKind::kTrySet, p, 0}); planned[p] = true; break;
        case 1: ops.push_back({OpKind::kTryClear, p, 0}); planned[p] = false; break;
        case 2: ops.push_back({planned[p] ? OpKind::kClear : OpKind::kSet, p, 0}); planned[p] = !planned[p]; break;
        default: ops.push_back({OpKind::kGet, p, 0}); break;
      }
    }
    for (int k = 0; k < 4; ++k) ops.push_back({OpKind::kFindSet, 0, rng.next()});
    for (int k = 0; k < 3; ++k) ops.push_back({OpKind::kFindAndClear, 0, rng.next()});
    for (int k = 0; k < 2; ++k) ops.push_back({OpKind::kScanAndClear, 0, rng.next()});

    const std::vector<bit_index> results = run_ops(bm, ops);
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const Op& op = ops[k];
      const bit_index r = results[k];
      SCOPED_TRACE("batch " + std::to_string(batch) + " op " + std::to_string(k));
      switch (op.kind) {
        case OpKind::kTrySet:
          EXPECT_EQ(r, model[op.pos] ? 0u : 1u);
          if (!model[op.pos]) ++model_count;
          model[op.pos] = true;
          break;
        case OpKind::kTryClear:
          EXPECT_EQ(r, model[op.pos] ? 1u : 0u);
          if (model[op.pos]) --model_count;
          model[op.pos] = false;
          break;
        case OpKind::kSet: ASSERT_FALSE(model[op.pos]); model[op.pos] = true; ++model_count; break;
        case OpKind::kClear: ASSERT_TRUE(model[op.pos]); model[op.pos] = false; --model_count; break;
        case OpKind::kGet: EXPECT_EQ(r, model[op.pos] ? 1u : 0u); break;
        case OpKind::kFindSet:
          // Alone on the bitmap, the search is exact: it fails only when empty.
          if (model_count == 0) EXPECT_EQ(r, kNoBit);
          else { ASSERT_LT(r, n); EXPECT_TRUE(model[r]); }
          break;
        case OpKind::kRawSet: FAIL() << "not used here"; break;
        case OpKind::kFindAndClear:
        case OpKind::kScanAndClear:
          if (model_count == 0) { EXPECT_EQ(r, kNoBit); break; }
          ASSERT_LT(r, n);
          EXPECT_TRUE(model[r]);
          model[r] = false;
          --model_count;
          break;
      }
    }
    ASSERT_EQ(bm.check_consistency(), "");
  }
  std::vector<bit_index> expected;
  for (std::uint64_t p = 0; p < n; ++p)
    if (model[p]) expected.push_back(static_cast<bit_index>(p));
  expect_matches(bm, expected);
}

// Bitmap rotation (Sec. 4.2): different seeds lead to different bits, and
// every returned bit is set.
TEST_P(BitmapSizeTest, FindSetSpreadsOverSeeds) {
  const std::uint64_t n = GetParam();
  BitmapHandle bm(n, BitmapHandle::Init::kAllSet);
  std::vector<Op> ops;
  for (std::uint64_t s = 0; s < 64; ++s) ops.push_back({OpKind::kFindSet, 0, s});
  const std::vector<bit_index> r = run_ops(bm, ops);
  std::set<bit_index> distinct(r.begin(), r.end());
  for (bit_index p : r) EXPECT_LT(p, n);
  if (n >= 64) EXPECT_GE(distinct.size(), 16u) << "64 seeds found only " << distinct.size() << " bits";
  else EXPECT_GE(distinct.size(), std::min<std::uint64_t>(n, 8));
}

INSTANTIATE_TEST_SUITE_P(Sizes, BitmapSizeTest,
                         ::testing::Values(1u, 63u, 64u, 65u, 4096u, 262144u, (1u << 24) + 77u),
                         [](const auto& p) { return "bits_" + std::to_string(p.param); });

// The rotation must spread picks over the whole bitmap, also where the top
// container is only partly used: 2^20 bits have a 4-bit top level, and a
// start rotated over all 64 bit positions would send 61 of 64 searches into
// the first quarter. On a full bitmap each eighth of the positions must get
// its share of 4096 seeds, within a factor of 1.5.
TEST(BitmapTest, FindSetIsUniformOnFullBitmap) {
  for (const std::uint64_t n : {1u, 63u, 65u, 4096u, 262144u, 1u << 20, 1000000u, (1u << 24) + 77u}) {
    SCOPED_TRACE("bits " + std::to_string(n));
    BitmapHandle bm(n, BitmapHandle::Init::kAllSet);
    constexpr std::uint64_t kSeeds = 4096;
    std::vector<Op> ops;
    for (std::uint64_t s = 0; s < kSeeds; ++s) ops.push_back({OpKind::kFindSet, 0, s * 7 + 1});
    const std::vector<bit_index> r = run_ops(bm, ops);
    const std::uint64_t regions = std::min<std::uint64_t>(8, n);
    std::vector<std::uint64_t> hits(regions, 0);
    for (bit_index p : r) {
      ASSERT_LT(p, n);
      ++hits[p * regions / n];
    }
    const std::uint64_t expected = kSeeds / regions;
    for (std::uint64_t i = 0; i < regions; ++i) {
      EXPECT_GE(hits[i], expected / 2) << "region " << i << " of " << regions << " is rarely picked";
      EXPECT_LE(hits[i], expected * 3 / 2) << "region " << i << " of " << regions << " is picked too often";
    }
  }
}

// scan_and_clear reads level 0 only, so it finds bits that the upper levels
// do not show yet (a set() half-way done), which try_find_set cannot.
TEST(BitmapTest, ScanAndClearSeesLevelZeroWhileUpperLevelsLag) {
  BitmapHandle bm(200);  // 4 containers, 2 levels
  ASSERT_EQ(bm.levels(), 2);
  const std::vector<bit_index> r = run_ops(bm, {
      {OpKind::kScanAndClear, 0, 5},   // empty: nothing
      {OpKind::kRawSet, 130, 0},       // two bits of container 2, parent not set yet
      {OpKind::kRawSet, 131, 0},
      {OpKind::kFindSet, 0, 9},        // the top level says empty
      {OpKind::kScanAndClear, 0, 9},   // level 0 does not: takes the lowest bit of the container
      {OpKind::kGet, 130, 0},
      {OpKind::kRawSet, 2, 1},         // the pending set() reaches level 1
      {OpKind::kFindSet, 0, 9},
  });
  EXPECT_EQ(r[0], kNoBit);
  EXPECT_EQ(r[3], kNoBit);
  EXPECT_EQ(r[4], 130u);
  EXPECT_EQ(r[5], 0u) << "the bit it returned is cleared";
  EXPECT_EQ(r[7], 131u);
  EXPECT_EQ(bm.check_consistency(), "");
}

TEST(BitmapTest, ScanAndClearTakesEveryBitOnce) {
  for (const std::uint64_t n : {1u, 64u, 200u, 5000u}) {
    BitmapHandle bm(n, BitmapHandle::Init::kAllSet);
    std::vector<Op> ops;
    for (std::uint64_t k = 0; k <= n; ++k) ops.push_back({OpKind::kScanAndClear, 0, k * 31 + 7});
    const std::vector<bit_index> r = run_ops(bm, ops);
    std::set<bit_index> taken(r.begin(), r.end() - 1);
    EXPECT_EQ(taken.size(), n) << "bits " << n;
    EXPECT_EQ(*taken.rbegin(), n - 1);
    EXPECT_EQ(r.back(), kNoBit) << "bits " << n << ": the bitmap is empty after n takes";
    EXPECT_EQ(bm.count(), 0u);
    EXPECT_EQ(bm.check_consistency(), "");
  }
}

TEST(BitmapTest, LevelsFollowCapacity) {
  EXPECT_EQ(BitmapHandle(1).levels(), 1);
  EXPECT_EQ(BitmapHandle(64).levels(), 1);
  EXPECT_EQ(BitmapHandle(65).levels(), 2);
  EXPECT_EQ(BitmapHandle(4096).levels(), 2);
  EXPECT_EQ(BitmapHandle(4097).levels(), 3);
  EXPECT_EQ(BitmapHandle(262144).levels(), 3);
  Bitmap r;
  Bitmap::layout(kMaxBitmapCapacity, nullptr, &r);
  EXPECT_EQ(r.levels(), kMaxBitmapLevels);
}

TEST(BitmapTest, RejectsCapacityOutOfRange) {
  EXPECT_THROW(BitmapHandle(0), std::invalid_argument);
  EXPECT_THROW(BitmapHandle(std::uint64_t{kMaxBitmapCapacity} + 1), std::invalid_argument);
  BitmapHandle bm(100);
  EXPECT_THROW(bm.set_flat_scan_limit(0), std::invalid_argument);
}

TEST(BitmapTest, CopyLevelRejectsMissingLevel) {
  BitmapHandle bm(100);
  EXPECT_THROW(bm.copy_level(2), std::out_of_range);
  EXPECT_THROW(bm.copy_level(-1), std::out_of_range);
}

}  // namespace
}  // namespace dynasoar
