// Counter-based random numbers: Philox4x32-10 (Salmon, Moraes, Dror and
// Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011), the
// generator behind cuRAND's Philox. A random value is a pure function of a
// 64-bit key and a 128-bit counter, so the examples key it by (seed) and
// count by (object's place, step, purpose): results never depend on thread
// scheduling or on where the allocator put an object, and the host build
// draws exactly the same numbers as the GPU.
#pragma once

#include <cstdint>

#include "platform/config.h"

namespace dynasoar::example {

struct Philox4x32 {
  std::uint32_t v[4];
};

/// Philox4x32 with 10 rounds of counter `c` under key `key`.
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

/// One 32-bit random value for (key; a, b, c).
DYNASOAR_HD inline std::uint32_t random_u32(std::uint64_t key, std::uint32_t a, std::uint32_t b,
                                            std::uint32_t c) {
  return philox4x32({{a, b, c, 0u}}, key).v[0];
}

/// Maps a uniform 32-bit value to [0, n) (multiply-shift; bias below 2^-32 * n).
DYNASOAR_HD inline std::uint32_t below(std::uint32_t r, std::uint32_t n) {
  return static_cast<std::uint32_t>((std::uint64_t{r} * n) >> 32);
}

}  // namespace dynasoar::example
