// A rank's view of the model's ranks: its number, their count, and the
// collective operations of the distributed layer on typed values (a
// Transport underneath: NCCL or host threads). Handed to every rank by
// run_ranks (run.h); migrate, halos and the examples take it.
//
//   dynasoar::distributed::run_ranks(2, [&](dynasoar::distributed::Communicator& comm) {
//     std::uint64_t alive = comm.all_reduce(local_count);          // sum over the ranks
//     std::vector<int> steps = comm.all_gather(step);              // one value per rank
//   });
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dynasoar/distributed/transport.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar::distributed {

/// One rank of a distributed model. Host code, used by one host thread.
class Communicator {
 public:
  /// Over `transport`; operations are queued on `s` (the rank's heap's stream).
  explicit Communicator(std::unique_ptr<Transport> transport, platform::Stream s = {})
      : transport_(std::move(transport)), stream_(s) {}

  /// This rank, 0 to size() - 1.
  int rank() const { return transport_->rank(); }
  /// Number of ranks.
  int size() const { return transport_->size(); }
  /// The stream operations are queued on.
  platform::Stream stream() const { return stream_; }
  /// The transport ("NCCL", "host threads").
  Transport& transport() { return *transport_; }

  /// data[i] = op over every rank's data[i], for i < count; data is the
  /// back end's memory (device memory in a CUDA build). Blocking.
  template <class T>
  void all_reduce(T* data, std::size_t count, ReduceOp op = ReduceOp::kSum) {
    transport_->all_reduce(data, count, element_type_of<T>(), op, stream_);
  }

  /// op over every rank's `value` (host values), on every rank. Blocking.
  template <class T>
  T all_reduce(T value, ReduceOp op = ReduceOp::kSum) {
    T* staged = scratch<T>(1);
    stage_in(staged, &value, sizeof(T));
    all_reduce(staged, 1, op);
    stage_out(&value, staged, sizeof(T));
    return value;
  }

  /// receive[r * count + i] = rank r's send[i], for i < count, on every
  /// rank (back-end memory; receive holds size() * count elements). Blocking.
  template <class T>
  void all_gather(const T* send, T* receive, std::size_t count) {
    static_assert(std::is_trivially_copyable_v<T>, "all_gather: trivially copyable values");
    transport_->all_gather(send, receive, count * sizeof(T), stream_);
  }

  /// Every rank's `value` (host values), in rank order. Blocking.
  template <class T>
  std::vector<T> all_gather(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "all_gather: trivially copyable values");
    const std::size_t n = static_cast<std::size_t>(size());
    T* staged = scratch<T>(n + 1);
    stage_in(staged + n, &value, sizeof(T));
    all_gather(staged + n, staged, 1);
    std::vector<T> out(n);
    stage_out(out.data(), staged, n * sizeof(T));
    return out;
  }

  /// Point-to-point messages in one group (Transport::exchange). Blocking.
  void exchange(const std::vector<Message>& sends, const std::vector<Message>& receives) {
    transport_->exchange(sends, receives, stream_);
  }

  /// Point-to-point messages in one group, queued on the stream without a
  /// wait where the transport can (Transport::exchange_async).
  void exchange_async(const std::vector<Message>& sends, const std::vector<Message>& receives) {
    transport_->exchange_async(sends, receives, stream_);
  }

  /// Waits, within the time limit, for the messages queued by
  /// exchange_async (and the halos' and migrations' queued messages), or
  /// throws DistributedError (Transport::settle).
  void settle() { transport_->settle(stream_); }

  /// Memory of the back end for the layer's own use (halos, migration),
  /// kept for the communicator's life: slot k's buffer, grown to at least
  /// `bytes`. Work queued on the stream may still use what an earlier call
  /// returned; a larger request waits for the queued messages (settle)
  /// and the stream before it frees the old buffer.
  unsigned char* workspace(std::size_t slot, std::size_t bytes) {
    if (workspace_.size() <= slot) workspace_.resize(slot + 1);
    platform::Buffer<unsigned char>& b = workspace_[slot];
    if (b.size() < bytes) {
      settle();  // queued messages may still use the old buffer: wait for them within the time limit
      platform::synchronize(stream_);
      b = platform::Buffer<unsigned char>(std::max<std::size_t>(bytes, 2 * b.size()));
    }
    return b.data();
  }

  /// Waits until every rank has called barrier.
  void barrier() { transport_->barrier(stream_); }

  /// Aborts the communicator: every rank's current or next operation
  /// throws DistributedError naming `why` (Transport::abort).
  void abort(const std::string& why) noexcept { transport_->abort(why); }

 private:
  template <class T>
  T* scratch(std::size_t n) {
    const std::size_t bytes = n * sizeof(T) + alignof(std::max_align_t);
    if (scratch_.size() < bytes) scratch_ = platform::Buffer<unsigned char>(bytes);
    return reinterpret_cast<T*>(scratch_.data());
  }
  // Copies between host memory and the scratch buffer (at `at`, inside it).
  void stage_in(void* at, const void* host, std::size_t bytes) {
    scratch_.copy_from_host(static_cast<const unsigned char*>(host), bytes, offset_of(at), stream_);
  }
  void stage_out(void* host, const void* at, std::size_t bytes) {
    scratch_.copy_to_host(static_cast<unsigned char*>(host), bytes, offset_of(at), stream_);
  }
  std::size_t offset_of(const void* at) const {
    return static_cast<std::size_t>(static_cast<const unsigned char*>(at) - scratch_.data());
  }

  std::unique_ptr<Transport> transport_;
  platform::Stream stream_;
  platform::Buffer<unsigned char> scratch_;
  std::vector<platform::Buffer<unsigned char>> workspace_;
};

}  // namespace dynasoar::distributed
