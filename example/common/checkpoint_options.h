// --checkpoint-every N PATH and --resume PATH: what every simulation's
// Config carries of them, and the run's own state a checkpoint holds beside
// the heap (which example, its configuration, the step). Host code only
// (no CUDA): main.cpp and the baselines see this; the heap's side is
// checkpoint.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "example/common/run_report.h"

namespace dynasoar::example {

struct CheckpointOptions {
  int every = 0;       // save after every `every`-th step (0: never)
  std::string path;    // ... into this file, replaced each time
  std::string resume;  // "": a new run; else load this checkpoint and go on from its step
  /// Whether the run saves or resumes.
  bool active() const { return every > 0 || !resume.empty(); }
};

/// The configuration a resumed run must share with the run that saved:
/// the example's name and its report's configuration but the step count
/// ("wa-tor: grid 96x64, seed 7").
std::string run_identity(const RunReport& r);

/// The run's own state in a checkpoint: run_identity and the step after
/// which it was saved, then `counts`, the run's numbers kept outside the
/// heap (counters its report or checksum goes on adding to), if any.
std::string run_state(const std::string& identity, int step,
                      const std::vector<std::uint64_t>& counts = {});

/// The counts that run_state wrote into `state` (read from the checkpoint
/// `path`). Throws std::invalid_argument unless there are `n` of them.
std::vector<std::uint64_t> saved_counts(const std::string& state, std::size_t n,
                                        const std::string& path);

/// The step of the run state `state` read from the checkpoint `path`.
/// Throws std::invalid_argument if it is no example's state, another
/// run's (another example, grid, seed, ...), or later than `steps`.
int resumed_step(const std::string& state, const std::string& identity, int steps,
                 const std::string& path);

/// Throws std::invalid_argument if `c` asks for checkpoints: the program
/// of `example` that `variant` describes ("is the hand-written baseline",
/// "runs on CMalloc") has no heap whose objects can be saved.
void refuse_checkpoints(const CheckpointOptions& c, const std::string& example,
                        const std::string& variant);

}  // namespace dynasoar::example
