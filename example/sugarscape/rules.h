// The rules of the sugarscape model (Epstein and Axtell, "Growing Artificial
// Societies", 1996, in the variant of the original DynaSOAr's sugarscape
// example), shared by the object version and the hand-written baseline so
// that both compute exactly the same thing.
//
// Cells on a bounded grid grow sugar and let part of it diffuse to the
// cells around them. Agents, male or female, live on cells: each step they
// age and burn sugar (and die when old or starved), move to the free cell
// with the most sugar within their vision and harvest it, and mate: a male
// that is ready proposes to the richest ready female he sees, a female
// accepts the richest of her suitors, and the couple's child is born on a
// free cell within the male's sight. Every choice between competitors (several
// agents wanting one cell, several males wanting one female) is made by the
// contested side (the request/decide scheme of the DynaSOAr benchmarks), so
// the result is a function of seed and grid alone, whatever the order in
// which threads run. Random numbers come from Philox keyed by the seed and
// counted by (cell, step, purpose), never from addresses or thread ids.
//
// As in the original, a cell gives away an eighth of its sugar (at most
// kMaxDiffusion) and each of the 24 cells within two steps of it receives
// an eighth of that, so diffusion adds sugar to the landscape: with 8
// receivers instead, far fewer agents survive. Unlike the original, ties
// are broken by a hash of the chooser's draw and the candidate cell
// instead of a running random draw per candidate, so no choice depends on
// the order of a scan.
#pragma once

#include <cstdint>

#include "example/common/philox.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::example::sugarscape {

// Parameters of the model (those of the original example; enumerators:
// values on host and device alike).
enum Parameter : int {
  kMaxVision = 2,          // an agent sees 1 or 2 cells far; cells look this far for requests and sugar
  kMaxAge = 100,           // an agent's lifespan: 66 to 98 steps
  kMaxEndowment = 200,     // sugar an agent is born with: 50 to 199
  kMaxMetabolism = 80,     // sugar an agent burns per step: 26 to 78
  kSugarCapacity = 3500,   // a cell holds at most this much sugar
  kMaxGrowRate = 50,       // sugar a cell grows per step: 50, 25, 12 or 0
  kMaxDiffusion = 60,      // sugar a cell gives away per step, at most (1/8 of its sugar)
  kMinMatingAge = 22,
  kMaxChildren = 8,        // a female has at most 2 to 7 children
  kMalePercent = 12,       // initial population, percent of the cells
  kFemalePercent = 15
};

enum class Kind : std::uint8_t { kNone = 0, kMale = 1, kFemale = 2 };

// What a random draw is for (part of the Philox counter).
enum Purpose : std::uint32_t {
  kGrowRate = 0,
  kPopulate = 1,
  kVision = 2,
  kLifespan = 3,
  kEndowment = 4,
  kMetabolism = 5,
  kChildren = 6,
  kMove = 7,          // an agent's choice among equally sweet cells
  kMovePermit = 8,    // a cell's choice among the agents that want it
  kPropose = 9,       // a male's choice among equally rich females
  kAccept = 10,       // a female's choice among equally rich suitors
  kBirthplace = 11,   // a male's choice of a free cell for the child
  kBirthPermit = 12,  // a cell's choice among the males that want it for a child
  kSex = 13           // the child's sex
};

/// The grid and the step being computed; passed by value to every kernel.
struct Grid {
  int width = 0;
  int height = 0;
  std::uint64_t seed = 0;
  int step = 0;

  DYNASOAR_HD int cells() const { return width * height; }

  DYNASOAR_HD std::uint32_t random(int cell, Purpose p) const {
    return random_u32(seed, static_cast<std::uint32_t>(cell), static_cast<std::uint32_t>(step), p);
  }

  /// Calls f(n) for every cell n != c of the square of cells at most
  /// `radius` away from cell c (the grid has edges: no wrap-around), row by
  /// row. Both versions scan in this order, so a tie on every criterion goes
  /// to the same candidate in both.
  template <class F>
  DYNASOAR_HD void for_each_near(int c, int radius, F&& f) const {
    const int x = c % width, y = c / width;
    const int x0 = x - radius < 0 ? 0 : x - radius, x1 = x + radius >= width ? width - 1 : x + radius;
    const int y0 = y - radius < 0 ? 0 : y - radius, y1 = y + radius >= height ? height - 1 : y + radius;
    for (int ny = y0; ny <= y1; ++ny)
      for (int nx = x0; nx <= x1; ++nx) {
        const int n = ny * width + nx;
        if (n != c) f(n);
      }
  }
};

/// The tie-breaking key of candidate cell n for a chooser whose draw for
/// this choice is `draw`: a hash, so that each candidate's chance is the
/// same without a random number per candidate.
DYNASOAR_HD inline std::uint32_t tie_key(std::uint32_t draw, int n) {
  return static_cast<std::uint32_t>(
      platform::mix64((static_cast<std::uint64_t>(draw) << 32) | static_cast<std::uint32_t>(n)) >> 32);
}

/// A running choice of the candidate with the largest (value, tie_key):
/// offer() every candidate, then read best (-1 if none was offered).
struct Best {
  std::uint32_t draw;
  int best = -1;
  long long value = 0;
  std::uint32_t key = 0;

  DYNASOAR_HD explicit Best(std::uint32_t d) : draw(d) {}
  DYNASOAR_HD void offer(int n, long long v) {
    const std::uint32_t k = tie_key(draw, n);
    if (best < 0 || v > value || (v == value && k > key)) {
      best = n;
      value = v;
      key = k;
    }
  }
};

/// Sugar a cell grows per step, fixed at the start: 50 on 2 % of the
/// cells, 25 on 2 %, 12 on 4 %, none elsewhere.
DYNASOAR_HD inline int grow_rate(const Grid& g, int cell) {
  const std::uint32_t r = below(g.random(cell, kGrowRate), 100);
  return r < 2 ? kMaxGrowRate : r < 4 ? kMaxGrowRate / 2 : r < 8 ? kMaxGrowRate / 4 : 0;
}
/// A cell's sugar after growing. A cell above its capacity (diffusion can
/// bring it there) is set back to the capacity, as in the original.
DYNASOAR_HD inline int grown(int sugar, int rate) {
  return sugar + (kSugarCapacity - sugar < rate ? kSugarCapacity - sugar : rate);
}
/// Sugar a cell gives away in a step: an eighth of it, at most
/// kMaxDiffusion. Each cell within kMaxVision of it receives an eighth of
/// that (rounded down).
DYNASOAR_HD inline int diffusion(int sugar) { return sugar / 8 < kMaxDiffusion ? sugar / 8 : kMaxDiffusion; }

/// A new agent's properties (also a child's, whose parents' averages replace the draws).
struct Traits {
  int vision = 1;
  int max_age = 0;
  int endowment = 0;
  int metabolism = 0;
  int max_children = 0;  // females only
};

/// The initial occupant of a cell and its traits.
DYNASOAR_HD inline Kind initial_kind(const Grid& g, int cell) {
  const std::uint32_t r = below(g.random(cell, kPopulate), 100);
  return r < kMalePercent ? Kind::kMale : r < kMalePercent + kFemalePercent ? Kind::kFemale : Kind::kNone;
}
DYNASOAR_HD inline Traits initial_traits(const Grid& g, int cell) {
  Traits t;
  t.vision = 1 + static_cast<int>(below(g.random(cell, kVision), kMaxVision));
  t.max_age = kMaxAge * 2 / 3 + static_cast<int>(below(g.random(cell, kLifespan), kMaxAge / 3));
  t.endowment = kMaxEndowment / 4 + static_cast<int>(below(g.random(cell, kEndowment), kMaxEndowment * 3 / 4));
  t.metabolism = kMaxMetabolism / 3 + static_cast<int>(below(g.random(cell, kMetabolism), kMaxMetabolism * 2 / 3));
  t.max_children = 2 + static_cast<int>(below(g.random(cell, kChildren), kMaxChildren - 2));
  return t;
}

/// Whether an agent may mate: old enough, and with two thirds of its
/// endowment (half of which goes to the child).
DYNASOAR_HD inline bool ready_to_mate(int age, int sugar, int endowment) {
  return sugar >= endowment * 2 / 3 && age >= kMinMatingAge;
}

/// A child's traits: its parents' averages; a daughter may have as many
/// children as her mother.
DYNASOAR_HD inline Traits child_traits(const Traits& father, const Traits& mother) {
  return Traits{(father.vision + mother.vision) / 2, (father.max_age + mother.max_age) / 2,
                (father.endowment + mother.endowment) / 2, (father.metabolism + mother.metabolism) / 2,
                mother.max_children};
}
/// The child's sex, drawn at its birthplace.
DYNASOAR_HD inline Kind child_kind(const Grid& g, int birthplace) {
  return below(g.random(birthplace, kSex), 2) == 0 ? Kind::kMale : Kind::kFemale;
}

/// A cell's term of the checksum: a hash of its place, its sugar and its
/// occupant's state (`children` is a female's count, 0 for a male). The
/// checksum is the sum over all cells (mod 2^64), so it does not depend on
/// the order in which cells are added.
DYNASOAR_HD inline std::uint64_t checksum_term(int cell, int cell_sugar, Kind k, int age, int sugar,
                                               int children) {
  std::uint64_t term = platform::mix64(platform::mix64(static_cast<std::uint64_t>(cell)) ^
                                       static_cast<std::uint32_t>(cell_sugar));
  if (k != Kind::kNone) {
    const std::uint64_t state = (static_cast<std::uint64_t>(k) << 56) |
                                (static_cast<std::uint64_t>(static_cast<std::uint8_t>(children)) << 48) |
                                (static_cast<std::uint64_t>(static_cast<std::uint16_t>(age)) << 32) |
                                static_cast<std::uint32_t>(sugar);
    term += platform::mix64(platform::mix64(~static_cast<std::uint64_t>(cell)) ^ state);
  }
  return term;
}

/// The viewer's byte for a cell: the occupant (Kind) in bits 0-1, the
/// sugar in 64 levels (10 per level, the last one 630 and more) in bits 2-7.
DYNASOAR_HD inline std::uint8_t frame_byte(int sugar, Kind k) {
  const int level = sugar >= 630 ? 63 : sugar / 10;
  return static_cast<std::uint8_t>((level << 2) | static_cast<int>(k));
}

}  // namespace dynasoar::example::sugarscape
