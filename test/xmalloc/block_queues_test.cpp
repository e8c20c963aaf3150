// XMalloc's queues of free blocks (Huang et al. 2013, Sec. 5.2, Figs. 8 and
// 9) on their own, over a side table of one queue of two slots, so that
// every slot is reused all the time: a stalled enqueue played step by step,
// and a contended churn after which every message put in came out exactly
// once. Host tier (and ThreadSanitizer) and device tier.
#include "dynasoar/allocator/xmalloc/block_queues.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/warp.h"
#include "support/sanitized.h"
#include "support/stress_rounds.h"

namespace dynasoar::xmalloc {
namespace {

using platform::Buffer;

// One queue of two slots over a zeroed side table of its own.
class OneQueue {
 public:
  OneQueue() : table_(BlockQueues::words(1, 2)) { table_.zero(); }
  BlockQueues device() const { return BlockQueues::over(table_.data(), 1, 2); }

 private:
  Buffer<std::uint64_t> table_;
};

// Two enqueues meet on one slot of a queue of two slots, played step by
// step (as warps of a GPU interleave them): a stalled enqueue S read the
// tail when it was message 0 and then its slot; meanwhile message 0 is
// dequeued from the tail, messages 1 and 2 are enqueued and 1 is dequeued.
// The enqueue E of message 3 reads the tail (message 2) and its slot, which
// is message 0's slot and still holds what S read. S now moves message 0
// into that slot, so E's first compare-and-swap on it fails although the
// slot holds an older message than 2. E must still put message 2 there
// before it appends 3; otherwise no dequeue can ever take message 2 (its
// slot names a block long gone), the queue stays full, and its block is
// lost.
struct StaleMoveScript {
  BlockQueues a;
  std::uint64_t* out;
  DYNASOAR_HD void operator()(std::size_t) const {
    const std::uint32_t qi = 0;
    std::uint32_t p = 0;
    a.enqueue(qi, 11);                                      // message 0, in the tail word
    const std::uint64_t s_tail = a.tail_word(qi);           // S reads the tail,
    const std::uint64_t s_seen = a.slot_word(qi, s_tail);   // and its slot; S stalls
    a.dequeue(qi, p);                                       // 11, from the tail word
    a.enqueue(qi, 12);                                      // message 1 (queue was empty)
    a.enqueue(qi, 13);                                      // message 2; 1 moves to its slot
    a.dequeue(qi, p);                                       // 12, from its slot
    const std::uint64_t e_tail = a.tail_word(qi);           // E reads the tail,
    const std::uint64_t e_seen = a.slot_word(qi, e_tail);   // and its slot
    out[0] = e_seen == s_seen;                              // the slot S read, unchanged
    out[1] = a.append(qi, 99, s_tail, s_seen);              // S moves message 0; too late to append
    out[2] = a.append(qi, 14, e_tail, e_seen);              // E
    out[3] = a.size(qi);
    out[10] = a.payload_at(qi, 0) == 13;                    // what an audit reads
    for (int i = 0; i < 3; ++i) {
      p = 0;
      out[4 + 2 * i] = a.dequeue(qi, p);
      out[5 + 2 * i] = p;
    }
  }
};

TEST(CMallocXMallocQueues, EnqueueMovesTheTailIntoItsSlotPastAStaleMove) {
  OneQueue queue;
  Buffer<std::uint64_t> out(11);
  platform::parallel_for(1, StaleMoveScript{queue.device(), out.data()});
  platform::synchronize();
  const std::vector<std::uint64_t> o = out.to_vector();
  ASSERT_EQ(o[0], 1u) << "the script did not set up the interleaving";
  EXPECT_EQ(o[1], BlockQueues::kContended) << "the stale enqueue must not append";
  EXPECT_EQ(o[2], BlockQueues::kDone);
  EXPECT_EQ(o[3], 2u);
  EXPECT_EQ(o[10], 1u) << "the queue's head names another block than message 2's";
  EXPECT_EQ(o[4], BlockQueues::kDone) << "message 2 is not in its slot: the queue is stuck";
  EXPECT_EQ(o[5], 13u);
  EXPECT_EQ(o[6], BlockQueues::kDone);
  EXPECT_EQ(o[7], 14u);
  EXPECT_EQ(o[8], BlockQueues::kEmpty);
}

// Workers enqueue numbered messages into one queue of two slots and
// dequeue from it, one attempt each, as fast as they can; then the queue
// is emptied. Every message that an enqueue put in must come out exactly
// once, and no other. A message left in a slot that no dequeue accepts (the
// stuck queue of a lost tail move) or one taken twice fails it; so would an
// enqueue that reported kContended after changing the queue (append's
// bounded move gives up with the tail untouched). It needs interleavings
// that a GPU's warps make all the time: on a two-core host, three runs of
// 100 000 rounds did not catch the single compare-and-swap of the first
// version, which the step-by-step script above does.
struct QueuePingPong {
  BlockQueues a;
  unsigned* put;    // per message: 1 once an enqueue of it returned kDone
  unsigned* taken;  // per message: how many dequeues returned it
  std::size_t workers_wanted;
  std::uint32_t rounds;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t) const {
    if (w >= workers_wanted) return;
    const std::uint32_t qi = 0;
    const std::size_t messages = workers_wanted * rounds + 1;
    for (std::uint32_t r = 0; r < rounds; ++r) {
      const auto id = static_cast<std::uint32_t>(w * rounds + r) + 1;  // 0: no message
      if (a.enqueue(qi, id) == BlockQueues::kDone) platform::atomic_store(&put[id], 1u);
      std::uint32_t got = 0;
      if (a.dequeue(qi, got) == BlockQueues::kDone)
        platform::atomic_fetch_add(&taken[got < messages ? got : 0], 1u);  // 0: none of ours
    }
  }
};

// What is left in the queue after the workers: at most `slots` dequeues
// (bounded), stopping at the first that does not take a message.
struct EmptyQueue {
  BlockQueues a;
  unsigned* taken;
  unsigned* left;
  std::size_t messages;
  DYNASOAR_HD void operator()(std::size_t) const {
    const std::uint32_t qi = 0;
    for (std::uint32_t i = 0; i < a.slots; ++i) {
      std::uint32_t got = 0;
      if (a.dequeue(qi, got) != BlockQueues::kDone) break;
      taken[got < messages ? got : 0] += 1;
      *left += 1;
    }
    left[1] = a.size(qi);
  }
};

TEST(CMallocXMallocQueues, ContendedQueueHandsOutEveryMessageOnce) {
  const std::size_t workers = platform::kCudaBuild ? 4096 : 16;
  const auto rounds = static_cast<std::uint32_t>(test::stress_rounds(platform::kCudaBuild ? 64 : 4000));
  OneQueue queue;
  const std::size_t messages = workers * rounds + 1;
  Buffer<unsigned> put(messages), taken(messages), left(2);
  put.zero();
  taken.zero();
  left.zero();
  platform::parallel_workers(workers, QueuePingPong{queue.device(), put.data(), taken.data(),
                                                    workers, rounds});
  platform::synchronize();
  platform::parallel_for(1, EmptyQueue{queue.device(), taken.data(), left.data(), messages});
  platform::synchronize();
  const std::vector<unsigned> p = put.to_vector(), t = taken.to_vector(), l = left.to_vector();
  EXPECT_EQ(l[1], 0u) << "the queue still holds messages that no dequeue takes (stuck)";
  std::size_t moved = 0, lost = 0, doubled = 0, invented = 0;
  for (std::size_t id = 1; id < messages; ++id) {
    moved += t[id] == 1 ? 1 : 0;
    lost += p[id] == 1 && t[id] == 0 ? 1 : 0;
    doubled += t[id] > 1 ? 1 : 0;
    invented += p[id] == 0 && t[id] != 0 ? 1 : 0;
  }
  EXPECT_EQ(t[0], 0u) << "a dequeue returned a payload that is no message of this test";
  EXPECT_EQ(lost, 0u) << "messages put in never came out";
  EXPECT_EQ(doubled, 0u) << "messages came out twice";
  EXPECT_EQ(invented, 0u) << "messages came out that no enqueue reported as put in";
  // The lanes of a warp run each enqueue and dequeue together, racing for
  // the same tail and head word, so at most one of them succeeds per round
  // and warp, and the warps of the whole GPU race for those two words too:
  // messages per worker is no measure of the queue. What the test needs is
  // every slot reused many times: more messages than warps (on the GPU 128,
  // 64 times the two slots). compute-sanitizer serialises the warps, so few
  // messages pass there; its run checks the accesses, the plain run checks
  // the load.
  const std::size_t warps = (workers + platform::warp::kBuildLanes - 1) / platform::warp::kBuildLanes;
  if (platform::kCudaBuild && test::under_sanitizer())
    EXPECT_GT(moved, 0u) << "no message passed the queue";
  else
    EXPECT_GT(moved, warps) << "the queue passed too few messages for the test to mean much";
}

}  // namespace
}  // namespace dynasoar::xmalloc
