// The rules of Barnes-Hut (Barnes & Hut, Nature 1986), shared by the object
// version and the hand-written baseline so that both compute the same
// numbers in the same order.
//
// Bodies move in the box [-1, 1]^2 under softened gravity and bounce off the
// walls. The quadtree over the box is canonical, a function of the
// positions alone: a cell of depth d < kMaxDepth with more than
// leaf_capacity bodies is inner and has a child for every non-empty
// quadrant; every other cell is a leaf and lists its bodies. Cells are named
// by integer coordinates (depth, ix, iy), bodies by their integer grid point
// at depth kMaxDepth (key_of), so "which cell holds this body" never depends
// on floating-point rounding.
//
// Sums are deterministic: a leaf adds its bodies in ascending id, an inner
// cell its children in quadrant order 0..3, and the force walk visits cells
// depth first, children in quadrant order. The object version (whatever the
// back end or thread schedule) and the baseline (which rebuilds the tree
// every step) thus compute the same bits on one machine; the GPU rounds
// differently (reciprocal square root, fused multiply-adds), so checksums
// are compared with a relative tolerance.
#pragma once

#include <cmath>
#include <cstdint>

#include "dynasoar/random.h"
#include "example/barnes_hut/barnes_hut.h"
#include "example/common/fast_math.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::example::barnes_hut {

/// Stack entries the force walk needs at most: along the path to a cell of
/// depth d at most three siblings wait per level, and an inner cell pushes
/// four children (3 (kMaxDepth - 1) + 4 < 3 kMaxDepth + 4).
inline constexpr int kWalkStack = 3 * kMaxDepth + 4;

/// A body's grid point: its cell at depth kMaxDepth. Positions are clamped
/// into the box (a body exactly on the wall x = 1 belongs to the last cell).
struct Key {
  std::uint32_t u, v;
};

DYNASOAR_HD inline std::uint32_t grid_coordinate(float x) {
  constexpr std::uint32_t kCells = 1u << kMaxDepth;
  // (x + 1) * 2^(kMaxDepth - 1) maps [-1, 1] onto [0, kCells]; the scale is
  // a power of two, so the product is exact (a fused multiply-add rounds
  // the same way).
  const float t = (x + 1.0f) * static_cast<float>(kCells / 2);
  if (!(t >= 0.0f)) return 0;  // also NaN
  if (t >= static_cast<float>(kCells)) return kCells - 1;
  return static_cast<std::uint32_t>(t);
}

DYNASOAR_HD inline Key key_of(float x, float y) { return {grid_coordinate(x), grid_coordinate(y)}; }

/// Quadrant of the key inside the cell of depth `depth` that holds it:
/// bit 0 right half, bit 1 upper half.
DYNASOAR_HD inline int quadrant(Key k, int depth) {
  const int shift = kMaxDepth - 1 - depth;
  return static_cast<int>(((k.u >> shift) & 1u) | (((k.v >> shift) & 1u) << 1));
}

DYNASOAR_HD inline bool cell_contains(int depth, std::uint32_t ix, std::uint32_t iy, Key k) {
  const int shift = kMaxDepth - depth;
  return (k.u >> shift) == ix && (k.v >> shift) == iy;
}

/// Side of a cell of depth `depth` (exact: a power of two).
DYNASOAR_HD inline float cell_size(int depth) { return 2.0f / static_cast<float>(1u << depth); }

/// What the kernels need of Physics for the forces, with G divided by the
/// number of bodies.
struct ForceParams {
  float g, softening2, theta2;
};

inline ForceParams force_params(const Physics& p, int bodies) {
  return {p.gravity / static_cast<float>(bodies), p.softening2, p.theta * p.theta};
}

/// What a body starts with (index i), a function of seed and index.
struct InitialBody {
  float x, y, vx, vy, mass;
};

DYNASOAR_HD inline float clamp_to_box(float x) { return x < -1.0f ? -1.0f : x > 1.0f ? 1.0f : x; }

DYNASOAR_HD inline InitialBody initial_body(const Physics& p, std::uint64_t seed, int i) {
  const auto u = static_cast<std::uint32_t>(i);
  const auto r = [&](std::uint32_t purpose) { return random_float(seed, u, 0, purpose); };
  float x = 2.0f * r(0) - 1.0f, y = 2.0f * r(1) - 1.0f;
  if (p.clusters > 0) {
    // Around one of the centres (in [-0.7, 0.7]^2), a triangular spread.
    const std::uint32_t c =
        random_below(random_u32(seed, u, 0, 2), static_cast<std::uint32_t>(p.clusters));
    const float cx = 1.4f * random_float(seed, c, 1, 0) - 0.7f;
    const float cy = 1.4f * random_float(seed, c, 1, 1) - 0.7f;
    x = clamp_to_box(cx + p.spread * (r(3) + r(4) - 1.0f));
    y = clamp_to_box(cy + p.spread * (r(5) + r(6) - 1.0f));
  }
  return {x, y, p.max_speed * (2.0f * r(7) - 1.0f), p.max_speed * (2.0f * r(8) - 1.0f),
          p.min_mass + (p.max_mass - p.min_mass) * r(9)};
}

/// Acceleration that a mass m at (ox, oy) gives a body at (x, y) (Plummer
/// softening), added to (ax, ay). Zero when the two places coincide, so a
/// body's own term vanishes without a test.
DYNASOAR_HD inline void add_acceleration(const ForceParams& f, float x, float y, float ox, float oy,
                                         float m, float& ax, float& ay) {
  const float dx = ox - x, dy = oy - y;
  const float inv = inverse_sqrt(dx * dx + dy * dy + f.softening2);
  const float s = f.g * m * inv * inv * inv;
  ax += s * dx;
  ay += s * dy;
}

/// The opening criterion: a cell of side `size` whose centre of mass is at
/// (dx, dy) from the body acts as one mass if size < theta * distance.
DYNASOAR_HD inline bool far_enough(const ForceParams& f, float size, float dx, float dy) {
  return size * size < f.theta2 * (dx * dx + dy * dy);
}

/// Mass and centre of mass of a cell, summed in a fixed order.
struct MassSum {
  float m = 0.0f, mx = 0.0f, my = 0.0f;
  DYNASOAR_HD void add(float om, float ox, float oy) {
    m += om;
    mx += om * ox;
    my += om * oy;
  }
  DYNASOAR_HD float cx() const { return m > 0.0f ? mx / m : 0.0f; }
  DYNASOAR_HD float cy() const { return m > 0.0f ? my / m : 0.0f; }
};

/// The acceleration of the body at (x, y) from the tree, walked depth first
/// with an explicit stack of kWalkStack entries (no recursion, so no GPU
/// stack beyond the kernel's frame). `Tree` gives Node (a cell handle),
/// root(), is_none(n), depth(n), mass(n), cx(n), cy(n) (centre of mass),
/// holds(n, key) (the cell contains the grid point), leaf(n), child(n, q)
/// and for_each_body(n, f) with f(x, y, mass) in ascending id; the walk reads
/// a cell's fields only as far as it needs them. A cell that holds the body
/// itself is always opened: it is never far enough for theta^2 < 0.49 (the
/// body and the centre of mass lie in the cell, at most sqrt(2) s apart),
/// so only a larger theta asks. An empty tree (a root leaf without bodies,
/// mass 0) adds nothing. Returns false if the stack would overflow, which a
/// tree of depth <= kMaxDepth never makes it do.
template <class Tree>
DYNASOAR_HD bool tree_acceleration(const Tree& tree, const ForceParams& f, float x, float y,
                                   float& ax_out, float& ay_out) {
  using Node = typename Tree::Node;
  const Key me = key_of(x, y);
  const bool may_hold = f.theta2 >= 0.49f;
  Node stack[kWalkStack];
  int top = 0;
  stack[top++] = tree.root();
  float ax = 0.0f, ay = 0.0f;
  bool ok = true;
  while (top > 0) {
    const Node n = stack[--top];
    const float cx = tree.cx(n), cy = tree.cy(n);
    if (far_enough(f, cell_size(tree.depth(n)), cx - x, cy - y) &&
        !(may_hold && tree.holds(n, me))) {
      add_acceleration(f, x, y, cx, cy, tree.mass(n), ax, ay);
    } else if (tree.leaf(n)) {
      tree.for_each_body(
          n, [&](float ox, float oy, float om) { add_acceleration(f, x, y, ox, oy, om, ax, ay); });
    } else {
      for (int q = 3; q >= 0; --q) {  // pushed backwards: quadrant 0 comes off first
        const Node child = tree.child(n, q);
        if (tree.is_none(child)) continue;
        if (top == kWalkStack) {
          ok = false;
          continue;
        }
        stack[top++] = child;
      }
    }
  }
  ax_out = ax;
  ay_out = ay;
  return ok;
}

/// One coordinate moved by one time step, reflected at the walls of [-1, 1]
/// (and kept inside if a body is fast enough to cross the box).
DYNASOAR_HD inline void move(const Physics& p, float& x, float& v, float a) {
  move_in_box(p.dt, x, v, a);
  x = clamp_to_box(x);
}

/// A body's term of the checksum (summed in double over all bodies).
DYNASOAR_HD inline double checksum_term(float x, float y, float vx, float vy, float m) {
  return static_cast<double>(m) *
         (std::fabs(static_cast<double>(x)) + std::fabs(static_cast<double>(y)) +
          10.0 * (std::fabs(static_cast<double>(vx)) + std::fabs(static_cast<double>(vy))));
}

}  // namespace dynasoar::example::barnes_hut
