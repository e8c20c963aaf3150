// The structure example: the interface between the command line (main.cpp,
// host code) and a simulation: objects.cpp on a back end of the framework,
// or baseline.cpp written by hand with plain arrays.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "example/common/checkpoint_options.h"
#include "example/common/run_report.h"

namespace dynasoar::example::structure {

/// A node as the viewer draws it: where it is and what it is (rules.h's
/// Kind: 1 anchor, 2 pull node, 3 node; 0: removed).
struct FrameNode {
  float x = 0, y = 0;
  std::uint8_t kind = 0;
};

/// A spring as the viewer draws it: its ends, and its load (rules.h's
/// load_byte: 0 slack, 255 at its maximum force). `present` 0: broken or
/// removed.
struct FrameSpring {
  float x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  std::uint8_t load = 0;
  std::uint8_t present = 0;
};

/// The structure copied to the host between steps: nodes by index, springs
/// by their index at the start; positions in lattice units (node i starts
/// near column i % columns, row i / columns).
struct Frame {
  int step = 0;
  int columns = 0;
  int rows = 0;
  std::vector<FrameNode> nodes;
  std::vector<FrameSpring> springs;
};

struct Config {
  int nodes = 1500000;  // the original example's size
  int steps = 500;
  int iterations = 40;  // force and move rounds per step (the original's kNumComputeIterations)
  std::uint64_t seed = 42;
  std::uint64_t heap_bytes = 0;      // 0: default_heap_bytes
  std::function<void(int)> on_step;  // called after each step is queued (progress)
  // Viewer and snapshots: on_frame gets the structure at step 0 and after
  // every frame_every-th step. Copying it and the callback are left out of
  // the reported times; without on_frame the loop is unchanged.
  int frame_every = 0;
  std::function<void(const Frame&)> on_frame;
  CheckpointOptions checkpoint;  // --checkpoint-every, --resume (the DynaSOAr heap and BitmapAlloc)
};

/// Room for every node and its springs on every back end (the byte
/// allocators need a header and registry room per object), with slack, and
/// at least 32 MiB. Nothing is allocated after the start: the run only frees.
inline std::uint64_t default_heap_bytes(int nodes) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(nodes) * 512;
  constexpr std::uint64_t kLeast = std::uint64_t{32} << 20;
  return bytes < kLeast ? kLeast : bytes;
}

/// The part of a run's report that every variant fills the same way.
inline RunReport make_report(const Config& c, int springs, std::string variant, std::string device,
                             double total_ms, const std::map<std::string, double>& phases_ms) {
  return make_run_report("structure", std::move(variant), std::move(device),
                         {{"nodes", std::to_string(c.nodes)},
                          {"springs", std::to_string(springs)},
                          {"steps", std::to_string(c.steps)},
                          {"iterations", std::to_string(c.iterations)},
                          {"seed", std::to_string(c.seed)}},
                         total_ms, phases_ms);
}

/// "k of n nodes, m of s springs": what the run removed, for the report.
inline std::string removed_text(std::uint64_t nodes_left, int nodes, std::uint64_t springs_left, int springs) {
  return std::to_string(static_cast<std::uint64_t>(nodes) - nodes_left) + " of " + std::to_string(nodes) +
         " nodes, " + std::to_string(static_cast<std::uint64_t>(springs) - springs_left) + " of " +
         std::to_string(springs) + " springs";
}

/// Runs the simulation and reports time, checksum and live objects.
/// Throws std::invalid_argument for an impossible configuration and
/// dynasoar::OutOfMemory if the heap was too small.
RunReport run(const Config& c);

}  // namespace dynasoar::example::structure
