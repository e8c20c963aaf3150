// The transport between GPUs: one NCCL communicator per rank, one GPU per
// rank. A CUDA build with NCCL only (DYNASOAR_NCCL, set by the CMake target
// dynasoar::nccl); run_ranks (run.h) picks it there.
//
// No NCCL call may hang the host: the communicator is created non-blocking
// (ncclConfig_t::blocking = 0), so every call returns at once (ncclSuccess
// or ncclInProgress), and each operation then waits by polling its stream
// (cudaStreamQuery) and the communicator (ncclCommGetAsyncError) until it is
// done, failed, or its deadline (default_timeout_seconds()) has passed. On
// an error or at the deadline the rank aborts its communicator
// (ncclCommAbort: kernels still waiting for a peer end) and throws
// DistributedError; the abort is shared by the ranks of a process (their
// polls fail at once) and, for ranks started by the launcher, announced
// through a file beside the rendezvous file, which the launcher also writes
// when a rank ends with an error. After an abort every operation throws at
// once. Design: docs/design/distributed-transport.md.
//
// Two ways to start the ranks:
// - NcclWorld: the ranks are threads of one process; rank r drives GPU r,
//   so the machine needs a GPU per rank (NCCL refuses two ranks on one GPU).
// - run_launched_rank: this process is one rank started by dynasoar_launch
//   (tools/launch), which sets DYNASOAR_RANK, DYNASOAR_RANKS and
//   DYNASOAR_RENDEZVOUS (a file path). Rank 0 creates NCCL's unique id and
//   writes it to that file; the others wait for the file and read it. Rank r
//   drives GPU r % (GPUs of its host).
//
// Several hosts: NCCL itself connects them (its bootstrap uses the network
// address inside the unique id); only the 128 bytes of the id must reach
// every rank. With a file system that every host mounts, start the ranks of
// each host with DYNASOAR_RENDEZVOUS naming the same file on it and
// DYNASOAR_RANK/DYNASOAR_RANKS numbering the ranks across the hosts; where
// MPI is available, rank 0 may instead send the id to the others with
// MPI_Bcast and pass it to NcclTransport's constructor. Only one host is
// tested.
#pragma once

#if !(DYNASOAR_CUDA && DYNASOAR_NCCL)
#error \
    "dynasoar/distributed/nccl_transport.h needs a CUDA build with NCCL: link the CMake target dynasoar::nccl (defined where NCCL is found), or use host_transport.h"
#else

#include <nccl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dynasoar/distributed/communicator.h"
#include "dynasoar/distributed/transport.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar::distributed {

namespace detail {

using NcclClock = std::chrono::steady_clock;

// "5 s", "2.5 s": a time limit as people write it.
inline std::string seconds_text(double seconds) {
  std::ostringstream out;
  out << seconds << " s";
  return out.str();
}

inline std::string nccl_text(ncclResult_t r, ncclComm_t comm) {
  std::string text = std::string("NCCL error: ") + ncclGetErrorString(r);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') text += std::string(" (") + last + ")";
  return text;
}

// The abort file of a launched run: its first line says why the run was
// aborted. Written once (link fails where it exists), read by every rank.
inline void write_abort_file(const std::string& path, const std::string& why) {
  if (path.empty()) return;
  const std::string part = path + ".part" + std::to_string(::getpid());
  {
    std::ofstream out(part, std::ios::trunc);
    if (!out) return;
    out << why << '\n';
  }
  (void)::link(part.c_str(), path.c_str());
  (void)std::remove(part.c_str());
}

inline bool read_abort_file(const std::string& path, std::string& why) {
  if (path.empty() || ::access(path.c_str(), F_OK) != 0) return false;
  std::ifstream in(path);
  std::getline(in, why);
  if (why.empty()) why = "another rank aborted the run";
  return true;
}

// What the ranks of one process share: the time limit, the abort state,
// which ranks have ended, and (ranks as threads) the communicators of the
// ranks that ended, which are destroyed together once every rank has
// ended, so that no rank frees buffers a peer may still read.
class NcclShared {
 public:
  NcclShared(int ranks, double timeout, std::string abort_file)
      : timeout_(timeout),
        abort_file_(std::move(abort_file)),
        ended_(new std::atomic<long long>[static_cast<std::size_t>(ranks)]),
        ranks_(ranks) {
    for (int r = 0; r < ranks; ++r) ended_[r].store(0);
  }

  double timeout() const { return timeout_; }
  int size() const { return ranks_; }

  // The first cause wins; the others' errors name it.
  void abort(const std::string& why) noexcept {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (aborted_.load()) return;
      why_ = why;
      aborted_.store(true);
    }
    try {
      write_abort_file(abort_file_, why);
    } catch (...) {
    }
  }

  // Whether the ranks were aborted (here, or by a rank of another process
  // through the abort file, checked at most every 20 ms), and why.
  bool aborted(std::string& why) {
    if (!aborted_.load() && !abort_file_.empty()) {
      const auto now = NcclClock::now();
      if (now >= next_file_check_) {
        next_file_check_ = now + std::chrono::milliseconds(20);
        std::string text;
        if (read_abort_file(abort_file_, text)) {
          std::lock_guard<std::mutex> lock(mutex_);
          if (!aborted_.load()) {
            why_ = text;
            aborted_.store(true);
          }
        }
      }
    }
    if (!aborted_.load()) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    why = why_;
    return true;
  }

  void finish(int rank) {
    const long long t = NcclClock::now().time_since_epoch().count();
    ended_[rank].store(t == 0 ? 1 : t);
  }
  // When `rank` ended (its clock count), 0 if it has not.
  long long ended_at(int rank) const { return ended_[rank].load(); }

  // Ranks as threads: the transport leaves its communicator here.
  bool keep(ncclComm_t comm) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!keeping_) return false;
    kept_.push_back(comm);
    return true;
  }
  std::vector<ncclComm_t> stop_keeping() {
    std::lock_guard<std::mutex> lock(mutex_);
    keeping_ = false;
    return std::move(kept_);
  }
  void start_keeping() { keeping_ = true; }

 private:
  double timeout_;
  std::string abort_file_;
  std::unique_ptr<std::atomic<long long>[]> ended_;
  int ranks_;
  std::mutex mutex_;
  std::atomic<bool> aborted_{false};
  std::string why_;
  NcclClock::time_point next_file_check_{};
  bool keeping_ = false;
  std::vector<ncclComm_t> kept_;
};

// Ends communicators that took part in no failed operation: ncclCommFinalize
// (non-blocking: it flushes this rank's work), polled until done, then
// ncclCommDestroy; a communicator that fails or does not finish within the
// time limit is aborted instead. Never throws.
inline void close_communicators(const std::vector<ncclComm_t>& comms, double timeout,
                                bool aborted) noexcept {
  std::vector<bool> finalizing(comms.size(), false);
  for (std::size_t i = 0; i < comms.size(); ++i) {
    if (aborted) continue;
    const ncclResult_t r = ncclCommFinalize(comms[i]);
    finalizing[i] = r == ncclSuccess || r == ncclInProgress;
  }
  const auto deadline = NcclClock::now() + std::chrono::duration_cast<NcclClock::duration>(
                                               std::chrono::duration<double>(timeout));
  for (std::size_t i = 0; i < comms.size(); ++i) {
    bool done = false;
    while (finalizing[i]) {
      ncclResult_t state = ncclSuccess;
      if (ncclCommGetAsyncError(comms[i], &state) != ncclSuccess) break;
      if (state == ncclSuccess) {
        done = true;
        break;
      }
      if (state != ncclInProgress || NcclClock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    // After ncclCommDestroy the handle is gone, whatever it returned.
    if (done)
      (void)ncclCommDestroy(comms[i]);
    else
      (void)ncclCommAbort(comms[i]);
  }
}

}  // namespace detail

/// One rank's side of NCCL: a non-blocking communicator on this rank's GPU
/// (see the header comment). Host code, used by one thread at a time.
class NcclTransport final : public Transport {
 public:
  /// Rank `rank` of `ranks` on GPU `device`: makes `device` current on the
  /// calling thread and creates the communicator of `id` (every rank calls
  /// this at the same time, each on its own thread or process). `shared`
  /// holds the abort state of this process's ranks and the time limit.
  /// Throws DistributedError if NCCL fails, a peer failed, or the
  /// communicator is not ready within the time limit.
  NcclTransport(const ncclUniqueId& id, int rank, int ranks, int device,
                std::shared_ptr<detail::NcclShared> shared)
      : shared_(std::move(shared)), rank_(rank), ranks_(ranks), device_(device) {
    try {
      setup();
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.blocking = 0;
      const ncclResult_t r = ncclCommInitRankConfig(&comm_, ranks, id, rank, &config);
      if (r != ncclSuccess && r != ncclInProgress) {
        const std::string cause = detail::nccl_text(r, comm_);
        fail("creating the communicator", cause, false);
      }
      wait("creating the communicator", nullptr, 0, false);
    } catch (...) {
      release();
      throw;
    }
  }

  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  ~NcclTransport() override {
    // Ranks as threads leave the communicator to their world, which ends
    // them all once every rank has ended (quickly: the rank that failed
    // first records its error before the others notice the abort).
    if (comm_ != nullptr && !shared_->keep(comm_)) {
      std::string why;
      const bool aborted = shared_->aborted(why);
      detail::close_communicators({comm_}, shared_->timeout(), aborted);
    }
    comm_ = nullptr;
    release();
  }

  int rank() const override { return rank_; }
  int size() const override { return ranks_; }
  const char* name() const override { return "NCCL"; }
  /// The GPU this rank drives.
  int device() const { return device_; }

  void exchange(const std::vector<Message>& sends, const std::vector<Message>& receives,
                platform::Stream s) override {
    const std::vector<int> peers = queue_exchange(sends, receives, s);
    if (!peers.empty()) wait("exchange", peers.data(), peers.size(), true);
  }

  // The same group queued without waiting for it: the caller's stream
  // waits for NCCL's (an event), and settle() or the next operation that
  // waits bounds the wait for it.
  void exchange_async(const std::vector<Message>& sends, const std::vector<Message>& receives,
                      platform::Stream s) override {
    const std::vector<int> peers = queue_exchange(sends, receives, s);
    if (peers.empty()) return;
    wait("exchange", peers.data(), peers.size(), false);  // queued, not yet run
    if (cudaEventRecord(done_, stream_) != cudaSuccess || cudaStreamWaitEvent(s.handle, done_, 0) != cudaSuccess) {
      const cudaError_t e = cudaGetLastError();
      fail("exchange", std::string("CUDA error after the operation: ") + cudaGetErrorString(e), true);
    }
  }

  void settle(platform::Stream s) override {
    (void)s;
    if (comm_ == nullptr) return;
    wait("settle", nullptr, 0, true);
  }

  void all_reduce(void* data, std::size_t count, ElementType type, ReduceOp op,
                  platform::Stream s) override {
    begin("all_reduce", s);
    called("all_reduce",
           ncclAllReduce(data, data, count, nccl_type(type), nccl_op(op), comm_, stream_));
    wait("all_reduce", nullptr, 0, true);
  }

  void all_gather(const void* send, void* receive, std::size_t bytes, platform::Stream s) override {
    begin("all_gather", s);
    called("all_gather", ncclAllGather(send, receive, bytes, ncclChar, comm_, stream_));
    wait("all_gather", nullptr, 0, true);
  }

  void barrier(platform::Stream s) override {
    begin("barrier", s);
    called("barrier", ncclAllReduce(token_, token_, 1, ncclInt32, ncclSum, comm_, stream_));
    wait("barrier", nullptr, 0, true);
  }

  void abort(const std::string& why) noexcept override { shared_->abort(why); }

 private:
  // The stream NCCL runs on (its own, so that NCCL never meets the legacy
  // default stream's implicit synchronisation), the event that orders it
  // after the caller's stream, and the barrier's one int.
  void setup() {
    cuda("cudaSetDevice", cudaSetDevice(device_));
    cuda("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    cuda("cudaEventCreateWithFlags", cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
    cuda("cudaEventCreateWithFlags", cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    cuda("cudaMalloc", cudaMalloc(&token_, sizeof(int)));
    cuda("cudaMemset", cudaMemset(token_, 0, sizeof(int)));
  }
  void release() noexcept {
    if (token_ != nullptr) (void)cudaFree(token_);
    if (ready_ != nullptr) (void)cudaEventDestroy(ready_);
    if (done_ != nullptr) (void)cudaEventDestroy(done_);
    done_ = nullptr;
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
    token_ = nullptr;
    ready_ = nullptr;
    stream_ = nullptr;
  }
  void cuda(const char* call, cudaError_t e) {
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      fail("setting up",
           std::string(call) + " on GPU " + std::to_string(device_) + ": " + cudaGetErrorString(e),
           false);
    }
  }

  std::string where(const char* operation) const {
    return "rank " + std::to_string(rank_) + ", " + operation + ": ";
  }

  // Throws at once after an abort; otherwise orders this operation after
  // the work queued on `s`.
  void begin(const char* operation, platform::Stream s) {
    std::string why;
    if (comm_ == nullptr || shared_->aborted(why)) {
      if (why.empty()) shared_->aborted(why);
      fail(operation, "the communicator was aborted: " + why, false);
    }
    if (cudaSetDevice(device_) != cudaSuccess || cudaEventRecord(ready_, s.handle) != cudaSuccess ||
        cudaStreamWaitEvent(stream_, ready_, 0) != cudaSuccess) {
      const cudaError_t e = cudaGetLastError();
      fail(operation, std::string("CUDA error before the operation: ") + cudaGetErrorString(e),
           true);
    }
  }

  // Queues the sends and receives in one group on NCCL's stream, after the
  // work queued on `s`; returns the peers involved (none: nothing queued).
  std::vector<int> queue_exchange(const std::vector<Message>& sends, const std::vector<Message>& receives,
                                  platform::Stream s) {
    check_peers(sends);
    check_peers(receives);
    std::vector<int> peers;
    for (const std::vector<Message>* list : {&sends, &receives})
      for (const Message& m : *list)
        if (m.bytes != 0) peers.push_back(m.peer);
    if (peers.empty()) return peers;
    begin("exchange", s);
    ncclResult_t r = ncclGroupStart();
    for (const Message& m : sends)
      if (queued(r) && m.bytes != 0) r = ncclSend(m.data, m.bytes, ncclChar, m.peer, comm_, stream_);
    for (const Message& m : receives)
      if (queued(r) && m.bytes != 0) r = ncclRecv(m.data, m.bytes, ncclChar, m.peer, comm_, stream_);
    // The group is always closed; an error inside it is reported by its end too.
    const ncclResult_t end = ncclGroupEnd();
    if (queued(r)) r = end;
    called("exchange", r);
    return peers;
  }

  // ncclInProgress is no error for a non-blocking communicator.
  static bool queued(ncclResult_t r) { return r == ncclSuccess || r == ncclInProgress; }
  void called(const char* operation, ncclResult_t r) {
    if (!queued(r)) fail(operation, detail::nccl_text(r, comm_), true);
  }

  // Polls until the operation is done: the communicator's state is
  // ncclSuccess (its calls have been queued) and, where `stream` is set,
  // the stream has run them. Fails on an NCCL or CUDA error, an abort, a
  // peer that ended (for `peers`, or any peer if none are named) without
  // taking part, or at the deadline.
  void wait(const char* operation, const int* peers, std::size_t npeers, bool stream) {
    const auto start = detail::NcclClock::now();
    const auto limit = std::chrono::duration_cast<detail::NcclClock::duration>(
        std::chrono::duration<double>(shared_->timeout()));
    // A peer that ended finished its part of this operation, if any: what
    // is left here then takes microseconds. Longer means it never took part.
    const auto grace = std::min(
        limit, std::chrono::duration_cast<detail::NcclClock::duration>(std::chrono::seconds(2)));
    for (;;) {
      ncclResult_t state = ncclSuccess;
      const ncclResult_t r = ncclCommGetAsyncError(comm_, &state);
      if (r != ncclSuccess) fail(operation, detail::nccl_text(r, comm_), true);
      if (state != ncclSuccess && state != ncclInProgress)
        fail(operation, detail::nccl_text(state, comm_), true);
      if (state == ncclSuccess) {
        if (!stream) return;
        const cudaError_t q = cudaStreamQuery(stream_);
        if (q == cudaSuccess) return;
        if (q != cudaErrorNotReady) {
          (void)cudaGetLastError();
          fail(operation, std::string("CUDA error: ") + cudaGetErrorString(q), true);
        }
      }
      std::string why;
      if (shared_->aborted(why)) fail(operation, "the communicator was aborted: " + why, true);
      const auto now = detail::NcclClock::now();
      const int gone = ended_peer(peers, npeers, start, now, grace);
      if (gone >= 0)
        fail(operation,
             "rank " + std::to_string(gone) +
                 " ended its run without taking part (the ranks called different distributed "
                 "operations)",
             true);
      if (now - start > limit)
        fail(operation,
             "no progress within " + detail::seconds_text(shared_->timeout()) +
                 " (DYNASOAR_DISTRIBUTED_TIMEOUT); a rank stopped or is stuck",
             true);
      // Yield for the first 2 ms: a step's waits (a halo, its counts) are
      // short, and a sleep may overshoot its request, which a step would pay
      // at every wait. Then sleep, as a long wait should.
      const auto waited = now - start;
      if (waited < std::chrono::milliseconds(2))
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(waited < std::chrono::milliseconds(50) ? 20 : 200));
    }
  }

  // A peer (of `peers`, or any other rank) that ended more than `grace`
  // before now and after this operation began; -1 if none.
  int ended_peer(const int* peers, std::size_t npeers, detail::NcclClock::time_point start,
                 detail::NcclClock::time_point now, detail::NcclClock::duration grace) const {
    const std::size_t n = peers != nullptr ? npeers : static_cast<std::size_t>(ranks_);
    for (std::size_t i = 0; i < n; ++i) {
      const int peer = peers != nullptr ? peers[i] : static_cast<int>(i);
      if (peer == rank_) continue;
      const long long at = shared_->ended_at(peer);
      if (at == 0) continue;
      const auto ended = detail::NcclClock::time_point(detail::NcclClock::duration(at));
      if (now - std::max(ended, start) > grace) return peer;
    }
    return -1;
  }

  // Aborts the communicator (and, with `announce`, every rank of the
  // process) and throws DistributedError naming this rank, the operation
  // and the cause.
  [[noreturn]] void fail(const char* operation, const std::string& cause, bool announce) {
    const std::string message = where(operation) + cause;
    if (announce) shared_->abort(message);
    if (comm_ != nullptr) {
      (void)ncclCommAbort(comm_);
      comm_ = nullptr;
    }
    throw DistributedError(message);
  }

  void check_peers(const std::vector<Message>& messages) const {
    for (const Message& m : messages)
      if (m.peer < 0 || m.peer >= ranks_ || m.peer == rank_)
        throw std::invalid_argument("exchange: rank " + std::to_string(rank_) + " names peer " +
                                    std::to_string(m.peer) + " (0 to " +
                                    std::to_string(ranks_ - 1) + ", not itself)");
  }

  static ncclDataType_t nccl_type(ElementType t) {
    switch (t) {
      case ElementType::kInt32:
        return ncclInt32;
      case ElementType::kUInt32:
        return ncclUint32;
      case ElementType::kInt64:
        return ncclInt64;
      case ElementType::kUInt64:
        return ncclUint64;
      case ElementType::kFloat:
        return ncclFloat32;
      case ElementType::kDouble:
        return ncclFloat64;
    }
    return ncclChar;
  }
  static ncclRedOp_t nccl_op(ReduceOp op) {
    switch (op) {
      case ReduceOp::kSum:
        return ncclSum;
      case ReduceOp::kMin:
        return ncclMin;
      case ReduceOp::kMax:
        return ncclMax;
    }
    return ncclSum;
  }

  std::shared_ptr<detail::NcclShared> shared_;
  int rank_;
  int ranks_;
  int device_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ready_ = nullptr;
  cudaEvent_t done_ = nullptr;  // NCCL's stream ran an exchange_async: the caller's stream waits for it
  int* token_ = nullptr;
};

/// The ranks of one process as threads, each with a GPU of its own, over
/// NCCL. Used by run_ranks (run.h).
class NcclWorld {
 public:
  /// A world of `ranks` ranks whose operations fail after `timeout_seconds`
  /// without progress. Makes NCCL's unique id. Throws std::invalid_argument
  /// for ranks < 1 or where the machine has fewer GPUs than ranks, and
  /// DistributedError where NCCL fails.
  explicit NcclWorld(int ranks, double timeout_seconds = default_timeout_seconds())
      : ranks_(ranks) {
    if (ranks < 1)
      throw std::invalid_argument("NcclWorld: at least one rank, not " + std::to_string(ranks));
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess) {
      (void)cudaGetLastError();
      devices = 0;
    }
    if (devices < ranks)
      throw std::invalid_argument("NcclWorld: " + std::to_string(ranks) +
                                  " ranks as threads of one process need " + std::to_string(ranks) +
                                  " GPUs (NCCL drives one GPU per rank and refuses two ranks on "
                                  "one GPU), but this machine has " +
                                  std::to_string(devices) + "; run at most " +
                                  std::to_string(devices) + " ranks");
    const ncclResult_t r = ncclGetUniqueId(&id_);
    if (r != ncclSuccess)
      throw DistributedError(std::string("NcclWorld: ncclGetUniqueId failed: ") +
                             ncclGetErrorString(r));
    shared_ = std::make_shared<detail::NcclShared>(ranks, timeout_seconds, std::string());
    shared_->start_keeping();
  }

  NcclWorld(const NcclWorld&) = delete;
  NcclWorld& operator=(const NcclWorld&) = delete;

  /// Destroys the communicators of the ranks (aborts them where the world
  /// was aborted).
  ~NcclWorld() {
    std::string why;
    const bool aborted = shared_->aborted(why);
    detail::close_communicators(shared_->stop_keeping(), shared_->timeout(), aborted);
  }

  /// Number of ranks.
  int size() const { return ranks_; }
  /// The time limit of an operation, in seconds.
  double timeout_seconds() const { return shared_->timeout(); }

  /// Rank r's transport, on GPU r. Call it on rank r's own thread (it makes
  /// that GPU current there), for every rank at the same time: creating the
  /// communicator waits for all of them. Throws DistributedError (and
  /// aborts the world) where that fails.
  std::unique_ptr<Transport> transport(int r) {
    if (r < 0 || r >= ranks_)
      throw std::invalid_argument("NcclWorld: rank " + std::to_string(r) + " of a world of " +
                                  std::to_string(ranks_));
    try {
      return std::make_unique<NcclTransport>(id_, r, ranks_, r, shared_);
    } catch (const std::exception& e) {
      shared_->abort(e.what());
      throw;
    }
  }

  /// Rank r ended its run: a peer still waiting in an operation for it
  /// fails soon after, without waiting for the deadline.
  void finish(int r) { shared_->finish(r); }

  /// Every rank's current and next operation throws DistributedError(why).
  void abort(const std::string& why) noexcept { shared_->abort(why); }

 private:
  int ranks_;
  ncclUniqueId id_{};
  std::shared_ptr<detail::NcclShared> shared_;
};

namespace detail {

inline int launched_int(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0')
    throw std::invalid_argument(std::string("run_ranks: ") + name +
                                " is not set (start the ranks with dynasoar_launch)");
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 0 || v > 1 << 20)
    throw std::invalid_argument(std::string("run_ranks: ") + name + "=" + text +
                                " is no rank number");
  return static_cast<int>(v);
}

// Rank 0 writes the id (PATH.part, then renamed, so that no rank reads half
// of it); the others wait for the file until the deadline, or an abort.
inline ncclUniqueId rendezvous(const std::string& path, int rank, NcclShared& shared) {
  ncclUniqueId id{};
  if (rank == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess)
      throw DistributedError(std::string("rank 0: ncclGetUniqueId failed: ") +
                             ncclGetErrorString(r));
    const std::string part = path + ".part";
    {
      std::ofstream out(part, std::ios::binary | std::ios::trunc);
      out.write(id.internal, sizeof(id.internal));
      if (!out)
        throw DistributedError("rank 0: cannot write the rendezvous file " + part +
                               " (DYNASOAR_RENDEZVOUS)");
    }
    if (std::rename(part.c_str(), path.c_str()) != 0)
      throw DistributedError("rank 0: cannot rename " + part + " to " + path +
                             " (DYNASOAR_RENDEZVOUS)");
    return id;
  }
  const auto start = NcclClock::now();
  for (;;) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && st.st_size == static_cast<off_t>(sizeof(id.internal))) {
      std::ifstream in(path, std::ios::binary);
      in.read(id.internal, sizeof(id.internal));
      if (in.gcount() == static_cast<std::streamsize>(sizeof(id.internal))) return id;
    }
    std::string why;
    if (shared.aborted(why))
      throw DistributedError("rank " + std::to_string(rank) +
                             ", waiting for the rendezvous file: the run was aborted: " + why);
    if (NcclClock::now() - start > std::chrono::duration<double>(shared.timeout()))
      throw DistributedError("rank " + std::to_string(rank) + ": no rendezvous file " + path +
                             " from rank 0 within " + seconds_text(shared.timeout()) +
                             " (DYNASOAR_DISTRIBUTED_TIMEOUT); rank 0 stopped or is stuck");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

inline std::string what_of_current() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is no std::exception";
  }
}

}  // namespace detail

/// Runs f(Communicator&) once, as the rank of a run started by the
/// launcher (DYNASOAR_RANK, DYNASOAR_RANKS, DYNASOAR_RENDEZVOUS; see the
/// header comment), on GPU DYNASOAR_RANK % (number of GPUs). `ranks` is the
/// program's own number of ranks: 1 (it leaves the number to the launcher)
/// or DYNASOAR_RANKS. Throws std::invalid_argument for a wrong number or
/// environment; a failure of f aborts the run (every rank's operations
/// throw) and is rethrown.
template <class F>
void run_launched_rank(int ranks, F& f) {
  const int rank = detail::launched_int("DYNASOAR_RANK");
  const int size = detail::launched_int("DYNASOAR_RANKS");
  const char* path_text = std::getenv("DYNASOAR_RENDEZVOUS");
  if (size < 1 || rank >= size)
    throw std::invalid_argument("run_ranks: DYNASOAR_RANK=" + std::to_string(rank) +
                                " is no rank of DYNASOAR_RANKS=" + std::to_string(size));
  if (ranks != 1 && ranks != size)
    throw std::invalid_argument("run_ranks: the program asks for " + std::to_string(ranks) +
                                " ranks, but the launcher started " + std::to_string(size) +
                                " (give 1, or the launcher's -n)");
  if (path_text == nullptr || *path_text == '\0')
    throw std::invalid_argument(
        "run_ranks: DYNASOAR_RENDEZVOUS is not set (start the ranks with dynasoar_launch)");
  const std::string path = path_text;
  auto shared =
      std::make_shared<detail::NcclShared>(size, default_timeout_seconds(), path + ".abort");
  try {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
      (void)cudaGetLastError();
      throw DistributedError("rank " + std::to_string(rank) + ": no CUDA device");
    }
    const ncclUniqueId id = detail::rendezvous(path, rank, *shared);
    Communicator comm(std::make_unique<NcclTransport>(id, rank, size, rank % devices, shared));
    try {
      f(comm);
    } catch (...) {
      comm.abort("rank " + std::to_string(rank) + " failed: " + detail::what_of_current());
      throw;
    }
  } catch (...) {
    shared->abort("rank " + std::to_string(rank) + " failed: " + detail::what_of_current());
    throw;
  }
}

}  // namespace dynasoar::distributed

#endif
