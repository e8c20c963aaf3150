// The transport over host threads: every rank is a thread of one process
// with a heap of its own, and messages are copies through mailboxes guarded
// by one mutex. The host tier runs the distributed layer on it (under
// ThreadSanitizer in CI); a CUDA build may use it too (the copies then go
// through cudaMemcpy), but GPUs talk through NCCL (nccl_transport.h).
//
// Forward progress: a rank waits only in receive(), on a condition variable
// with a deadline, for a message that its peer posts without waiting (a send
// never blocks). A peer that ended its run or failed makes the wait end at
// once (HostWorld::finish, abort), one that stopped answering at the
// deadline; either way the whole world is aborted and every rank throws.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dynasoar/distributed/transport.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar::distributed {

/// What the ranks of one process share: a mailbox per ordered pair of
/// ranks, which ranks have ended, and the abort state.
class HostWorld {
 public:
  /// A world of `ranks` ranks whose waits end with an error after `timeout_seconds`.
  explicit HostWorld(int ranks, double timeout_seconds = default_timeout_seconds())
      : ranks_(ranks),
        timeout_(timeout_seconds),
        boxes_(static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks)),
        ended_(static_cast<std::size_t>(ranks), false) {
    if (ranks < 1) throw std::invalid_argument("HostWorld: at least one rank, not " + std::to_string(ranks));
  }
  /// Number of ranks.
  int size() const { return ranks_; }
  /// The time limit of a wait, in seconds.
  double timeout_seconds() const { return timeout_; }

  /// Posts `bytes` bytes from `from` to `to`'s mailbox (copied now).
  void send(int from, int to, const void* data, std::size_t bytes, platform::Stream s) {
    std::vector<unsigned char> copy(bytes);
    copy_bytes(copy.data(), data, bytes, s);
    std::lock_guard<std::mutex> lock(mutex_);
    throw_if_aborted(from);
    box(from, to).push_back(std::move(copy));
    changed_.notify_all();
  }

  /// Takes the next message from `from` to `to` into `data`, which holds
  /// `bytes` bytes; throws DistributedError (and aborts the world) if its
  /// size differs, if `from` ended or failed, or at the deadline.
  void receive(int to, int from, void* data, std::size_t bytes, const char* operation,
               platform::Stream s) {
    std::vector<unsigned char> message;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_);
      auto& queue = box(from, to);
      while (queue.empty()) {
        throw_if_aborted(to);
        if (ended_[static_cast<std::size_t>(from)])
          abort_locked(where(to, operation) + "rank " + std::to_string(from) +
                       " ended its run without sending what this rank waits for (the ranks "
                       "called different distributed operations)");
        if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && queue.empty()) {
          throw_if_aborted(to);
          abort_locked(where(to, operation) + "no message from rank " + std::to_string(from) + " within " +
                       seconds_text() + " (DYNASOAR_DISTRIBUTED_TIMEOUT); the rank stopped or is stuck");
        }
      }
      message = std::move(queue.front());
      queue.pop_front();
      if (message.size() != bytes)
        abort_locked(where(to, operation) + "rank " + std::to_string(from) + " sent " +
                     std::to_string(message.size()) + " bytes where " + std::to_string(bytes) +
                     " were expected (the ranks called different distributed operations)");
    }
    copy_bytes(data, message.data(), bytes, s);
  }

  /// Rank `rank` ended its run: a peer waiting for it fails at once.
  void finish(int rank) {
    std::lock_guard<std::mutex> lock(mutex_);
    ended_[static_cast<std::size_t>(rank)] = true;
    changed_.notify_all();
  }

  /// Every rank's current and next operation throws DistributedError(why).
  void abort(const std::string& why) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!aborted_) {
      aborted_ = true;
      why_ = why;
    }
    changed_.notify_all();
  }

  /// Whether the world was aborted, and why.
  std::pair<bool, std::string> aborted() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return {aborted_, why_};
  }

 private:
  std::deque<std::vector<unsigned char>>& box(int from, int to) {
    return boxes_[static_cast<std::size_t>(from) * static_cast<std::size_t>(ranks_) + static_cast<std::size_t>(to)];
  }
  static std::string where(int rank, const char* operation) {
    return "rank " + std::to_string(rank) + ", " + operation + ": ";
  }
  std::string seconds_text() const { return std::to_string(timeout_) + " s"; }
  void throw_if_aborted(int rank) const {
    if (aborted_)
      throw DistributedError("rank " + std::to_string(rank) + ": the communicator was aborted: " + why_);
  }
  [[noreturn]] void abort_locked(const std::string& why) {
    if (!aborted_) {
      aborted_ = true;
      why_ = why;
    }
    changed_.notify_all();
    throw DistributedError(why);
  }
  static void copy_bytes(void* to, const void* from, std::size_t bytes, platform::Stream s) {
    if (bytes == 0) return;
#if DYNASOAR_CUDA
    platform::synchronize(s);
    DYNASOAR_CUDA_CHECK(cudaMemcpy(to, from, bytes, cudaMemcpyDefault));
#else
    (void)s;
    std::memcpy(to, from, bytes);
#endif
  }

  int ranks_;
  double timeout_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::deque<std::vector<unsigned char>>> boxes_;
  std::vector<bool> ended_;
  bool aborted_ = false;
  std::string why_;
};

/// One rank's side of a HostWorld.
class HostTransport final : public Transport {
 public:
  /// Rank `rank` of `world`, which must outlive it.
  HostTransport(HostWorld& world, int rank) : world_(&world), rank_(rank) {
    if (rank < 0 || rank >= world.size())
      throw std::invalid_argument("HostTransport: rank " + std::to_string(rank) + " of a world of " +
                                  std::to_string(world.size()));
  }
  int rank() const override { return rank_; }
  int size() const override { return world_->size(); }
  const char* name() const override { return "host threads"; }

  void exchange(const std::vector<Message>& sends, const std::vector<Message>& receives,
                platform::Stream s) override {
    check_peers(sends, "exchange");
    check_peers(receives, "exchange");
    for (const Message& m : sends)
      if (m.bytes != 0) world_->send(rank_, m.peer, m.data, m.bytes, s);
    for (const Message& m : receives)
      if (m.bytes != 0) world_->receive(rank_, m.peer, m.data, m.bytes, "exchange", s);
  }

  void all_reduce(void* data, std::size_t count, ElementType type, ReduceOp op, platform::Stream s) override {
    const std::size_t bytes = count * element_bytes(type);
    std::vector<unsigned char> all(bytes * static_cast<std::size_t>(size()));
    gather(data, all.data(), bytes, "all_reduce", s);
    std::vector<unsigned char> result(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(bytes));
    for (int r = 1; r < size(); ++r) combine(result.data(), all.data() + static_cast<std::size_t>(r) * bytes, count, type, op);
    put(data, result.data(), bytes, s);
  }

  void all_gather(const void* send, void* receive, std::size_t bytes, platform::Stream s) override {
    std::vector<unsigned char> all(bytes * static_cast<std::size_t>(size()));
    gather(send, all.data(), bytes, "all_gather", s);
    put(receive, all.data(), all.size(), s);
  }

  void barrier(platform::Stream s) override {
    unsigned char token = 1;
    std::vector<unsigned char> all(static_cast<std::size_t>(size()));
    gather_host(&token, all.data(), 1, "barrier", s);
  }

  void abort(const std::string& why) noexcept override { world_->abort(why); }

 private:
  void check_peers(const std::vector<Message>& messages, const char* operation) const {
    for (const Message& m : messages)
      if (m.peer < 0 || m.peer >= size() || m.peer == rank_)
        throw std::invalid_argument(std::string(operation) + ": rank " + std::to_string(rank_) +
                                    " names peer " + std::to_string(m.peer) + " (0 to " +
                                    std::to_string(size() - 1) + ", not itself)");
  }
  // all[r * bytes ..] = rank r's `send` (back-end memory), into host memory.
  void gather(const void* send, unsigned char* all, std::size_t bytes, const char* operation, platform::Stream s) {
    std::vector<unsigned char> mine(bytes);
    if (bytes != 0) take(mine.data(), send, bytes, s);
    gather_host(mine.data(), all, bytes, operation, s);
  }
  void gather_host(const unsigned char* mine, unsigned char* all, std::size_t bytes, const char* operation,
                   platform::Stream s) {
    // Host memory on both sides: the world's copies are plain ones.
    platform::Stream none{};
    for (int r = 0; r < size(); ++r)
      if (r != rank_) world_->send(rank_, r, mine, bytes, none);
    std::memcpy(all + static_cast<std::size_t>(rank_) * bytes, mine, bytes);
    for (int r = 0; r < size(); ++r)
      if (r != rank_) world_->receive(rank_, r, all + static_cast<std::size_t>(r) * bytes, bytes, operation, none);
    (void)s;
  }
  static void take(void* host, const void* data, std::size_t bytes, platform::Stream s) {
#if DYNASOAR_CUDA
    platform::synchronize(s);
    DYNASOAR_CUDA_CHECK(cudaMemcpy(host, data, bytes, cudaMemcpyDefault));
#else
    (void)s;
    std::memcpy(host, data, bytes);
#endif
  }
  static void put(void* data, const void* host, std::size_t bytes, platform::Stream s) { take(data, host, bytes, s); }

  template <class T>
  static void combine_as(unsigned char* into, const unsigned char* from, std::size_t count, ReduceOp op) {
    for (std::size_t i = 0; i < count; ++i) {
      T a, b;
      std::memcpy(&a, into + i * sizeof(T), sizeof(T));
      std::memcpy(&b, from + i * sizeof(T), sizeof(T));
      const T c = op == ReduceOp::kSum ? static_cast<T>(a + b) : op == ReduceOp::kMin ? (b < a ? b : a) : (a < b ? b : a);
      std::memcpy(into + i * sizeof(T), &c, sizeof(T));
    }
  }
  static void combine(unsigned char* into, const unsigned char* from, std::size_t count, ElementType t, ReduceOp op) {
    switch (t) {
      case ElementType::kInt32: return combine_as<std::int32_t>(into, from, count, op);
      case ElementType::kUInt32: return combine_as<std::uint32_t>(into, from, count, op);
      case ElementType::kInt64: return combine_as<std::int64_t>(into, from, count, op);
      case ElementType::kUInt64: return combine_as<std::uint64_t>(into, from, count, op);
      case ElementType::kFloat: return combine_as<float>(into, from, count, op);
      case ElementType::kDouble: return combine_as<double>(into, from, count, op);
    }
  }

  HostWorld* world_;
  int rank_;
};

}  // namespace dynasoar::distributed
