// Shared helpers of the GPU benchmarks: CUDA-event timing with warm-up and
// median, the run's metadata (date, device, command) and a small CSV writer
// that echoes every row to stdout as it is measured.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dynasoar/platform/error.h"

namespace dynasoar::bench {

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  int reps = 0;
};

/// Median of a non-empty sample.
inline double median(std::vector<double> v) {
  if (v.empty()) throw std::invalid_argument("median of no values");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Times `launch` (which only queues work on `stream`) with CUDA events:
/// `warmup` untimed runs, then `reps` timed runs; median and minimum.
template <class Launch>
Timing time_gpu(const Launch& launch, int warmup, int reps, cudaStream_t stream = nullptr) {
  if (reps < 1) throw std::invalid_argument("time_gpu: reps must be at least 1");
  for (int i = 0; i < warmup; ++i) launch();
  DYNASOAR_CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaEvent_t start, stop;
  DYNASOAR_CUDA_CHECK(cudaEventCreate(&start));
  DYNASOAR_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> ms(reps);
  for (int i = 0; i < reps; ++i) {
    DYNASOAR_CUDA_CHECK(cudaEventRecord(start, stream));
    launch();
    DYNASOAR_CUDA_CHECK(cudaEventRecord(stop, stream));
    DYNASOAR_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    DYNASOAR_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms[i] = t;
  }
  DYNASOAR_CUDA_CHECK(cudaEventDestroy(start));
  DYNASOAR_CUDA_CHECK(cudaEventDestroy(stop));
  return {median(ms), *std::min_element(ms.begin(), ms.end()), reps};
}

/// Times `run` by the host's wall clock: `warmup` untimed runs, then `reps`
/// timed ones; after each, `settle()` runs untimed (a wait for the work
/// that `run` only queued, say). Median and minimum.
template <class Run, class Settle>
Timing time_host(const Run& run, const Settle& settle, int warmup, int reps) {
  if (reps < 1) throw std::invalid_argument("time_host: reps must be at least 1");
  std::vector<double> ms;
  for (int r = 0; r < warmup + reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    const auto t1 = std::chrono::steady_clock::now();
    settle();
    if (r >= warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return {median(ms), *std::min_element(ms.begin(), ms.end()), reps};
}

/// "2026-11-23T10:00:00Z"
inline std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

/// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs), driver 13.0, runtime 13.0"
inline std::string device_description() {
  int dev = 0, driver = 0, runtime = 0;
  DYNASOAR_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  DYNASOAR_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  DYNASOAR_CUDA_CHECK(cudaDriverGetVersion(&driver));
  DYNASOAR_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  auto ver = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.multiProcessorCount) + " SMs), driver " + ver(driver) + ", runtime " +
         ver(runtime);
}

inline std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i != 0) s += ' ';
    s += argv[i];  // appended, not "literal" + string: GCC 12 warns falsely (-Wrestrict) on that
  }
  return s;
}

/// Writes "# key: value" metadata lines, then a header and rows, to stdout
/// and (if a path is given) to a file.
class Csv {
 public:
  Csv(const std::string& path, const std::vector<std::string>& meta, const std::string& header) {
    if (!path.empty()) {
      file_.open(path);
      if (!file_) throw std::runtime_error("cannot write " + path);
    }
    for (const auto& m : meta) line("# " + m);
    line(header);
  }
  void line(const std::string& s) {
    std::printf("%s\n", s.c_str());
    std::fflush(stdout);
    if (file_.is_open()) file_ << s << '\n' << std::flush;
  }

 private:
  std::ofstream file_;
};

/// A repeatable option such as `--only NAME` whose values must be among
/// `choices`; nothing chosen means all.
struct Selection {
  std::string option;
  std::vector<std::string> choices;
  std::vector<std::string> chosen;
  bool wants(const std::string& value) const {
    return chosen.empty() || std::find(chosen.begin(), chosen.end(), value) != chosen.end();
  }
};

/// The options every benchmark takes.
struct Args {
  bool quick = false;
  std::string csv;
};

/// Parses --quick, --csv FILE and the selections. On anything else (an
/// unknown option, a missing value, a value not among the choices) prints
/// what is wrong and the usage, and returns false.
inline bool parse_args(int argc, char** argv, Args& args, const std::vector<Selection*>& selections) {
  auto usage = [&](const std::string& problem) {
    std::string u = "usage: " + std::string(argv[0]) + " [--quick] [--csv FILE]";
    for (const Selection* s : selections) u += " [" + s->option + " NAME]...";
    for (const Selection* s : selections) {
      u += "\n  " + s->option + ":";
      for (const std::string& c : s->choices) u += " " + c;
    }
    std::fprintf(stderr, "%s\n%s\n", problem.c_str(), u.c_str());
    return false;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      args.quick = true;
      continue;
    }
    if (i + 1 >= argc) return usage("missing value or unknown option: " + a);
    if (a == "--csv") {
      args.csv = argv[++i];
      continue;
    }
    Selection* s = nullptr;
    for (Selection* candidate : selections)
      if (candidate->option == a) s = candidate;
    if (s == nullptr) return usage("unknown option: " + a);
    const std::string value = argv[++i];
    if (std::find(s->choices.begin(), s->choices.end(), value) == s->choices.end())
      return usage("unknown value for " + a + ": " + value);
    s->chosen.push_back(value);
  }
  return true;
}

inline std::string fmt(double v, const char* spec = "%.4g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

}  // namespace dynasoar::bench
