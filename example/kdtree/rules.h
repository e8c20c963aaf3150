// The k-d tree build's rules (Vinkler & Havran 2014, Sec. 6 "[DS] Data structure build"),
// shared by every form of the build (objects.cpp on the back ends of the
// framework, raw.cpp on the raw allocators, baseline.cpp on the host) and by
// the verification, so that all of them build the same tree and check it
// against the same definition of "a triangle belongs to a cell".
//
// Split: the spatial median of the node cell's longest axis. Sec. 6 does not
// fix a split heuristic; the median is the simplest rule whose result does not
// depend on the order in which references arrive, so every form and every
// allocator builds bit for bit the same tree.
//
// Classification: a triangle belongs to a cell when its axis-aligned bounding
// box overlaps the closed cell. A child cell is the parent's cut at the
// plane, so a reference goes left if its box reaches the plane from below
// (lo <= split), right if it reaches it from above (hi >= split), to both if
// it straddles or touches the plane (the duplication Sec. 6 describes).
#pragma once

#include <cstdint>

#include "example/kdtree/kdtree.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::example::kdtree {

/// Sides of a classified reference (bit mask).
enum : unsigned { kLeftSide = 1u, kRightSide = 2u };

/// The longest axis of a cell; ties go to the lower axis.
DYNASOAR_HD inline int longest_axis(const Box& b) {
  const float ex = b.hi[0] - b.lo[0], ey = b.hi[1] - b.lo[1], ez = b.hi[2] - b.lo[2];
  if (ex >= ey && ex >= ez) return 0;
  return ey >= ez ? 1 : 2;
}

/// The spatial median of the cell along `axis`: an addition, then a halving,
/// so no fused multiply-add can make one form round it differently.
DYNASOAR_HD inline float split_position(const Box& b, int axis) {
  return (b.lo[axis] + b.hi[axis]) * 0.5f;
}

/// Which children a triangle with bounds `t` goes to (kLeftSide, kRightSide
/// or both); never 0, since t.lo <= t.hi.
DYNASOAR_HD inline unsigned classify(const Box& t, int axis, float split) {
  return (t.lo[axis] <= split ? kLeftSide : 0u) | (t.hi[axis] >= split ? kRightSide : 0u);
}

/// The cell of the child on `side` (kLeftSide or kRightSide).
DYNASOAR_HD inline Box child_cell(const Box& cell, int axis, float split, unsigned side) {
  Box c = cell;
  if (side == kLeftSide)
    c.hi[axis] = split;
  else
    c.lo[axis] = split;
  return c;
}

/// A node with `count` references at `depth` stays a leaf without trying a split.
DYNASOAR_HD inline bool stop_before_split(int count, int depth, int leaf_size, int max_depth) {
  return count <= leaf_size || depth >= max_depth;
}

/// A split that puts every reference into both children separates nothing
/// (all triangles straddle the plane): the node stays a leaf instead.
DYNASOAR_HD inline bool split_is_useless(int count, int left, int right) {
  return left == count && right == count;
}

/// True if box t overlaps the closed cell (the classification rule above,
/// applied to all three axes at once; the verification uses it).
DYNASOAR_HD inline bool overlaps(const Box& t, const Box& cell) {
  for (int a = 0; a < 3; ++a)
    if (t.lo[a] > cell.hi[a] || t.hi[a] < cell.lo[a]) return false;
  return true;
}

}  // namespace dynasoar::example::kdtree
