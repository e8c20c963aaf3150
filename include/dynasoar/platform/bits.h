// Bit operations on 64-bit containers (Springer & Masuhara 2019, Sec. 4.3): one
// instruction each on the GPU and on current CPUs.
#pragma once

#include <cstdint>

#include "dynasoar/platform/config.h"

namespace dynasoar::platform {

/// Number of set bits.
DYNASOAR_HD DYNASOAR_FORCEINLINE int popc(std::uint64_t x) {
  return DYNASOAR_DEVICE_OR_HOST(__popcll(x), __builtin_popcountll(x));
}

/// Index of the lowest set bit; `x` must not be 0.
DYNASOAR_HD DYNASOAR_FORCEINLINE int ctz(std::uint64_t x) {
  return DYNASOAR_DEVICE_OR_HOST(__ffsll(static_cast<long long>(x)) - 1, __builtin_ctzll(x));
}

/// Number of leading zero bits; 64 for 0.
DYNASOAR_HD DYNASOAR_FORCEINLINE int clz(std::uint64_t x) {
  return DYNASOAR_DEVICE_OR_HOST(__clzll(static_cast<long long>(x)), x == 0 ? 64 : __builtin_clzll(x));
}

/// Rotates right by `s` (taken modulo 64).
DYNASOAR_HD DYNASOAR_FORCEINLINE std::uint64_t rotr(std::uint64_t x, unsigned s) {
  s &= 63u;
  return (x >> s) | (x << ((64u - s) & 63u));
}

/// Rotates left by s (mod 64); the inverse of rotr.
DYNASOAR_HD DYNASOAR_FORCEINLINE std::uint64_t rotl(std::uint64_t x, unsigned s) {
  return rotr(x, (64u - (s & 63u)) & 63u);
}

/// Mask with the low `n` bits set, for 0 <= n <= 64.
DYNASOAR_HD DYNASOAR_FORCEINLINE std::uint64_t low_bits(unsigned n) {
  return n >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << n) - 1);
}

/// Index of the first set bit at or after position `start`, wrapping around
/// (the rotated find-first-set of paper Sec. 4.2); `x` must not be 0.
DYNASOAR_HD DYNASOAR_FORCEINLINE int find_set_rotated(std::uint64_t x, unsigned start) {
  start &= 63u;
  return static_cast<int>((static_cast<unsigned>(ctz(rotr(x, start))) + start) & 63u);
}

/// Index of the n-th (0-based) set bit; `x` must have more than n set bits.
/// Six halving steps: count the set bits of the lower half and move to the
/// upper half if the bit is not among them (a branch-free "select").
DYNASOAR_HD DYNASOAR_FORCEINLINE int nth_set_bit(std::uint64_t x, int n) {
  int pos = 0;
  auto rank = static_cast<unsigned>(n);
  for (unsigned width = 32; width > 0; width >>= 1) {
    const auto below = static_cast<unsigned>(popc(x & low_bits(width)));
    const bool upper = rank >= below;
    rank -= upper ? below : 0u;
    x >>= upper ? width : 0u;
    pos += upper ? static_cast<int>(width) : 0;
  }
  return pos;
}

/// A fast 64-bit mixing function (SplitMix64 finaliser). Used to derive
/// well-spread rotations from small seeds such as warp ids.
DYNASOAR_HD DYNASOAR_FORCEINLINE std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace dynasoar::platform
