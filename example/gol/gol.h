// Game of life: the interface between the command line (main.cpp, host
// code) and a simulation: objects.cpp on a back end of the framework, or
// baseline.cpp written by hand with plain arrays.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "example/common/heap_estimate.h"
#include "example/common/checkpoint_options.h"
#include "example/common/run_report.h"

namespace dynasoar::example::gol {

/// The grid as the viewer draws it (example/viewer), copied to the host
/// between steps: a byte per cell, row by row, 0 dead, 1 alive, 2 candidate
/// (a dead cell the object version keeps an agent for).
struct Frame {
  int step = 0;
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> cells;
};

struct Config {
  int width = 2048;
  int height = 2048;
  int steps = 300;
  int ranks = 1;  // --ranks: ranks of the distributed program (others: 1)
  std::uint64_t seed = 42;
  double density = 0.3;            // random soup: share of cells alive at the start
  std::string pattern_name;        // non-empty: start from `pattern` instead of a soup
  std::vector<int> pattern_cells;  // indices of the alive cells (the pattern placed in the grid)
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
/// to an alive one (those the object version has an agent for, save the
/// ones that went lonely this step), so that both look alike in the viewer.
inline void mark_candidates(Frame& f) {
  for (int y = 0; y < f.height; ++y)
    for (int x = 0; x < f.width; ++x) {
      if (f.cells[static_cast<std::size_t>(y) * f.width + x] != 1) continue;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int nx = (x + dx + f.width) % f.width, ny = (y + dy + f.height) % f.height;
          std::uint8_t& c = f.cells[static_cast<std::size_t>(ny) * f.width + nx];
          if (c == 0) c = 2;
        }
    }
}

/// Every cell object and an agent per cell, on every back end, with slack.
inline std::uint64_t default_heap_bytes(int width, int height) { return grid_heap_bytes(width, height, 128); }

inline RunReport make_report(const Config& c, std::string variant, std::string device,
                             double total_ms, const std::map<std::string, double>& phases_ms) {
  std::vector<std::pair<std::string, std::string>> config = {
      {"grid", std::to_string(c.width) + "x" + std::to_string(c.height)}, {"steps", std::to_string(c.steps)}};
  if (c.pattern_name.empty()) {
    config.emplace_back("soup density", std::to_string(c.density));
    config.emplace_back("seed", std::to_string(c.seed));
  } else {
    config.emplace_back("pattern", c.pattern_name);
  }
  return make_run_report("game of life", std::move(variant), std::move(device), std::move(config), total_ms,
                         phases_ms);
}

/// The soup's threshold for soup_alive (rules.h).
inline std::uint32_t soup_threshold(double density) {
  return density >= 1.0 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(density * 4294967296.0);
}

/// Runs the simulation; the checksum is the sum of checksum_term over the
/// alive cells at the end (mod 2^64).
RunReport run(const Config& c);

}  // namespace dynasoar::example::gol
