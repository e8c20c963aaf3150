// Concurrent stress of the hierarchical bitmap: many workers apply random,
// legal (paper App. A.5, Def. A.3) mixes of every operation at once; the
// invariants are checked after the storm. Host tier: std::thread workers
// (also run under ThreadSanitizer); device tier: 131072 GPU threads.
//
// Legality is kept by construction:
// - "Random" region [0, split): only try_set / try_clear / get, never waiting.
// - "Private" region [split, n): each bit has one owner worker that toggles it
//   with the waiting set / clear. Any worker may take a set bit with
//   try_find_and_clear; a private bit taken that way is given back with set()
//   before the thief does anything else, so a waiting owner only ever waits
//   for a worker that is already running (no cycle, no deadlock).
// Every successful change of bit p is counted in net[p]; afterwards each bit
// must equal its initial value plus net[p], every level must be consistent
// with its containers (Def. A.1), and no private bit was held by two thieves
// at once (find-and-clear never hands a position out twice).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "dynasoar/bitmap/bitmap_handle.h"
#include "support/rng.h"
#include "support/stress_rounds.h"

namespace dynasoar {
namespace {

using test::Rng;

#if DYNASOAR_CUDA
constexpr std::size_t kWorkers = 131072;  // 512 blocks of 256 threads
constexpr int kRounds = 400;
#else
constexpr std::size_t kWorkers = 16;  // OS threads, more than this machine's cores
constexpr int kRounds = 100000;
#endif

int stress_rounds() { return test::stress_rounds(kRounds); }

// Initial state of bit p (the same function on host and device).
DYNASOAR_HD bool initially_set(std::uint64_t p) { return platform::mix64(p ^ 0xB17u) & 1u; }

struct SetInitial {
  Bitmap bitmap;
  DYNASOAR_HD void operator()(std::size_t p) const {
    if (initially_set(p)) bitmap.set(static_cast<bit_index>(p));
  }
};

enum Error : std::uint32_t { kOutOfRange = 0, kTakenTwice = 1, kNumErrors = 2 };

struct StressWorker {
  Bitmap bitmap;
  bit_index split;        // first private position
  std::int32_t* net;      // per position: successful sets minus clears
  std::uint32_t* held;    // per private position: 1 while a thief holds it
  std::uint32_t* errors;  // per Error
  std::uint32_t* gate;    // host: workers wait here until all have started
  std::uint64_t seed;
  int rounds;

  DYNASOAR_HD void add(bit_index p, std::int32_t d) const { platform::atomic_fetch_add(net + p, d); }

  DYNASOAR_HD void operator()(std::size_t worker, std::size_t workers) const {
    const bit_index n = bitmap.capacity();
    if constexpr (!platform::kCudaBuild) {
      // OS threads start one after another; without the gate the first would
      // be done before the last began. (GPU threads need no gate, and a grid-wide
      // wait could hang on blocks that are not yet resident.)
      platform::atomic_fetch_add(gate, 1u);
      while (platform::atomic_load(gate) < workers) platform::spin_pause();
    }
    Rng rng(seed, worker);
    // This worker's private bits: split + worker + k * workers, k < 64.
    std::uint64_t mine = 0, belief = 0;
    for (unsigned k = 0; k < 64; ++k) {
      const std::uint64_t p = split + worker + std::uint64_t{k} * workers;
      if (p >= n) break;
      mine |= std::uint64_t{1} << k;
      if (initially_set(p)) belief |= std::uint64_t{1} << k;
    }
    const std::uint64_t hot = split < 128 ? split : 128;  // a hot window for contention
    for (int r = 0; r < rounds; ++r) {
      const std::uint64_t choice = rng.below(6);
      if (choice <= 2 && split > 0) {
        const auto p = static_cast<bit_index>(rng.below(2) ? rng.below(hot) : rng.below(split));
        if (choice == 0 && bitmap.try_set(p)) add(p, 1);
        if (choice == 1 && bitmap.try_clear(p)) add(p, -1);
        if (choice == 2) (void)bitmap.get(p);
      } else if (choice == 3 && mine != 0) {
        const int k = platform::nth_set_bit(mine, static_cast<int>(rng.below(platform::popc(mine))));
        const auto p = static_cast<bit_index>(split + worker + std::uint64_t(k) * workers);
        const std::uint64_t m = std::uint64_t{1} << k;
        if (belief & m) { bitmap.clear(p); add(p, -1); }
        else { bitmap.set(p); add(p, 1); }
        belief ^= m;
      } else if (choice == 4) {
        const bit_index p = bitmap.try_find_set(rng.next());
        if (p != kNoBit && p >= n) platform::atomic_fetch_add(errors + kOutOfRange, 1u);
      } else if (choice == 5) {
        const bit_index p = bitmap.try_find_and_clear(rng.next());
        if (p == kNoBit) continue;
        if (p >= n) { platform::atomic_fetch_add(errors + kOutOfRange, 1u); continue; }
        add(p, -1);
        if (p < split) {  // random region: give it back if nobody set it meanwhile
          if (bitmap.try_set(p)) add(p, 1);
          continue;
        }
        platform::thread_fence();  // pairs with the fence before the previous holder's set()
        if (platform::atomic_exchange(held + p, 1u) != 0)
          platform::atomic_fetch_add(errors + kTakenTwice, 1u);
        platform::atomic_store(held + p, 0u);
        platform::thread_fence();
        bitmap.set(p);  // legal: only its holder may set a taken private bit
        add(p, 1);
      }
    }
  }
};

struct StressCase {
  std::uint64_t capacity;
  bit_index split;
};

// Names the case in test listings (instead of a byte dump).
[[maybe_unused]] void PrintTo(const StressCase& c, std::ostream* os) {
  *os << c.capacity << " bits, split " << c.split;
}

class BitmapStressTest : public ::testing::TestWithParam<StressCase> {};

TEST_P(BitmapStressTest, RandomLegalMixKeepsInvariants) {
  const auto [n, split] = GetParam();
  BitmapHandle bm(n);
  platform::parallel_for(n, SetInitial{bm.device()});
  ASSERT_EQ(bm.check_consistency(), "");

  platform::Buffer<std::int32_t> net(n);
  platform::Buffer<std::uint32_t> held(n);
  platform::Buffer<std::uint32_t> errors(kNumErrors);
  platform::Buffer<std::uint32_t> gate(1);
  gate.zero();
  net.zero();
  held.zero();
  errors.zero();
  platform::parallel_workers(kWorkers, StressWorker{bm.device(), split, net.data(), held.data(),
                                                    errors.data(), gate.data(), 0x5EED + n, stress_rounds()});
  platform::synchronize();

  const std::vector<std::uint32_t> err = errors.to_vector();
  EXPECT_EQ(err[kOutOfRange], 0u) << "a find returned a position beyond the capacity";
  EXPECT_EQ(err[kTakenTwice], 0u) << "find-and-clear handed out a held position";

  ASSERT_EQ(bm.check_consistency(), "");
  const std::vector<std::int32_t> delta = net.to_vector();
  const std::vector<Bitmap::word> words = bm.copy_level(0);
  std::vector<bit_index> expected;
  std::uint64_t mismatches = 0;
  for (std::uint64_t p = 0; p < n; ++p) {
    const std::int64_t value = (initially_set(p) ? 1 : 0) + delta[p];
    const bool bit = (words[p / 64] >> (p % 64)) & 1u;
    if (value != (bit ? 1 : 0)) {
      if (mismatches++ < 5)
        ADD_FAILURE() << "bit " << p << " is " << bit << " but initial + net changes = " << value;
    }
    if (bit) expected.push_back(static_cast<bit_index>(p));
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(bm.count(), expected.size());
  EXPECT_TRUE(bm.indices() == expected) << "indices() differs from the containers";
}

INSTANTIATE_TEST_SUITE_P(Sizes, BitmapStressTest,
                         ::testing::Values(StressCase{64, 32}, StressCase{4097, 2048},
                                           StressCase{262144, 131072},
                                           StressCase{(1u << 24) + 77, 1u << 20}),
                         [](const auto& p) { return "bits_" + std::to_string(p.param.capacity); });

// All workers drain a full bitmap with try_find_and_clear. Every position
// must be handed out exactly once or still be set: none twice, none lost.
struct Drain {
  Bitmap bitmap;
  std::uint32_t* taken;
  DYNASOAR_HD void operator()(std::size_t worker, std::size_t) const {
    int misses = 0;
    for (std::uint64_t attempt = 0; misses < 4; ++attempt) {
      const bit_index p = bitmap.try_find_and_clear(worker * 1000003u + attempt);
      if (p == kNoBit) { ++misses; continue; }  // may be a transient inconsistency
      misses = 0;
      if (p < bitmap.capacity()) platform::atomic_fetch_add(taken + p, 1u);
    }
  }
};

TEST(BitmapStress, FindAndClearHandsOutEachPositionOnce) {
  for (const std::uint64_t n : {64u, 4097u, 262144u}) {
    SCOPED_TRACE("bits " + std::to_string(n));
    BitmapHandle bm(n, BitmapHandle::Init::kAllSet);
    platform::Buffer<std::uint32_t> taken(n);
    taken.zero();
    platform::parallel_workers(kWorkers, Drain{bm.device(), taken.data()});
    const std::vector<std::uint32_t> t = taken.to_vector();
    const std::vector<Bitmap::word> words = bm.copy_level(0);
    std::uint64_t bad = 0, handed_out = 0;
    for (std::uint64_t p = 0; p < n; ++p) {
      const unsigned bit = (words[p / 64] >> (p % 64)) & 1u;
      handed_out += t[p];
      if (t[p] + bit != 1 && bad++ < 5)
        ADD_FAILURE() << "position " << p << " handed out " << t[p] << " times, bit now " << bit;
    }
    EXPECT_EQ(bad, 0u);
    EXPECT_GT(handed_out, n / 2) << "the drain gave up too early";
    EXPECT_EQ(bm.check_consistency(), "");
  }
}

}  // namespace
}  // namespace dynasoar
