// n-body: the interface between the command line (main.cpp, host code) and
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
#include "example/common/run_report.h"
#include "example/nbody/physics.h"

namespace dynasoar::example::nbody {

/// A body as the viewer draws it (example/viewer). `merged`: it has taken
/// in another body (its mass is no longer its initial one).
struct FrameBody {
  float x = 0, y = 0, mass = 0;
  std::uint8_t present = 0;  // 0: no body with this id (absorbed, collision variant)
  std::uint8_t merged = 0;
};

/// The bodies copied to the host between steps, indexed by the id they were
/// created with; positions in [-1, 1]^2.
struct Frame {
  int step = 0;
  bool collisions = false;
  std::vector<FrameBody> bodies;
};

struct Config {
  int bodies = 20000;  // the paper's size (Sec. 6)
  int steps = 3000;
  int ranks = 1;  // --ranks: ranks of the distributed program (others: 1)
  std::uint64_t seed = 42;
  bool collisions = false;        // the collision variant (bodies merge)
  std::uint64_t heap_bytes = 0;   // 0: default_heap_bytes
  Physics physics;
  std::function<void(int)> on_step;  // called after each step is queued (progress)
  // Viewer and snapshots: on_frame gets the bodies at step 0 and after
  // every frame_every-th step. Copying them and the callback are left out
  // of the reported times; without on_frame the loop is unchanged.
  int frame_every = 0;
  std::function<void(const Frame&)> on_frame;
  CheckpointOptions checkpoint;  // --checkpoint-every, --resume (the DynaSOAr heap and BitmapAlloc)
};

/// Room for every body on every back end, with slack; bodies never grow in number.
inline std::uint64_t default_heap_bytes(int bodies) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(bodies) * 512;
  return bytes < (std::uint64_t{16} << 20) ? std::uint64_t{16} << 20 : bytes;
}

/// The part of a run's report that every variant fills the same way.
inline RunReport make_report(const Config& c, std::string variant, std::string device,
                             double total_ms, const std::map<std::string, double>& phases_ms) {
  return make_run_report(c.collisions ? "n-body (collisions)" : "n-body", std::move(variant), std::move(device),
                         {{"bodies", std::to_string(c.bodies)},
                          {"steps", std::to_string(c.steps)},
                          {"seed", std::to_string(c.seed)}},
                         total_ms, phases_ms);
}

/// Runs the simulation and reports time, checksum (the sum of checksum_term
/// over the bodies plus their number) and live bodies. Throws
/// std::invalid_argument for an impossible configuration.
RunReport run(const Config& c);

}  // namespace dynasoar::example::nbody
