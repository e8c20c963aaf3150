// The k-d tree build as a plain sequential host program: the reference the
// allocator forms are checked against (kdtree_baseline). The same rules
// (rules.h) and the same level-by-level order as the other forms; each
// node's references are a std::vector, freed once the node is split. Not a
// GPU baseline: it measures the CPU, not an allocator.
#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "example/kdtree/kdtree.h"
#include "example/kdtree/rules.h"

namespace dynasoar::example::kdtree {

RunReport run(const Config& c) {
  const std::vector<Triangle> tris = make_scene(c);
  const std::vector<Box> bounds = triangle_bounds(tris);
  const auto start = std::chrono::steady_clock::now();

  BuildResult b;
  Tree& t = b.tree;
  BuildCounters& k = b.counters;
  std::vector<std::vector<int>> arrays;  // per node; emptied once the node is split
  auto count_array = [&k](std::uint64_t n) {
    if (n == 0) return;
    ++k.arrays;
    k.array_bytes += 4 * n;
    k.array_bytes_sq += 16 * n * n;
    ++k.requests;
    k.request_bytes += 4 * n;
  };
  {
    TreeNode root;
    root.cell = scene_bounds(bounds);
    root.axis = kOpen;
    t.nodes.push_back(root);
    std::vector<int> all(tris.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    count_array(all.size());
    arrays.push_back(std::move(all));
  }
  std::size_t begin = 0, end = 1;  // the nodes of the current level
  for (int level = 0; begin < end; ++level) {
    for (std::size_t i = begin; i < end; ++i) {
      const std::vector<int>& refs = arrays[i];
      const int n = static_cast<int>(refs.size());
      TreeNode node = t.nodes[i];
      node.count = n;
      if (stop_before_split(n, node.depth, c.leaf_size, c.max_depth)) {
        node.axis = kLeaf;
        t.nodes[i] = node;
        continue;
      }
      const int axis = longest_axis(node.cell);
      const float split = split_position(node.cell, axis);
      std::vector<int> left, right;
      for (const int id : refs) {
        const unsigned side = classify(bounds[id], axis, split);
        if (side & kLeftSide) left.push_back(id);
        if (side & kRightSide) right.push_back(id);
      }
      if (split_is_useless(n, static_cast<int>(left.size()), static_cast<int>(right.size()))) {
        node.axis = kLeaf;
        t.nodes[i] = node;
        continue;
      }
      node.axis = axis;
      node.split = split;
      node.left = static_cast<int>(t.nodes.size());
      node.right = node.left + 1;
      for (const unsigned side : {kLeftSide, kRightSide}) {
        TreeNode child;
        child.cell = child_cell(node.cell, axis, split, side);
        child.depth = node.depth + 1;
        child.axis = kOpen;
        t.nodes.push_back(child);
      }
      count_array(left.size());
      count_array(right.size());
      t.nodes[i] = node;
      arrays[i] = {};  // the parent's array goes
      arrays.push_back(std::move(left));
      arrays.push_back(std::move(right));
    }
    begin = end;
    end = t.nodes.size();
    if (c.on_level) c.on_level(level);
  }
  b.total_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  b.phases_ms["build"] = b.total_ms;
  // The leaves' references, in one array.
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    TreeNode& node = t.nodes[i];
    if (node.axis != kLeaf) continue;
    node.first = static_cast<std::int64_t>(t.refs.size());
    t.refs.insert(t.refs.end(), arrays[i].begin(), arrays[i].end());
    k.leaf_refs += arrays[i].size();
  }
  k.nodes = t.nodes.size();
  b.live = {{"nodes", t.nodes.size()}};
  b.heap.emplace_back("memory", "std::vector per node (host)");
  return finish_build(c, tris, std::move(b), "baseline", "CPU, 1 thread");
}

}  // namespace dynasoar::example::kdtree
