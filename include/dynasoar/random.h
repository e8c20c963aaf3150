// Random numbers that are the same on the host and the GPU: Philox4x32-10
// (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2,
// 3", SC 2011), the counter-based generator behind cuRAND's Philox. A value is
// a pure function of a 64-bit key and a 128-bit counter, with no state to
// initialise or store, so methods key it by a seed and count by what the value
// is for (an object's id, the step, a purpose): results never depend on
// thread scheduling, on where the allocator put an object, or on the build.
//
//   std::uint32_t r = dynasoar::random_u32(seed, id, step, kPurpose);
//   float u = dynasoar::random_float(seed, id, step, kPurpose);      // [0, 1)
//   dynasoar::RandomStream rng(seed, id);  // a sequence, like curand_init(seed, id, 0, &s)
//   float x = rng.uniform(); unsigned k = rng.below(6);
#pragma once

#include <cstdint>

#include "dynasoar/platform/config.h"

namespace dynasoar {

/// Four 32-bit words: a counter or a result of philox4x32.
struct Philox4x32 {
  /// The four words; random_u32 returns word 0 of a result.
  std::uint32_t v[4];
};

/// Philox4x32 with 10 rounds of counter `c` under key `key` (low word first,
/// as Random123's key {k0, k1}).
DYNASOAR_HD inline Philox4x32 philox4x32(Philox4x32 c, std::uint64_t key) {
  constexpr std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;  // round multipliers
  constexpr std::uint32_t kBump0 = 0x9E3779B9u, kBump1 = 0xBB67AE85u;  // key schedule (Weyl)
  auto k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t{kMul0} * c.v[0];
    const std::uint64_t p1 = std::uint64_t{kMul1} * c.v[2];
    c = {{static_cast<std::uint32_t>(p1 >> 32) ^ c.v[1] ^ k0, static_cast<std::uint32_t>(p1),
          static_cast<std::uint32_t>(p0 >> 32) ^ c.v[3] ^ k1, static_cast<std::uint32_t>(p0)}};
    k0 += kBump0;
    k1 += kBump1;
  }
  return c;
}

/// One uniform 32-bit value for (key; a, b, c).
DYNASOAR_HD inline std::uint32_t random_u32(std::uint64_t key, std::uint32_t a, std::uint32_t b,
                                            std::uint32_t c) {
  return philox4x32({{a, b, c, 0u}}, key).v[0];
}

/// Maps a uniform 32-bit value to [0, n) (multiply-shift; bias below 2^-32 * n).
DYNASOAR_HD inline std::uint32_t random_below(std::uint32_t r, std::uint32_t n) {
  return static_cast<std::uint32_t>((std::uint64_t{r} * n) >> 32);
}

/// Maps a uniform 32-bit value to a float in [0, 1) (its top 24 bits).
DYNASOAR_HD inline float random_unit_float(std::uint32_t r) {
  return static_cast<float>(r >> 8) * (1.0f / 16777216.0f);
}

/// One uniform float in [0, 1) for (key; a, b, c).
DYNASOAR_HD inline float random_float(std::uint64_t key, std::uint32_t a, std::uint32_t b,
                                      std::uint32_t c) {
  return random_unit_float(random_u32(key, a, b, c));
}

/// A sequence of random values for one stream (an object, a thread): value
/// k of stream s under seed is a function of (seed, s, k) alone. Trivially
/// copyable and 24 bytes, so it can be a field of a class or a local. The
/// k-th value is computed on demand (one Philox call each, no buffer).
class RandomStream {
 public:
  RandomStream() = default;
  /// Stream `stream` under `seed`, at its first value (like
  /// curand_init(seed, stream, 0, ...)). Host and device.
  DYNASOAR_HD RandomStream(std::uint64_t seed, std::uint64_t stream)
      : seed_(seed), stream_lo_(static_cast<std::uint32_t>(stream)),
        stream_hi_(static_cast<std::uint32_t>(stream >> 32)) {}

  /// The next uniform 32-bit value.
  DYNASOAR_HD std::uint32_t next_u32() {
    return philox4x32({{stream_lo_, stream_hi_, position_++, kDomain}}, seed_).v[0];
  }
  /// The next uniform float in [0, 1).
  DYNASOAR_HD float uniform() { return random_unit_float(next_u32()); }
  /// The next uniform integer in [0, n).
  DYNASOAR_HD std::uint32_t below(std::uint32_t n) { return random_below(next_u32(), n); }
  /// How many values were drawn.
  DYNASOAR_HD std::uint32_t position() const { return position_; }

 private:
  // Keeps streams apart from random_u32(seed, a, b, c) with c = position.
  static constexpr std::uint32_t kDomain = 0x5EEDu;
  std::uint64_t seed_ = 0;
  std::uint32_t stream_lo_ = 0, stream_hi_ = 0;
  std::uint32_t position_ = 0;
};

}  // namespace dynasoar
