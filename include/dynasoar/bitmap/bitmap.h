// Bitmap: the non-owning, trivially copyable handle of a hierarchical
// bitmap (Springer & Masuhara 2019, Sec. 4.1). Kernels receive it by value; every
// operation here may be called from host and device code. The owning host
// object is dynasoar::BitmapHandle (bitmap_handle.h).
//
// Structure: level 0 holds the bits, in 64-bit containers. Level l+1 holds one
// bit per container of level l, set iff that container has a set bit
// (container consistency, App. A.5 Def. A.1). The top level is one container.
// Levels are updated after their containers, so between operations they may
// be briefly inconsistent; they are consistent again once all operations have
// finished (App. A.5), e.g. at the end of a kernel.
#pragma once

#include <cstdint>

#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"

namespace dynasoar {

/// Position of a bit. Bitmaps hold at most kMaxBitmapCapacity bits.
using bit_index = std::uint32_t;

/// Returned by the find operations when they find no set bit.
inline constexpr bit_index kNoBit = 0xFFFFFFFFu;

/// Largest supported capacity (kNoBit is reserved).
inline constexpr bit_index kMaxBitmapCapacity = 0xFFFFFFFEu;

/// Enough levels for kMaxBitmapCapacity bits: 2^32 bits -> 2^26 -> 2^20 -> 2^14 -> 2^8 -> 4 -> 1 container.
inline constexpr int kMaxBitmapLevels = 6;

/// Like a pointer, the handle is const while the bits it refers to change:
/// every operation is a const member and copies of a handle share the bits.
class Bitmap {
 public:
  /// One container: 64 bits of one level.
  using word = std::uint64_t;
  /// Bits per container.
  static constexpr unsigned kWordBits = 64;

  Bitmap() = default;

  /// Number of bits (valid positions are [0, capacity())).
  DYNASOAR_HD bit_index capacity() const { return level_bits_[0]; }

  /// Number of levels, 1 for capacities up to 64.
  DYNASOAR_HD int levels() const { return levels_; }

  /// Bits in level `l` (level 0: the bitmap itself).
  DYNASOAR_HD bit_index level_bits(int l) const { return level_bits_[l]; }

  /// Containers in level `l`.
  DYNASOAR_HD bit_index level_words(int l) const { return words_for(level_bits_[l]); }

  /// The containers of level `l`.
  DYNASOAR_HD word* level_data(int l) const { return words_ + level_offset_[l]; }

  /// Value of bit `pos`. Like every read of a concurrently changing bitmap it
  /// may be stale by the time the caller uses it.
  DYNASOAR_HD bool get(bit_index pos) const {
    return (platform::atomic_load(level_data(0) + pos / kWordBits) & bit_mask(pos)) != 0;
  }

  /// Atomically changes bit `pos` from 0 to 1. Returns false (and changes
  /// nothing) if it was already 1.
  DYNASOAR_HD bool try_set(bit_index pos) const {
    const word prev = platform::atomic_fetch_or(level_data(0) + pos / kWordBits, bit_mask(pos));
    if ((prev & bit_mask(pos)) != 0) return false;
    if (prev == 0) set_from(1, pos / kWordBits);  // first bit of its container (Alg. 3, mirrored)
    return true;
  }

  /// Changes bit `pos` from 0 to 1, waiting while it is 1 until another
  /// thread clears it. Use only where that is guaranteed to happen (legal
  /// operation sets, App. A.5 Def. A.3); otherwise it never returns.
  DYNASOAR_HD void set(bit_index pos) const { set_from(0, pos); }

  /// Atomically changes bit `pos` from 1 to 0. Returns false (and changes
  /// nothing) if it was already 0. (Alg. 3)
  DYNASOAR_HD bool try_clear(bit_index pos) const {
    const word prev = platform::atomic_fetch_and(level_data(0) + pos / kWordBits, ~bit_mask(pos));
    if ((prev & bit_mask(pos)) == 0) return false;
    if (prev == bit_mask(pos)) clear_from(1, pos / kWordBits);  // cleared the last bit
    return true;
  }

  /// Changes bit `pos` from 1 to 0, waiting while it is 0 until another
  /// thread sets it (same caveat as set()).
  DYNASOAR_HD void clear(bit_index pos) const { clear_from(0, pos); }

  /// Position of some set bit, or kNoBit (Alg. 4). The search descends the
  /// hierarchy and in each container takes the first set bit at or after a
  /// start position, wrapping around (bitmap rotation, Sec. 4.2), so threads
  /// with different seeds spread over different bits. The starts come from
  /// one target position drawn uniformly from [0, capacity) by `seed`: at each
  /// level the search starts at the target's ancestor bit. In a full bitmap
  /// the result is the target itself, so picks are uniform over all bits;
  /// independent per-level rotations would instead send most searches into
  /// the first bit of a partly used top container (e.g. 62 of 64 for a
  /// 2-bit top level). May return kNoBit although bits are set while other
  /// threads modify the bitmap (Sec. 4.1.3); callers retry with a new seed.
  DYNASOAR_HD bit_index try_find_set(std::uint64_t seed) const {
    // Of the handle only the containers' address, the capacity and the
    // level count are read; each level's size and offset are computed as
    // layout() lays them out. A handle in global memory (a heap's bitmaps,
    // read after acquires that invalidate L1) then costs one round trip,
    // not one per level ahead of that level's container.
    const word* const words = words_;
    const std::uint64_t cap = level_bits_[0];
    const std::uint64_t target = ((platform::mix64(seed) >> 32) * cap) >> 32;
    std::uint64_t index = 0;  // container index within the current level
    for (int l = levels_ - 1; l >= 0; --l) {
      std::uint64_t bits = cap, offset = 0;  // level l: its bits, and where it starts
      for (int k = 0; k < l; ++k) {
        bits = containers_for(bits);
        offset += bits;
      }
      const word w = platform::atomic_load(words + offset + index);
      if (w == 0) return kNoBit;
      unsigned start = static_cast<unsigned>(target >> (6 * l)) & 63u;
      const std::uint64_t valid = bits - index * kWordBits;  // > 0
      if (valid < kWordBits) start %= static_cast<unsigned>(valid);  // the last, partial container
      index = index * kWordBits + static_cast<unsigned>(platform::find_set_rotated(w, start));
    }
    return static_cast<bit_index>(index);
  }

  /// Atomically finds a set bit, clears it and returns its position; kNoBit
  /// if the search found no set bit. No position is returned to two callers
  /// unless it was set again in between. Retries with a new seed while another
  /// thread clears the bit it found first.
  DYNASOAR_HD bit_index try_find_and_clear(std::uint64_t seed) const {
    for (;; ++seed) {
      const bit_index pos = try_find_set(seed);
      if (pos == kNoBit || try_clear(pos)) return pos;
    }
  }

  /// A set bit found by reading level 0 only, container by container from
  /// one drawn by `seed`, in one full pass; kNoBit if the pass met none.
  /// O(capacity / 64): meant to confirm that a bitmap is empty before acting
  /// on it, because the upper levels may lag behind level 0. While one thread
  /// is between clearing a container's last bit and clearing the parent bit,
  /// a thread that refills the container waits to set the parent bit, and
  /// searches from the top miss the container meanwhile.
  DYNASOAR_HD bit_index scan_for_set(std::uint64_t seed) const {
    return scan_level0(seed, [](bit_index) { return true; });
  }
  /// Same, and clears the bit it returns (as try_find_and_clear).
  DYNASOAR_HD bit_index scan_and_clear(std::uint64_t seed) const {
    return scan_level0(seed, [this](bit_index pos) { return try_clear(pos); });
  }

  /// Calls f(pos) for every set bit, in ascending order, from one thread,
  /// descending the hierarchy so that empty regions are skipped. Bits that
  /// change meanwhile may or may not be visited.
  template <class F>
  DYNASOAR_HD void for_each_set(F&& f) const {
    for_each_set_loading(f, [](const word* p) { return platform::atomic_load(p); });
  }

  /// Same, reading every container through load(const word*). A group of
  /// threads that loads through one member and shares the value (a warp
  /// shuffle) walks one sequence of bits in every member, even while the
  /// bitmap changes, because the walk depends only on the words loaded.
  template <class F, class Load>
  DYNASOAR_HD void for_each_set_loading(F&& f, Load&& load) const {
    word pending[kMaxBitmapLevels];
    std::uint64_t base[kMaxBitmapLevels];  // index of the container `pending` came from
    const int top = levels_ - 1;
    int l = top;
    pending[top] = load(level_data(top));
    base[top] = 0;
    for (;;) {
      if (pending[l] == 0) {
        if (l == top) return;
        ++l;
        continue;
      }
      const std::uint64_t pos = base[l] * kWordBits + static_cast<unsigned>(platform::ctz(pending[l]));
      pending[l] &= pending[l] - 1;
      if (l == 0) {
        f(static_cast<bit_index>(pos));
      } else {
        --l;
        base[l] = pos;
        pending[l] = load(level_data(l) + pos);
      }
    }
  }

  // --- construction (used by BitmapHandle) ---

  /// Lays out the levels for `capacity` bits; returns the total number of
  /// containers. `words` may be null to only compute the size.
  DYNASOAR_HD static std::uint64_t layout(bit_index capacity, word* words, Bitmap* out) {
    Bitmap r;
    r.words_ = words;
    std::uint64_t bits = capacity, offset = 0;
    int l = 0;
    for (;;) {
      r.level_bits_[l] = static_cast<bit_index>(bits);
      r.level_offset_[l] = static_cast<std::uint32_t>(offset);
      offset += words_for(static_cast<bit_index>(bits));
      ++l;
      if (words_for(static_cast<bit_index>(bits)) <= 1) break;
      bits = words_for(static_cast<bit_index>(bits));
    }
    r.levels_ = l;
    if (out != nullptr) *out = r;
    return offset;
  }

  /// Containers needed for `bits` bits (`bits` / 64, rounded up).
  DYNASOAR_HD static bit_index words_for(bit_index bits) { return static_cast<bit_index>(containers_for(bits)); }
  /// The same in 64-bit arithmetic (try_find_set computes each level's
  /// size with it: the 32-bit form cost its callers registers).
  DYNASOAR_HD static constexpr std::uint64_t containers_for(std::uint64_t bits) {
    return (bits + kWordBits - 1) / kWordBits;
  }

  /// The mask of bit `pos` within its container.
  DYNASOAR_HD static word bit_mask(std::uint64_t pos) { return word{1} << (pos % kWordBits); }

 private:
  // One pass over the level-0 containers from a drawn one; returns the first
  // set bit for which take(pos) is true.
  template <class Take>
  DYNASOAR_HD bit_index scan_level0(std::uint64_t seed, Take&& take) const {
    const std::uint64_t containers = (static_cast<std::uint64_t>(capacity()) + kWordBits - 1) / kWordBits;
    const std::uint64_t start = ((platform::mix64(seed) >> 32) * containers) >> 32;
    for (std::uint64_t i = 0; i < containers; ++i) {
      const std::uint64_t c = start + i < containers ? start + i : start + i - containers;
      // take() fails only if another thread took the bit: read the container again.
      for (word w = platform::atomic_load(level_data(0) + c); w != 0; w = platform::atomic_load(level_data(0) + c)) {
        const auto pos = static_cast<bit_index>(c * kWordBits + static_cast<unsigned>(platform::ctz(w)));
        if (take(pos)) return pos;
      }
    }
    return kNoBit;
  }

  // Sets bit `pos` of level `level`, retrying until this thread changed it,
  // and walks up while each change set the first bit of its container. The
  // levels above are changed with the retrying form, never the try_ form: a
  // concurrent operation on the other half of a pair may not have reached
  // that level yet, and dropping the update would leave the level
  // inconsistent for good (Sec. 4.1.3). Iterative: no stack on the GPU.
  DYNASOAR_HD void set_from(int level, std::uint64_t pos) const {
    for (; level < levels_; ++level, pos /= kWordBits) {
      word prev;
      while (((prev = platform::atomic_fetch_or(level_data(level) + pos / kWordBits,
                                                bit_mask(pos))) &
              bit_mask(pos)) != 0)
        platform::spin_pause();
      if (prev != 0) return;  // the container was not empty: the level above is already set
    }
  }

  DYNASOAR_HD void clear_from(int level, std::uint64_t pos) const {
    for (; level < levels_; ++level, pos /= kWordBits) {
      word prev;
      while (((prev = platform::atomic_fetch_and(level_data(level) + pos / kWordBits,
                                                 ~bit_mask(pos))) &
              bit_mask(pos)) == 0)
        platform::spin_pause();
      if (prev != bit_mask(pos)) return;  // the container still has set bits
    }
  }

  word* words_ = nullptr;
  bit_index level_bits_[kMaxBitmapLevels] = {};
  std::uint32_t level_offset_[kMaxBitmapLevels] = {};
  int levels_ = 0;
};

}  // namespace dynasoar
