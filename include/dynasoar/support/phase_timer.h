// Time per named phase of a simulation loop without waiting for the GPU
// between phases: in a CUDA build each mark records an event on the stream
// and the elapsed times are read back in batches; in a host build the
// executor is synchronous and a mark reads the clock. pause() and resume()
// cut time out of the measurement (a frame copied to the host for a picture,
// a window waiting for a key): it counts towards no phase.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "dynasoar/platform/config.h"
#include "dynasoar/platform/error.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar::support {

/// What PhaseTimer::stats() gives for one phase.
struct PhaseStats {
  double total_ms = 0;    ///< Milliseconds over all marks of the phase.
  double median_ms = 0;   ///< Median of the milliseconds of one mark (one step's share, in a loop).
  std::size_t count = 0;  ///< How many marks named the phase.
};

/// Times the named phases of a loop: CUDA events on the stream around GPU
/// work in a CUDA build, the steady clock in a host build. Host code; the
/// marks do not wait for the GPU, the results do. Keeps one number per mark
/// (for the medians): 8 bytes a mark.
///
/// start() once, then mark("name") after the work of each phase; a phase
/// may be marked many times (once per step) and its times add up.
class PhaseTimer {
 public:
  /// A timer of the work queued on `stream` (in a host build the stream is
  /// an empty tag). Nothing is timed before start().
  explicit PhaseTimer(platform::Stream stream = {}) : stream_(stream) {}
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  /// Releases the CUDA events not read yet.
  ~PhaseTimer() { release(); }

  /// Starts timing; the first phase begins now.
  void start() { push("", Kind::kMark); }

  /// Ends the phase that is running and names it `phase`: the work queued
  /// since the previous mark counts towards `phase`.
  void mark(const std::string& phase) {
    push(phase, Kind::kMark);
    if (marks_.size() >= kBatch) harvest();
  }

  /// Stops the clock: the work queued from now until resume() counts
  /// towards no phase and not towards total_ms(). The phase that was
  /// running goes on after resume() (its time before and after adds up).
  void pause() { push("", Kind::kPause); }
  /// Starts the clock again after pause().
  void resume() {
    push("", Kind::kResume);
    if (marks_.size() >= kBatch) harvest();
  }

  /// Milliseconds per phase so far, summed over all marks of each name
  /// (waits for the queued work).
  const std::map<std::string, double>& phases_ms() {
    harvest();
    return totals_;
  }
  /// Milliseconds from start() to the last mark, paused time left out
  /// (waits for the queued work).
  double total_ms() {
    harvest();
    return total_;
  }
  /// Total, median and count of every phase so far (waits for the queued work).
  std::map<std::string, PhaseStats> stats() {
    harvest();
    std::map<std::string, PhaseStats> out;
    for (auto& [phase, samples] : samples_) {
      PhaseStats& s = out[phase];
      s.total_ms = totals_[phase];
      s.count = samples.size();
      s.median_ms = median(samples);
    }
    return out;
  }

  /// Prints a table, a line per phase: name, total, median and count, then
  /// the total (waits for the queued work).
  void print(std::ostream& out) {
    for (const auto& [phase, s] : stats()) {
      char line[160];
      std::snprintf(line, sizeof line, "  %-20s %12.3f ms total %10.3f ms median %8zu marks\n",
                    phase.c_str(), s.total_ms, s.median_ms, s.count);
      out << line;
    }
    char line[96];
    std::snprintf(line, sizeof line, "  %-20s %12.3f ms\n", "total", total_);
    out << line;
  }

 private:
  static constexpr std::size_t kBatch = 512;
#if DYNASOAR_CUDA
  using Stamp = cudaEvent_t;
  Stamp now() {
    cudaEvent_t e = nullptr;
    DYNASOAR_CUDA_CHECK(cudaEventCreate(&e));
    DYNASOAR_CUDA_CHECK(cudaEventRecord(e, stream_.handle));
    return e;
  }
  static double ms_between(Stamp a, Stamp b) {
    DYNASOAR_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    DYNASOAR_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms;
  }
  static void drop(Stamp s) { cudaEventDestroy(s); }
#else
  using Stamp = std::chrono::steady_clock::time_point;
  static Stamp now() { return std::chrono::steady_clock::now(); }
  static double ms_between(Stamp a, Stamp b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  }
  static void drop(Stamp) {}
#endif

  enum class Kind { kMark, kPause, kResume };
  struct Mark {
    std::string phase;  // kMark: the phase that ends here
    Kind kind;
    Stamp stamp;
  };

  void push(const std::string& phase, Kind kind) { marks_.push_back(Mark{phase, kind, now()}); }

  // Folds all marks but the last into the totals; the last one starts the
  // next interval. The time of a phase accumulates in running_ms_ until its
  // mark names it; an interval that starts at a pause is dropped.
  void harvest() {
    for (std::size_t i = 1; i < marks_.size(); ++i) {
      if (marks_[i - 1].kind != Kind::kPause)
        running_ms_ += ms_between(marks_[i - 1].stamp, marks_[i].stamp);
      if (marks_[i].kind == Kind::kMark) {
        totals_[marks_[i].phase] += running_ms_;
        samples_[marks_[i].phase].push_back(running_ms_);
        total_ += running_ms_;
        running_ms_ = 0;
      }
    }
    if (marks_.size() > 1) {
      for (std::size_t i = 0; i + 1 < marks_.size(); ++i) drop(marks_[i].stamp);
      marks_.erase(marks_.begin(), marks_.end() - 1);
    }
  }
  void release() {
    for (auto& m : marks_) drop(m.stamp);
    marks_.clear();
  }
  // The middle value (the mean of the two middle ones for an even count).
  static double median(std::vector<double> v) {
    if (v.empty()) return 0;
    const std::size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
    if (v.size() % 2 == 1) return v[mid];
    const double upper = v[mid];
    const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
    return (lower + upper) / 2;
  }

  platform::Stream stream_;
  std::vector<Mark> marks_;
  std::map<std::string, double> totals_;
  std::map<std::string, std::vector<double>> samples_;
  double total_ = 0;
  double running_ms_ = 0;  // the running phase's time up to the last harvested mark
};

}  // namespace dynasoar::support
