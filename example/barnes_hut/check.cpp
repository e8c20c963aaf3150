// --check: the tree's forces against a direct sum, and the tree's invariants,
// on the state a run hands to Config::on_check. Host code without the
// framework's headers (in a CUDA build it is compiled by the C++ compiler),
// written independently of rules.h: double precision, its own geometry.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "example/barnes_hut/barnes_hut.h"

namespace dynasoar::example::barnes_hut {

ForceCheck check_forces(const Frame& f, const Physics& p, int samples) {
  ForceCheck r;
  const auto n = static_cast<int>(f.bodies.size());
  if (n == 0 || samples <= 0) return r;
  const int s = std::min(samples, n);
  const double g = static_cast<double>(p.gravity) / n, eps2 = p.softening2;
  for (int k = 0; k < s; ++k) {
    const FrameBody& b = f.bodies[static_cast<std::size_t>(static_cast<std::int64_t>(k) * n / s)];
    double ax = 0, ay = 0, scale = 0;
    for (const FrameBody& o : f.bodies) {
      const double dx = static_cast<double>(o.x) - b.x, dy = static_cast<double>(o.y) - b.y;
      const double r2 = dx * dx + dy * dy;
      const double w = g * o.mass / ((r2 + eps2) * std::sqrt(r2 + eps2));
      ax += w * dx;
      ay += w * dy;
      scale += w * std::sqrt(r2);
    }
    const double err = std::hypot(b.ax - ax, b.ay - ay);
    if (scale > 0) r.max_error = std::max(r.max_error, err / scale);
    const double exact = std::hypot(ax, ay);
    if (exact > 0) r.max_relative = std::max(r.max_relative, err / exact);
    ++r.sampled;
  }
  // A cell replaced by its centre of mass errs by the order of (s/d)^2 <
  // theta^2 of its pull (the dipole term vanishes about the centre of
  // mass), and the errors of different cells partly cancel: measured, the
  // error stays below theta^2 / 8 for theta up to 2 (uniform and clustered
  // bodies); a wrong tree errs by the order of 1. Float sums and the GPU's
  // reciprocal square root add well below 1e-4 (theta 0: about 1e-6).
  r.tolerance = 0.25 * static_cast<double>(p.theta) * p.theta + 1e-4;
  return r;
}

namespace {

// The body's cell at `depth` as the tree defines it: its coordinate plus 1,
// rounded to float, on the grid of 2^depth cells over [0, 2).
std::uint32_t grid_cell(float x, int depth) {
  const double t = static_cast<double>(x + 1.0f) * std::ldexp(1.0, depth - 1);
  const double cells = std::ldexp(1.0, depth);
  if (!(t >= 0)) return 0;
  return static_cast<std::uint32_t>(std::min(std::floor(t), cells - 1));
}

bool close(double a, double b, double scale) { return std::fabs(a - b) <= 1e-4 * scale + 1e-30; }

}  // namespace

std::string check_tree(const Frame& f, const Physics& p) {
  std::unordered_map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < f.cells.size(); ++i)
    if (!index.emplace(f.cells[i].id, i).second)
      return "cell " + std::to_string(f.cells[i].id) + " twice";
  const auto cell_name = [](const FrameCell& c) {
    return "cell (depth " + std::to_string(c.depth) + ", " + std::to_string(c.ix) + ", " +
           std::to_string(c.iy) + ")";
  };
  int roots = 0;
  std::vector<unsigned> quadrants(f.cells.size(), 0);
  for (const FrameCell& c : f.cells) {
    if (c.depth < 0 || c.depth > kMaxDepth) return cell_name(c) + ": depth out of range";
    if (c.parent == 0) {
      ++roots;
      if (c.depth != 0 || c.ix != 0 || c.iy != 0) return cell_name(c) + " has no parent";
      continue;
    }
    const auto up = index.find(c.parent);
    if (up == index.end()) return cell_name(c) + ": its parent is not a cell";
    const FrameCell& u = f.cells[up->second];
    if (u.leaf) return cell_name(c) + ": its parent is a leaf";
    if (c.depth != u.depth + 1 || (c.ix >> 1) != u.ix || (c.iy >> 1) != u.iy)
      return cell_name(c) + " is not inside its parent " + cell_name(u);
    const unsigned q = 1u << ((c.ix & 1u) | ((c.iy & 1u) << 1));
    if ((quadrants[up->second] & q) != 0) return cell_name(c) + " twice";
    quadrants[up->second] |= q;
  }
  if (roots != 1) return std::to_string(roots) + " roots";

  // What every cell's subtree holds, from the bodies up.
  std::vector<int> count(f.cells.size(), 0);
  std::vector<double> mass(f.cells.size(), 0), mx(f.cells.size(), 0), my(f.cells.size(), 0);
  for (const FrameBody& b : f.bodies) {
    const auto at = index.find(b.leaf);
    if (at == index.end()) return "body " + std::to_string(b.id) + " is in no cell";
    const FrameCell& leaf = f.cells[at->second];
    if (!leaf.leaf) return "body " + std::to_string(b.id) + " is in the inner " + cell_name(leaf);
    if (grid_cell(b.x, leaf.depth) != leaf.ix || grid_cell(b.y, leaf.depth) != leaf.iy)
      return "body " + std::to_string(b.id) + " at (" + std::to_string(b.x) + ", " +
             std::to_string(b.y) + ") is not inside " + cell_name(leaf);
    for (std::size_t i = at->second;; i = index.at(f.cells[i].parent)) {
      ++count[i];
      mass[i] += b.mass;
      mx[i] += static_cast<double>(b.mass) * b.x;
      my[i] += static_cast<double>(b.mass) * b.y;
      if (f.cells[i].parent == 0) break;
    }
  }
  for (std::size_t i = 0; i < f.cells.size(); ++i) {
    const FrameCell& c = f.cells[i];
    if (c.count != count[i])
      return cell_name(c) + " counts " + std::to_string(c.count) + " bodies, holds " +
             std::to_string(count[i]);
    const bool should_split = c.count > p.leaf_capacity && c.depth < kMaxDepth;
    if (should_split == static_cast<bool>(c.leaf))
      return cell_name(c) + (c.leaf ? " is a leaf" : " is inner") + " with " +
             std::to_string(c.count) + " bodies";
    if (c.count == 0 && c.parent != 0) return cell_name(c) + " is empty";
    if (!close(c.mass, mass[i], mass[i])) return cell_name(c) + ": wrong mass";
    if (mass[i] > 0 && (!close(c.cx, mx[i] / mass[i], 1.0) || !close(c.cy, my[i] / mass[i], 1.0)))
      return cell_name(c) + ": wrong centre of mass";
  }
  return "";
}

}  // namespace dynasoar::example::barnes_hut
