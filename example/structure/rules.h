// The model of the structure example (the original DynaSOAr's `structure`),
// shared by the object version and the hand-written baseline so that both
// compute exactly the same thing.
//
// Nodes joined by springs form a net on a lattice: node i sits near column
// i % columns, row i / columns, and may have a spring to the node on its
// right, the one above and one diagonal neighbour (half of the lattice's
// squares get a diagonal, so that no node has more than kMaxDegree
// springs). Anchor nodes stand still: the pins, every kPinSpacing-th node of
// every kPinSpacing-th row. Anchor pull nodes are anchors that move at a
// constant velocity and drag the net with them. All other nodes move under
// their springs' forces. A spring pulls (it never pushes) with its factor
// times its stretch beyond its rest length, and breaks when that force
// exceeds its maximum.
//
// A step: the pull nodes move; then, Config::iterations times (the
// original: 40), every spring computes its force (and breaks if it must) and
// every node moves; then a breadth-first search from the anchors finds the
// nodes that no chain of springs holds any more, and their springs are
// removed. A node whose last spring goes is removed with it.
//
// Every result is a function of the seed and the node count alone: a node
// sums its springs' forces in the order of its slots (kRight, kUp, kLeft,
// kDown, kDiagonal), never in the order in which threads run, and every
// floating-point operation goes through the functions below, rounded once
// as IEEE single precision. The GPU would otherwise fuse a multiplication
// and an addition into one operation with one rounding where the host
// rounds twice, and which springs break would differ between the builds.
// The host programs are compiled without contraction as well
// (example/CMakeLists.txt).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"
#include "example/common/philox.h"

namespace dynasoar::example::structure {

// Parameters of the model (enumerators: values on host and device alike).
enum Parameter : int {
  kMaxDegree = 5,            // springs per node, at most (the original's value)
  kPinSpacing = 16,          // a pin every 16th node of every 16th row
  kPullOneIn = 8,            // of the other nodes, one in 8 is a pull node
  kSpringPercent = 95,       // a spring of the lattice exists with this chance
  kBfsLevelsPerCheck = 4,    // BFS levels queued between two looks at whether the search ended
  kUnreached = 1 << 30       // distance of a node the search has not reached
};

inline constexpr float kDt = 0.2f;             // time step of a move (the original's)
inline constexpr float kJitter = 0.25f;        // a node lies up to this far from its lattice point
inline constexpr float kMinFactor = 3.0f;      // spring factors in [3, 5) (the original's range)
inline constexpr float kMaxFactor = 5.0f;
inline constexpr float kMaxForce = 0.5f;       // a spring breaks above this force (the original's)
inline constexpr float kMinMass = 400.0f;      // masses in [400, 600) (the original: 500)
inline constexpr float kMaxMass = 600.0f;
inline constexpr float kPullSpeed = 0.3f;      // pull velocities in [-0.3, 0.3)^2, lattice units per time

/// What a node is; 0 in a frame: removed.
enum class Kind : std::uint8_t { kNone = 0, kAnchor = 1, kPull = 2, kNode = 3 };

/// A node's slots for its springs, by direction: a node keeps the spring to
/// its right-hand neighbour in slot kRight, and so on.
enum Slot : int { kRight = 0, kUp = 1, kLeft = 2, kDown = 3, kDiagonal = 4 };

// What a random draw is for (part of the Philox counter).
enum Purpose : std::uint32_t {
  kKindDraw = 0,
  kJitterX = 1,
  kJitterY = 2,
  kMassDraw = 3,
  kPullX = 4,
  kPullY = 5,
  kSpringDraw = 6,
  kFactorDraw = 7
};

// --- arithmetic rounded once per operation ---------------------------------------------

DYNASOAR_HD inline float add(float a, float b) { return DYNASOAR_DEVICE_OR_HOST(__fadd_rn(a, b), a + b); }
DYNASOAR_HD inline float sub(float a, float b) { return DYNASOAR_DEVICE_OR_HOST(__fsub_rn(a, b), a - b); }
DYNASOAR_HD inline float mul(float a, float b) { return DYNASOAR_DEVICE_OR_HOST(__fmul_rn(a, b), a * b); }
DYNASOAR_HD inline float div(float a, float b) { return DYNASOAR_DEVICE_OR_HOST(__fdiv_rn(a, b), a / b); }
DYNASOAR_HD inline float root(float a) { return DYNASOAR_DEVICE_OR_HOST(__fsqrt_rn(a), std::sqrt(a)); }
DYNASOAR_HD inline std::uint32_t float_bits(float a) {
  return DYNASOAR_DEVICE_OR_HOST(__float_as_uint(a), std::bit_cast<std::uint32_t>(a));
}

// --- the lattice ---------------------------------------------------------------------------

/// The initial structure: `nodes` nodes on a lattice `columns` wide (the
/// last row may be partly filled). Passed by value to every kernel.
struct Lattice {
  int nodes = 0;
  int columns = 0;
  std::uint64_t seed = 0;

  DYNASOAR_HD int rows() const { return (nodes + columns - 1) / columns; }
  DYNASOAR_HD int column(int i) const { return i % columns; }
  DYNASOAR_HD int row(int i) const { return i / columns; }
  /// The node at column x, row y; -1 where there is none.
  DYNASOAR_HD int at(int x, int y) const {
    if (x < 0 || x >= columns || y < 0) return -1;
    const long long i = static_cast<long long>(y) * columns + x;
    return i < nodes ? static_cast<int>(i) : -1;
  }
  DYNASOAR_HD float uniform(int i, std::uint32_t k, Purpose p) const {
    return random_float(seed, static_cast<std::uint32_t>(i), k, p);
  }
};

/// The lattice of `nodes` nodes: twice as wide as high, about.
inline Lattice make_lattice(int nodes, std::uint64_t seed) {
  int columns = 1;
  while (static_cast<long long>(columns) * columns < 2LL * nodes) ++columns;
  return Lattice{nodes, columns, seed};
}

/// The node that node i's spring in `slot` would join it to; -1 where the
/// lattice has none. Diagonals: a node in an even column joins the node one
/// column to the right and one row up (down-left to up-right in an even
/// row, down-right to up-left in an odd one), a node in an odd column the
/// node one row down, so every node has at most one diagonal.
DYNASOAR_HD inline int neighbour(const Lattice& l, int i, int slot) {
  const int x = l.column(i), y = l.row(i);
  switch (slot) {
    case kRight:
      return l.at(x + 1, y);
    case kUp:
      return l.at(x, y + 1);
    case kLeft:
      return l.at(x - 1, y);
    case kDown:
      return l.at(x, y - 1);
    default:
      if (x % 2 == 0) return y % 2 == 0 ? l.at(x + 1, y + 1) : l.at(x - 1, y + 1);
      return y % 2 == 0 ? l.at(x + 1, y - 1) : l.at(x - 1, y - 1);
  }
}

/// Whether node i is the first end of its spring in `slot` (the end with
/// the smaller index): the force of a spring pulls its first end towards
/// its second and the second end back.
DYNASOAR_HD inline bool first_end(const Lattice& l, int i, int slot) {
  return slot == kRight || slot == kUp || (slot == kDiagonal && l.column(i) % 2 == 0);
}
/// The slot of a spring at its second end, from its slot at the first.
DYNASOAR_HD inline int second_slot(int first_slot) { return first_slot == kDiagonal ? kDiagonal : first_slot + 2; }
/// The slot at the first end from a spring's code: code = 3 * first end + k,
/// k 0 (right), 1 (up) or 2 (diagonal).
DYNASOAR_HD inline int code_slot(int code) { return code % 3 == 2 ? kDiagonal : code % 3; }
DYNASOAR_HD inline int code_first_end(int code) { return code / 3; }

/// Whether the spring in node i's `slot` exists at the start.
DYNASOAR_HD inline bool has_spring(const Lattice& l, int i, int slot) {
  const int j = neighbour(l, i, slot);
  if (j < 0) return false;
  const bool first = first_end(l, i, slot);
  const int owner = first ? i : j;
  const int owner_slot = first ? slot : (slot == kDiagonal ? kDiagonal : slot - 2);
  return below(random_u32(l.seed, static_cast<std::uint32_t>(owner), static_cast<std::uint32_t>(owner_slot),
                          kSpringDraw),
               100) < static_cast<std::uint32_t>(kSpringPercent);
}

/// The springs of node i at the start.
DYNASOAR_HD inline int initial_degree(const Lattice& l, int i) {
  int d = 0;
  for (int s = 0; s < kMaxDegree; ++s) d += has_spring(l, i, s) ? 1 : 0;
  return d;
}

/// The code of every spring at the start, in increasing order; spring k of
/// a run is the one of codes[k] (host code). A spring is listed at its
/// first end only.
inline std::vector<int> spring_codes(const Lattice& l) {
  std::vector<int> codes;
  for (int i = 0; i < l.nodes; ++i)
    for (int k = 0; k < 3; ++k)
      if (first_end(l, i, code_slot(k)) && has_spring(l, i, code_slot(k))) codes.push_back(3 * i + k);
  return codes;
}

DYNASOAR_HD inline Kind node_kind(const Lattice& l, int i) {
  if (l.column(i) % kPinSpacing == 0 && l.row(i) % kPinSpacing == 0) return Kind::kAnchor;
  return below(random_u32(l.seed, static_cast<std::uint32_t>(i), 0u, kKindDraw), kPullOneIn) == 0 ? Kind::kPull
                                                                                                  : Kind::kNode;
}

/// A node's initial position: its lattice point moved by up to kJitter.
DYNASOAR_HD inline float initial_x(const Lattice& l, int i) {
  return add(static_cast<float>(l.column(i)), mul(2.0f * kJitter, sub(l.uniform(i, 0, kJitterX), 0.5f)));
}
DYNASOAR_HD inline float initial_y(const Lattice& l, int i) {
  return add(static_cast<float>(l.row(i)), mul(2.0f * kJitter, sub(l.uniform(i, 0, kJitterY), 0.5f)));
}
DYNASOAR_HD inline float initial_mass(const Lattice& l, int i) {
  return add(kMinMass, mul(kMaxMass - kMinMass, l.uniform(i, 0, kMassDraw)));
}
/// A pull node's velocity, one coordinate (`p`: kPullX or kPullY).
DYNASOAR_HD inline float pull_velocity(const Lattice& l, int i, Purpose p) {
  return mul(kPullSpeed, sub(mul(2.0f, l.uniform(i, 0, p)), 1.0f));
}
DYNASOAR_HD inline float spring_factor(const Lattice& l, int code) {
  return add(kMinFactor, mul(kMaxFactor - kMinFactor,
                             l.uniform(code_first_end(code), static_cast<std::uint32_t>(code % 3), kFactorDraw)));
}

DYNASOAR_HD inline float distance(float x1, float y1, float x2, float y2) {
  const float dx = sub(x2, x1), dy = sub(y2, y1);
  return root(add(mul(dx, dx), mul(dy, dy)));
}
/// A spring's rest length: the distance of its ends at the start.
DYNASOAR_HD inline float rest_length(const Lattice& l, int first, int second) {
  return distance(initial_x(l, first), initial_y(l, first), initial_x(l, second), initial_y(l, second));
}

// --- the physics ---------------------------------------------------------------------------

/// A spring's force: its size, and the vector with which it pulls its first
/// end (its second end gets the negative).
struct SpringForce {
  float size, x, y;
};

/// The force of a spring from (x1, y1) to (x2, y2): factor times the
/// stretch beyond the rest length, along the spring; none when not
/// stretched.
DYNASOAR_HD inline SpringForce spring_force(float x1, float y1, float x2, float y2, float factor, float rest) {
  const float dx = sub(x2, x1), dy = sub(y2, y1);
  const float length = root(add(mul(dx, dx), mul(dy, dy)));
  const float stretch = sub(length, rest);
  if (!(stretch > 0.0f)) return {0.0f, 0.0f, 0.0f};
  const float size = mul(factor, stretch);
  return {size, mul(size, div(dx, length)), mul(size, div(dy, length))};
}

DYNASOAR_HD inline bool breaks(float force, float max_force) { return force > max_force; }

/// Adds a spring's force on a node to (fx, fy): `first`: the node is the
/// spring's first end.
DYNASOAR_HD inline void add_force(float& fx, float& fy, const SpringForce& f, bool first) {
  fx = first ? add(fx, f.x) : sub(fx, f.x);
  fy = first ? add(fy, f.y) : sub(fy, f.y);
}

/// A node's move along one coordinate under force f (semi-implicit Euler).
DYNASOAR_HD inline void move_coordinate(float& pos, float& vel, float f, float mass) {
  vel = add(vel, div(mul(f, kDt), mass));
  pos = add(pos, mul(vel, kDt));
}
/// A pull node's move along one coordinate.
DYNASOAR_HD inline float pulled(float pos, float vel) { return add(pos, mul(vel, kDt)); }

// --- checksum and frames -----------------------------------------------------------------------

/// A node's term of the checksum (anchors have velocity 0). The checksum is
/// the sum over nodes and springs (mod 2^64), so it does not depend on the
/// order in which they are added.
DYNASOAR_HD inline std::uint64_t node_term(int id, Kind k, float x, float y, float vx, float vy, int springs) {
  std::uint64_t h = platform::mix64((static_cast<std::uint64_t>(static_cast<std::uint32_t>(id)) << 8) |
                                    static_cast<std::uint8_t>(k));
  h = platform::mix64(h ^ ((static_cast<std::uint64_t>(float_bits(x)) << 32) | float_bits(y)));
  h = platform::mix64(h ^ ((static_cast<std::uint64_t>(float_bits(vx)) << 32) | float_bits(vy)));
  return platform::mix64(h ^ static_cast<std::uint32_t>(springs));
}
/// A spring's term of the checksum: its index and its last force.
DYNASOAR_HD inline std::uint64_t spring_term(int id, float force) {
  return platform::mix64(platform::mix64(~static_cast<std::uint64_t>(static_cast<std::uint32_t>(id))) ^
                         float_bits(force));
}

/// A spring's load for the viewer: 0 slack, 255 at its maximum force.
DYNASOAR_HD inline std::uint8_t load_byte(float force, float max_force) {
  const float share = div(force, max_force);
  return share >= 1.0f ? std::uint8_t{255} : static_cast<std::uint8_t>(mul(share, 255.0f));
}

}  // namespace dynasoar::example::structure
