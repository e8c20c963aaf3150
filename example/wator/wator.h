// wa-tor: the interface between the command line (main.cpp, host code) and
// a simulation: objects.cpp on a back end of the framework, or baseline.cpp
// written by hand with plain arrays.
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

namespace dynasoar::example::wator {

/// The grid as the viewer draws it (example/viewer), copied to the host
/// between steps: a byte per cell, row by row, 0 water, 1 fish, 2 shark.
struct Frame {
  int step = 0;
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> cells;
};

/// One step as --trace records it (DynaSOAr paper Fig. 12a and 12d): the
/// step's time, the agents after it and how full the agents' blocks are.
/// Tracing waits for the GPU after every step and counts the agents; that
/// wait and the counting are left out of the times.
struct StepTrace {
  int step = 0;
  double ms = 0;             // the step's phases (CUDA events on a GPU)
  double registry_ms = 0;    // compacting the object registry (byte allocators, host clock)
  std::uint64_t fish = 0;
  std::uint64_t sharks = 0;
  // Unused slots among the blocks holding fish and sharks (Sec. 6.3: the
  // DynaSOAr heap's fragmentation); negative where there are no blocks.
  double fragmentation = -1;
};

struct Config {
  int width = 2048;   // the paper's size (Sec. 6)
  int height = 2560;
  int steps = 500;
  int ranks = 1;  // --ranks: ranks of the distributed program (others: 1)
  std::uint64_t seed = 42;
  std::uint64_t heap_bytes = 0;     // 0: default_heap_bytes
  std::function<void(int)> on_step;  // called after each step is queued (progress)
  // Viewer and snapshots: on_frame gets the grid at step 0 and after every
  // frame_every-th step. Copying it and the callback are left out of the
  // reported times; without on_frame the loop is unchanged.
  int frame_every = 0;
  std::function<void(const Frame&)> on_frame;
  // --trace: called after every step; without it the loop is unchanged.
  std::function<void(const StepTrace&)> on_trace;
  CheckpointOptions checkpoint;  // --checkpoint-every, --resume (the DynaSOAr heap and BitmapAlloc)
};

/// Enough for every cell to hold an agent, on every back end (the byte
/// allocators need a header and registry room per object), with slack.
inline std::uint64_t default_heap_bytes(int width, int height) { return grid_heap_bytes(width, height, 160); }

/// The part of a run's report that every variant fills the same way.
inline RunReport make_report(const Config& c, std::string variant, std::string device,
                             double total_ms, const std::map<std::string, double>& phases_ms) {
  return make_run_report("wa-tor", std::move(variant), std::move(device),
                         {{"grid", std::to_string(c.width) + "x" + std::to_string(c.height)},
                          {"steps", std::to_string(c.steps)},
                          {"seed", std::to_string(c.seed)}},
                         total_ms, phases_ms);
}

/// Runs the simulation and reports time, checksum and live objects.
/// Throws std::invalid_argument for an impossible configuration and
/// dynasoar::OutOfMemory if the heap was too small.
RunReport run(const Config& c);

}  // namespace dynasoar::example::wator
