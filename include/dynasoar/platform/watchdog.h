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
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/error.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/names.h"
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

/// A watched operation as a handle describes it: plain data, as cheap to
/// make when the watchdog is off as when it is on. The names are the
/// compilers' strings of pretty_type_name and pretty_value_name; the
/// watchdog cuts them into text only when it is on.
struct WatchedOperation {
  const char* kind = "";          ///< "parallel_do" or "parallel_new"
  const char* type = nullptr;     ///< pretty_type_name<T>() of the class the call names
  const char* method = nullptr;   ///< a do-all's pretty_value_name<Method>(); null for parallel_new
  const char* runs_on = nullptr;  ///< pretty_type_name of the subclass this kernel visits, if not T
  std::size_t count = 0;          ///< parallel_new: the objects it makes
  /// A do-all's objects if known when it is queued, else -1 and the live
  /// slots of its snapshot, read when the watchdog fires: the low `slots`
  /// bits of each of the *list_length words at `snapshots` (back-end memory).
  long long objects = -1;
  const std::uint32_t* list_length = nullptr;  ///< see `objects`
  const std::uint64_t* snapshots = nullptr;    ///< see `objects`
  unsigned slots = 0;                          ///< see `objects`
};

/// The watch of a parallel_new of n objects of T.
template <class T>
WatchedOperation watched_new(std::size_t n) {
  WatchedOperation op;
  op.kind = "parallel_new";
  op.type = pretty_type_name<T>();
  op.count = n;
  return op;
}

/// The watch of a do-all of Method over T whose kernel visits the objects
/// of the class named `runs_on` (a pretty_type_name; T itself if null or
/// T's). What it visits is left for the caller to fill in.
template <class T, auto Method>
WatchedOperation watched_do_all(const char* runs_on) {
  WatchedOperation op;
  op.kind = "parallel_do";
  op.type = pretty_type_name<T>();
  op.method = pretty_value_name<Method>();
  if (runs_on != op.type) op.runs_on = runs_on;
  return op;
}

/// "parallel_do<Body, &Body::move>" (with " on its subclass X" where the
/// kernel visits a subclass) or "parallel_new<Body>(1000)".
inline std::string operation_name(const WatchedOperation& op) {
  std::string name = std::string(op.kind) + "<" + type_name(op.type);
  if (op.method != nullptr) name += ", " + method_name(op.method);
  name += ">";
  if (op.method == nullptr) name += "(" + std::to_string(op.count) + ")";
  if (op.runs_on != nullptr) name += " on its subclass " + type_name(op.runs_on);
  return name;
}

/// How far a do-all got, given the objects counted as finished; empty for
/// a parallel_new. Reads the snapshot while the do-all runs.
inline std::string operation_progress(const WatchedOperation& op, unsigned long long finished) {
  if (op.method == nullptr) return {};
  long long total = op.objects;
  std::uint32_t n = 0;
  if (total < 0 && op.list_length != nullptr && copy_while_running(&n, op.list_length, sizeof(n))) {
    std::vector<std::uint64_t> snapshot(n);
    if (n == 0 || copy_while_running(snapshot.data(), op.snapshots, n * sizeof(std::uint64_t))) {
      total = 0;
      for (const std::uint64_t w : snapshot) total += popc(w & low_bits(op.slots));
    }
  }
  // A thread adds its finished objects in batches (kProgressBatch): while
  // the do-all runs the count is a lower bound.
  const std::string name = type_name(op.runs_on != nullptr ? op.runs_on : op.type);
  if (total < 0)
    return "At least " + std::to_string(finished) + " " + name +
           " objects have finished the method; how many it visits could not be read.";
  const auto all = static_cast<unsigned long long>(total);
  return "At least " + std::to_string(finished) + " of the " + std::to_string(all) + " " + name +
         " objects it visits have finished the method; up to " +
         std::to_string(all > finished ? all - finished : 0) +
         " have not (those that wait, and those whose thread waits before them).";
}

/// Stops the program when an operation runs past a time limit (see the file
/// comment). Default-constructed it is off and costs nothing. Move-only;
/// host code.
class Watchdog {
  struct State;

 public:
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

  /// One watched operation, from its construction (before the operation's
  /// work is queued) to its destruction (after it is queued; on the host,
  /// after it ran), which marks its end in stream order.
  class Scope {
   public:
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    /// Marks the end of the operation in stream order (nothing when off).
    ~Scope();
    /// The progress counters the operation's kernel adds to
    /// (count_finished), zeroed in stream order; null when the watchdog is off.
    unsigned long long* progress() const { return progress_; }

   private:
    friend class Watchdog;
    Scope(State* state, const WatchedOperation& op);
    State* state_;
    unsigned long long* progress_ = nullptr;
  };

  /// Watches the operation `op` that the caller queues (or runs) next, until
  /// the returned scope ends.
  Scope watch(const WatchedOperation& op) { return Scope(state_.get(), op); }

 private:
  // The number of operations that may be queued and unfinished at once; one
  // more waits for the stream first.
  static constexpr std::size_t kRing = 64;

  struct Queued {
    WatchedOperation op;
    unsigned long long* counters = nullptr;
    bool ended = false;
#if DYNASOAR_CUDA
    cudaEvent_t done = nullptr;
#endif
  };

  // The report of fire(), made on a thread of its own (see there).
  struct Report {
    std::mutex mutex;
    std::condition_variable made;
    bool ready = false;
    std::string text;
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
    std::vector<Queued> queued;  // oldest first; not yet seen finished (at most kRing)
    Clock::time_point oldest_since;
#if DYNASOAR_CUDA
    std::vector<cudaEvent_t> spare_events;
#endif
    std::thread monitor;  // last: starts once the members above exist

    State(double seconds, Stream s)
        : limit(seconds),
          stream(s),
          device(device_now()),
          counters(kRing * kProgressWords),
          monitor([this] { watch(); }) {}
    // The device the monitor queries events on: the caller's.
    static int device_now() {
#if DYNASOAR_CUDA
      return detail::current_device();
#else
      return 0;
#endif
    }
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
      for (Queued& q : queued)
        if (q.done != nullptr) (void)cudaEventDestroy(q.done);
      for (cudaEvent_t e : spare_events) (void)cudaEventDestroy(e);
#endif
    }

    unsigned long long* begin(const WatchedOperation& op) {
      // Every slot in use: wait for the stream. That wait ends when the
      // queued operations do, or the monitor, which keeps timing the oldest
      // meanwhile, ends the process.
      if (queued_count() >= kRing) {
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
      Queued q;
      q.op = op;
      q.counters = slot;
      const std::lock_guard<std::mutex> lock(mutex);
      if (queued.empty()) oldest_since = Clock::now();
      queued.push_back(q);
      return slot;
    }

    // Never throws (it runs in Scope's destructor): an event that cannot be
    // made or recorded leaves the operation unwatched, and the stream's
    // error reaches the caller through its next CUDA call.
    void end() noexcept {
      const std::lock_guard<std::mutex> lock(mutex);
      if (queued.empty()) return;
      Queued& q = queued.back();
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
      q.done = e;
      q.ended = true;
      if (e == nullptr) {  // unwatched: treated as finished
        (void)cudaGetLastError();
        queued.pop_back();
        if (queued.empty()) oldest_since = Clock::now();
      }
#else
      // A host operation has finished when it returns.
      q.ended = true;
      retire_finished();
#endif
    }

    std::size_t queued_count() {
      const std::lock_guard<std::mutex> lock(mutex);
      return queued.size();
    }

    // Drops the oldest operations that have finished (mutex held).
    void retire_finished() {
      std::size_t done = 0;
      while (done < queued.size() && queued[done].ended) {
#if DYNASOAR_CUDA
        const cudaError_t e = cudaEventQuery(queued[done].done);
        if (e == cudaErrorNotReady) break;
        // Any other error is the stream's (a kernel that failed): the
        // waiting host thread reports it; the operation is over.
        if (e != cudaSuccess) (void)cudaGetLastError();
        spare_events.push_back(queued[done].done);
#endif
        ++done;
      }
      if (done == 0) return;
      queued.erase(queued.begin(), queued.begin() + static_cast<std::ptrdiff_t>(done));
      oldest_since = Clock::now();
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
    // of the snapshot run on a thread of their own, waited for a few
    // seconds: the report goes out even if a copy cannot be made.
    [[noreturn]] void fire(const Queued& q, std::chrono::duration<double> ran) {
      auto report = std::make_shared<Report>();
      std::thread([report, op = q.op, counters = q.counters] {
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
          text = operation_progress(op, finished);
        }
        const std::lock_guard<std::mutex> lock(report->mutex);
        report->text = std::move(text);
        report->ready = true;
        report->made.notify_one();
      }).detach();
      std::string detail = "its progress could not be read";
      {
        std::unique_lock<std::mutex> lock(report->mutex);
        if (report->made.wait_for(lock, std::chrono::seconds(5), [&] { return report->ready; }))
          detail = report->text;
      }
      char seconds[64];
      std::snprintf(seconds, sizeof(seconds), "%.1f s (the limit is %.3g s)", ran.count(),
                    limit.count());
      const std::string message =
          "\ndynasoar watchdog: " + operation_name(q.op) + " has run for " + seconds +
          " and has not finished." + (detail.empty() ? std::string() : "\n  " + detail) +
          "\n  The usual cause is a method or constructor that waits for another object: "
          "a loop on a field that another thread writes, or a barrier across objects. A method "
          "may wait only for work that another thread has already begun and that finishes "
          "without waiting, and must read what it waits for with an atomic load "
          "(docs/guide/operations.md, \"What a method may wait for\")."
          "\n  A kernel or thread that does not end cannot be stopped otherwise: the program "
          "ends with exit status " +
          std::to_string(kWatchdogExitCode) +
          ". The limit is HandleOptions::watchdog_seconds (or the environment variable "
          "DYNASOAR_WATCHDOG).\n";
      std::fputs(message.c_str(), stderr);
      std::fflush(stderr);
      std::fflush(stdout);
      std::_Exit(kWatchdogExitCode);
    }
  };

  std::unique_ptr<State> state_;
};

inline Watchdog::Scope::Scope(State* state, const WatchedOperation& op) : state_(state) {
  if (state_ != nullptr) progress_ = state_->begin(op);
}
inline Watchdog::Scope::~Scope() {
  if (state_ != nullptr) state_->end();
}

}  // namespace dynasoar::platform
