// Command-line options every example shares (CLI11), progress output on
// long runs (dynasoar/support/progress.h), and the end of a run: print the
// report, compare the checksum.
// Host code only (no CUDA): each example's main() is compiled by the host
// compiler and calls into its simulation, which nvcc compiles.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "example/common/checkpoint_options.h"
#include "example/common/run_report.h"
#include "example/viewer/options.h"

namespace dynasoar::example {

struct CommonOptions {
  std::uint64_t seed = 42;
  int steps = 0;
  std::uint64_t heap_mib = 0;  // 0: the example's own estimate
  bool json = false;
  bool quiet = false;
  std::string expect;          // checksum the run must produce ("" : none)
  double rtol = 1e-4;          // relative tolerance for floating-point checksums
  double watchdog = 60;        // seconds a parallel_do may run (0: no limit); DYNASOAR_WATCHDOG's value if set
  unsigned defrag = 0;         // compact fragmented classes every N steps (0: never); sets DYNASOAR_DEFRAG
  CheckpointOptions checkpoint;  // --checkpoint-every N PATH, --resume PATH
  int ranks = 1;               // --ranks: ranks of a distributed run (the _distributed programs)
  viewer::Options view;        // --render, --snapshot, --every, --hold
};

/// Adds --seed, --steps, --heap-mib, --json, --quiet, --expect, --rtol,
/// --watchdog, --defrag and the viewer's --render, --snapshot, --every and --hold.
/// --watchdog sets DYNASOAR_WATCHDOG once the command line is parsed, so
/// that every heap the example makes stops a parallel_do that does not end. Without `stepped`
/// (a program that makes one result, not a run of steps: the k-d tree) no
/// --steps, --rtol, --every or --hold, and --expect takes integers only.
void add_common_options(CLI::App& app, CommonOptions& o, bool stepped = true);

/// Adds --checkpoint-every N PATH and --resume PATH (into o.checkpoint),
/// for a simulation that saves its heap and resumes (example/common/checkpoint.h).
/// A program without them refuses both as unexpected arguments.
void add_checkpoint_options(CLI::App& app, CommonOptions& o);

/// Adds --ranks N (into o.ranks), for a simulation with a distributed
/// program (<name>_distributed): its ranks run as threads of one process,
/// one GPU each (one heap each on the CPU). The other programs of the
/// simulation take the option and refuse any value but 1 (check_one_rank, run_report.h).
void add_ranks_option(CLI::App& app, CommonOptions& o);

/// Validators for options whose bounds CLI11 (2.1) does not check itself:
/// finite_number() for floating-point options (CLI::Range lets NaN through,
/// which compares false with both bounds) and unsigned_number() for 64-bit
/// unsigned ones (decimal or 0x hex; CLI11 reads -1 as 2^64 - 1 and clamps
/// numbers too large for the type).
CLI::Validator finite_number();
CLI::Validator unsigned_number();

/// Adds the viewer's --render, --snapshot and --hold, and with `per_step`
/// --every (an example that makes one picture, not one per step, has none).
void add_viewer_options(CLI::App& app, viewer::Options& v, bool per_step = true);

/// A step callback that prints "name: step s / n" to stderr at most once a
/// second (support::Progress without its rate; nothing with --quiet; with
/// --json the report goes to stdout, so progress on stderr does not disturb it).
std::function<void(int)> progress_printer(const std::string& name, int steps,
                                          const CommonOptions& o);

/// Copies what every stepped simulation takes from the common options into
/// its Config: steps, seed, heap size, progress lines under `name`, and
/// checkpoints.
template <class Config>
void take_common_options(Config& c, const CommonOptions& o, const std::string& name) {
  c.steps = o.steps;
  c.seed = o.seed;
  c.heap_bytes = o.heap_mib << 20;
  c.on_step = progress_printer(name, c.steps, o);
  c.checkpoint = o.checkpoint;
  if constexpr (requires { c.ranks; }) c.ranks = o.ranks;
}

/// Prints the report (human or JSON) to stdout. Returns the exit code: 0,
/// or 3 (with a message on stderr) if --expect was given and differs (for
/// a floating-point checksum: by more than --rtol relative to the expected).
int finish(const RunReport& r, const CommonOptions& o);

/// Runs `body` and turns exceptions into a message on stderr and exit code 1
/// (CLI11's parse errors keep their own codes and messages); a heap that ran
/// out of memory and host memory that ran out also say which option helps.
/// A run the viewer's user stopped (viewer::Quit) ends with a line on stderr
/// and 0.
int guarded_main(const std::function<int()>& body);

}  // namespace dynasoar::example
