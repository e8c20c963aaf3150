// The transport of the distributed layer: how the ranks of one model (one
// heap each, one GPU each) exchange bytes. Two implementations share this
// interface: NCCL between GPUs (nccl_transport.h) and host threads in one
// process (host_transport.h), with which the host tier tests everything the
// layer does.
//
// Every operation is collective over the ranks it names: point-to-point
// messages in one group (exchange), all-reduce and all-gather over all
// ranks. Each is blocking: it returns once this rank's part is complete, or
// throws DistributedError. No operation waits without a limit: a peer that
// stopped or failed makes it throw within the transport's time limit
// (docs/design/distributed.md, Failure), and the whole communicator is
// aborted, so every later operation on every rank throws too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "dynasoar/platform/memory.h"

namespace dynasoar::distributed {

/// A distributed operation failed: a peer reported an error, stopped
/// answering within the time limit, or the communicator was aborted. The
/// message names the rank, the operation and the cause.
class DistributedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// How all-reduce combines the ranks' values.
enum class ReduceOp { kSum, kMin, kMax };

/// Element types of all-reduce (those NCCL reduces).
enum class ElementType { kInt32, kUInt32, kInt64, kUInt64, kFloat, kDouble };

/// The ElementType of T (a static_assert for a type NCCL cannot reduce).
template <class T>
constexpr ElementType element_type_of() {
  if constexpr (std::is_same_v<T, std::int32_t>) return ElementType::kInt32;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return ElementType::kUInt32;
  else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, long long>)
    return ElementType::kInt64;
  else if constexpr (std::is_same_v<T, std::uint64_t> || std::is_same_v<T, unsigned long long>)
    return ElementType::kUInt64;
  else if constexpr (std::is_same_v<T, float>) return ElementType::kFloat;
  else {
    static_assert(std::is_same_v<T, double>, "all_reduce: int32, uint32, int64, uint64, float or double");
    return ElementType::kDouble;
  }
}

/// Bytes of one element of type t.
constexpr std::size_t element_bytes(ElementType t) {
  return t == ElementType::kInt32 || t == ElementType::kUInt32 || t == ElementType::kFloat ? 4 : 8;
}

/// One message of an exchange: `bytes` bytes at `data` (the back end's
/// memory: device memory in a CUDA build) to or from rank `peer`.
struct Message {
  int peer = 0;         ///< the rank sent to or received from
  void* data = nullptr; ///< where the bytes are (send) or go (receive)
  std::size_t bytes = 0;  ///< how many bytes
};

/// What moves bytes between the ranks. Host code; one object per rank, used
/// by one host thread at a time.
class Transport {
 public:
  virtual ~Transport() = default;
  /// This rank: 0 to size() - 1.
  virtual int rank() const = 0;
  /// Number of ranks.
  virtual int size() const = 0;
  /// "NCCL" or "host threads".
  virtual const char* name() const = 0;
  /// The sends and receives in one group: returns once all of them are
  /// complete. The i-th message this rank sends to a peer is the i-th that
  /// peer receives from this rank, and both must name the same number of
  /// bytes (DistributedError otherwise, where the transport can tell).
  /// Messages of 0 bytes are left out. Waits for the work queued on s before.
  virtual void exchange(const std::vector<Message>& sends, const std::vector<Message>& receives,
                        platform::Stream s) = 0;
  /// exchange queued on the stream s without waiting for it where the
  /// transport can (NCCL: the sends and receives run in s's order, and the
  /// buffers must stay untouched until work queued after them has run);
  /// transports that cannot (host threads) complete it before returning.
  /// An error is then reported by a later operation that waits, within
  /// the same time limit. Halo refreshes use it: their sizes are fixed.
  virtual void exchange_async(const std::vector<Message>& sends, const std::vector<Message>& receives,
                              platform::Stream s) {
    exchange(sends, receives, s);
  }
  /// Waits, within the time limit, until the operations queued by
  /// exchange_async have completed, or throws DistributedError. The layer's
  /// own waits do this; call it (Communicator::settle) before a host wait
  /// of your own on the stream after an exchange_async, which would
  /// otherwise wait for a peer without a limit.
  virtual void settle(platform::Stream s) { (void)s; }
  /// data[i] = op over every rank's data[i], i < count, on every rank. The
  /// ranks are combined in rank order where the transport chooses the order
  /// (host threads), so every rank gets the same bits.
  virtual void all_reduce(void* data, std::size_t count, ElementType type, ReduceOp op,
                          platform::Stream s) = 0;
  /// receive[r * bytes .. (r + 1) * bytes) = rank r's `send`, on every rank.
  virtual void all_gather(const void* send, void* receive, std::size_t bytes, platform::Stream s) = 0;
  /// Waits until every rank has called barrier.
  virtual void barrier(platform::Stream s) = 0;
  /// Aborts the communicator: every rank's current or next operation
  /// throws DistributedError naming `why`. Safe to call from any thread.
  virtual void abort(const std::string& why) noexcept = 0;
};

/// The time limit of a distributed operation: DYNASOAR_DISTRIBUTED_TIMEOUT
/// (seconds, > 0) if set, else 120 s. Long enough for the largest exchange
/// of a step, short enough that a stopped rank is reported while someone
/// still waits for the run.
/// Throws std::invalid_argument for a value that is no positive number.
inline double default_timeout_seconds() {
  const char* text = std::getenv("DYNASOAR_DISTRIBUTED_TIMEOUT");
  if (text == nullptr || *text == '\0') return 120.0;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v > 0))
    throw std::invalid_argument(std::string("DYNASOAR_DISTRIBUTED_TIMEOUT=") + text +
                                ": give the time limit of a distributed operation in seconds (> 0)");
  return v;
}

}  // namespace dynasoar::distributed
