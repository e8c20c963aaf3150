// Sugarscape: the interface between the command line (main.cpp, host code)
// and a simulation: objects.cpp on a back end of the framework, or
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

namespace dynasoar::example::sugarscape {

/// The grid as the viewer draws it (example/viewer), copied to the host
/// between steps: a byte per cell, row by row, rules.h's frame_byte (the
/// occupant in bits 0-1: 0 none, 1 male, 2 female; the sugar in bits 2-7).
struct Frame {
  int step = 0;
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> cells;
};

struct Config {
  int width = 1700;  // the original example's size
  int height = 1700;
  int steps = 500;
  std::uint64_t seed = 42;
  std::uint64_t heap_bytes = 0;     // 0: default_heap_bytes
  std::function<void(int)> on_step;  // called after each step is queued (progress)
  // Viewer and snapshots: on_frame gets the grid at step 0 and after every
  // frame_every-th step. Copying it and the callback are left out of the
  // reported times; without on_frame the loop is unchanged.
  int frame_every = 0;
  std::function<void(const Frame&)> on_frame;
  CheckpointOptions checkpoint;  // --checkpoint-every, --resume (the DynaSOAr heap and BitmapAlloc)
};

/// Enough for every cell to hold an agent, on every back end (the byte
/// allocators need a header and registry room per object), with slack.
inline std::uint64_t default_heap_bytes(int width, int height) { return grid_heap_bytes(width, height, 224); }

/// The part of a run's report that every variant fills the same way.
inline RunReport make_report(const Config& c, std::string variant, std::string device, double total_ms,
                             const std::map<std::string, double>& phases_ms) {
  return make_run_report("sugarscape", std::move(variant), std::move(device),
                         {{"grid", std::to_string(c.width) + "x" + std::to_string(c.height)},
                          {"steps", std::to_string(c.steps)},
                          {"seed", std::to_string(c.seed)}},
                         total_ms, phases_ms);
}

/// Runs the simulation and reports time, checksum and live objects.
/// Throws std::invalid_argument for an impossible configuration and
/// dynasoar::OutOfMemory if the heap was too small.
RunReport run(const Config& c);

}  // namespace dynasoar::example::sugarscape
