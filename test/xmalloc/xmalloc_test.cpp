// XMalloc's own invariants (Huang et al. 2013): coalesced blocks go back only with
// their last piece (Sec. 5.1), full queues hand blocks to the underlying
// ScatterAlloc (Sec. 5.2), and after a contended churn every block is
// accounted for: held by its pieces' owners or queued, never both, and
// exactly the ScatterAlloc chunks in use. The raw conformance suite
// (cmalloc_test.cpp) runs on XMalloc too. Host tier and device tier; the
// scripts run one thread, so that a warp of the GPU is one lane there too.
#include "dynasoar/allocator/xmalloc/xmalloc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "dynasoar/allocator/raw/pool_handle.h"
#include "support/rng.h"
#include "support/sanitized.h"
#include "support/stress_rounds.h"
#include "support/user_data.h"

namespace dynasoar::xmalloc {
namespace {

using platform::Buffer;
using raw::PoolHandle;
using scatter::kPageBytes;
using scatter::ScatterAlloc;

// Whether ScatterAlloc counts the chunk or run at `address` as in use.
DYNASOAR_HD bool underlying_holds(const ScatterAlloc& s, std::uint64_t address) {
  const std::uint64_t q = (address - s.mem) / kPageBytes;
  const std::uint64_t offset = (address - s.mem) % kPageBytes;
  const std::uint32_t c = platform::atomic_load(&s.pages[q].chunk);
  if (c >= ScatterAlloc::kRunHead) return c != ScatterAlloc::kRunTail && offset == 0;
  if (c == 0 || offset % c != 0) return false;
  const std::uint64_t spot = offset / c;
  return ((platform::atomic_load(&s.pages[q].bits[spot / 64]) >> (spot % 64)) & 1u) != 0;
}

// Blocks in all queues of class k.
template <class A>
DYNASOAR_HD std::uint64_t queued_in_class(const A& a, std::uint32_t k) {
  std::uint64_t n = 0;
  for (std::uint32_t q = 0; q < a.queues; ++q) n += a.buffers.size(a.queue_of(k, q));
  return n;
}

// --- coalescing (Sec. 5.1) ---------------------------------------------------------------

// One thread plays a warp's coalesced malloc (new_block by the leader,
// piece_at by every lane) and frees the pieces one by one.
struct PiecesScript {
  XMalloc a;
  std::uint64_t* out;
  DYNASOAR_HD void operator()(std::size_t) const {
    constexpr std::uint32_t kPiece = kHeaderBytes + 16;  // a 16-byte request
    constexpr std::uint32_t kPieces = 32;
    const std::uint32_t k = class_of(kPiece * kPieces);
    const std::uint64_t block = a.new_block(kPiece, kPieces);
    void* p[kPieces];
    for (std::uint32_t i = 0; i < kPieces; ++i) p[i] = a.piece_at(block, kPiece, i);
    out[0] = block;
    out[1] = XMalloc::block_of(p[kPieces - 1]);
    out[2] = XMalloc::live_pieces(block);
    for (std::uint32_t i = 0; i + 1 < kPieces; ++i) a.free(p[i]);
    out[3] = XMalloc::live_pieces(block);
    out[4] = queued_in_class(a, k);
    out[5] = underlying_holds(a.under, block);
    a.free(p[kPieces - 1]);
    out[6] = queued_in_class(a, k);
    out[7] = underlying_holds(a.under, block);  // queued blocks stay ScatterAlloc's chunks
    out[8] = a.new_block(kPiece, kPieces);      // the queued block serves the next warp
    out[9] = queued_in_class(a, k);
    out[10] = reinterpret_cast<std::uint64_t>(a.piece_at(out[8], kPiece, 3));
  }
};

TEST(CMallocXMalloc, CoalescedBlockGoesBackOnlyWithItsLastPiece) {
  PoolHandle<XMalloc> pool(std::uint64_t{64} * kPageBytes);
  Buffer<std::uint64_t> out(11);
  platform::parallel_for(1, PiecesScript{pool.device(), out.data()});
  platform::synchronize();
  const std::vector<std::uint64_t> o = out.to_vector();
  ASSERT_NE(o[0], 0u);
  EXPECT_EQ(o[1], o[0]) << "a piece finds its block through its header";
  EXPECT_EQ(o[2], 32u) << "the block counts its pieces";
  EXPECT_EQ(o[3], 1u) << "31 of 32 pieces freed";
  EXPECT_EQ(o[4], 0u) << "the block was queued before its last piece was freed";
  EXPECT_EQ(o[5], 1u) << "the block went back to ScatterAlloc before its last piece was freed";
  EXPECT_EQ(o[6], 1u) << "the last piece's free queues the block";
  EXPECT_EQ(o[7], 1u);
  EXPECT_EQ(o[8], o[0]) << "the next block of the class comes from the queue";
  EXPECT_EQ(o[9], 0u);
  EXPECT_EQ(o[10], o[0] + 3 * 32 + kHeaderBytes) << "pieces lie side by side after their headers";
  EXPECT_NO_THROW(pool.check_errors());
}

// The lanes of a warp that ask for one size together share blocks: on the
// GPU fewer blocks than requests; on the host (one lane a warp) one each.
struct OnePerThread {
  XMalloc a;
  std::uint64_t* blocks;
  DYNASOAR_HD void operator()(std::size_t i) const {
    void* p = a.malloc(16);
    blocks[i] = p == nullptr ? 0 : XMalloc::block_of(p);
  }
};

TEST(CMallocXMalloc, LanesOfAWarpShareABlock) {
  constexpr std::size_t kThreads = 4096;
  PoolHandle<XMalloc> pool(std::uint64_t{4} << 20);
  Buffer<std::uint64_t> blocks(kThreads);
  platform::parallel_for(kThreads, OnePerThread{pool.device(), blocks.data()});
  platform::synchronize();
  std::vector<std::uint64_t> b = blocks.to_vector();
  EXPECT_EQ(std::count(b.begin(), b.end(), 0u), 0);
  std::sort(b.begin(), b.end());
  const auto distinct = static_cast<std::size_t>(std::unique(b.begin(), b.end()) - b.begin());
  if (platform::kCudaBuild)
    EXPECT_LT(distinct, kThreads) << "no warp's requests were coalesced";
  else
    EXPECT_EQ(distinct, kThreads) << "a host warp has one lane: one block per request";
  EXPECT_NO_THROW(pool.check_errors());
}

// A host thread is a warp of one lane, so the arithmetic that the lanes of
// a larger group run (who leads which share, which piece each lane takes,
// the count a leader sets) is played here for 32 lanes, from share_of.
// Groups: the whole warp, a single lane, alternate lanes, and random masks;
// piece sizes from the smallest to one piece per block.
TEST(CMallocXMalloc, EveryLaneOfAGroupTakesItsOwnPieceOfAShareItsLeaderCounts) {
  std::vector<std::uint32_t> masks = {0xFFFFFFFFu, 0x1u, 0x80000000u, 0x55555555u, 0xAAAAAAAAu,
                                      0xFFFFFFFEu, 0x7FFFFFFFu};
  test::Rng rng(0x5A4E, 0);
  for (int i = 0; i < 200; ++i) masks.push_back(static_cast<std::uint32_t>(rng.next()) | 1u << rng.below(32));
  for (const std::uint32_t piece : {32u, 48u, 64u, 80u, 1040u, 2016u, 2048u, 4080u, 4096u}) {
    const std::uint32_t per_block = kLargestClass / piece;
    for (const std::uint32_t group : masks) {
      SCOPED_TRACE("piece " + std::to_string(piece) + ", group " + std::to_string(group));
      std::uint32_t lanes_of_leader[32] = {}, indices_of_leader[32] = {}, counted[32] = {};
      for (unsigned lane = 0; lane < 32; ++lane) {
        if (((group >> lane) & 1u) == 0) continue;
        const XMalloc::Share s = XMalloc::share_of(group, lane, piece);
        ASSERT_LT(s.leader, 32u);
        ASSERT_EQ((group >> s.leader) & 1u, 1u) << "the leader is no lane of the group";
        ASSERT_LE(s.leader, lane) << "a share's leader is its lowest lane";
        EXPECT_EQ(s.index == 0, s.leader == lane) << "the leader takes piece 0, and only it";
        ASSERT_LT(s.index, s.pieces) << "a piece beyond the count its leader sets";
        ASSERT_LT(s.index, 32u);
        EXPECT_EQ(indices_of_leader[s.leader] & (1u << s.index), 0u) << "two lanes take one piece";
        indices_of_leader[s.leader] |= 1u << s.index;
        ++lanes_of_leader[s.leader];
        if (s.leader == lane) counted[lane] = s.pieces;
        const XMalloc::Share of_leader = XMalloc::share_of(group, s.leader, piece);
        EXPECT_EQ(s.pieces, of_leader.pieces) << "a lane and its leader disagree on the count";
        EXPECT_LE(std::uint64_t{s.pieces} * piece, kLargestClass) << "the share does not fit a block";
      }
      std::uint32_t total = 0;
      for (unsigned l = 0; l < 32; ++l) {
        EXPECT_EQ(counted[l], lanes_of_leader[l]) << "lane " << l << " counts other pieces than it hands out";
        EXPECT_LE(lanes_of_leader[l], per_block);
        total += lanes_of_leader[l];
      }
      EXPECT_EQ(total, static_cast<std::uint32_t>(platform::popc(group))) << "a lane got no share";
    }
  }
}

// One thread plays a group of 32 lanes through malloc's steps (share_of,
// new_block by each leader, the leader's block for every lane, piece_at)
// and then frees every piece: each block's count must be its pieces, the
// pieces distinct, and every block queued again once its pieces are freed.
struct GroupScript {
  XMalloc a;
  std::uint32_t group;
  std::uint32_t piece;
  std::uint64_t* out;  // [0] bad counts, [1] overlapping pieces, [2] nullptrs, [3] blocks, [4] queued after
  DYNASOAR_HD void operator()(std::size_t) const {
    std::uint64_t block_of_lane[32] = {}, data[32] = {};
    XMalloc::Share share[32] = {};
    for (unsigned lane = 0; lane < 32; ++lane) {
      if (((group >> lane) & 1u) == 0) continue;
      share[lane] = XMalloc::share_of(group, lane, piece);
      if (share[lane].index == 0) block_of_lane[lane] = a.new_block(piece, share[lane].pieces);
    }
    for (unsigned lane = 0; lane < 32; ++lane) {
      if (((group >> lane) & 1u) == 0) continue;
      const std::uint64_t block = block_of_lane[share[lane].leader];
      data[lane] = block == 0 ? 0
                              : reinterpret_cast<std::uint64_t>(a.piece_at(block, piece, share[lane].index));
      if (data[lane] == 0) ++out[2];
    }
    for (unsigned lane = 0; lane < 32; ++lane) {
      if (data[lane] == 0) continue;
      const std::uint64_t block = XMalloc::block_of(reinterpret_cast<void*>(data[lane]));
      std::uint32_t mine = 0;
      for (unsigned other = 0; other < 32; ++other) {
        if (data[other] == 0) continue;
        if (other != lane && data[other] + piece > data[lane] && data[lane] + piece > data[other]) ++out[1];
        if (XMalloc::block_of(reinterpret_cast<void*>(data[other])) == block) ++mine;
      }
      if (XMalloc::live_pieces(block) != mine) ++out[0];
      if (share[lane].index == 0) ++out[3];
    }
    for (unsigned lane = 0; lane < 32; ++lane)
      if (data[lane] != 0) a.free(reinterpret_cast<void*>(data[lane]));
    for (std::uint32_t k = 0; k < kClasses; ++k) out[4] += queued_in_class(a, k);
  }
};

TEST(CMallocXMalloc, AGroupsBlocksCountTheirPiecesAndComeBackWithTheLast) {
  for (const std::uint32_t piece : {32u, 64u, 2016u, 4096u}) {
    for (const std::uint32_t group : {0xFFFFFFFFu, 0x55555555u, 0x80000001u, 0x1u}) {
      SCOPED_TRACE("piece " + std::to_string(piece) + ", group " + std::to_string(group));
      PoolHandle<XMalloc> pool(std::uint64_t{1} << 20);
      Buffer<std::uint64_t> out(5);
      out.zero();
      platform::parallel_for(1, GroupScript{pool.device(), group, piece, out.data()});
      platform::synchronize();
      const std::vector<std::uint64_t> o = out.to_vector();
      EXPECT_EQ(o[0], 0u) << "a block's count is not its pieces";
      EXPECT_EQ(o[1], 0u) << "pieces overlap";
      EXPECT_EQ(o[2], 0u) << "a lane got no piece from a pool with room";
      const std::uint32_t lanes = static_cast<std::uint32_t>(platform::popc(group));
      const std::uint32_t per_block = kLargestClass / piece;
      EXPECT_EQ(o[3], (lanes + per_block - 1) / per_block) << "blocks taken for the group";
      EXPECT_EQ(o[4], o[3]) << "a block did not come back with its last piece";
      EXPECT_NO_THROW(pool.check_errors());
    }
  }
}

// --- buffering (Sec. 5.2) ------------------------------------------------------------------

// Five single blocks freed into one queue of two slots: the first two are
// queued, the others go back to ScatterAlloc; the queue hands them out first
// in, first out.
struct OverflowScript {
  XMalloc a;
  std::uint64_t* out;
  DYNASOAR_HD void operator()(std::size_t) const {
    constexpr int kN = 5;
    void* p[kN];
    std::uint64_t b[kN];
    for (int i = 0; i < kN; ++i) {
      p[i] = a.malloc(16);
      b[i] = XMalloc::block_of(p[i]);
    }
    for (int i = 0; i < kN; ++i) a.free(p[i]);
    const std::uint32_t qi = a.queue_of(class_of(kHeaderBytes + 16), 0);
    out[0] = a.buffers.size(qi);
    out[1] = a.queued_block(qi, 0) == b[0];
    out[2] = a.queued_block(qi, 1) == b[1];
    for (int i = 0; i < kN; ++i) out[3 + i] = underlying_holds(a.under, b[i]);
    out[8] = XMalloc::block_of(a.malloc(16)) == b[0];
    out[9] = XMalloc::block_of(a.malloc(16)) == b[1];
    out[10] = a.buffers.size(qi);
    const std::uint64_t third = XMalloc::block_of(a.malloc(16));  // from ScatterAlloc
    out[11] = underlying_holds(a.under, third);
  }
};

// A pool whose queues are one per class of two slots: every slot is reused
// all the time, and a queue is full after two blocks.
PoolHandle<XMalloc> one_queue_of_two_slots() {
  Options options;
  options.queues = 1;
  options.queue_slots = 2;
  return PoolHandle<XMalloc>(std::uint64_t{64} * kPageBytes, options);
}

TEST(CMallocXMalloc, FullQueueHandsBlocksToTheUnderlyingAllocator) {
  PoolHandle<XMalloc> pool = one_queue_of_two_slots();
  ASSERT_EQ(pool.device().queues, 1u);
  ASSERT_EQ(pool.device().buffers.slots, 2u);
  Buffer<std::uint64_t> out(12);
  platform::parallel_for(1, OverflowScript{pool.device(), out.data()});
  platform::synchronize();
  const std::vector<std::uint64_t> o = out.to_vector();
  EXPECT_EQ(o[0], 2u) << "a queue of two slots holds two blocks";
  EXPECT_EQ(o[1], 1u) << "the first block freed is the queue's head";
  EXPECT_EQ(o[2], 1u);
  EXPECT_EQ(o[3], 1u) << "a queued block stays allocated in ScatterAlloc";
  EXPECT_EQ(o[4], 1u);
  for (int i = 5; i < 8; ++i) EXPECT_EQ(o[i], 0u) << "block " << i - 3 << " found the queue full";
  EXPECT_EQ(o[8], 1u) << "first in, first out (Fig. 8)";
  EXPECT_EQ(o[9], 1u);
  EXPECT_EQ(o[10], 0u);
  EXPECT_EQ(o[11], 1u);
  EXPECT_NO_THROW(pool.check_errors());
}

// --- the underlying allocator is asked by one lane at a time ------------------------------

// The leader of a coalesced group takes the group's block while the other
// lanes wait at the shuffle that hands it over; ScatterAlloc must serve it
// on its one-lane path, with no warp-synchronous code of its own in that
// branch (XMalloc::attach). So the underlying allocator never coalesces,
// whatever the pool's or XMalloc's options say.
TEST(CMallocXMalloc, UnderlyingAllocatorServesLeadersOnItsOneLanePath) {
  raw::PoolOptions pool_options;
  pool_options.scatter.coalesce = true;
  PoolHandle<XMalloc> from_pool_options(std::uint64_t{64} * kPageBytes, pool_options);
  EXPECT_TRUE(from_pool_options.device().coalesce) << "XMalloc's own coalescing stays on";
  EXPECT_FALSE(from_pool_options.device().under.coalesce);
  Options options;
  options.underlying.coalesce = true;
  PoolHandle<XMalloc> from_options(std::uint64_t{64} * kPageBytes, options);
  EXPECT_FALSE(from_options.device().under.coalesce);

  // And it searches from one active super block (XMalloc::attach; the
  // window of 8 failed CMallocXMalloc.WarpsThatFreeWholeBlocksTakeThemBack),
  // where the same options give ScatterAlloc alone a window of 4.
  raw::PoolOptions windowed;
  windowed.scatter.super_block_pages = 16;
  windowed.scatter.active_window = 4;
  PoolHandle<ScatterAlloc> alone(std::uint64_t{64} * kPageBytes, windowed);
  EXPECT_EQ(alone.device().window, 4u);
  PoolHandle<XMalloc> under_xmalloc(std::uint64_t{64} * kPageBytes, windowed);
  EXPECT_EQ(under_xmalloc.device().under.window, 1u);
}

// --- contended churn, then an audit -----------------------------------------------------

using test::fill_user_data;
using test::Held;
using test::user_data_intact;

// Mostly small requests, some of the largest classes, a few large ones
// (runs of ScatterAlloc pages).
DYNASOAR_HD std::uint64_t churn_size(test::Rng& rng) {
  const std::uint64_t r = rng.below(64);
  if (r == 0) return 4096 + 8 * rng.below(1024);
  if (r < 4) return 1024 + 8 * rng.below(382);
  return 8 * (1 + rng.below(40));
}

constexpr int kSlots = 4;

// Each worker frees or fills a random one of its slots, `rounds` times,
// checking the pattern before each free, and keeps what it holds at the
// end in held[w * kSlots ...]. counters: [0] broken patterns, [1] nullptrs.
struct Churn {
  XMalloc a;
  Held* held;
  unsigned long long* counters;
  std::size_t workers_wanted;
  int rounds;
  // Lanes take different paths to each step: a quarter of them first run a
  // data-dependent number of mixing steps, so that the lanes of a warp may
  // reach malloc and free at different times. More divergence for the
  // audit; the exact shape in which the handover failed (a lane left behind
  // in the free before) is WarpsThatFreeWholeBlocksTakeThemBack's.
  bool diverge = false;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t) const {
    if (w >= workers_wanted) return;
    test::Rng rng(0x3A11, w);
    Held mine[kSlots] = {};
    unsigned long long broken = 0, nulls = 0;
    std::uint64_t detour = w;
    for (int r = 0; r < rounds; ++r) {
      if (diverge && rng.below(4) == 0)
        for (std::uint64_t i = 0, n = rng.below(64); i < n; ++i) detour = platform::mix64(detour);
      Held& h = mine[rng.below(kSlots)];
      if (h.address != 0) {
        if (!user_data_intact(h.address, h.bytes, h.sig)) ++broken;
        a.free(reinterpret_cast<void*>(h.address));
        h.address = 0;
        continue;
      }
      const std::uint64_t bytes = churn_size(rng);
      h = {reinterpret_cast<std::uint64_t>(a.malloc(bytes)), bytes,
           platform::mix64(w * 7919ull + static_cast<std::uint64_t>(r)) ^ detour};  // the detour is used
      if (h.address == 0)
        ++nulls;
      else
        fill_user_data(h.address, h.bytes, h.sig);
    }
    for (int s = 0; s < kSlots; ++s) {
      if (mine[s].address != 0 && !user_data_intact(mine[s].address, mine[s].bytes, mine[s].sig))
        ++broken;
      held[w * kSlots + static_cast<std::size_t>(s)] = mine[s];
    }
    platform::atomic_fetch_add(&counters[0], broken);
    platform::atomic_fetch_add(&counters[1], nulls);
  }
};

// What the audit reads from the device: the queued blocks with their class
// and a flag word each, ScatterAlloc's chunks in use, and the blocks of the
// held pieces with their counts.
struct Snapshot {
  std::vector<std::uint64_t> queued, queued_bad, in_use, held_blocks, held_counts;
  unsigned underlying_errors = 0;
};

// Queue qi: its blocks; bad[...] is non-zero for a block whose count is
// not 0, whose class word is not the queue's class, or that ScatterAlloc
// does not count as in use.
struct ListQueue {
  XMalloc a;
  std::uint64_t* blocks;
  std::uint64_t* bad;
  unsigned long long* n;
  DYNASOAR_HD void operator()(std::size_t qi) const {
    const auto q = static_cast<std::uint32_t>(qi);
    const std::uint32_t k = q / a.queues;
    const std::uint32_t size = a.buffers.size(q);
    for (std::uint32_t i = 0; i < size && i < a.buffers.slots; ++i) {
      const std::uint64_t b = a.queued_block(q, i);
      const unsigned long long at = platform::atomic_fetch_add(n, 1ull);
      blocks[at] = b;
      bad[at] = (XMalloc::live_pieces(b) != 0 ? 1u : 0u) |
                (XMalloc::class_word(b) != ((kBlockTag << 16) | k) ? 2u : 0u) |
                (!underlying_holds(a.under, b) ? 4u : 0u);
    }
    if (size > a.buffers.slots) platform::atomic_fetch_add(n, 1ull << 40);  // a corrupt queue
  }
};

// Page q of ScatterAlloc: the address of each chunk in use and of a run's head.
struct ListInUse {
  ScatterAlloc s;
  std::uint64_t* out;
  unsigned long long* n;
  DYNASOAR_HD void operator()(std::size_t q) const {
    const std::uint32_t c = platform::atomic_load(&s.pages[q].chunk);
    const std::uint64_t page = s.mem + q * kPageBytes;
    if (c >= ScatterAlloc::kRunHead) {
      if (c != ScatterAlloc::kRunTail) out[platform::atomic_fetch_add(n, 1ull)] = page;
      return;
    }
    for (std::uint32_t spot = 0; spot < ScatterAlloc::spots_of(c); ++spot)
      if ((platform::atomic_load(&s.pages[q].bits[spot / 64]) >> (spot % 64)) & 1u)
        out[platform::atomic_fetch_add(n, 1ull)] = page + std::uint64_t{spot} * c;
  }
};

struct BlocksOfHeld {
  const Held* held;
  std::uint64_t* blocks;
  std::uint64_t* counts;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (held[i].address == 0) {
      blocks[i] = counts[i] = 0;
      return;
    }
    blocks[i] = XMalloc::block_of(reinterpret_cast<void*>(held[i].address));
    counts[i] = XMalloc::live_pieces(blocks[i]);
  }
};

struct ReadUnderlyingError {
  XMalloc a;
  unsigned* out;
  DYNASOAR_HD void operator()(std::size_t) const { *out = platform::atomic_load(a.under.error); }
};

struct FreeHeld {
  XMalloc a;
  const Held* held;
  DYNASOAR_HD void operator()(std::size_t i) const {
    a.free(reinterpret_cast<void*>(held[i].address));
  }
};

struct FreeAddresses {
  XMalloc a;
  const std::uint64_t* addresses;
  DYNASOAR_HD void operator()(std::size_t i) const {
    a.free(reinterpret_cast<void*>(addresses[i]));
  }
};

// parallel_for, then waits.
template <class F>
void run_one(std::size_t n, F f) {
  platform::parallel_for(n, f);
  platform::synchronize();
}

Snapshot snapshot(const PoolHandle<XMalloc>& pool, const Buffer<Held>& held) {
  const XMalloc a = pool.device();
  const std::size_t queues = std::size_t{kClasses} * a.queues;
  Snapshot s;
  {
    Buffer<std::uint64_t> blocks(queues * a.buffers.slots), bad(queues * a.buffers.slots);
    Buffer<unsigned long long> n(1);
    n.zero();
    run_one(queues, ListQueue{a, blocks.data(), bad.data(), n.data()});
    const unsigned long long count = n.to_vector()[0];
    EXPECT_LT(count, 1ull << 40) << "a queue holds more than its slots";
    s.queued = blocks.to_vector();
    s.queued_bad = bad.to_vector();
    s.queued.resize(count & ((1ull << 40) - 1));
    s.queued_bad.resize(s.queued.size());
  }
  {
    Buffer<std::uint64_t> out(a.under.page_count * (kPageBytes / kAlignment));
    Buffer<unsigned long long> n(1);
    n.zero();
    run_one(a.under.page_count, ListInUse{a.under, out.data(), n.data()});
    s.in_use = out.to_vector();
    s.in_use.resize(n.to_vector()[0]);
  }
  {
    Buffer<std::uint64_t> blocks(held.size()), counts(held.size());
    run_one(held.size(), BlocksOfHeld{held.data(), blocks.data(), counts.data()});
    s.held_blocks = blocks.to_vector();
    s.held_counts = counts.to_vector();
  }
  Buffer<unsigned> e(1);
  run_one(1, ReadUnderlyingError{a, e.data()});
  s.underlying_errors = e.to_vector()[0];
  return s;
}

// The invariants: queued blocks are distinct, have no live piece, carry
// their queue's class and are ScatterAlloc chunks in use; a held piece's
// block is not queued and counts exactly the held pieces in it; and
// ScatterAlloc's chunks in use are exactly the queued blocks and the held
// pieces' blocks (no byte lost, none counted twice).
void expect_accounted(const Snapshot& s, const std::vector<Held>& held) {
  std::vector<std::uint64_t> queued = s.queued;
  std::sort(queued.begin(), queued.end());
  EXPECT_EQ(std::adjacent_find(queued.begin(), queued.end()), queued.end())
      << "a block is queued twice";
  for (std::size_t i = 0; i < s.queued.size(); ++i)
    EXPECT_EQ(s.queued_bad[i], 0u)
        << "queued block " << s.queued[i] << " (1: live pieces, 2: wrong class, 4: not in use)";
  std::vector<std::uint64_t> blocks;
  for (std::size_t i = 0; i < held.size(); ++i) {
    if (held[i].address == 0) continue;
    const std::uint64_t b = s.held_blocks[i];
    EXPECT_FALSE(std::binary_search(queued.begin(), queued.end(), b))
        << "the block of a held piece is queued";
    blocks.push_back(b);
  }
  std::sort(blocks.begin(), blocks.end());
  for (std::size_t i = 0; i < held.size(); ++i) {
    if (held[i].address == 0) continue;
    const auto pieces = static_cast<std::uint64_t>(
        std::upper_bound(blocks.begin(), blocks.end(), s.held_blocks[i]) -
        std::lower_bound(blocks.begin(), blocks.end(), s.held_blocks[i]));
    EXPECT_EQ(s.held_counts[i], pieces) << "a block's count is not its held pieces";
  }
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  std::vector<std::uint64_t> expected = queued;
  expected.insert(expected.end(), blocks.begin(), blocks.end());
  std::sort(expected.begin(), expected.end());
  std::vector<std::uint64_t> in_use = s.in_use;
  std::sort(in_use.begin(), in_use.end());
  EXPECT_EQ(in_use, expected)
      << "ScatterAlloc's chunks in use are not the queued blocks and the held pieces' blocks";
  EXPECT_EQ(s.underlying_errors, 0u) << "XMalloc made ScatterAlloc fail or free wrongly";
}

// After a churn whose workers counted broken patterns in counters[0] and
// failed allocations in counters[1]: neither happened, and no flag is up.
void expect_churn_clean(const Buffer<unsigned long long>& counters, PoolHandle<XMalloc>& pool) {
  const std::vector<unsigned long long> c = counters.to_vector();
  EXPECT_EQ(c[0], 0u) << "patterns broken: memory was handed out twice";
  EXPECT_EQ(c[1], 0u) << "allocations failed although the pool had room";
  EXPECT_NO_THROW(pool.check_errors());
}

TEST(CMallocXMalloc, EveryBlockIsAccountedForAfterContendedChurn) {
  const std::size_t workers = platform::kCudaBuild ? 2048 : 16;
  const int rounds = test::stress_rounds(platform::kCudaBuild ? 400 : 4000);
  struct Case {
    std::uint32_t queues;
    bool diverge;
  };
  // Case 0: the default queues and slots (Options{}); 2: two queues of two
  // slots per class, which overflow all the time.
  for (const Case run : {Case{0, false}, Case{2, false}, Case{0, true}}) {
    Options options;
    if (run.queues != 0) {
      options.queues = run.queues;
      options.queue_slots = 2;
    }
    SCOPED_TRACE("queues per class: " + std::to_string(options.queues) +
                 (run.diverge ? ", lanes on different paths" : ""));
    // Room for everything the workers hold at once, many times over.
    PoolHandle<XMalloc> pool(workers * kSlots * std::uint64_t{16384} + (std::uint64_t{4} << 20),
                             options);
    Buffer<Held> held(workers * kSlots);
    Buffer<unsigned long long> counters(2);
    counters.zero();
    platform::parallel_workers(workers,
                               Churn{pool.device(), held.data(), counters.data(), workers, rounds, run.diverge});
    platform::synchronize();
    expect_churn_clean(counters, pool);

    const std::vector<Held> h = held.to_vector();
    expect_accounted(snapshot(pool, held), h);

    run_one(h.size(), FreeHeld{pool.device(), held.data()});
    EXPECT_NO_THROW(pool.check_errors());
    std::vector<Held> none(h.size(), Held{0, 0, 0});
    const Snapshot after = snapshot(pool, held);
    expect_accounted(after, none);
    EXPECT_EQ(after.in_use.size(), after.queued.size()) << "all freed: only queued blocks remain";
  }
}

// The pattern of the back-end suite's object churn, on the raw allocator:
// every worker allocates `bytes` each round, checks it, and frees it again
// in even rounds, so that the lanes of a warp free the pieces of one block
// together (one subtraction, the block to the queue) and take it back from
// their queue in the next round. 2000 bytes: two pieces per block, so a
// warp's group has 16 leaders that take blocks at once. Then the audit.
TEST(CMallocXMalloc, WarpsThatFreeWholeBlocksTakeThemBack) {
  const std::size_t workers = platform::kCudaBuild ? 8192 : 16;
  // DYNASOAR_STRESS_ROUNDS lowers the rounds of an instrumented run, and
  // never raises the device's 16 (the sanitizers' 40 took minutes).
  const int rounds =
      platform::kCudaBuild ? std::min(16, test::stress_rounds(16)) : test::stress_rounds(400);
  for (const std::uint64_t bytes : {std::uint64_t{48}, std::uint64_t{2000}}) {
    SCOPED_TRACE("bytes: " + std::to_string(bytes));
    const std::size_t kept = workers * static_cast<std::size_t>(rounds / 2);
    // A page per piece held at the end and per piece in flight, and slack:
    // two lanes that meet share a 4 KiB block, but a lane alone gets a
    // 3 KiB block for its 2000 bytes, the only chunk of its page. Two KiB
    // per piece ran out under compute-sanitizer's racecheck and synccheck,
    // which run a warp's lanes apart.
    PoolHandle<XMalloc> pool((kept + 2 * workers) * std::uint64_t{kPageBytes} +
                             (std::uint64_t{4} << 20));
    Buffer<Held> held(kept);
    held.zero();
    Buffer<unsigned long long> counters(2);
    counters.zero();
    platform::parallel_workers(workers, test::FreeEveryOtherRound<XMalloc>{pool.device(), held.data(),
                                                            counters.data(), workers, rounds,
                                                            bytes});
    platform::synchronize();
    expect_churn_clean(counters, pool);
    const std::vector<Held> h = held.to_vector();
    EXPECT_EQ(static_cast<std::size_t>(std::count_if(h.begin(), h.end(),
                                                     [](const Held& x) { return x.address != 0; })),
              kept);
    expect_accounted(snapshot(pool, held), h);
  }
}

// --- errors ----------------------------------------------------------------------------

// Step `step` of the bad-free script, one launch each so that the flag can
// be read between them. ptrs: [0] a 16-byte piece, [1] a 100-byte piece.
struct BadFreeStep {
  XMalloc a;
  std::uint64_t* ptrs;
  std::uint64_t* out;
  int step;
  std::uint64_t outside;
  DYNASOAR_HD void operator()(std::size_t) const {
    auto* p = reinterpret_cast<unsigned char*>(ptrs[0]);
    auto* q = reinterpret_cast<unsigned char*>(ptrs[1]);
    switch (step) {
      case 0:
        ptrs[0] = reinterpret_cast<std::uint64_t>(a.malloc(16));
        ptrs[1] = reinterpret_cast<std::uint64_t>(a.malloc(100));
        break;
      case 1:
        a.free(p);
        break;  // fine
      case 2:
        a.free(p);
        break;  // second free
      case 3:
        a.free(q + 16);
        break;  // inside an allocation
      case 4:
        a.free(q + 8);
        break;  // misaligned
      case 5:
        a.free(reinterpret_cast<void*>(outside));
        break;  // outside the pool
      case 6:
        a.free(q);
        break;  // fine
      default:
        break;
    }
    // The 100-byte allocation's block: its count.
    out[0] = ptrs[1] == 0
                 ? 0
                 : XMalloc::live_pieces(XMalloc::block_of(reinterpret_cast<void*>(ptrs[1])));
  }
};

TEST(CMallocXMalloc, BadFreesAreReportedAndChangeNothing) {
  PoolHandle<XMalloc> pool(std::uint64_t{64} * kPageBytes);
  Buffer<std::uint64_t> ptrs(2), out(1);
  ptrs.zero();
  const auto step = [&](int s, std::uint64_t outside = 0) {
    run_one(1, BadFreeStep{pool.device(), ptrs.data(), out.data(), s, outside});
    return out.to_vector()[0];
  };
  step(0);
  ASSERT_FALSE(pool.bad_free());
  ASSERT_FALSE(pool.out_of_memory());
  step(1);
  EXPECT_FALSE(pool.bad_free()) << "a proper free";
  for (int s : {2, 3, 4}) {
    SCOPED_TRACE("step " + std::to_string(s));
    EXPECT_EQ(step(s), 1u) << "the other allocation's block keeps its piece";
    EXPECT_TRUE(pool.bad_free());
    EXPECT_THROW(pool.check_errors(), std::logic_error);
    EXPECT_FALSE(pool.bad_free()) << "check_errors clears the flag";
  }
  for (const std::uint64_t outside : {pool.end() + 64, pool.begin()}) {
    step(5, outside);
    EXPECT_TRUE(pool.bad_free()) << "a pointer outside the pool";
    pool.clear_errors();
  }
  EXPECT_EQ(step(6), 0u) << "the 100-byte allocation could still be freed";
  EXPECT_FALSE(pool.bad_free());
}

// Workers allocate 16 bytes until malloc returns nullptr; then all is freed,
// and a size of another class must be served: the queues, full of the
// small blocks, are drained into ScatterAlloc for it.
struct FillUntilNull {
  XMalloc a;
  std::uint64_t* out;  // per worker kCap entries
  unsigned long long* made;
  std::size_t workers_wanted;
  static constexpr int kCap = 4096;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t) const {
    if (w >= workers_wanted) return;
    int n = 0;
    for (; n < kCap; ++n) {
      void* p = a.malloc(16);
      out[w * kCap + static_cast<std::size_t>(n)] = reinterpret_cast<std::uint64_t>(p);
      if (p == nullptr) break;
    }
    platform::atomic_fetch_add(made, static_cast<unsigned long long>(n));
  }
};

struct AskBig {
  XMalloc a;
  std::uint64_t* out;
  std::size_t workers_wanted;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t) const {
    if (w < workers_wanted) out[w] = reinterpret_cast<std::uint64_t>(a.malloc(2000));
  }
};

TEST(CMallocXMalloc, ExhaustionIsReportedAndQueuedBlocksServeOtherSizesAfterwards) {
  constexpr std::size_t kWorkers = 16;
  constexpr std::uint32_t kPages = 16;
  PoolHandle<XMalloc> pool(std::uint64_t{kPages} * kPageBytes);
  Buffer<std::uint64_t> ptrs(kWorkers * FillUntilNull::kCap);
  ptrs.zero();
  Buffer<unsigned long long> made(1);
  made.zero();
  platform::parallel_workers(kWorkers,
                             FillUntilNull{pool.device(), ptrs.data(), made.data(), kWorkers});
  platform::synchronize();
  const unsigned long long n = made.to_vector()[0];
  const std::uint64_t most = kPages * kPageBytes / (kHeaderBytes + 16);
  EXPECT_LE(n, most);
  EXPECT_GE(n, most / 2) << "the pool ran out at less than half its room";
  EXPECT_THROW(pool.check_errors(), OutOfMemory);
  EXPECT_FALSE(pool.bad_free());

  const XMalloc a = pool.device();
  run_one(ptrs.size(), FreeAddresses{a, ptrs.data()});
  EXPECT_NO_THROW(pool.check_errors());
  Buffer<std::uint64_t> big(kWorkers);
  platform::parallel_workers(kWorkers, AskBig{a, big.data(), kWorkers});
  platform::synchronize();
  const std::vector<std::uint64_t> b = big.to_vector();
  EXPECT_EQ(std::count(b.begin(), b.end(), 0u), 0) << "the emptied pool did not serve 2000 bytes";
  EXPECT_NO_THROW(pool.check_errors());
}

// --- in front of CUDA's malloc (the paper's set-up) ----------------------------------------

// One thread makes kN single-piece blocks, frees them (into the queues),
// makes kN again, and reads where the blocks lay and how many were queued.
struct QueuedOnDeviceHeap {
  XMallocOnCudaMalloc a;
  std::uint64_t* out;
  static constexpr int kN = 5;
  DYNASOAR_HD void operator()(std::size_t) const {
    void* p[kN];
    for (int i = 0; i < kN; ++i) {
      p[i] = a.malloc(16);
      out[i] = XMallocOnCudaMalloc::block_of(p[i]);
    }
    for (int i = 0; i < kN; ++i) a.free(p[i]);
    out[2 * kN] = queued_in_class(a, class_of(kHeaderBytes + 16));
    for (int i = 0; i < kN; ++i) {
      p[i] = a.malloc(16);
      out[kN + i] = XMallocOnCudaMalloc::block_of(p[i]);
    }
    out[2 * kN + 1] = queued_in_class(a, class_of(kHeaderBytes + 16));
    out[2 * kN + 2] = platform::atomic_load(a.anchor);
    for (int i = 0; i < kN; ++i) a.free(p[i]);
  }
};

// The blocks a pool on CUDA's device heap takes from CUDA's malloc go to
// its queues when freed and serve the next requests from there (Sec. 5.2,
// the buffering that magnifies the underlying allocator); the first queued
// block fixes the anchor of the queues' block numbers. A block more than
// 32 GiB from it goes back to CUDA's malloc instead: on the GPU the device
// heap is one reservation and every block is queued; the C library's
// malloc of a host build may serve a thread from arenas farther apart.
TEST(CMallocXMallocOnCudaMalloc, FreedBlocksServeTheNextRequestsFromTheQueues) {
  PoolHandle<XMallocOnCudaMalloc> pool(std::uint64_t{8} << 20);
  constexpr int kN = QueuedOnDeviceHeap::kN;
  Buffer<std::uint64_t> out(2 * kN + 3);
  out.zero();
  run_one(1, QueuedOnDeviceHeap{pool.device(), out.data()});
  const std::vector<std::uint64_t> o = out.to_vector();
  std::vector<std::uint64_t> first(o.begin(), o.begin() + kN), second(o.begin() + kN, o.begin() + 2 * kN);
  EXPECT_EQ(std::count(first.begin(), first.end(), 0u), 0) << "CUDA's malloc served no block";
  const std::uint64_t anchor = o[2 * kN + 2];
  ASSERT_NE(anchor, 0u) << "queuing a block fixes the anchor";
  std::vector<std::uint64_t> numbered;
  for (const std::uint64_t b : first)
    if (b >= anchor && (b - anchor) / kAlignment < (std::uint64_t{1} << 32)) numbered.push_back(b);
  if (platform::kCudaBuild) {
    EXPECT_EQ(numbered.size(), static_cast<std::size_t>(kN)) << "a block lies outside the window";
  }
  EXPECT_EQ(o[2 * kN], numbered.size()) << "every block with a number was queued, and no other";
  EXPECT_EQ(o[2 * kN + 1], 0u) << "the second requests took every queued block";
  for (const std::uint64_t b : numbered)
    EXPECT_NE(std::find(second.begin(), second.end(), b), second.end())
        << "a queued block did not serve the second requests";
  EXPECT_NO_THROW(pool.check_errors());
}

// number_of on addresses that are no blocks (arithmetic only): the first
// fixes the anchor 32 GiB below itself; blocks within 32 GiB above or below
// it get numbers, those farther away get none (and would go straight back
// to CUDA's malloc).
struct NumberAround {
  XMallocOnCudaMalloc a;
  std::uint64_t first;
  std::uint64_t* out;
  DYNASOAR_HD void operator()(std::size_t) const {
    constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
    const std::uint64_t at[5] = {first, first + 31 * kGiB, first - 31 * kGiB, first + 33 * kGiB,
                                 first - 33 * kGiB};
    for (int i = 0; i < 5; ++i) {
      std::uint32_t n = 0;
      out[2 * i] = a.number_of(at[i], n) ? 1u : 0u;
      out[2 * i + 1] = n;
    }
    out[10] = platform::atomic_load(a.anchor);
  }
};

TEST(CMallocXMallocOnCudaMalloc, NumbersBlocksWithin32GiBOfTheFirstQueued) {
  PoolHandle<XMallocOnCudaMalloc> pool(std::uint64_t{8} << 20);
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  const std::uint64_t first = std::uint64_t{1} << 44;  // 16 TiB: far from address 0
  Buffer<std::uint64_t> out(11);
  run_one(1, NumberAround{pool.device(), first, out.data()});
  const std::vector<std::uint64_t> o = out.to_vector();
  EXPECT_EQ(o[10], first - 32 * kGiB) << "the anchor lies 32 GiB below the first block";
  EXPECT_EQ(o[0], 1u);
  EXPECT_EQ(o[1], 32 * kGiB / kAlignment);
  EXPECT_EQ(o[2], 1u) << "31 GiB above";
  EXPECT_EQ(o[3], 63 * kGiB / kAlignment);
  EXPECT_EQ(o[4], 1u) << "31 GiB below";
  EXPECT_EQ(o[5], 1 * kGiB / kAlignment);
  EXPECT_EQ(o[6], 0u) << "33 GiB above is outside the window";
  EXPECT_EQ(o[8], 0u) << "33 GiB below is outside the window";
}

}  // namespace
}  // namespace dynasoar::xmalloc
