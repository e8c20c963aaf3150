// The watchdog of the blocking operations: a parallel_do or parallel_new
// that runs longer than a limit stops the program with a message that says
// what was running, how far it got, and what usually causes it. A kernel
// that never ends (a method that waits for something that never comes)
// cannot be interrupted from the host, and a host thread cannot be
// cancelled either, so the watchdog writes its message to stderr and ends
// the process (std::_Exit, exit status kWatchdogExitCode): that is the only
// way a program that hangs can still tell its user why.
//
// One monitor thread per watchdog that is on. The handles tell it when an
// operation is queued (begin) and where it ends in stream order (end: an
// event on the GPU; on the host the operation has already finished). The
// monitor takes the oldest operation not yet seen finished and fires when it
// has been the oldest for longer than the limit. Do-alls count the objects
// whose method returned into the progress counters begin() hands out.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/error.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/watchdog_base.h"

namespace dynasoar {
/// Exit status of a program that the watchdog stopped (HandleOptions::watchdog_seconds).
inline constexpr int kWatchdogExitCode = 70;
}  // namespace dynasoar

namespace dynasoar::platform {

/// Copies `bytes` from back-end memory to the host while kernels may still
/// run on other streams (on the GPU through a stream of its own that waits
/// for no other); false if it did not finish within `limit`.
inline bool copy_while_running(void* dst, const void* src, std::size_t bytes,
                               std::chrono::milliseconds limit = std::chrono::milliseconds(2000)) {
#if DYNASOAR_CUDA
  cudaStream_t side = nullptr;
  if (cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess) return false;
  bool ok = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, side) == cudaSuccess;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  cudaError_t state = cudaErrorNotReady;
  while (ok && (state = cudaStreamQuery(side)) == cudaErrorNotReady &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ok = ok && state == cudaSuccess;
  if (ok) (void)cudaStreamDestroy(side);  // a copy still pending keeps its stream
  return ok;
#else
  (void)limit;
  std::memcpy(dst, src, bytes);
  return true;
#endif
}

/// Stops the program when an operation runs past a time limit (see the file
/// comment). Default-constructed it is off and costs nothing. Move-only;
/// host code.
class Watchdog {
  struct State;

 public:
  /// Says, when the watchdog fires, how far the operation got: given the
  /// objects counted as finished, a sentence or two (may be empty). Runs on
  /// the monitor thread while the operation still runs.
  using Describe = std::function<std::string(unsigned long long finished)>;

  Watchdog() = default;
  /// A watchdog with a limit of `seconds` (off if not positive) for the
  /// operations a handle queues on `s`.
  Watchdog(double seconds, Stream s) {
    if (seconds > 0.0) state_ = std::make_unique<State>(seconds, s);
  }
  /// Takes over `other`'s monitor and queue; `other` is left off.
  Watchdog(Watchdog&& other) noexcept = default;
  /// Stops this watchdog's monitor, then takes over `other`'s.
  Watchdog& operator=(Watchdog&& other) noexcept = default;
  /// Stops the monitor (it fires no more).
  ~Watchdog() = default;

  /// Whether it is on.
  bool on() const { return state_ != nullptr; }
  /// The limit in seconds (0 when off).
  double limit_seconds() const { return state_ ? state_->limit.count() : 0.0; }

  /// One watched operation, from its construction (before the operation's
  /// work is queued) to its destruction (after it is queued; on the host,
  /// after it ran), which marks its end in stream order.
  class Scope {
   public:
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope();
    /// The progress counters the operation's kernel adds to
    /// (count_finished), zeroed in stream order; null when the watchdog is off.
    unsigned long long* progress() const { return progress_; }

   private:
    friend class Watchdog;
    Scope(State* state, std::string what, Describe describe);
    State* state_;
    unsigned long long* progress_ = nullptr;
  };

  /// Watches the operation that the caller queues (or runs) next, until
  /// the returned scope ends. `what()` names it and `describe()` makes its
  /// Describe; both are called only when the watchdog is on, so that an
  /// operation pays nothing for its name otherwise.
  template <class What, class MakeDescribe>
  Scope watch(What&& what, MakeDescribe&& describe) {
    if (!state_) return Scope(nullptr, {}, {});
    return Scope(state_.get(), what(), describe());
  }

 private:
  // The number of operations that may be queued and unfinished at once; one
  // more waits for the stream first.
  static constexpr std::size_t kRing = 64;

  struct Operation {
    std::string what;
    Describe describe;
    unsigned long long* counters = nullptr;
    bool ended = false;
#if DYNASOAR_CUDA
    cudaEvent_t done = nullptr;
#endif
  };

  struct State {
    using Clock = std::chrono::steady_clock;
    std::chrono::duration<double> limit;
    Stream stream;
    int device = 0;
    Buffer<unsigned long long> counters;  // kRing slots of kProgressWords
    std::size_t next_slot = 0;
    std::mutex mutex;
    std::condition_variable wake;
    bool stop = false;
    std::deque<Operation> queued;  // oldest first; not yet seen finished
    Clock::time_point oldest_since;
#if DYNASOAR_CUDA
    std::vector<cudaEvent_t> spare_events;
#endif
    std::thread monitor;  // last: starts once the members above exist

    State(double seconds, Stream s)
        : limit(seconds),
          stream(s),
          device(current_device()),
          counters(kRing * kProgressWords),
          monitor([this] { watch(); }) {}
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    ~State() {
      {
        const std::lock_guard<std::mutex> lock(mutex);
        stop = true;
      }
      wake.notify_one();
      monitor.join();
#if DYNASOAR_CUDA
      for (Operation& op : queued)
        if (op.done != nullptr) (void)cudaEventDestroy(op.done);
      for (cudaEvent_t e : spare_events) (void)cudaEventDestroy(e);
#endif
    }

    unsigned long long* begin(std::string what, Describe describe) {
      if (queued_count() >= kRing) {  // every slot in use: wait for the stream
        synchronize(stream);
        const std::lock_guard<std::mutex> lock(mutex);
        retire_finished();
      }
      unsigned long long* slot = counters.data() + (next_slot++ % kRing) * kProgressWords;
#if DYNASOAR_CUDA
      DYNASOAR_CUDA_CHECK(
          cudaMemsetAsync(slot, 0, kProgressWords * sizeof(unsigned long long), stream.handle));
#else
      for (unsigned i = 0; i < kProgressWords; ++i) atomic_store(slot + i, 0ull);
#endif
      Operation op;
      op.what = std::move(what);
      op.describe = std::move(describe);
      op.counters = slot;
      const std::lock_guard<std::mutex> lock(mutex);
      if (queued.empty()) oldest_since = Clock::now();
      queued.push_back(std::move(op));
      return slot;
    }

    static int current_device() {
      int d = 0;
#if DYNASOAR_CUDA
      DYNASOAR_CUDA_CHECK(cudaGetDevice(&d));
#endif
      return d;
    }

    // Never throws (it runs in Scope's destructor): an event that cannot be
    // made or recorded leaves the operation unwatched, and the stream's
    // error reaches the caller through its next CUDA call.
    void end() noexcept {
      const std::lock_guard<std::mutex> lock(mutex);
      if (queued.empty()) return;
      Operation& op = queued.back();
#if DYNASOAR_CUDA
      cudaEvent_t e = nullptr;
      if (!spare_events.empty()) {
        e = spare_events.back();
        spare_events.pop_back();
      } else if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
        e = nullptr;
      }
      if (e != nullptr && cudaEventRecord(e, stream.handle) != cudaSuccess) {
        (void)cudaEventDestroy(e);
        e = nullptr;
      }
      op.done = e;
      op.ended = true;
      if (e == nullptr) {  // unwatched: treated as finished
        (void)cudaGetLastError();
        queued.pop_back();
        if (queued.empty()) oldest_since = Clock::now();
      }
#else
      // A host operation has finished when it returns.
      op.ended = true;
      retire_finished();
#endif
    }

    std::size_t queued_count() {
      const std::lock_guard<std::mutex> lock(mutex);
      return queued.size();
    }

    // Drops the oldest operations that have finished (mutex held).
    void retire_finished() {
      while (!queued.empty() && queued.front().ended) {
#if DYNASOAR_CUDA
        const cudaError_t e = cudaEventQuery(queued.front().done);
        if (e == cudaErrorNotReady) break;
        // Any other error is the stream's (a kernel that failed): the
        // waiting host thread reports it; the operation is over.
        if (e != cudaSuccess) (void)cudaGetLastError();
        spare_events.push_back(queued.front().done);
#endif
        queued.pop_front();
        oldest_since = Clock::now();
      }
    }

    void watch() {
#if DYNASOAR_CUDA
      if (cudaSetDevice(device) != cudaSuccess) return;
#endif
      // Polls a few times per limit, at most every 100 ms: an operation is
      // seen finished that much late, which only shortens its time.
      const auto poll = std::chrono::duration_cast<std::chrono::milliseconds>(std::clamp(
          limit / 20, std::chrono::duration<double>(0.001), std::chrono::duration<double>(0.1)));
      std::unique_lock<std::mutex> lock(mutex);
      while (!stop) {
        wake.wait_for(lock, poll);
        if (stop) return;
        retire_finished();
        if (queued.empty() || Clock::now() - oldest_since < limit) continue;
        fire(queued.front(), Clock::now() - oldest_since);
      }
    }

    // Writes the report and ends the process. The reads of the counters and
    // of what `describe` copies run on a thread of their own, waited for a
    // few seconds: the report goes out even if a copy cannot be made.
    [[noreturn]] void fire(const Operation& op, std::chrono::duration<double> ran) {
      auto promise = std::make_shared<std::promise<std::string>>();
      std::future<std::string> progress = promise->get_future();
      std::thread([promise, counters = op.counters, describe = op.describe] {
        std::string text;
        unsigned long long words[kProgressWords] = {};
#if DYNASOAR_CUDA
        const bool read = copy_while_running(words, counters, sizeof(words));
#else
        // Host memory that the operation's threads still add to.
        for (unsigned i = 0; i < kProgressWords; ++i) words[i] = atomic_load(counters + i);
        const bool read = true;
#endif
        if (read) {
          unsigned long long finished = 0;
          for (unsigned i = 0; i < kProgressWords; i += kProgressStride) finished += words[i];
          text = describe ? describe(finished) : std::string();
        }
        promise->set_value(std::move(text));
      }).detach();
      std::string detail = "its progress could not be read";
      if (progress.wait_for(std::chrono::seconds(5)) == std::future_status::ready)
        detail = progress.get();
      char seconds[64];
      std::snprintf(seconds, sizeof(seconds), "%.1f s (the limit is %.3g s)", ran.count(),
                    limit.count());
      const std::string message =
          "\ndynasoar watchdog: " + op.what + " has run for " + seconds + " and has not finished." +
          (detail.empty() ? std::string() : "\n  " + detail) +
          "\n  The usual cause is a method or constructor that waits for another object: "
          "a loop on a field that another thread "
          "writes, or a barrier across objects. A method may wait only for "
          "work that another thread has already "
          "begun and that finishes without waiting, and must read what it "
          "waits for with an atomic load "
          "(docs/guide/operations.md, \"What a method may wait for\")."
          "\n  A kernel or thread that does not end cannot be stopped "
          "otherwise: the program ends with exit status " +
          std::to_string(kWatchdogExitCode) +
          ". The limit is HandleOptions::watchdog_seconds (or the "
          "environment variable DYNASOAR_WATCHDOG).\n";
      std::fputs(message.c_str(), stderr);
      std::fflush(stderr);
      std::fflush(stdout);
      std::_Exit(kWatchdogExitCode);
    }
  };

  std::unique_ptr<State> state_;
};

inline Watchdog::Scope::Scope(State* state, std::string what, Describe describe) : state_(state) {
  if (state_ != nullptr) progress_ = state_->begin(std::move(what), std::move(describe));
}
inline Watchdog::Scope::~Scope() {
  if (state_ != nullptr) state_->end();
}

}  // namespace dynasoar::platform
