// Time per named phase of a simulation loop without waiting for the GPU
// between phases: in a CUDA build each mark records an event on the stream
// and the elapsed times are read back in batches; in a host build the
// executor is synchronous and a mark reads the clock.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "platform/config.h"
#include "platform/error.h"
#include "platform/memory.h"

namespace dynasoar::example {

class PhaseTimer {
 public:
  explicit PhaseTimer(platform::Stream stream) : stream_(stream) {}
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  ~PhaseTimer() { release(); }

  /// Starts timing; the first phase begins now.
  void start() { push(""); }

  /// Ends the phase that is running and names it `phase`: the work queued
  /// since the previous mark counts towards `phase`.
  void mark(const std::string& phase) {
    push(phase);
    if (marks_.size() >= kBatch) harvest();
  }

  /// Milliseconds per phase so far, summed over all marks of each name
  /// (waits for the queued work).
  const std::map<std::string, double>& phases_ms() {
    harvest();
    return totals_;
  }
  /// Milliseconds from start() to the last mark.
  double total_ms() {
    harvest();
    return total_;
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

  void push(const std::string& phase) { marks_.emplace_back(phase, now()); }

  // Folds all marks but the last into the totals; the last one starts the next phase.
  void harvest() {
    for (std::size_t i = 1; i < marks_.size(); ++i) {
      const double ms = ms_between(marks_[i - 1].second, marks_[i].second);
      totals_[marks_[i].first] += ms;
      total_ += ms;
    }
    if (marks_.size() > 1) {
      for (std::size_t i = 0; i + 1 < marks_.size(); ++i) drop(marks_[i].second);
      marks_.erase(marks_.begin(), marks_.end() - 1);
    }
  }
  void release() {
    for (auto& m : marks_) drop(m.second);
    marks_.clear();
  }

  platform::Stream stream_;
  std::vector<std::pair<std::string, Stamp>> marks_;
  std::map<std::string, double> totals_;
  double total_ = 0;
};

}  // namespace dynasoar::example
