// Benchmark of the hierarchical bitmap on the GPU (not a test).
//
// 1. indices: GPU time to write the positions of all set bits to a compact
//    array, against bitmap size (2^12 .. 2^30 bits) and fill (0.1 %, 10 %,
//    100 %). Three implementations run on the same bitmap in the same run:
//      hierarchical  BitmapHandle::enumerate (Alg. 5: levels top-down,
//                    empty regions skipped)
//      flat          the same warp-cooperative step on level 0 only (every
//                    container read)
//      cub           cub::DeviceSelect::If over all bit positions
//    Every run checks that the three agree on the number of set bits.
// 2. toggle: throughput of try_set + try_clear of random positions by 2^20
//    threads under contention (range of 2^8 .. 2^24 positions), hierarchical
//    bitmap against the same pattern on a flat array of words (plain
//    atomicOr / atomicAnd, no upper levels to maintain).
// 3. take_return: the allocator's pattern: threads repeatedly take a set bit
//    (one try_find_and_clear) and give it back (set), at densities from 100 %
//    to 0.001 %, against a flat bitmap searched word by word from a random
//    start until a full pass finds nothing. Throughput counts successful
//    takes; the success rate of the searches is reported beside it.
//
// Usage: bitmap_bench [--quick] [--max-log2 N] [--csv FILE]
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "bench/support/gpu_bench.h"
#include "dynasoar/bitmap/bitmap_handle.h"

namespace dynasoar {
namespace {

using word = Bitmap::word;
using bench::fmt;

// Sets bit p with probability ~fill (a fixed pseudo-random pattern).
struct SetRandom {
  Bitmap bitmap;
  std::uint64_t threshold;  // fill * 2^64
  std::uint64_t seed;
  DYNASOAR_HD void operator()(std::size_t p) const {
    if (platform::mix64(p ^ seed) < threshold) bitmap.try_set(static_cast<bit_index>(p));
  }
};

std::uint64_t threshold_for(double fill) {
  if (fill >= 1.0) return ~std::uint64_t{0};
  return static_cast<std::uint64_t>(fill * 18446744073709551616.0);
}

struct BitIsSet {
  const word* words;
  __device__ bool operator()(bit_index i) const { return (words[i / 64] >> (i % 64)) & 1u; }
};

// --- 1. indices -------------------------------------------------------------------------
void bench_indices(bench::Csv& csv, int max_log2, bool quick) {
  const double fills[] = {0.001, 0.1, 1.0};
  for (int lg = 12; lg <= max_log2; lg += 2) {
    const std::uint64_t bits = std::uint64_t{1} << lg;
    const int reps = lg <= 24 ? (quick ? 10 : 30) : (quick ? 5 : 10);
    BitmapHandle bitmap(bits);
    platform::Buffer<bit_index> out(bits);
    platform::Buffer<bit_index> count(3);  // one counter per implementation
    std::size_t cub_temp_bytes = 0;
    thrust::counting_iterator<bit_index> positions(0);
    DYNASOAR_CUDA_CHECK(cub::DeviceSelect::If(nullptr, cub_temp_bytes, positions, out.data(),
                                              count.data() + 2, static_cast<std::int64_t>(bits),
                                              BitIsSet{nullptr}));
    platform::Buffer<unsigned char> cub_temp(cub_temp_bytes);

    for (double fill : fills) {
      if (fill >= 1.0)
        bitmap.fill(BitmapHandle::Init::kAllSet);
      else {
        bitmap.fill(BitmapHandle::Init::kAllClear);
        platform::parallel_for(bits, SetRandom{bitmap.device(), threshold_for(fill), 0x5EEDu});
      }
      const std::uint64_t set_bits = bitmap.count();
      const Bitmap ref = bitmap.device();

      const auto hier = bench::time_gpu([&] { bitmap.enumerate(out.data(), count.data()); }, 3, reps);
      const detail::EnumerateLevel flat_step{ref.level_data(0), nullptr, nullptr,
                                             ref.level_words(0), out.data(), count.data() + 1,
                                             nullptr};
      const std::size_t flat_workers =
          std::min<std::size_t>((ref.level_words(0) + 31) / 32 * 32, platform::concurrent_threads());
      const auto flat = bench::time_gpu(
          [&] {
            DYNASOAR_CUDA_CHECK(cudaMemsetAsync(count.data() + 1, 0, sizeof(bit_index)));
            platform::parallel_workers_up_to(flat_workers, flat_step);
          },
          3, reps);
      const auto cub = bench::time_gpu(
          [&] {
            std::size_t bytes = cub_temp_bytes;
            DYNASOAR_CUDA_CHECK(cub::DeviceSelect::If(cub_temp.data(), bytes, positions, out.data(),
                                                      count.data() + 2,
                                                      static_cast<std::int64_t>(bits),
                                                      BitIsSet{ref.level_data(0)}));
          },
          3, reps);

      std::vector<bit_index> counts = count.to_vector();
      if (counts[0] != set_bits || counts[1] != set_bits || counts[2] != set_bits) {
        std::fprintf(stderr,
                     "indices: implementations disagree at 2^%d bits, fill %g: count %llu, "
                     "hierarchical %u, flat %u, cub %u\n",
                     lg, fill, static_cast<unsigned long long>(set_bits), counts[0], counts[1],
                     counts[2]);
        std::exit(1);
      }
      auto row = [&](const char* impl, const bench::Timing& t) {
        csv.line(std::string("indices,") + std::to_string(bits) + "," + fmt(fill) + "," +
                 std::to_string(set_bits) + "," + impl + "," + fmt(t.median_ms, "%.5f") + "," +
                 fmt(t.min_ms, "%.5f") + "," + std::to_string(t.reps) + "," +
                 fmt(bits / (t.median_ms * 1e3), "%.3f") + "," + fmt(cub.median_ms / t.median_ms, "%.3f") + ",");
      };
      row("hierarchical", hier);
      row("flat", flat);
      row("cub", cub);
    }
  }
}

// --- 2. toggle: try_set + try_clear under contention --------------------------------------
// Each thread: `rounds` times pick a random position in [0, range); if its
// try_set succeeds, try_clear it again (only the setter clears: legal).
template <bool kHierarchical>
struct Toggle {
  Bitmap bitmap;
  std::uint64_t range;
  int rounds;
  DYNASOAR_HD void operator()(std::size_t t) const {
    std::uint64_t state = platform::mix64(t);
    for (int r = 0; r < rounds; ++r) {
      const auto p = static_cast<bit_index>(platform::mix64(state++) % range);
      if constexpr (kHierarchical) {
        if (bitmap.try_set(p)) bitmap.try_clear(p);
      } else {
        word* w = bitmap.level_data(0) + p / 64;
        const word m = Bitmap::bit_mask(p);
        if ((platform::atomic_fetch_or(w, m) & m) == 0) platform::atomic_fetch_and(w, ~m);
      }
    }
  }
};

void bench_toggle(bench::Csv& csv, bool quick) {
  constexpr std::size_t kThreads = std::size_t{1} << 20;
  const int rounds = quick ? 16 : 64;
  const int reps = quick ? 5 : 15;
  for (int lg : {8, 12, 16, 20, 24}) {
    const std::uint64_t range = std::uint64_t{1} << lg;
    BitmapHandle bitmap(range);
    const auto hier = bench::time_gpu(
        [&] { platform::parallel_for(kThreads, Toggle<true>{bitmap.device(), range, rounds}); }, 2, reps);
    const auto flat = bench::time_gpu(
        [&] { platform::parallel_for(kThreads, Toggle<false>{bitmap.device(), range, rounds}); }, 2, reps);
    if (bitmap.count() != 0 || !bitmap.check_consistency().empty()) {
      std::fprintf(stderr, "toggle: bitmap not empty and consistent afterwards (range 2^%d)\n", lg);
      std::exit(1);
    }
    const double attempts = static_cast<double>(kThreads) * rounds;
    auto row = [&](const char* impl, const bench::Timing& t) {
      csv.line(std::string("toggle,") + std::to_string(range) + ",," + std::to_string(kThreads) +
               "," + impl + "," + fmt(t.median_ms, "%.5f") + "," + fmt(t.min_ms, "%.5f") + "," +
               std::to_string(t.reps) + "," + fmt(attempts / (t.median_ms * 1e3), "%.3f") + "," +
               fmt(flat.median_ms / t.median_ms, "%.3f") + ",");
    };
    row("hierarchical", hier);
    row("flat", flat);
  }
}

// --- 3. take_return: find-and-clear, then set back -----------------------------------------
DYNASOAR_HD bit_index flat_find_and_clear(word* words, std::size_t n, std::uint64_t seed) {
  const std::uint64_t r = platform::mix64(seed);
  const std::size_t start = r % n;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = start + k < n ? start + k : start + k - n;
    word x = platform::atomic_load(words + i);
    while (x != 0) {
      const unsigned b = static_cast<unsigned>(platform::find_set_rotated(x, r & 63u));
      const word prev = platform::atomic_fetch_and(words + i, ~(word{1} << b));
      if ((prev >> b) & 1u) return static_cast<bit_index>(i * 64 + b);
      x = prev;
    }
  }
  return kNoBit;
}

template <bool kHierarchical>
struct TakeReturn {
  Bitmap bitmap;
  int rounds;
  unsigned long long* taken;
  DYNASOAR_HD void operator()(std::size_t t) const {
    unsigned long long got = 0;
    for (int r = 0; r < rounds; ++r) {
      const std::uint64_t seed = platform::mix64(t * 1024 + static_cast<std::uint64_t>(r));
      if constexpr (kHierarchical) {
        const bit_index p = bitmap.try_find_and_clear(seed);
        if (p != kNoBit) {
          ++got;
          bitmap.set(p);
        }
      } else {
        const bit_index p = flat_find_and_clear(bitmap.level_data(0), bitmap.level_words(0), seed);
        if (p != kNoBit) {
          ++got;
          platform::atomic_fetch_or(bitmap.level_data(0) + p / 64, Bitmap::bit_mask(p));
        }
      }
    }
    platform::atomic_fetch_add(taken, got);
  }
};

struct TakeReturnCase {
  int log2_bits;
  int log2_threads;
  double fill;
};

void bench_take_return(bench::Csv& csv, bool quick) {
  // Dense and sparse bitmaps, with fewer threads than set bits and (last
  // rows) more threads than set bits, where many searches must fail.
  const TakeReturnCase cases[] = {{20, 16, 1.0},   {20, 16, 0.1},     {24, 12, 0.01},
                                  {24, 12, 0.001}, {24, 12, 0.0001},  {24, 10, 0.00001},
                                  {20, 16, 0.01}};
  const int rounds = quick ? 4 : 16;
  const int reps = quick ? 3 : 9;
  platform::Buffer<unsigned long long> taken(1);
  for (const TakeReturnCase& c : cases) {
    const std::uint64_t bits = std::uint64_t{1} << c.log2_bits;
    const std::size_t threads = std::size_t{1} << c.log2_threads;
    BitmapHandle bitmap(bits);
    if (c.fill >= 1.0)
      bitmap.fill(BitmapHandle::Init::kAllSet);
    else
      platform::parallel_for(bits, SetRandom{bitmap.device(), threshold_for(c.fill), 0xF111u});
    const std::uint64_t set_bits = bitmap.count();
    // Returns the timing and the fraction of searches that found a bit.
    auto run = [&](auto functor) {
      taken.zero();
      const auto t = bench::time_gpu([&] { platform::parallel_for(threads, functor); }, 1, reps);
      unsigned long long n = 0;
      taken.copy_to_host(&n, 1);
      if (bitmap.count() != set_bits) {
        std::fprintf(stderr, "take_return: %llu bits set afterwards, %llu before\n",
                     static_cast<unsigned long long>(bitmap.count()),
                     static_cast<unsigned long long>(set_bits));
        std::exit(1);
      }
      return std::make_pair(t, static_cast<double>(n) / (1 + reps) / (double(threads) * rounds));
    };
    const auto [hier, hier_success] = run(TakeReturn<true>{bitmap.device(), rounds, taken.data()});
    const std::string consistency = bitmap.check_consistency();
    if (!consistency.empty()) {
      std::fprintf(stderr, "take_return: %s\n", consistency.c_str());
      std::exit(1);
    }
    const auto [flat, flat_success] = run(TakeReturn<false>{bitmap.device(), rounds, taken.data()});
    // Throughput counts successful takes: a search that gives up early is cheap but useless.
    const double attempts = static_cast<double>(threads) * rounds;
    const double flat_rate = attempts * flat_success / flat.median_ms;
    auto row = [&](const char* impl, const bench::Timing& t, double success) {
      const double rate = attempts * success / t.median_ms;
      csv.line(std::string("take_return,") + std::to_string(bits) + "," + fmt(c.fill) + "," +
               std::to_string(set_bits) + "," + impl + "," + fmt(t.median_ms, "%.5f") + "," +
               fmt(t.min_ms, "%.5f") + "," + std::to_string(t.reps) + "," + fmt(rate / 1e3, "%.3f") +
               "," + fmt(rate / flat_rate, "%.3f") + ",threads=" + std::to_string(threads) +
               " success=" + fmt(success, "%.4f"));
    };
    row("hierarchical", hier, hier_success);
    row("flat", flat, flat_success);
  }
}

}  // namespace
}  // namespace dynasoar

int main(int argc, char** argv) {
  using namespace dynasoar;
  bool quick = false;
  int max_log2 = 30;
  std::string csv_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
      max_log2 = 20;
    } else if (a == "--max-log2" && i + 1 < argc) {
      max_log2 = std::atoi(argv[++i]);
    } else if (a == "--csv" && i + 1 < argc) {
      csv_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--max-log2 N (12..31)] [--csv FILE]\n", argv[0]);
      return 2;
    }
  }
  if (max_log2 < 12 || max_log2 > 31) {
    std::fprintf(stderr, "--max-log2 must be between 12 and 31\n");
    return 2;
  }
  try {
    bench::Csv csv(csv_path,
                   {"benchmark: bitmap", "date: " + bench::utc_now(),
                    "device: " + bench::device_description(),
                    "command: " + bench::command_line(argc, argv),
                    "timing: CUDA events, warm-up runs untimed, median of reps",
                    "columns: Mitems_per_s = millions per second of bits (indices), of attempts (toggle) or "
                    "of successful takes (take_return); ratio = this throughput / the baseline's "
                    "(cub for indices, flat otherwise; > 1 means faster than the baseline)"},
                   "bench,bits,fill,set_bits_or_threads,impl,median_ms,min_ms,reps,Mitems_per_s,ratio,notes");
    bench_indices(csv, max_log2, quick);
    bench_toggle(csv, quick);
    bench_take_return(csv, quick);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bitmap_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
