// The rules of wa-tor (Dewdney, "Sharks and fish wage an ecological war on
// the toroidal planet Wa-Tor", Scientific American 1984; the benchmark of
// DynaSOAr paper Sec. 6), shared by the object version and the hand-written
// baseline so that both compute exactly the same thing.
//
// A step has a fish phase and a shark phase, each in three parts (the
// request/decide scheme of the DynaSOAr benchmark), which makes the result a
// function of seed and grid alone, whatever the order in which threads run:
//   1. prepare: every agent picks a neighbouring cell at random (fish: a
//      free one; sharks: one with a fish if there is one, else a free one)
//      and sets a request bit there.
//   2. decide: every cell with requests picks one requester at random (and
//      clears its requests for the next prepare); that agent will move.
//   3. update: the chosen agents move (a shark eats the fish it moves onto);
//      an agent old enough to breed leaves a newborn in the cell it left;
//      a shark whose energy ran out dies.
// Random numbers come from Philox keyed by the seed and counted by (cell,
// step, purpose), never from addresses or thread ids.
#pragma once

#include <cstdint>

#include "example/common/philox.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::example::wator {

// Parameters of the model (enumerators: values on host and device alike,
// also where a field's operators take them by reference).
enum Parameter : int {
  kFishBreedTime = 4,     // steps between a fish's offspring
  kSharkBreedTime = 12,   // steps between a shark's offspring
  kSharkStartEnergy = 4,  // a newborn shark's energy
  kSharkFishEnergy = 3,   // energy a shark gains per fish eaten
  kFishPercent = 20,      // initial population, percent of the cells
  kSharkPercent = 4
};

enum class Kind : std::uint8_t { kEmpty = 0, kFish = 1, kShark = 2 };

// What a random draw is for (part of the Philox counter).
enum Purpose : std::uint32_t {
  kPopulate = 0,
  kPopulateAge = 1,
  kFishMove = 2,
  kFishDecide = 3,
  kSharkMove = 4,
  kSharkDecide = 5
};

/// The grid and the step being computed; passed by value to every kernel.
struct Grid {
  int width = 0;
  int height = 0;
  std::uint64_t seed = 0;
  int step = 0;

  DYNASOAR_HD int cells() const { return width * height; }

  /// Neighbour of `cell` in direction d: 0 north, 1 east, 2 south, 3 west (a torus).
  DYNASOAR_HD int neighbor(int cell, int d) const {
    const int x = cell % width, y = cell / width;
    switch (d) {
      case 0: return (y == 0 ? height - 1 : y - 1) * width + x;
      case 1: return y * width + (x + 1 == width ? 0 : x + 1);
      case 2: return (y + 1 == height ? 0 : y + 1) * width + x;
      default: return y * width + (x == 0 ? width - 1 : x - 1);
    }
  }

  DYNASOAR_HD std::uint32_t random(int cell, Purpose p) const {
    return random_u32(seed, static_cast<std::uint32_t>(cell), static_cast<std::uint32_t>(step), p);
  }
};

/// The direction from the neighbour in direction d back to the cell.
DYNASOAR_HD inline int opposite(int d) { return (d + 2) & 3; }

/// One of the set bits of a 4-bit mask of directions, chosen by r; -1 if none.
DYNASOAR_HD inline int pick_direction(unsigned mask, std::uint32_t r) {
  const auto n = static_cast<unsigned>(platform::popc(static_cast<std::uint64_t>(mask)));
  if (n == 0) return -1;
  unsigned k = below(r, n);
  for (int d = 0; d < 4; ++d)
    if ((mask >> d) & 1u) {
      if (k == 0) return d;
      --k;
    }
  return -1;
}

/// Initial occupant of a cell, and its age (egg timer).
DYNASOAR_HD inline Kind initial_kind(const Grid& g, int cell) {
  const unsigned r = below(g.random(cell, kPopulate), 100);
  constexpr unsigned kFish = kFishPercent, kShark = kFishPercent + kSharkPercent;
  return r < kFish ? Kind::kFish : r < kShark ? Kind::kShark : Kind::kEmpty;
}
DYNASOAR_HD inline int initial_age(const Grid& g, int cell, Kind k) {
  return static_cast<int>(below(g.random(cell, kPopulateAge),
                                k == Kind::kShark ? kSharkBreedTime : kFishBreedTime));
}

/// A cell's term of the checksum: a hash of its place and its occupant. The
/// checksum is the sum over all cells (mod 2^64), so it does not depend on
/// the order in which cells are added.
DYNASOAR_HD inline std::uint64_t checksum_term(int cell, Kind k, int age, int energy) {
  if (k == Kind::kEmpty) return 0;
  const std::uint64_t state = (static_cast<std::uint64_t>(k) << 56) |
                              (static_cast<std::uint64_t>(static_cast<std::uint32_t>(age)) << 24) |
                              static_cast<std::uint32_t>(energy);
  return platform::mix64(platform::mix64(static_cast<std::uint64_t>(cell)) ^ state);
}

}  // namespace dynasoar::example::wator
