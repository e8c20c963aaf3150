// Loop bodies of the bitmap's bulk operations. Each is a trivially copyable
// functor that the executor runs as a kernel (CUDA build) or on host threads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "bitmap/bitmap_ref.h"
#include "platform/atomic.h"
#include "platform/bits.h"
#include "platform/warp.h"

namespace dynasoar::detail {

/// Sets every container of every level to "all clear" or "all set". A full
/// bitmap has every valid bit of every level set: each container holds at
/// least one valid bit, so every bit above it is set too.
struct FillBitmap {
  BitmapRef bitmap;
  bool value;

  DYNASOAR_HD void operator()(std::size_t global_word) const {
    int level = 0;
    std::size_t i = global_word;
    while (i >= bitmap.level_words(level)) i -= bitmap.level_words(level++);
    BitmapRef::word w = 0;
    if (value) {
      const std::uint64_t bits = bitmap.level_bits(level);
      const std::uint64_t first_bit = i * BitmapRef::kWordBits;
      w = platform::low_bits(static_cast<unsigned>(
          bits - first_bit < BitmapRef::kWordBits ? bits - first_bit : BitmapRef::kWordBits));
    }
    bitmap.level_data(level)[i] = w;
  }
};

/// Adds the number of set bits of level 0 to *total.
struct CountBits {
  const BitmapRef::word* words;
  std::size_t num_words;
  unsigned long long* total;

  DYNASOAR_HD void operator()(std::size_t worker, std::size_t workers) const {
    unsigned long long sum = 0;
    for (std::size_t i = worker; i < num_words; i += workers) sum += platform::popc(words[i]);
    if (sum != 0) platform::atomic_fetch_add(total, sum);
  }
};

/// One step of the hierarchical enumeration (paper Alg. 5): for each selected
/// container of one level, append the positions of its set bits to `out` and
/// count them in *out_count. The containers are either the first `all`
/// containers of the level (`selected == nullptr`) or the list `selected`
/// with *selected_count entries, which the step of the level above wrote.
///
/// Work is split by warps, each taking one container per lane: a warp-wide
/// prefix sum of the lanes' bit counts gives each container its output
/// offset after a single atomic add per warp. The warp then writes the
/// containers one after another, each lane writing the bits at its own
/// positions, so consecutive lanes write consecutive entries (coalesced).
/// Output order across warps is not defined.
///
/// Every lane of a warp must call this (warp-uniform loop).
struct EnumerateLevel {
  const BitmapRef::word* words;
  const bit_index* selected;
  const bit_index* selected_count;
  bit_index all;
  bit_index* out;
  bit_index* out_count;

  DYNASOAR_HD void operator()(std::size_t worker, std::size_t workers) const {
    namespace warp = platform::warp;
    const unsigned lanes = warp::size(), lane = warp::lane_id();
    const warp::lane_mask everyone = warp::full_mask();
    const std::size_t n = selected != nullptr ? platform::atomic_load(selected_count) : all;
    const std::size_t warp_stride = workers / lanes * lanes;

    for (std::size_t base = worker / lanes * lanes; base < n; base += warp_stride) {
      const std::size_t i = base + lane;
      bit_index container = 0;
      BitmapRef::word w = 0;
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
      const bit_index my_start = warp::shfl(everyone, warp_start, lanes - 1) + inclusive - bits;

      for (warp::lane_mask pending = warp::ballot(everyone, w != 0); pending != 0;
           pending &= pending - 1) {
        const unsigned src = static_cast<unsigned>(platform::ctz(pending));
        const BitmapRef::word cw = warp::shfl(everyone, w, src);
        const bit_index start = warp::shfl(everyone, my_start, src);
        const std::uint64_t first = static_cast<std::uint64_t>(warp::shfl(everyone, container, src)) *
                                    BitmapRef::kWordBits;
        for (unsigned b = lane; b < BitmapRef::kWordBits; b += lanes) {
          if ((cw >> b) & 1u)
            out[start + platform::popc(cw & platform::low_bits(b))] =
                static_cast<bit_index>(first + b);
        }
      }
    }
  }
};

}  // namespace dynasoar::detail
