// Barnes-Hut: the interface between the command line (main.cpp, host code),
// the checks (check.cpp, host code) and a simulation: objects.cpp on a back
// end of the framework, or baseline.cpp written by hand with plain arrays.
// Plain C++ without the framework's headers, so that host sources of a CUDA
// build can include it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "example/common/checkpoint_options.h"
#include "example/common/run_report.h"

namespace dynasoar::example::barnes_hut {

/// Cells of this depth are never split: bodies closer than 2^(1-16) share a
/// leaf, however many there are (rules.h). It bounds the tree's depth, the
/// force walk's stack and the rounds of one tree update.
inline constexpr int kMaxDepth = 16;

/// Constants of the model; passed by value to every kernel.
struct Physics {
  float gravity = 0.1f;  // G times the number of bodies: the pull of the whole is size-independent
  float dt = 0.005f;     // time step
  float softening2 = 1.0e-4f;  // Plummer softening length, squared
  float theta =
      0.5f;  // opening criterion: a cell of side s at distance d is one mass if s < theta d
  float min_mass = 1.0f, max_mass = 2.0f;
  float max_speed = 0.05f;  // initial velocities in [-max_speed, max_speed]^2
  int leaf_capacity = 4;    // a cell with more bodies is split (above depth kMaxDepth)
  int clusters = 0;         // 0: bodies uniform in the box; else around this many random centres
  float spread = 0.05f;     // with clusters: half-width of a cluster (0: all at its centre)
};

/// A body as the checks and the viewer see it.
struct FrameBody {
  float x = 0, y = 0, vx = 0, vy = 0;
  float ax = 0, ay = 0;  // acceleration of the last force phase
  float mass = 0;
  int id = -1;             // index at creation
  std::uint64_t leaf = 0;  // id of the cell whose list holds it
};

/// A cell of the quadtree. Ids are opaque (the object's address, or an
/// array index + 1); 0 means none.
struct FrameCell {
  std::uint64_t id = 0, parent = 0;
  int depth = 0;
  std::uint32_t ix = 0,
                iy = 0;  // the cell is [-1 + ix s, -1 + (ix + 1) s) x ..., s = 2^(1 - depth)
  int count = 0;         // bodies in the subtree
  float mass = 0, cx = 0, cy = 0;  // total mass and centre of mass
  std::uint8_t leaf = 0;
};

/// The state copied to the host between steps: every body (indexed by id)
/// and every cell (in no particular order).
struct Frame {
  int step = 0;
  std::vector<FrameBody> bodies;
  std::vector<FrameCell> cells;
};

struct Config {
  int bodies = 20000;
  int steps = 30;
  std::uint64_t seed = 42;
  std::uint64_t heap_bytes = 0;  // 0: default_heap_bytes
  Physics physics;
  std::function<void(int)> on_step;  // called after each step (progress)
  // Viewer and snapshots: on_frame gets the state at step 0 and after every
  // frame_every-th step; copying it and the callback are not timed.
  int frame_every = 0;
  std::function<void(const Frame&)> on_frame;
  // --check: after the last step one more (untimed) force phase, then the
  // state with those accelerations goes to on_check.
  std::function<void(const Frame&)> on_check;
  CheckpointOptions checkpoint;  // --checkpoint-every, --resume (the DynaSOAr heap and BitmapAlloc)
};

/// At most this many cells in a tree of `bodies` bodies: non-empty leaves
/// are disjoint (at most one per body), and the inner cells of one depth are
/// disjoint with more than leaf_capacity bodies each.
inline std::uint64_t max_cells(int bodies, int leaf_capacity) {
  const auto n = static_cast<std::uint64_t>(bodies);
  return n + kMaxDepth * (n / static_cast<std::uint64_t>(leaf_capacity + 1)) + 1;
}

/// Room for the bodies and for two trees (the old cells and the new ones
/// coexist during an update, until the empty old ones are swept), with the
/// slack the byte allocators need (headers, split policy).
inline std::uint64_t default_heap_bytes(int bodies, int leaf_capacity) {
  const std::uint64_t bytes =
      static_cast<std::uint64_t>(bodies) * 256 + 2 * max_cells(bodies, leaf_capacity) * 256;
  return bytes < (std::uint64_t{16} << 20) ? std::uint64_t{16} << 20 : bytes;
}

inline RunReport make_report(const Config& c, std::string variant, std::string device,
                             double total_ms, const std::map<std::string, double>& phases_ms) {
  char theta[32];
  std::snprintf(theta, sizeof theta, "%g", static_cast<double>(c.physics.theta));
  std::vector<std::pair<std::string, std::string>> config{
      {"bodies", std::to_string(c.bodies)},
      {"steps", std::to_string(c.steps)},
      {"seed", std::to_string(c.seed)},
      {"theta", theta},
      {"leaf size", std::to_string(c.physics.leaf_capacity)}};
  if (c.physics.clusters > 0) config.emplace_back("clusters", std::to_string(c.physics.clusters));
  return make_run_report("barnes-hut", std::move(variant), std::move(device), std::move(config),
                         total_ms, phases_ms);
}

/// Runs the simulation and reports time, checksum (the sum of the bodies'
/// checksum terms, rules.h, plus their number) and live objects. Throws
/// std::invalid_argument for an impossible configuration and OutOfMemory
/// when the tree does not fit the heap.
RunReport run(const Config& c);

// --- checks (check.cpp, host code) ------------------------------------------------------

struct ForceCheck {
  int sampled = 0;
  double max_error = 0;  // max over the sample of |a_tree - a_exact| / sum_j |a_ij|
  double max_relative =
      0;  // max over the sample of |a_tree - a_exact| / |a_exact| (for information)
  double tolerance = 0;
  bool ok() const { return max_error <= tolerance; }
};

/// Compares the tree's accelerations in `f` with a direct sum over all bodies
/// (in double) for up to `samples` bodies spread over the ids. The error of
/// a body is normalised by the sum of the magnitudes of the pulls on it, so
/// that bodies whose pulls nearly cancel do not dominate; the tolerance is
/// theta^2 / 4 (the monopole error of a cell is of order (s/d)^2 < theta^2)
/// plus 1e-4 for float rounding.
ForceCheck check_forces(const Frame& f, const Physics& p, int samples);

/// The tree's invariants: one root; every cell inside its parent's cell in
/// its own quadrant; leaves hold the bodies inside their cell, every body
/// in exactly one leaf; counts and masses add up; a cell is inner exactly if
/// it holds more than leaf_capacity bodies above kMaxDepth; no empty cell
/// but the root. Empty string if all holds, else the first violation.
std::string check_tree(const Frame& f, const Physics& p);

}  // namespace dynasoar::example::barnes_hut
