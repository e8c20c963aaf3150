// k-d tree build (Vinkler & Havran 2014, Sec. 6 "[DS]" and Table 3): the interface
// between the command line (main.cpp, host code) and a build: objects.cpp
// on a back end of the framework, raw.cpp on a raw allocator with one
// variable-size malloc per reference array, or baseline.cpp on the host.
// The scene and the checks (scene.cpp, check.cpp) are host code shared by
// all of them. Plain C++ (no framework headers): main.cpp and the host code
// include it in every build; the rules live in rules.h.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "example/common/run_report.h"

namespace dynasoar::example::kdtree {

/// An axis-aligned box: a node's cell or a triangle's bounds.
struct Box {
  float lo[3];
  float hi[3];
};

// Enumerators rather than constexpr variables: device code may bind them to
// a const reference (Field's assignment) without a device-side definition.

/// Triangle references per chunk of the object form (RefChunk in objects.cpp).
enum : int { kChunkRefs = 32 };

/// Node axis values besides 0, 1, 2 (an inner node's split axis).
enum : int {
  kOpen = -2,  // waiting for its level's split
  kLeaf = -1,
};

/// What a build counts (on the device with atomics; the root array is
/// counted by the host). Every form fills the same fields.
struct BuildCounters {
  unsigned long long arrays = 0;          // reference arrays allocated (root, non-empty children)
  unsigned long long array_bytes = 0;     // their bytes (4 per reference)
  unsigned long long array_bytes_sq = 0;  // sum of squared bytes (for the deviation)
  unsigned long long requests = 0;        // allocator requests of this form (objects or mallocs)
  unsigned long long request_bytes = 0;   // bytes of those requests
  unsigned long long nodes = 0;           // nodes made (the next node's id)
  unsigned long long leaf_refs = 0;       // references held by leaves
  unsigned long long failed = 0;          // allocations that returned nullptr
};

struct Vec3 {
  float x, y, z;
};

struct Triangle {
  Vec3 v[3];
};

/// One split plane of the tree, for a picture (the first levels only).
struct SplitPlane {
  int axis = 0;  // 0: x, 1: y, 2: z
  float position = 0;
  int depth = 0;  // the split node's depth (root 0)
  Box cell{};     // the split node's cell
};

/// What the viewer gets once the tree is built (Config::on_tree): the
/// scene's triangles and the split planes of the first `levels` levels.
struct TreePicture {
  Box scene{};                                       // the root cell
  const std::vector<Triangle>* triangles = nullptr;  // valid during the call
  std::vector<SplitPlane> planes;                    // by depth, then from low to high cell
  int levels = 0;
};

struct Config {
  std::string scene = "soup";  // soup, surface, clustered (ignored with obj_file)
  std::uint64_t triangles = 100000;
  std::string obj_file;  // non-empty: load this Wavefront OBJ file instead
  std::uint64_t seed = 42;
  int leaf_size = 8;   // a node with at most this many references is a leaf
  int max_depth = 40;  // nodes at this depth are leaves
  int rays = 1000;     // verification: closest-hit rays against brute force
  // The lanes of a warp split a node together (false: one thread per node).
  bool warp_per_node = true;
  // Object form: a node with at least this many references is split by
  // many warps, a segment of its chunks each (0, or warp_per_node false:
  // never).
  int wide_refs = 8192;
  std::uint64_t heap_bytes = 0;                     // 0: default_heap_bytes
  int picture_levels = 8;                           // split planes handed to on_tree
  std::function<void(const TreePicture&)> on_tree;  // after the build, outside the timing
  std::function<void(int)> on_level;                // after each level of the build
};

/// The scene of a configuration (generated, or read from obj_file; throws
/// std::runtime_error naming file, line and problem for a malformed file).
std::vector<Triangle> make_scene(const Config& c);

/// Bounds of every triangle and of the whole scene.
std::vector<Box> triangle_bounds(const std::vector<Triangle>& tris);
Box scene_bounds(const std::vector<Box>& bounds);

/// Pool or heap for a build of n triangles: Vinkler & Havran 2014 sets 200 times the
/// root array (800 bytes per triangle); the object forms need more (a node
/// object per 1/3 triangle and a 140-byte chunk per leaf: on the host, 100K
/// clustered triangles took 64 MiB with CFMMalloc objects), so 1536 bytes
/// per triangle plus 64 MiB.
inline std::uint64_t default_heap_bytes(std::uint64_t n) {
  return (std::uint64_t{64} << 20) + n * 1536;
}

/// A built tree, copied to the host for checking (node order is arbitrary).
struct TreeNode {
  Box cell{};
  int depth = 0;
  int axis = kLeaf;  // 0..2 for inner nodes
  float split = 0;
  int left = -1, right = -1;  // indices into Tree::nodes
  std::int64_t first = 0;     // leaves: their references are refs[first, first + count)
  int count = 0;
};

struct Tree {
  std::vector<TreeNode> nodes;
  std::vector<int> refs;
  int root = 0;
};

/// What a build measured and counted, for the report.
struct BuildResult {
  Tree tree;
  BuildCounters counters;  // the root array already added
  double total_ms = 0;
  std::map<std::string, double> phases_ms;
  std::vector<std::pair<std::string, std::uint64_t>> live;
  std::vector<std::pair<std::string, std::string>> heap;
  std::vector<std::pair<std::string, double>> extra_ms;
};

/// Checks the tree against the scene (throws std::runtime_error saying what
/// is wrong), hands the picture to c.on_tree, and makes the report: Table 3's
/// columns, node counts, the checksum (the same on every form and device).
RunReport finish_build(const Config& c, const std::vector<Triangle>& tris, BuildResult&& b,
                       std::string variant, std::string device);

/// Builds the tree of the scene and reports.
RunReport run(const Config& c);

}  // namespace dynasoar::example::kdtree
