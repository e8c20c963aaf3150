// After every build, outside the timed region: the tree is checked against
// the scene, pictured for the viewer, summarised with the columns of paper
// 000 Table 3, and hashed into a checksum that does not depend on the form,
// the allocator or the device. Host code, compiled by the C++ compiler.
//
// The checks:
//  - structure: every node is reached once from the root; the root's cell is
//    the scene's bounds; an inner node's split is the rule's (rules.h) and its
//    children's cells are its cell cut at the plane, so the leaves' cells
//    tile the root cell;
//  - references: no leaf holds a triangle twice or one whose bounds miss the
//    leaf's cell, and every triangle is in as many leaves as there are leaf
//    cells that its bounds overlap (found by descending through the cells,
//    not by the split rule), hence in each of them;
//  - rays: closest hits found through the tree (front to back, nodes pruned
//    by their cell) equal those found by testing every triangle, with the
//    same intersection routine, so a wrong or missing reference shows up as a
//    different triangle.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "example/common/philox.h"
#include "example/kdtree/kdtree.h"
#include "example/kdtree/rules.h"
#include "dynasoar/platform/bits.h"

namespace dynasoar::example::kdtree {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("k-d tree verification failed: " + what);
}

std::string box_text(const Box& b) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "[%g %g %g]-[%g %g %g]", b.lo[0], b.lo[1], b.lo[2], b.hi[0],
                b.hi[1], b.hi[2]);
  return buf;
}

bool same_box(const Box& a, const Box& b) { return std::memcmp(&a, &b, sizeof(Box)) == 0; }

/// f(i) for i in [0, n) on the host's cores.
template <class F>
void parallel_range(std::size_t n, const F& f) {
  const std::size_t threads =
      std::max<std::size_t>(1, std::min<std::size_t>(std::thread::hardware_concurrency(), 64));
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t i = t; i < n; i += threads) f(i);
    });
  for (auto& th : pool) th.join();
}

void check_structure(const Tree& t, const Box& scene) {
  if (t.nodes.empty()) fail("the tree has no nodes");
  if (t.root < 0 || t.root >= static_cast<int>(t.nodes.size())) fail("no root node");
  if (!same_box(t.nodes[t.root].cell, scene))
    fail("the root's cell " + box_text(t.nodes[t.root].cell) + " is not the scene's bounds " +
         box_text(scene));
  std::vector<char> seen(t.nodes.size(), 0);
  std::vector<int> stack{t.root};
  std::size_t reached = 0;
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (seen[i]) fail("node " + std::to_string(i) + " is reached twice");
    seen[i] = 1;
    ++reached;
    const TreeNode& n = t.nodes[i];
    if (n.axis == kLeaf) {
      if (n.count < 0 || n.first < 0 ||
          n.first + n.count > static_cast<std::int64_t>(t.refs.size()))
        fail("leaf " + std::to_string(i) + " has a bad reference range");
      continue;
    }
    if (n.axis < 0 || n.axis > 2)
      fail("node " + std::to_string(i) + " is neither a leaf nor split (axis " +
           std::to_string(n.axis) + ")");
    if (n.axis != longest_axis(n.cell) || n.split != split_position(n.cell, n.axis))
      fail("node " + std::to_string(i) + " is not split at the median of its longest axis");
    const int kids[2] = {n.left, n.right};
    const unsigned sides[2] = {kLeftSide, kRightSide};
    for (int k = 0; k < 2; ++k) {
      if (kids[k] < 0 || kids[k] >= static_cast<int>(t.nodes.size()))
        fail("node " + std::to_string(i) + " has a missing child");
      const TreeNode& c = t.nodes[kids[k]];
      if (!same_box(c.cell, child_cell(n.cell, n.axis, n.split, sides[k])) ||
          c.depth != n.depth + 1)
        fail("a child of node " + std::to_string(i) + " has the wrong cell or depth");
      stack.push_back(kids[k]);
    }
  }
  if (reached != t.nodes.size())
    fail(std::to_string(t.nodes.size() - reached) + " nodes are not reachable from the root");
}

/// Leaves whose cell overlaps box b, counted by descending through the cells.
std::uint64_t leaves_overlapping(const Tree& t, const Box& b) {
  std::uint64_t found = 0;
  int stack[256];
  int top = 0;
  stack[top++] = t.root;
  while (top > 0) {
    const TreeNode& n = t.nodes[stack[--top]];
    if (!overlaps(b, n.cell)) continue;
    if (n.axis == kLeaf) {
      ++found;
    } else {
      if (top + 2 > 256) fail("the tree is deeper than the check's stack");
      stack[top++] = n.left;
      stack[top++] = n.right;
    }
  }
  return found;
}

void check_references(const Tree& t, const std::vector<Box>& bounds) {
  const std::size_t ntris = bounds.size();
  std::vector<std::uint32_t> holders(ntris, 0);
  std::vector<int> ids;
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const TreeNode& n = t.nodes[i];
    if (n.axis != kLeaf) continue;
    ids.assign(t.refs.begin() + n.first, t.refs.begin() + n.first + n.count);
    std::sort(ids.begin(), ids.end());
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const int id = ids[k];
      if (id < 0 || static_cast<std::size_t>(id) >= ntris)
        fail("a leaf holds triangle " + std::to_string(id) + ", which does not exist");
      if (k > 0 && ids[k - 1] == id) fail("a leaf holds triangle " + std::to_string(id) + " twice");
      if (!overlaps(bounds[id], n.cell))
        fail("the leaf with cell " + box_text(n.cell) + " holds triangle " + std::to_string(id) +
             ", whose bounds " + box_text(bounds[id]) + " do not overlap it");
      ++holders[id];
    }
  }
  // Each reference is in an overlapping leaf (above), so equal counts mean
  // the triangle is in every overlapping leaf.
  std::vector<std::uint64_t> want(ntris);
  parallel_range(ntris, [&](std::size_t i) { want[i] = leaves_overlapping(t, bounds[i]); });
  for (std::size_t i = 0; i < ntris; ++i)
    if (want[i] != holders[i])
      fail("triangle " + std::to_string(i) + " (bounds " + box_text(bounds[i]) + ") overlaps " +
           std::to_string(want[i]) + " leaf cells but is held by " + std::to_string(holders[i]) +
           " leaves");
}

// --- rays ------------------------------------------------------------------------------

struct Ray {
  float o[3], d[3];
};

/// Möller-Trumbore; the same routine for the tree and the brute force.
bool intersect(const Triangle& tri, const Ray& r, float& t) {
  const float v0[3] = {tri.v[0].x, tri.v[0].y, tri.v[0].z};
  const float e1[3] = {tri.v[1].x - v0[0], tri.v[1].y - v0[1], tri.v[1].z - v0[2]};
  const float e2[3] = {tri.v[2].x - v0[0], tri.v[2].y - v0[1], tri.v[2].z - v0[2]};
  const float p[3] = {r.d[1] * e2[2] - r.d[2] * e2[1], r.d[2] * e2[0] - r.d[0] * e2[2],
                      r.d[0] * e2[1] - r.d[1] * e2[0]};
  const float det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
  if (det == 0.0f || !std::isfinite(det)) return false;
  const float inv = 1.0f / det;
  const float s[3] = {r.o[0] - v0[0], r.o[1] - v0[1], r.o[2] - v0[2]};
  const float u = (s[0] * p[0] + s[1] * p[1] + s[2] * p[2]) * inv;
  if (!(u >= 0.0f && u <= 1.0f)) return false;
  const float q[3] = {s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2],
                      s[0] * e1[1] - s[1] * e1[0]};
  const float v = (r.d[0] * q[0] + r.d[1] * q[1] + r.d[2] * q[2]) * inv;
  if (!(v >= 0.0f && u + v <= 1.0f)) return false;
  t = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) * inv;
  return t > 0.0f;
}

struct Hit {
  float t = INFINITY;
  int id = -1;
  void offer(float tt, int i) {
    if (tt < t || (tt == t && i < id)) {
      t = tt;
      id = i;
    }
  }
};

/// The ray's parameter interval inside box b grown by `pad`; empty if t0 > t1.
std::pair<double, double> slab(const Ray& r, const Box& b, double pad) {
  double t0 = 0, t1 = INFINITY;
  for (int a = 0; a < 3; ++a) {
    const double lo = static_cast<double>(b.lo[a]) - pad, hi = static_cast<double>(b.hi[a]) + pad;
    if (r.d[a] == 0.0f) {
      if (r.o[a] < lo || r.o[a] > hi) return {1, 0};
      continue;
    }
    double ta = (lo - r.o[a]) / r.d[a], tb = (hi - r.o[a]) / r.d[a];
    if (ta > tb) std::swap(ta, tb);
    t0 = std::max(t0, ta);
    t1 = std::min(t1, tb);
  }
  return {t0, t1};
}

Hit trace(const Tree& t, const std::vector<Triangle>& tris, const Ray& r, double pad) {
  Hit h;
  const double len =
      std::sqrt(double{r.d[0]} * r.d[0] + double{r.d[1]} * r.d[1] + double{r.d[2]} * r.d[2]);
  const double slack = pad / len;  // the padding in units of t
  int stack[256];
  int top = 0;
  stack[top++] = t.root;
  while (top > 0) {
    const TreeNode& n = t.nodes[stack[--top]];
    const auto [t0, t1] = slab(r, n.cell, pad);
    if (t0 > t1 || t0 > static_cast<double>(h.t) + slack) continue;
    if (n.axis == kLeaf) {
      for (int k = 0; k < n.count; ++k) {
        const int id = t.refs[n.first + k];
        float tt = 0;
        if (intersect(tris[id], r, tt)) h.offer(tt, id);
      }
      continue;
    }
    const bool left_first = r.d[n.axis] >= 0.0f;  // the near child on top of the stack
    stack[top++] = left_first ? n.right : n.left;
    stack[top++] = left_first ? n.left : n.right;
  }
  return h;
}

Hit brute_force(const std::vector<Triangle>& tris, const Ray& r) {
  Hit h;
  for (std::size_t i = 0; i < tris.size(); ++i) {
    float tt = 0;
    if (intersect(tris[i], r, tt)) h.offer(tt, static_cast<int>(i));
  }
  return h;
}

float unit(std::uint64_t seed, std::uint32_t a, std::uint32_t b) {
  return static_cast<float>(random_u32(seed, a, b, 0xCA57u) >> 8) * (1.0f / 16777216.0f);
}

/// Ray k: from a random point around the scene towards a random triangle's
/// centroid (even k, mostly hits) or a random point of the scene (odd k).
Ray make_ray(std::uint64_t seed, std::uint32_t k, const Box& s, const std::vector<Triangle>& tris) {
  Ray r{};
  float target[3];
  if (k % 2 == 0) {
    const Triangle& tri =
        tris[below(random_u32(seed, k, 9, 0xCA57u), static_cast<std::uint32_t>(tris.size()))];
    target[0] = (tri.v[0].x + tri.v[1].x + tri.v[2].x) / 3.0f;
    target[1] = (tri.v[0].y + tri.v[1].y + tri.v[2].y) / 3.0f;
    target[2] = (tri.v[0].z + tri.v[1].z + tri.v[2].z) / 3.0f;
  }
  for (int a = 0; a < 3; ++a) {
    const float ext = s.hi[a] - s.lo[a];
    r.o[a] = s.lo[a] + ext * (unit(seed, k, static_cast<std::uint32_t>(a)) * 3.0f - 1.0f);
    if (k % 2 == 1) target[a] = s.lo[a] + ext * unit(seed, k, static_cast<std::uint32_t>(3 + a));
    r.d[a] = target[a] - r.o[a];
  }
  if (r.d[0] == 0.0f && r.d[1] == 0.0f && r.d[2] == 0.0f) r.d[0] = 1.0f;
  return r;
}

std::vector<int> check_rays(const Tree& t, const std::vector<Triangle>& tris, const Box& s,
                            int rays, std::uint64_t seed) {
  float ext = 0;
  for (int a = 0; a < 3; ++a) ext = std::max(ext, s.hi[a] - s.lo[a]);
  const double pad = 1e-4 * static_cast<double>(ext) + 1e-30;
  std::vector<Hit> tree_hits(rays), brute(rays);
  parallel_range(static_cast<std::size_t>(rays), [&](std::size_t k) {
    const Ray r = make_ray(seed, static_cast<std::uint32_t>(k), s, tris);
    tree_hits[k] = trace(t, tris, r, pad);
    brute[k] = brute_force(tris, r);
  });
  std::vector<int> ids(rays);
  for (int k = 0; k < rays; ++k) {
    if (tree_hits[k].id != brute[k].id)
      fail("ray " + std::to_string(k) + " hits triangle " + std::to_string(tree_hits[k].id) +
           " through the tree but triangle " + std::to_string(brute[k].id) +
           " by brute force (-1: none)");
    ids[k] = brute[k].id;
  }
  return ids;
}

// --- checksum, picture, report -----------------------------------------------------------

std::uint64_t checksum(const Tree& t, const std::vector<int>& hits) {
  std::vector<std::pair<std::vector<std::uint32_t>, std::vector<int>>> leaves;
  for (const TreeNode& n : t.nodes) {
    if (n.axis != kLeaf) continue;
    std::vector<std::uint32_t> key(6);
    std::memcpy(key.data(), &n.cell, sizeof(Box));
    std::vector<int> ids(t.refs.begin() + n.first, t.refs.begin() + n.first + n.count);
    std::sort(ids.begin(), ids.end());
    leaves.emplace_back(std::move(key), std::move(ids));
  }
  std::sort(leaves.begin(), leaves.end());
  std::uint64_t h = platform::mix64(leaves.size());
  auto add = [&h](std::uint64_t v) { h = platform::mix64(h ^ v); };
  for (const auto& [key, ids] : leaves) {
    for (const std::uint32_t w : key) add(w);
    add(0xC0FFEEull + ids.size());
    for (const int id : ids) add(static_cast<std::uint32_t>(id));
  }
  for (const int id : hits) add(static_cast<std::uint64_t>(static_cast<std::int64_t>(id)));
  return h;
}

TreePicture picture(const Tree& t, const std::vector<Triangle>& tris, int levels) {
  TreePicture p;
  p.scene = t.nodes[t.root].cell;
  p.triangles = &tris;
  p.levels = levels;
  std::deque<int> queue{t.root};
  while (!queue.empty()) {
    const TreeNode& n = t.nodes[queue.front()];
    queue.pop_front();
    if (n.axis == kLeaf || n.depth >= levels) continue;
    p.planes.push_back({n.axis, n.split, n.depth, n.cell});
    queue.push_back(n.left);
    queue.push_back(n.right);
  }
  std::sort(p.planes.begin(), p.planes.end(), [](const SplitPlane& a, const SplitPlane& b) {
    return std::tie(a.depth, a.cell.lo[0], a.cell.lo[1], a.cell.lo[2]) <
           std::tie(b.depth, b.cell.lo[0], b.cell.lo[1], b.cell.lo[2]);
  });
  return p;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

RunReport finish_build(const Config& c, const std::vector<Triangle>& tris, BuildResult&& b,
                       std::string variant, std::string device) {
  const std::vector<Box> bounds = triangle_bounds(tris);
  const Box scene = scene_bounds(bounds);
  const Tree& t = b.tree;
  check_structure(t, scene);
  check_references(t, bounds);
  const std::vector<int> hits = check_rays(t, tris, scene, c.rays, c.seed);
  if (c.on_tree) c.on_tree(picture(t, tris, c.picture_levels));

  std::uint64_t leaves = 0, empty = 0, refs = 0;
  int depth = 0;
  for (const TreeNode& n : t.nodes) {
    depth = std::max(depth, n.depth);
    if (n.axis != kLeaf) continue;
    ++leaves;
    empty += n.count == 0 ? 1 : 0;
    refs += static_cast<std::uint64_t>(n.count);
  }
  if (refs != b.counters.leaf_refs)
    fail("the build counted " + std::to_string(b.counters.leaf_refs) +
         " references in leaves, the tree has " + std::to_string(refs));

  std::vector<std::pair<std::string, std::string>> config;
  if (c.obj_file.empty()) {
    config.emplace_back("scene", c.scene);
  } else {
    const std::size_t slash = c.obj_file.find_last_of('/');
    config.emplace_back("scene", c.obj_file.substr(slash == std::string::npos ? 0 : slash + 1));
  }
  config.emplace_back("seed", std::to_string(c.seed));  // of the scene and of the rays
  config.emplace_back("triangles", std::to_string(tris.size()));
  config.emplace_back("leaf size", std::to_string(c.leaf_size));
  config.emplace_back("max depth", std::to_string(c.max_depth));
  if (!c.warp_per_node) config.emplace_back("split", "one thread per node");
  RunReport r = make_run_report("k-d tree", std::move(variant), std::move(device),
                                std::move(config), b.total_ms, b.phases_ms);
  r.checksum = checksum(t, hits);
  r.live = std::move(b.live);
  r.extra_ms = std::move(b.extra_ms);

  // Paper 000 Table 3: N_tris, N_ref, N_alloc, mean and deviation of the
  // allocation sizes (the reference arrays, root included; the object form's
  // own requests are listed apart), T_build (total_ms).
  const BuildCounters& k = b.counters;
  const double mean =
      k.arrays == 0 ? 0.0 : static_cast<double>(k.array_bytes) / static_cast<double>(k.arrays);
  const double var =
      k.arrays == 0
          ? 0.0
          : static_cast<double>(k.array_bytes_sq) / static_cast<double>(k.arrays) - mean * mean;
  r.heap.emplace_back("N_tris (triangles)", std::to_string(tris.size()));
  r.heap.emplace_back(
      "N_ref (references per leaf, mean)",
      fixed(leaves == 0 ? 0.0 : static_cast<double>(refs) / static_cast<double>(leaves), 2));
  r.heap.emplace_back("N_alloc (reference arrays allocated)", std::to_string(k.arrays));
  r.heap.emplace_back("allocation size mean (B)", fixed(mean, 1));
  r.heap.emplace_back("allocation size sd (B)", fixed(std::sqrt(std::max(var, 0.0)), 1));
  r.heap.emplace_back("allocator requests of this form",
                      std::to_string(k.requests) + " (" + std::to_string(k.request_bytes) + " B)");
  r.heap.emplace_back("nodes", std::to_string(t.nodes.size()));
  r.heap.emplace_back("leaves", std::to_string(leaves) + " (" + std::to_string(empty) + " empty)");
  r.heap.emplace_back("references in leaves", std::to_string(refs));
  r.heap.emplace_back("tree depth", std::to_string(depth));
  r.heap.emplace_back("verified", "leaf cells and references; " + std::to_string(c.rays) +
                                      " rays match brute force");
  for (auto& h : b.heap) r.heap.push_back(std::move(h));
  return r;
}

}  // namespace dynasoar::example::kdtree
