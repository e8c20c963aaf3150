// Loop bodies of the bitmap's bulk operations. Each is a trivially copyable
// functor that the executor runs as a kernel (CUDA build) or on host threads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dynasoar/bitmap/bitmap.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/warp.h"

namespace dynasoar::detail {

/// Sets every container of every level to "all clear" or "all set". A full
/// bitmap has every valid bit of every level set: each container holds at
/// least one valid bit, so every bit above it is set too.
struct FillBitmap {
  Bitmap bitmap;
  bool value;

  DYNASOAR_HD void operator()(std::size_t global_word) const {
    int level = 0;
    std::size_t i = global_word;
    while (i >= bitmap.level_words(level)) i -= bitmap.level_words(level++);
    Bitmap::word w = 0;
    if (value) {
      const std::uint64_t bits = bitmap.level_bits(level);
      const std::uint64_t first_bit = i * Bitmap::kWordBits;
      w = platform::low_bits(static_cast<unsigned>(
          bits - first_bit < Bitmap::kWordBits ? bits - first_bit : Bitmap::kWordBits));
    }
    bitmap.level_data(level)[i] = w;
  }
};

/// Adds the number of set bits of level 0 to *total.
struct CountBits {
  const Bitmap::word* words;
  std::size_t num_words;
  unsigned long long* total;

  DYNASOAR_HD void operator()(std::size_t worker, std::size_t workers) const {
    unsigned long long sum = 0;
    for (std::size_t i = worker; i < num_words; i += workers) sum += platform::popc(words[i]);
    if (sum != 0) platform::atomic_fetch_add(total, sum);
  }
};

/// The dense write of an enumeration (used by EnumerateLevel and by the
/// heap's ListAndSnapshotBlocks): for each lane whose word `w` is not zero
/// (the bits of container `container`, whose first entry goes to list
/// position `start`), in lane order, the whole warp takes that word's set
/// bits, lane b bits b, b + lanes, ..., and calls f(position, index) for
/// each: the bit's list position (start plus its rank in the word) and its
/// index in the level (container * kWordBits + b). Consecutive lanes get
/// consecutive positions, so the list writes coalesce. Every lane of the
/// warp must call this.
template <class F>
DYNASOAR_HD DYNASOAR_FORCEINLINE void for_each_set_bit_by_container(Bitmap::word w, bit_index container,
                                                                    bit_index start, F&& f) {
  namespace warp = platform::warp;
  const unsigned lanes = warp::size(), lane = warp::lane_id();
  const warp::lane_mask everyone = warp::full_mask();
  for (warp::lane_mask pending = warp::ballot(everyone, w != 0); pending != 0; pending &= pending - 1) {
    const unsigned src = static_cast<unsigned>(platform::ctz(pending));
    const Bitmap::word cw = warp::shfl(everyone, w, src);
    const bit_index first_position = warp::shfl(everyone, start, src);
    const std::uint64_t first_index =
        static_cast<std::uint64_t>(warp::shfl(everyone, container, src)) * Bitmap::kWordBits;
    for (unsigned b = lane; b < Bitmap::kWordBits; b += lanes)
      if ((cw >> b) & 1u)
        f(first_position + static_cast<bit_index>(platform::popc(cw & platform::low_bits(b))),
          static_cast<bit_index>(first_index + b));
  }
}

/// One step of the hierarchical enumeration (paper Alg. 5): for each selected
/// container of one level, append the positions of its set bits to `out` and
/// count them in *out_count. The containers are either the first `all`
/// containers of the level (`selected == nullptr`) or the list `selected`
/// with *selected_count entries, which the step of the level above wrote.
/// Worker 0 also zeroes *next_count (if given): the counter of the step that
/// runs after this one, or in the last step the caller's other counter
/// (AlternatingCount); each saves a memset launch.
///
/// Work is split by warps, each taking one container per lane. A warp-wide
/// prefix sum of the lanes' bit counts gives each container its output
/// offset after a single atomic add per warp. The warp then writes its
/// entries with coalesced stores (consecutive lanes, consecutive entries) in
/// one of two ways, chosen per batch of containers:
/// - dense batches (on average at least half of each container set): the
///   warp walks the containers one by one, lane b writing bit b and b + 32;
/// - sparse batches: the warp walks its output entries 32 at a time; lane j
///   finds the container that holds entry j by a binary search over the
///   lanes' prefix sums (5 shuffles) and the bit by a rank-select in the
///   container. This costs per entry written, not per container, so a
///   sparse bitmap does not spend 32 shuffle rounds on a few entries each.
/// Output order across warps is not defined.
///
/// Every lane of a warp must call this (warp-uniform loop).
struct EnumerateLevel {
  const Bitmap::word* words;
  const bit_index* selected;
  const bit_index* selected_count;
  bit_index all;
  bit_index* out;
  bit_index* out_count;
  bit_index* next_count;

  DYNASOAR_HD void operator()(std::size_t worker, std::size_t workers) const {
    namespace warp = platform::warp;
    const unsigned lanes = warp::size(), lane = warp::lane_id();
    const warp::lane_mask everyone = warp::full_mask();
    if (worker == 0 && next_count != nullptr) *next_count = 0;
    const std::size_t n = selected != nullptr ? platform::atomic_load(selected_count) : all;
    const std::size_t warp_stride = workers / lanes * lanes;

    for (std::size_t base = worker / lanes * lanes; base < n; base += warp_stride) {
      const std::size_t i = base + lane;
      bit_index container = 0;
      Bitmap::word w = 0;
      if (i < n) {
        container = selected != nullptr ? selected[i] : static_cast<bit_index>(i);
        w = words[container];
      }
      const bit_index bits = static_cast<bit_index>(platform::popc(w));
      const bit_index inclusive = warp::inclusive_sum(bits);
      const bit_index warp_total = warp::shfl(everyone, inclusive, lanes - 1);
      if (warp_total == 0) continue;
      bit_index warp_start = 0;
      if (lane == lanes - 1) warp_start = platform::atomic_fetch_add(out_count, warp_total);
      warp_start = warp::shfl(everyone, warp_start, lanes - 1);

      if (warp_total >= lanes * (Bitmap::kWordBits / 2)) {
        // Dense: container by container, each lane writing the bits at its positions.
        for_each_set_bit_by_container(w, container, warp_start + inclusive - bits,
                                      [&](bit_index position, bit_index index) { out[position] = index; });
      } else {
        // Sparse: entry by entry. Source lane of entry j = number of lanes whose
        // inclusive prefix sum is <= j (prefix sums are non-decreasing).
        const bit_index exclusive = inclusive - bits;
        for (bit_index j0 = 0; j0 < warp_total; j0 += lanes) {
          const bit_index j = j0 + lane;
          unsigned src = 0;
          for (unsigned step = lanes / 2; step > 0; step /= 2)
            if (warp::shfl(everyone, inclusive, src + step - 1) <= j) src += step;
          const Bitmap::word sw = warp::shfl(everyone, w, src);
          const bit_index rank = j - warp::shfl(everyone, exclusive, src);
          const bit_index sc = warp::shfl(everyone, container, src);
          if (j < warp_total)
            out[warp_start + j] = static_cast<bit_index>(
                static_cast<std::uint64_t>(sc) * Bitmap::kWordBits +
                static_cast<unsigned>(platform::nth_set_bit(sw, static_cast<int>(rank))));
        }
      }
    }
  }
};

}  // namespace dynasoar::detail
