// Traffic: the interface between the command line (main.cpp, host code) and
// a simulation: objects.cpp on a back end of the framework, or baseline.cpp
// written by hand with plain arrays. Both build their street network from
// the same host description (network.cpp), so both simulate the same streets.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "example/common/checkpoint_options.h"
#include "example/common/run_report.h"

namespace dynasoar::example::traffic {

/// The street network as the host lays it out (build_network): intersections
/// at random places in the unit square, each with 1 to 4 streets to random
/// other intersections, every street a line of cells. Cell c's successors
/// are cell c + 1 inside a street; a street's last cell leads into the
/// first cells of every street leaving the intersection it ends at, and is
/// that intersection's traffic light for the street.
struct Network {
  int intersections = 0;
  // Per cell.
  std::vector<std::int32_t> exit;   // -1: the next cell is c + 1; else the intersection this street ends at
  std::vector<std::uint8_t> speed;  // the street's speed limit (cells per step)
  std::vector<std::uint8_t> flags;  // rules.h's CellFlag bits
  std::vector<float> x, y;          // position in the unit square (for the viewer only)
  // Per intersection i, kMaxDegree slots from i * kMaxDegree.
  std::vector<std::int32_t> out;          // the first cells of the streets leaving i
  std::vector<std::uint8_t> out_degree;   // how many leave
  std::vector<std::int32_t> in;           // the last cells of the streets ending at i (its lights)
  std::vector<std::uint8_t> in_degree;    // how many end there
  int producers = 0;                      // cells with the producer flag

  int cells() const { return static_cast<int>(exit.size()); }
};

/// The network of `intersections` intersections for `seed`: a function of
/// the two alone. Throws std::invalid_argument for fewer than 2
/// intersections or more than 2^31 - 1 cells.
Network build_network(int intersections, std::uint64_t seed);

/// The state the viewer draws (example/viewer), copied to the host between
/// steps: a byte per cell (rules.h's frame_byte: a car, a red light), and
/// the network for where the cells are and which produce cars or are targets.
struct Frame {
  int step = 0;
  const Network* network = nullptr;
  std::vector<std::uint8_t> cells;
};

struct Config {
  int intersections = 17500;  // the original example's network
  int steps = 12000;          // and its number of iterations
  std::uint64_t seed = 42;
  std::uint64_t heap_bytes = 0;      // 0: default_heap_bytes
  std::function<void(int)> on_step;  // called after each step is queued (progress)
  // Viewer and snapshots: on_frame gets the state at step 0 and after every
  // frame_every-th step. Copying it and the callback are left out of the
  // reported times; without on_frame the loop is unchanged.
  int frame_every = 0;
  std::function<void(const Frame&)> on_frame;
  CheckpointOptions checkpoint;  // --checkpoint-every, --resume (the DynaSOAr heap and BitmapAlloc)
};

/// Room for every cell and a car on each, on every back end (the byte
/// allocators need a header and registry room per object), with slack; at
/// least 32 MiB.
inline std::uint64_t default_heap_bytes(const Network& n) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(n.cells()) * 384 + static_cast<std::uint64_t>(n.intersections) * 128;
  constexpr std::uint64_t kLeast = std::uint64_t{32} << 20;
  return bytes < kLeast ? kLeast : bytes;
}

/// The part of a run's report that every variant fills the same way.
inline RunReport make_report(const Config& c, const Network& n, std::string variant, std::string device,
                             double total_ms, const std::map<std::string, double>& phases_ms) {
  return make_run_report("traffic", std::move(variant), std::move(device),
                         {{"intersections", std::to_string(c.intersections)},
                          {"cells", std::to_string(n.cells())},
                          {"steps", std::to_string(c.steps)},
                          {"seed", std::to_string(c.seed)}},
                         total_ms, phases_ms);
}

/// The report's line on the cars made and removed during the run.
inline std::pair<std::string, std::string> churn_line(std::uint64_t made, std::uint64_t removed) {
  return {"cars", std::to_string(made) + " made, " + std::to_string(removed) + " removed at their targets"};
}

/// Runs the simulation and reports time, checksum and live objects.
/// Throws std::invalid_argument for an impossible configuration and
/// dynasoar::OutOfMemory if the heap was too small.
RunReport run(const Config& c);

}  // namespace dynasoar::example::traffic
