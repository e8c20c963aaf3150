#include "example/common/cli.h"

#include <cmath>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "dynasoar/platform/error.h"
#include "dynasoar/platform/watchdog_base.h"
#include "dynasoar/support/progress.h"

namespace dynasoar::example {

CLI::Validator finite_number() {
  return CLI::Validator(
      [](const std::string& s) {
        return parse_float(s) ? std::string() : "not a finite number: " + s;
      },
      "FLOAT");
}

CLI::Validator unsigned_number() {
  return CLI::Validator(
      [](const std::string& s) {
        return parse_checksum(s) ? std::string() : "not a number from 0 to 2^64 - 1: " + s;
      },
      "UINT");
}

void add_common_options(CLI::App& app, CommonOptions& o, bool stepped) {
  app.add_option("--seed", o.seed, "seed of the random numbers")
      ->capture_default_str()
      ->check(unsigned_number());
  if (stepped)
    app.add_option("--steps", o.steps, "simulation steps")
        ->capture_default_str()
        ->check(CLI::Range(0, 1 << 30));
  app.add_option("--heap-mib", o.heap_mib,
                 "heap size in MiB (default: estimated from the problem size)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20));
  app.add_flag("--json", o.json, "print one JSON object instead of the summary");
  app.add_flag("--quiet", o.quiet, "no progress output on stderr");
  // Programs without steps have integer checksums only (and no --rtol).
  app.add_option("--expect", o.expect,
                 "checksum the run must produce (hex 0x... or decimal); exit code 3 if not")
      ->check([stepped](const std::string& s) {
        return parse_checksum(s) || (stepped && parse_float(s)) ? std::string() : "not a checksum: " + s;
      });
  if (stepped)
    app.add_option("--rtol", o.rtol, "relative tolerance of --expect for floating-point checksums")
        ->capture_default_str()
        ->check(finite_number())
        ->check(CLI::Range(0.0, 1.0));
  if (const double from_environment = platform::watchdog_seconds_from_environment(); from_environment > 0)
    o.watchdog = from_environment;
  app.add_option("--watchdog", o.watchdog,
                 "seconds a parallel_do or parallel_new may run before the program stops and says what hangs "
                 "(0: no limit)")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::Range(0.0, 1e9));
  if (stepped)
    app.add_option("--defrag", o.defrag,
                   "compact the heap's fragmented classes every N steps (0: never; the DynaSOAr heap and "
                   "BitmapAlloc: other back ends and the baseline ignore it)")
        ->capture_default_str()
        ->check(CLI::Range(0u, 1u << 29));
  // Every heap made after parsing reads them (HandleOptions::watchdog_seconds, HandleOptions::defrag).
  app.parse_complete_callback([&o] {
    setenv("DYNASOAR_WATCHDOG", std::to_string(o.watchdog).c_str(), 1);
    if (o.defrag > 0) setenv("DYNASOAR_DEFRAG", std::to_string(o.defrag).c_str(), 1);
  });
  add_viewer_options(app, o.view, stepped);
}

void add_ranks_option(CLI::App& app, CommonOptions& o) {
  app.add_option("--ranks", o.ranks,
                 "ranks of a distributed run (the _distributed programs): threads of this process, one GPU "
                 "each (one heap each on the CPU); started by dynasoar_launch, the launcher's ranks")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
}

void add_checkpoint_options(CLI::App& app, CommonOptions& o) {
  app.add_option_function<std::pair<int, std::string>>(
         "--checkpoint-every",
         [&o](const std::pair<int, std::string>& every) {
           o.checkpoint.every = every.first;
           o.checkpoint.path = every.second;
         },
         "after every N-th step, save the heap and the step to the file PATH (replaced each time; the "
         "DynaSOAr heap and BitmapAlloc)")
      ->type_name("N PATH")
      ->check(CLI::Range(1, 1 << 30).description("").application_index(0));
  app.add_option("--resume", o.checkpoint.resume,
                 "start from the checkpoint in PATH (written by --checkpoint-every with the same options) "
                 "and run on to --steps")
      ->type_name("PATH");
}

void add_viewer_options(CLI::App& app, viewer::Options& v, bool per_step) {
  if (!per_step) {
    app.add_flag("--render", v.render, "show the picture in a window until q; needs a build with SDL2");
    app.add_option("--snapshot", v.snapshot_dir, "write the picture as a PNG into this folder (no display needed)");
    return;
  }
  app.add_flag("--render", v.render,
               "show the run in a window (space: pause, n: next frame, q: quit); needs a build with SDL2");
  app.add_option("--snapshot", v.snapshot_dir, "write a PNG per frame into this folder (no display needed)");
  app.add_option("--every", v.every, "with --render or --snapshot: a frame every N steps (and at step 0)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 30));
  app.add_flag("--hold", v.hold, "with --render: keep the window open after the last step until q");
}

std::function<void(int)> progress_printer(const std::string& name, int steps,
                                          const CommonOptions& o) {
  if (o.quiet) return [](int) {};  // on stderr: --json output stays clean
  // The plain line "name: step s / n", once a second: bench/examples' scripts read it.
  support::ProgressOptions p;
  p.name = name;
  p.total_steps = steps;
  p.every_seconds = 1.0;
  p.rate = false;
  auto progress = std::make_shared<support::Progress>(p, std::cerr);
  return [progress](int step) { progress->step(step); };
}

int finish(const RunReport& r, const CommonOptions& o) {
  if (o.json)
    print_json(r, std::cout);
  else
    print_human(r, std::cout);
  if (o.expect.empty()) return 0;
  if (r.float_checksum) {
    const std::optional<double> want = parse_float(o.expect);
    if (!want) throw std::invalid_argument("--expect: " + r.example + " has a floating-point checksum, not " + o.expect);
    const double got = *r.float_checksum;
    if (std::fabs(got - *want) > o.rtol * std::fabs(*want)) {
      std::cerr << r.example << " on " << r.variant << ": checksum " << checksum_text(r)
                << " differs from the expected " << o.expect << " by more than " << o.rtol << " (relative)\n";
      return 3;
    }
    return 0;
  }
  const std::optional<std::uint64_t> want = parse_checksum(o.expect);
  if (!want) throw std::invalid_argument("--expect: " + r.example + " has an integer checksum, not " + o.expect);
  if (r.checksum != *want) {
    std::cerr << r.example << " on " << r.variant << ": checksum " << hex64(r.checksum)
              << " differs from the expected " << hex64(*want) << "\n";
    return 3;
  }
  return 0;
}

int guarded_main(const std::function<int()>& body) {
  try {
    return body();
  } catch (const viewer::Quit& q) {
    std::cerr << "stopped in the viewer after step " << q.step << " (no report: the run did not finish)\n";
    return 0;
  } catch (const OutOfMemory& e) {
    const std::string what = e.what();
    std::cerr << "error: " << what << "\n";
    if (what.find("--heap-mib") == std::string::npos)
      std::cerr
          << "(--heap-mib sets the heap's size; the default is estimated from the problem size)\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr
        << "error: out of host memory (std::bad_alloc): this problem or heap does not fit the "
           "machine; choose a smaller problem or --heap-mib\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace dynasoar::example
