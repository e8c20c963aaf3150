// XMalloc's buffers of free blocks (Huang et al. 2013, Sec. 5.2, Figs. 8
// and 9): an array of bounded lock-free FIFO queues of 32-bit payloads (the
// blocks' numbers), kept in a side table of 64-bit words that reads as
// empty queues when zeroed. The queue's design, its memory orders and the
// forward-progress argument of every operation are in
// docs/design/xmalloc.md, "The queues".
#pragma once

#include <cstdint>

#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::xmalloc {

/// Compare-and-swaps an enqueue makes to move the old tail into its slot
/// before it gives up and reports contention (BlockQueues::append): a bound
/// that keeps an enqueue short whatever stale enqueues are in flight.
inline constexpr std::uint32_t kMoveAttempts = 8;

/// `count` queues of `slots` messages each over a zeroed side table of
/// words(count, slots) words. Trivially copyable, passed to kernels by
/// value. A queue's head number and tail message are words of their own;
/// the tail message holds the newest payload, and the older ones wait in a
/// ring of `slots` messages. A message carries its sequence number, so a
/// stale operation cannot take or overwrite a newer one.
struct BlockQueues {
  /// Outcomes of one queue operation.
  enum Outcome : unsigned {
    kDone,       ///< the message was taken or put
    kEmpty,      ///< dequeue: the queue held nothing
    kFull,       ///< enqueue: the queue was full
    kContended,  ///< another thread changed the queue meanwhile
  };

  std::uint64_t* heads = nullptr;     ///< per queue 4 words: head number, tail message, 2 unused
  std::uint64_t* messages = nullptr;  ///< per queue `slots` messages
  std::uint32_t slots = 2;            ///< messages per queue (a power of two, at least 2)

  /// Words of the side table of `count` queues of `slots` messages.
  static constexpr std::uint64_t words(std::uint64_t count, std::uint32_t slots) {
    return 4 * count + count * slots;
  }
  /// The queues over `table` (words(count, slots) words, zeroed: every
  /// queue empty).
  static BlockQueues over(std::uint64_t* table, std::uint64_t count, std::uint32_t slots) {
    BlockQueues q;
    q.heads = table;
    q.messages = table + 4 * count;
    q.slots = slots;
    return q;
  }

  /// Messages in queue `qi` (a snapshot; exact while no thread uses it).
  DYNASOAR_HD std::uint32_t size(std::uint32_t qi) const {
    const std::uint32_t h = platform::atomic_load(head_of(qi), platform::acquire);
    const std::uint64_t t = platform::atomic_load(tail_of(qi), platform::acquire);
    return message_seq(t) + 1 - h;
  }
  /// The payload of the i-th message of queue qi, counted from its head
  /// (i < size(qi)); only while no thread uses the queue.
  DYNASOAR_HD std::uint32_t payload_at(std::uint32_t qi, std::uint32_t i) const {
    const std::uint32_t seq = platform::atomic_load(head_of(qi)) + i;
    const std::uint64_t t = platform::atomic_load(tail_of(qi));
    return static_cast<std::uint32_t>(seq == message_seq(t) ? t : platform::atomic_load(slot_of(qi, seq)));
  }

  /// Fig. 8: takes the head message of queue qi into `payload` (kDone), or
  /// says why not. One attempt: callers retry on kContended.
  DYNASOAR_HD Outcome dequeue(std::uint32_t qi, std::uint32_t& payload) const {
    std::uint32_t* head = head_of(qi);
    // Acquire: the block's last owner gave it back with a release (enqueue).
    const std::uint32_t h = platform::atomic_load(head, platform::acquire);
    const std::uint64_t t = platform::atomic_load(tail_of(qi), platform::acquire);
    const std::uint32_t tail_seq = message_seq(t);
    if (tail_seq + 1 == h) return kEmpty;  // holds tail_seq - h + 1 messages
    std::uint64_t m = t;
    if (h != tail_seq) {
      // The enqueue that moved the tail past h put message h into its slot
      // first; a different sequence number there means h is stale.
      m = platform::atomic_load(slot_of(qi, h), platform::acquire);
      if (message_seq(m) != h) return kContended;
    }
    std::uint32_t expected = h;
    if (!platform::atomic_compare_exchange(head, expected, h + 1, platform::acq_rel))
      return kContended;  // another dequeue took message h
    payload = static_cast<std::uint32_t>(m);
    return kDone;
  }

  /// Fig. 9: appends `payload` to queue qi (kDone), or says why not. One
  /// attempt: callers retry on kContended, and move on at kFull.
  DYNASOAR_HD Outcome enqueue(std::uint32_t qi, std::uint32_t payload) const {
    const std::uint32_t h = platform::atomic_load(head_of(qi), platform::acquire);
    const std::uint64_t t = platform::atomic_load(tail_of(qi), platform::acquire);
    const std::uint32_t held = message_seq(t) + 1 - h;  // a stale h only makes it larger
    if (held >= slots) return kFull;
    // The old tail moves into the array, unless the queue is empty (then it
    // was dequeued, and `seen` = t says that nothing needs to move).
    return append(qi, payload, t, held != 0 ? slot_word(qi, t) : t);
  }

  /// The rest of an enqueue that read tail message `t` (of a queue that was
  /// not full) and then `seen` in the slot of t: puts t into its slot, then
  /// replaces the tail with message t + 1 carrying `payload` (kDone), or
  /// finds that another enqueue did first (kContended). Public so that tests
  /// can play a stalled enqueue; enqueue() is the one to call.
  ///
  /// A failed move is retried while the slot holds a message older than t:
  /// a stale enqueue may have moved an older message there between our read
  /// and our compare-and-swap (docs/design/xmalloc.md, "The queues").
  ///
  /// Forward progress: the slot's messages only get newer, so each failure
  /// is another enqueue's write, and the loop never waits for one. After
  /// kMoveAttempts failures it returns kContended with the tail untouched,
  /// which is safe: the enqueue that later moves the tail past t moves t
  /// into its slot first.
  DYNASOAR_HD Outcome append(std::uint32_t qi, std::uint32_t payload, std::uint64_t t,
                             std::uint64_t seen) const {
    const std::uint32_t tail_seq = message_seq(t);
    std::uint64_t* slot = slot_of(qi, tail_seq);
    for (std::uint32_t attempt = 0;
         static_cast<std::int32_t>(tail_seq - message_seq(seen)) > 0; ++attempt) {
      if (attempt == kMoveAttempts) return kContended;
      // Release: whoever dequeues message t from the slot sees the block as
      // its enqueue left it (we read t with an acquire). A failure loads
      // the slot's message into `seen`.
      if (platform::atomic_compare_exchange(slot, seen, t, platform::release)) break;
    }
    std::uint64_t expected = t;
    // Release: the block's contents and header, and the slot just written,
    // come before any dequeue that takes this message.
    return platform::atomic_compare_exchange(tail_of(qi), expected, message(tail_seq + 1, payload),
                                             platform::acq_rel)
               ? kDone
               : kContended;
  }

  /// The tail message of queue qi as stored (for tests that play an enqueue's steps).
  DYNASOAR_HD std::uint64_t tail_word(std::uint32_t qi) const {
    return platform::atomic_load(tail_of(qi), platform::acquire);
  }
  /// What the slot of message `m` of queue qi holds now (the same).
  DYNASOAR_HD std::uint64_t slot_word(std::uint32_t qi, std::uint64_t m) const {
    return platform::atomic_load(slot_of(qi, message_seq(m)));
  }

 private:
  // A message: its sequence number plus one in the high half (so that the
  // zeroed side table reads as empty queues whose slots hold older
  // messages), the payload in the low half.
  DYNASOAR_HD static std::uint64_t message(std::uint32_t seq, std::uint32_t payload) {
    return (std::uint64_t{seq + 1} << 32) | payload;
  }
  DYNASOAR_HD static std::uint32_t message_seq(std::uint64_t m) {
    return static_cast<std::uint32_t>(m >> 32) - 1;
  }
  DYNASOAR_HD std::uint32_t* head_of(std::uint32_t qi) const {
    return reinterpret_cast<std::uint32_t*>(heads + 4 * std::uint64_t{qi});
  }
  DYNASOAR_HD std::uint64_t* tail_of(std::uint32_t qi) const {
    return heads + 4 * std::uint64_t{qi} + 1;
  }
  DYNASOAR_HD std::uint64_t* slot_of(std::uint32_t qi, std::uint32_t seq) const {
    return messages + std::uint64_t{qi} * slots + (seq & (slots - 1));
  }
};

}  // namespace dynasoar::xmalloc
