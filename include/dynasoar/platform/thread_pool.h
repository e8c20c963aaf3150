// The host build's threads: a persistent pool that the executor
// (dynasoar/platform/executor.h) runs its loops on, so that an operation wakes
// threads that already exist instead of starting new ones (a thread start
// costs as much as a small do-all).
//
// A call hands its tasks to a "gang": the calling thread plus pool threads
// that were idle, taken for this call alone. Task t runs on participant
// t % participants, a fixed assignment, so a loop split into as many chunks
// as it has participants runs each chunk on its own thread. Two kinds:
//
// - shared (parallel_for): any number of idle threads, at most one per
//   task; the pool is started lazily, up to host_threads() threads in all
//   with the caller. When none is idle (the pool is busy with other calls,
//   or the call is nested in a pool task and the outer call took them) the
//   caller runs every task itself.
// - concurrent (parallel_workers): one thread per task, all running at
//   once. The pool grows to provide them (and keeps the new threads, up to
//   max_pooled_threads()); past that limit the call starts dedicated
//   threads for the rest and joins them at its end.
//
// Forward progress, for nested calls and calls from many host threads:
// (1) a call never waits for a pool thread to become free: acquire() takes
// the threads idle at that moment, creates others, and never blocks on busy
// ones; (2) a taken thread runs only this call's share and goes back to the
// pool only after the caller saw it finish, so a caller waits for nothing
// but its own tasks; (3) no lock is held while a task runs. So a call waits
// only for calls nested in its own tasks, never for an enclosing or an
// unrelated one: the waits follow the (finite) nesting and cannot form a
// cycle. In a concurrent call every task has a thread of its own from the
// start, so tasks that wait for one another progress as on dedicated
// threads. (Tasks that wait for work of some other call are the caller's
// business, as with dedicated threads.) Idle threads sleep on a condition
// variable; nothing spins.
//
// The pool starts with the first call that needs a thread and is joined at
// process exit (its static destructor); calls made after that, from other
// static destructors, or in the child of a fork(), run as if it were empty.
// Threads still running a task at exit are left running, not joined: a task
// that called exit() while the others wait for it would otherwise hang the
// exit.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#endif

namespace dynasoar::platform {

/// Upper limit of host workers in parallel_workers (each runs on an OS thread of its own).
inline constexpr std::size_t kMaxHostWorkers = 1024;

/// Hardware threads of the host; the number of threads a host loop uses at
/// most. Computed once: the C library reads it from /sys on every query.
inline unsigned host_threads() {
  static const unsigned n = [] {
    const unsigned h = std::thread::hardware_concurrency();
    return h == 0 ? 1u : h;
  }();
  return n;
}

namespace detail {

/// Pool threads kept after a call grew the pool: one parallel_workers call
/// of the largest size next to loops of every hardware thread. Beyond it a
/// call's extra threads are dedicated ones, so that many concurrent large
/// calls do not leave thousands of idle threads behind.
inline std::size_t max_pooled_threads() { return kMaxHostWorkers + host_threads(); }

/// The tasks of one call: body(t) for t in [0, tasks). Lives on the
/// caller's stack until every participant has finished.
class Gang {
 public:
  template <class Body>
  Gang(std::size_t tasks, const Body& body)
      : run_([](const void* b, std::size_t t) { (*static_cast<const Body*>(b))(t); }),
        body_(&body),
        tasks_(tasks) {}

  /// Tasks first, first + stride, ...; an exception ends only its own task.
  void run_share(std::size_t first, std::size_t stride) noexcept {
    for (std::size_t t = first; t < tasks_; t += stride) {
      try {
        run_(body_, t);
      } catch (...) {
        record(t, std::current_exception());
      }
    }
  }

  /// After every participant finished: rethrows the exception of the
  /// lowest task that threw, so that which one the caller sees does not
  /// depend on timing.
  void rethrow_if_failed() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void record(std::size_t t, std::exception_ptr e) noexcept {
    const std::lock_guard<std::mutex> lock(error_mutex_);
    if (t < error_task_) {
      error_task_ = t;
      error_ = std::move(e);
    }
  }

  void (*run_)(const void*, std::size_t);
  const void* body_;
  std::size_t tasks_;
  std::mutex error_mutex_;
  std::size_t error_task_ = std::numeric_limits<std::size_t>::max();
  std::exception_ptr error_;
};

/// One OS thread that runs a share of a gang when given one, and sleeps
/// otherwise. Pool threads live until process exit; dedicated ones until
/// their call ends.
class GangThread {
 public:
  GangThread() : thread_([this] { loop(); }) {}
  GangThread(const GangThread&) = delete;
  GangThread& operator=(const GangThread&) = delete;
  ~GangThread() { stop_and_join(); }

  void assign(Gang* gang, std::size_t first, std::size_t stride) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      gang_ = gang;
      first_ = first;
      stride_ = stride;
    }
    wake_.notify_one();
  }

  void wait_done() {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return gang_ == nullptr; });
  }

  /// Whether a share is assigned and not yet finished.
  bool busy() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return gang_ != nullptr;
  }

  /// At process exit, for a thread still running a share (a task that waits
  /// for another that called exit() never ends): it is asked to stop when
  /// the share ends and detached, never joined. The caller must then leak
  /// this object, which the thread may still use.
  void abandon() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    if (thread_.joinable()) thread_.detach();
  }

  void stop_and_join() {
    if (!thread_.joinable()) return;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    // exit() called from a task of this thread: it cannot join itself.
    if (thread_.get_id() == std::this_thread::get_id())
      thread_.detach();
    else
      thread_.join();
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return gang_ != nullptr || stop_; });
      if (gang_ == nullptr) return;  // stopped while idle
      Gang* const gang = gang_;
      const std::size_t first = first_, stride = stride_;
      lock.unlock();
      gang->run_share(first, stride);
      lock.lock();
      gang_ = nullptr;  // the gang may be gone once the caller sees this
      lock.unlock();
      // After the unlock: *this outlives the caller's wait (pool threads live
      // on; a dedicated one is joined, so this call returns first).
      done_.notify_one();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;  // the thread waits for a share or a stop
  std::condition_variable done_;  // the caller waits for the share to finish
  Gang* gang_ = nullptr;          // non-null while a share is assigned and not finished
  std::size_t first_ = 0, stride_ = 1;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

/// Set once the pool must not be used: it was joined at process exit, or
/// this process is the child of a fork(), which copies no thread but the
/// caller (GoogleTest's death tests fork). Constant-initialised, so valid
/// during every static destructor.
inline std::atomic<bool> host_pool_unusable{false};
inline std::atomic<bool> host_pool_forked{false};

/// The idle threads and all threads of the pool.
class HostThreadPool {
 public:
  /// The process's pool, or nullptr when it is unusable (see above).
  static HostThreadPool* instance() {
    if (host_pool_unusable.load(std::memory_order_acquire)) return nullptr;
    static HostThreadPool pool;
    return &pool;
  }

  HostThreadPool() {
#if defined(__unix__) || defined(__APPLE__)
    (void)pthread_atfork(nullptr, nullptr, [] {
      host_pool_forked.store(true, std::memory_order_relaxed);
      host_pool_unusable.store(true, std::memory_order_relaxed);
    });
#endif
  }
  HostThreadPool(const HostThreadPool&) = delete;
  HostThreadPool& operator=(const HostThreadPool&) = delete;

  ~HostThreadPool() {
    host_pool_unusable.store(true, std::memory_order_release);
    if (host_pool_forked.load(std::memory_order_relaxed)) {
      // A forked child has none of these threads (nor consistent locks): leave them be.
      for (auto& t : threads_) (void)t.release();
      return;
    }
    std::vector<std::unique_ptr<GangThread>> threads;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      threads.swap(threads_);
      idle_.clear();
    }
    // exit() called while a call's tasks run (from one of them, or from
    // another thread): the other tasks may wait for one that will never
    // finish, so their threads are abandoned, not joined; the process ends
    // with them. Idle threads are joined.
    for (auto& t : threads) {
      if (t->busy())
        t.release()->abandon();
      else
        t->stop_and_join();
    }
  }

  /// Appends up to `want` threads to `crew`, taken for the caller alone:
  /// idle ones first, then new ones while the pool has fewer than `limit`
  /// threads. Returns without waiting for any thread to become idle. A
  /// thread that cannot be started is left out (fewer are returned).
  void acquire(std::size_t want, std::size_t limit, std::vector<GangThread*>& crew) {
    std::size_t grow = 0;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      const std::size_t take = std::min(want, idle_.size());
      crew.insert(crew.end(), idle_.end() - static_cast<std::ptrdiff_t>(take), idle_.end());
      idle_.resize(idle_.size() - take);
      if (want > take && limit > reserved_) grow = std::min(want - take, limit - reserved_);
      reserved_ += grow;  // counted now, so that concurrent callers do not overshoot `limit`
    }
    if (grow == 0) return;
    // Started outside the lock: other callers need not wait for thread starts.
    std::vector<std::unique_ptr<GangThread>> made;
    made.reserve(grow);
    try {
      while (made.size() < grow) made.push_back(std::make_unique<GangThread>());
    } catch (...) {  // out of threads or memory: the caller makes do with fewer
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    reserved_ -= grow - made.size();
    threads_.reserve(threads_.size() + made.size());
    idle_.reserve(reserved_);  // release() then cannot throw
    for (auto& t : made) {
      crew.push_back(t.get());
      threads_.push_back(std::move(t));
    }
  }

  /// Returns threads taken by acquire() once their shares are done.
  void release(const std::vector<GangThread*>& crew) noexcept {
    const std::lock_guard<std::mutex> lock(mutex_);
    idle_.insert(idle_.end(), crew.begin(), crew.end());  // capacity reserved in acquire()
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<GangThread>> threads_;  // every pool thread (owner)
  std::vector<GangThread*> idle_;                     // a stack: the most recently used first
  std::size_t reserved_ = 0;                          // threads_ plus those being started
};

/// Runs body(t) for every t in [0, tasks) on the caller and threads of the
/// pool, task t on participant t % participants (see the file comment).
/// `concurrent`: every task on a thread of its own, all at once (dedicated
/// threads where the pool cannot provide them); otherwise as many idle pool
/// threads as there are, and the caller alone if there are none. Returns
/// when every task has finished and rethrows the exception of the lowest
/// task that threw.
template <class Body>
void run_gang(std::size_t tasks, const Body& body, bool concurrent) {
  if (tasks <= 1) {
    if (tasks == 1) body(std::size_t{0});
    return;
  }
  Gang gang(tasks, body);
  const std::size_t want = tasks - 1;  // the caller is a participant
  std::vector<GangThread*> crew;
  crew.reserve(want);  // acquire() then does not throw once it took threads
  HostThreadPool* const pool = HostThreadPool::instance();
  if (pool != nullptr) {
    const std::size_t base = host_threads() - 1u;
    pool->acquire(want, concurrent ? std::max(base, max_pooled_threads()) : base, crew);
  }
  std::vector<std::unique_ptr<GangThread>> dedicated;
  if (concurrent && crew.size() < want) {
    try {
      dedicated.reserve(want - crew.size());
      while (crew.size() + dedicated.size() < want)
        dedicated.push_back(std::make_unique<GangThread>());
    } catch (...) {
      // Nothing is assigned yet: join the threads started, give back the
      // pool's, and report.
      dedicated.clear();
      if (pool != nullptr) pool->release(crew);
      throw;
    }
  }
  const std::size_t participants = 1 + crew.size() + dedicated.size();
  std::size_t next = 1;
  for (GangThread* t : crew) t->assign(&gang, next++, participants);
  for (auto& t : dedicated) t->assign(&gang, next++, participants);
  gang.run_share(0, participants);
  for (GangThread* t : crew) t->wait_done();
  for (auto& t : dedicated) t->wait_done();
  if (pool != nullptr) pool->release(crew);
  dedicated.clear();
  gang.rethrow_if_failed();
}

}  // namespace detail
}  // namespace dynasoar::platform
