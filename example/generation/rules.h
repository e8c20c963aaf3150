// The rules of the generation example, shared by the object version and the
// hand-written baseline: a game of life of the "Generations" family, in the
// variant of the original DynaSOAr's generation example. A cell is dead,
// alive, or dying: an alive cell that does not survive a step does not die
// at once but passes through `states` dying steps, in which it neither
// counts as an alive neighbour nor can be born again, and is dead after the
// last. Rule B3468/S0235678 (the original's): a dead cell with 3, 4, 6 or 8
// alive neighbours is born, an alive one with 0, 2, 3, 5, 6, 7 or 8 stays
// alive. The grid is the game of life's torus (example/gol/rules.h), and so
// is the random soup the run starts from.
#pragma once

#include <cstdint>

#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"
#include "example/generation/generation.h"
#include "example/gol/rules.h"

namespace dynasoar::example::generation {

using gol::Grid;

// The rule as bit masks over the number of alive neighbours (enumerators:
// values on host and device alike).
enum Rule : unsigned {
  kBirthMask = (1u << 3) | (1u << 4) | (1u << 6) | (1u << 8),
  kSurvivalMask = (1u << 0) | (1u << 2) | (1u << 3) | (1u << 5) | (1u << 6) | (1u << 7) | (1u << 8)
};

/// Whether a dead cell with n alive neighbours is born.
DYNASOAR_HD inline bool born(int n) { return ((kBirthMask >> n) & 1u) != 0; }
/// Whether an alive cell with n alive neighbours stays alive.
DYNASOAR_HD inline bool survives(int n) { return ((kSurvivalMask >> n) & 1u) != 0; }

/// An alive (state 0) or dying (state 1 to `states`) cell's term of the
/// checksum, summed mod 2^64 over those cells.
DYNASOAR_HD inline std::uint64_t checksum_term(int cell, int state) {
  return platform::mix64(platform::mix64(static_cast<std::uint64_t>(cell)) ^
                         (0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(state)));
}

/// The viewer's byte for an alive (state 0) or dying cell: kFrameAlive, or
/// from kFrameDying (just started dying) up to 254 (last dying step).
DYNASOAR_HD inline std::uint8_t frame_byte(int state, int states) {
  if (state == 0) return kFrameAlive;
  return static_cast<std::uint8_t>(kFrameDying + static_cast<long long>(state - 1) * (254 - kFrameDying) /
                                                     (states > 1 ? states - 1 : 1));
}

}  // namespace dynasoar::example::generation
