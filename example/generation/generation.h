// Generations: the interface between the command line (main.cpp, host
// code) and a simulation: objects.cpp on a back end of the framework, or
// baseline.cpp written by hand with plain arrays.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "example/common/checkpoint_options.h"
#include "example/common/heap_estimate.h"
#include "example/common/run_report.h"

namespace dynasoar::example::generation {

/// The grid as the viewer draws it (example/viewer), copied to the host
/// between steps: a byte per cell, row by row, rules.h's frame_byte (0 dead,
/// 1 candidate, 2 alive, from 3 up a dying cell, higher the closer to dead).
struct Frame {
  int step = 0;
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> cells;
};

/// Frame bytes below kFrameDying (rules.h's frame_byte).
enum FrameByte : std::uint8_t { kFrameDead = 0, kFrameCandidate = 1, kFrameAlive = 2, kFrameDying = 3 };

struct Config {
  int width = 5000;                // the original example's grid
  int height = 5000;
  int steps = 1000;                // past the soup's die-off (the original runs 25 000 steps of another start)
  int states = 255;                // steps a cell takes to die (the original's kNumStates)
  std::uint64_t seed = 42;
  double density = 0.3;            // random soup: share of cells alive at the start
  std::uint64_t heap_bytes = 0;    // 0: default_heap_bytes
  std::function<void(int)> on_step;
  // Viewer and snapshots: on_frame gets the grid at step 0 and after every
  // frame_every-th step. Copying it and the callback are left out of the
  // reported times; without on_frame the loop is unchanged.
  int frame_every = 0;
  std::function<void(const Frame&)> on_frame;
  CheckpointOptions checkpoint;  // --checkpoint-every, --resume (the DynaSOAr heap and BitmapAlloc)
};

/// The baseline has no candidates: marks as candidates the dead cells next
/// to an alive one (every dead cell the object version keeps a candidate
/// for, but those whose last alive neighbour died in this step), so that
/// both look alike in the viewer.
inline void mark_candidates(Frame& f) {
  for (int y = 0; y < f.height; ++y)
    for (int x = 0; x < f.width; ++x) {
      if (f.cells[static_cast<std::size_t>(y) * f.width + x] != kFrameAlive) continue;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int nx = (x + dx + f.width) % f.width, ny = (y + dy + f.height) % f.height;
          std::uint8_t& c = f.cells[static_cast<std::size_t>(ny) * f.width + nx];
          if (c == kFrameDead) c = kFrameCandidate;
        }
    }
}

/// Every cell object and an agent per cell, on every back end, with slack.
inline std::uint64_t default_heap_bytes(int width, int height) { return grid_heap_bytes(width, height, 160); }

inline RunReport make_report(const Config& c, std::string variant, std::string device, double total_ms,
                             const std::map<std::string, double>& phases_ms) {
  return make_run_report("generation", std::move(variant), std::move(device),
                         {{"grid", std::to_string(c.width) + "x" + std::to_string(c.height)},
                          {"steps", std::to_string(c.steps)},
                          {"dying steps", std::to_string(c.states)},
                          {"soup density", std::to_string(c.density)},
                          {"seed", std::to_string(c.seed)}},
                         total_ms, phases_ms);
}

/// The report's line on the cells born and those that finished dying during the run.
inline std::pair<std::string, std::string> churn_line(std::uint64_t born, std::uint64_t dead) {
  return {"cells", std::to_string(born) + " born, " + std::to_string(dead) + " finished dying"};
}

/// Runs the simulation; the checksum is the sum of checksum_term over the
/// alive and dying cells at the end (mod 2^64).
RunReport run(const Config& c);

}  // namespace dynasoar::example::generation
