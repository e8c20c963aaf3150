// XMalloc (Huang, Rodrigues, Jones, Buck and Hwu, "Scalable SIMD-parallel
// memory allocation for many-core machines"; Huang et al. 2013) in front of
// an underlying allocator, behind the raw API of the CMalloc family:
// malloc(bytes) and free(p) in device and host code, 16-byte aligned memory,
// an error flag. The lanes of a warp that ask for the same size share one
// block (coalescing, Sec. 5.1), and free blocks wait in bounded lock-free
// queues per size class (buffering, Sec. 5.2). XMalloc, the back end, sits in
// front of our ScatterAlloc on a pool of its own; XMallocOnCudaMalloc in
// front of CUDA's device malloc, the paper's own set-up (Sec. 3). The block
// and header layout, every deviation from the paper and the forward-progress
// argument of each loop are in docs/design/xmalloc.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "dynasoar/allocator/xmalloc/block_queues.h"
#include "dynasoar/allocator/cuda_malloc/cuda_malloc.h"
#include "dynasoar/allocator/raw/alignment.h"
#include "dynasoar/allocator/raw/pool_error.h"
#include "dynasoar/allocator/raw/pool_memory.h"
#include "dynasoar/allocator/raw/pool_options.h"
#include "dynasoar/allocator/scatter/scatter_alloc.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/warp.h"

namespace dynasoar::xmalloc {

using raw::aligned_size;
using raw::kAlignment;

// Tuning constants, fixed at compile time (the settings a pool chooses at
// run time are in BasicOptions below).

/// Queues a malloc or free tries before the underlying allocator: more find
/// queued blocks more often, at more queue reads before falling through.
inline constexpr std::uint32_t kQueueProbes = 4;
/// Times an allocation that the underlying allocator refuses drains the
/// queues into it and asks again: more let queued blocks serve other sizes,
/// at a longer wait before a request fails.
inline constexpr std::uint32_t kReclaimRounds = 2;
/// Over ScatterAlloc: attempts on one contended queue before the next. One:
/// ScatterAlloc serves the others cheaply, and retries keep blocks in queues
/// that only their own warps probe.
inline constexpr std::uint32_t kScatterQueueAttempts = 1;
/// Over ScatterAlloc: queues per size class by default, the paper's 16
/// (Sec. 5.2). More hold more blocks for launch-wide bursts of one size, but
/// spread the blocks that objects free where a malloc's probes miss them.
inline constexpr std::uint32_t kScatterDefaultQueues = 16;
/// Over CUDA's malloc: attempts on one contended queue before the next. Many:
/// a launch that calls CUDA's malloc at all takes far longer than retries.
inline constexpr std::uint32_t kCudaMallocQueueAttempts = 32;
/// Over CUDA's malloc: queues per size class by default, so many that the
/// warps of a large launch rarely share one and nearly none calls CUDA's
/// malloc, at more memory for the queues.
inline constexpr std::uint32_t kCudaMallocDefaultQueues = 8192;

/// Bytes of header in front of every piece (the paper's compartment header
/// is 8 bytes; 16 keep the pieces 16-byte aligned).
inline constexpr std::uint32_t kHeaderBytes = 16;
/// Size classes of blocks: 32, 48, 64, 96, ..., 3072, 4096 bytes.
inline constexpr std::uint32_t kClasses = 15;
/// The class of a block that bypasses the queues (a large request).
inline constexpr std::uint32_t kLargeClass = 0xFF;
/// Tag of the piece word of a piece in use.
inline constexpr std::uint32_t kLiveTag = 0x584D4C56u;
/// Tag of the piece word of a piece that was freed.
inline constexpr std::uint32_t kFreedTag = 0x584D4644u;
/// Tag in the high half of a block's class word.
inline constexpr std::uint32_t kBlockTag = 0x584Du;

/// Bytes of the blocks of class k (k < kClasses): 32 << (k / 2) for even k,
/// 48 << (k / 2) for odd k.
DYNASOAR_HD constexpr std::uint32_t class_bytes(std::uint32_t k) {
  return (k % 2 == 0 ? 32u : 48u) << (k / 2);
}
/// The largest class: one page of the underlying ScatterAlloc, so that every
/// buffered block is one of its chunks and never a run of pages.
inline constexpr std::uint32_t kLargestClass = class_bytes(kClasses - 1);
static_assert(kLargestClass == scatter::kPageBytes, "the largest class is one ScatterAlloc page");

/// The smallest class whose blocks hold `bytes` (32 <= ... <= kLargestClass).
DYNASOAR_HD inline std::uint32_t class_of(std::uint32_t bytes) {
  if (bytes <= 32) return 0;
  const auto top = static_cast<std::uint32_t>(63 - platform::clz(bytes - 1));  // 2^top < bytes
  return bytes <= (3u << (top - 1)) ? 2 * (top - 5) + 1 : 2 * (top - 4);
}

/// What XMallocOn needs to know of an underlying allocator: its settings
/// (none for CUDA's malloc) and the names of the combination.
template <class Under>
struct UnderlyingTraits;
/// XMalloc over our ScatterAlloc: the back end `xmalloc`.
template <>
struct UnderlyingTraits<scatter::ScatterAlloc> {
  using Options = scatter::Options;                   ///< ScatterAlloc's settings
  static constexpr const char* kName = "XMalloc";     ///< name in messages
  static constexpr const char* kBackend = "xmalloc";  ///< the back end's build name
  /// Attempts a malloc or free makes on one queue while other threads'
  /// operations on it succeed first (kContended): kScatterQueueAttempts.
  static constexpr std::uint32_t kQueueAttempts = kScatterQueueAttempts;
  /// Queues per size class by default: kScatterDefaultQueues.
  static constexpr std::uint32_t kDefaultQueues = kScatterDefaultQueues;
  /// False: the pool is memory of its own, which ScatterAlloc lays out.
  static constexpr bool kDeviceHeap = false;
};
/// CUDA's device malloc has no settings of its own.
struct NoUnderlyingOptions {};
/// XMalloc over CUDA's device malloc (the paper's set-up; no back end).
template <>
struct UnderlyingTraits<cuda_malloc::CudaMalloc> {
  using Options = NoUnderlyingOptions;                            ///< none
  static constexpr const char* kName = "XMallocOnCudaMalloc";     ///< name in messages
  static constexpr const char* kBackend = "xmalloc_on_cuda_malloc";  ///< its kBackend (no back end)
  /// Attempts a malloc or free makes on one queue while other threads'
  /// operations on it succeed first (kContended): kCudaMallocQueueAttempts.
  static constexpr std::uint32_t kQueueAttempts = kCudaMallocQueueAttempts;
  /// Queues per size class by default: kCudaMallocDefaultQueues.
  static constexpr std::uint32_t kDefaultQueues = kCudaMallocDefaultQueues;
  /// True: the pool is CUDA's device heap, whose blocks lie where CUDA puts
  /// them and which outlives the pool.
  static constexpr bool kDeviceHeap = true;
};

/// Settings of an XMalloc pool, read when the pool is made; `kQueues` is
/// the default of `queues` for the underlying allocator
/// (UnderlyingTraits::kDefaultQueues).
template <class UnderOptions, std::uint32_t kQueues>
struct BasicOptions {
  /// Queues (buffers) per size class (Sec. 5.2 uses 16 on a GPU of 15
  /// multiprocessors). Over ScatterAlloc 16 by default, over CUDA's malloc
  /// 8192 (the tuning constants above say why each). Rounded down to a
  /// power of two.
  std::uint32_t queues = kQueues;
  /// Blocks one queue holds (the paper's 2^s): more keep more freed blocks
  /// for later requests, at more blocks held away from other sizes. Rounded
  /// down to a power of two, at least 2. Small pools get fewer queues and
  /// slots (geometry()).
  std::uint32_t queue_slots = 16;
  /// Serve the lanes of a warp that ask for the same size with one block
  /// (Sec. 5.1). Off: a block per request (the paper's "no coalescing").
  bool coalesce = true;
  /// The settings of the underlying allocator (ScatterAlloc's; its
  /// `coalesce` is not used: XMalloc asks it on its one-lane path, see
  /// XMallocOn::attach).
  UnderOptions underlying{};
};
/// The settings of XMalloc over ScatterAlloc.
using Options =
    BasicOptions<scatter::Options, UnderlyingTraits<scatter::ScatterAlloc>::kDefaultQueues>;

/// The queues of a pool: per class, `queues` FIFOs of `slots` messages.
struct Geometry {
  std::uint32_t queues = 1;  ///< per class, a power of two
  std::uint32_t slots = 2;   ///< per queue, a power of two
};

template <class Under>
class XMallocPool;

/// XMalloc's device allocator in front of `Under` (scatter::ScatterAlloc or
/// cuda_malloc::CudaMalloc): trivially copyable, passed to kernels by value
/// (raw::PoolHandle<...>::device()). Its fields are public for its Pool
/// (XMallocPool) and for tests that inspect the queues and headers.
template <class Under>
struct XMallocOn {
  /// Name used in error messages.
  static constexpr const char* kName = UnderlyingTraits<Under>::kName;
  /// Name of the combination (CMake's DYNASOAR_BACKEND for XMalloc).
  static constexpr const char* kBackend = UnderlyingTraits<Under>::kBackend;
  /// True: free() returns pieces to their blocks and blocks to the queues.
  static constexpr bool kCanFree = true;
  /// True: memory freed by the program is not all free for other sizes at
  /// once: a block stays taken until its last piece is freed, and freed
  /// blocks wait in the queues. Pools under churn need room beyond the live
  /// objects (the examples' default_pool_bytes reads this).
  static constexpr bool kHoldsFreedBlocks = true;
  /// The host side of the pool: over ScatterAlloc its memory, over CUDA's
  /// malloc the device heap's size; and the queues' side table.
  using Pool = XMallocPool<Under>;
  /// The settings its Pool passes to metadata_words and attach.
  using Options = BasicOptions<typename UnderlyingTraits<Under>::Options,
                               UnderlyingTraits<Under>::kDefaultQueues>;

  /// Outcomes of one queue operation (BlockQueues::Outcome).
  using Outcome = BlockQueues::Outcome;

  std::uint64_t mem;       ///< address of the pool (16-byte aligned); 0 on the device heap
  std::uint64_t bytes;     ///< bytes of the pool (of the device heap)
  Under under;             ///< the underlying allocator, on the same pool
  std::uint64_t* anchor;   ///< device heap: where block number 0 lies (0 until fixed)
  BlockQueues buffers;     ///< the queues of free blocks, `queues` per class
  std::uint32_t queues;    ///< queues per class (a power of two)
  bool coalesce;           ///< see Options::coalesce
  unsigned* error;         ///< raw::PoolError flags

  // --- set-up (host) ------------------------------------------------------------------

  /// The queues of a pool of `bytes`: the options' numbers, cut down so that
  /// a class's queues hold at most one block per KiB of pool.
  static Geometry geometry(std::uint64_t bytes, const Options& o) {
    const auto floor2 = [](std::uint64_t x) {
      return x == 0 ? std::uint64_t{0} : std::uint64_t{1} << (63 - platform::clz(x));
    };
    const std::uint64_t budget = std::max<std::uint64_t>(2, floor2(bytes / 1024));
    const std::uint64_t want_q = std::max<std::uint64_t>(1, floor2(o.queues));
    const std::uint64_t want_s =
        std::max<std::uint64_t>(2, floor2(std::min<std::uint64_t>(o.queue_slots, 1u << 16)));
    const std::uint64_t q = std::min(want_q, std::max<std::uint64_t>(1, budget / want_s));
    const std::uint64_t s = std::min(want_s, std::max<std::uint64_t>(2, budget / q));
    return {static_cast<std::uint32_t>(q), static_cast<std::uint32_t>(s)};
  }

  /// 64-bit words of side table for a pool of `bytes`: the underlying
  /// allocator's, its error word, the anchor, and the queues. Its Pool
  /// allocates them zeroed, which is a valid state: every queue empty, no
  /// anchor yet.
  static std::uint64_t metadata_words(std::uint64_t bytes, const Options& o) {
    const Geometry g = geometry(bytes, o);
    return underlying_words(bytes, o) + 2 + BlockQueues::words(std::uint64_t{kClasses} * g.queues, g.slots);
  }

  /// Points the allocator at a pool of `bytes` at `pool` (over CUDA's
  /// malloc: pool 0 and the device heap's bytes) and at its zeroed side
  /// table `meta` (metadata_words long). Host only. Throws
  /// std::invalid_argument for a pool of less than one page, a pool of
  /// ScatterAlloc over 64 GiB (32-bit block numbers in the queues), or
  /// settings ScatterAlloc refuses.
  ///
  /// An underlying ScatterAlloc runs without warp coalescing, whatever
  /// `o.underlying.coalesce` says: only a group's leader asks it, in a branch
  /// the rest of the group waits behind, and warp-synchronous code there
  /// could meet lanes parked at another synchronising call. It also runs
  /// with one active super block, whatever `o.underlying.active_window` says.
  void attach(std::uint64_t pool, std::uint64_t pool_bytes, std::uint64_t* meta, const Options& o) {
    const std::string name = kName;
    if (pool_bytes < scatter::kPageBytes)
      throw std::invalid_argument(name + ": a pool of " + std::to_string(pool_bytes) +
                                  " bytes is too small; it needs at least one page of " +
                                  std::to_string(scatter::kPageBytes) + " bytes");
    if (!kDeviceHeap && pool_bytes / kAlignment > 0xFFFFFFFFull)
      throw std::invalid_argument(name + ": at most 64 GiB (32-bit block numbers)");
    const std::uint64_t under_words = underlying_words(pool_bytes, o);
    if constexpr (kOnScatter) {
      scatter::Options underlying = o.underlying;
      underlying.coalesce = false;
      // The paper's single active super block: with a wider window, churn
      // in a nearly full pool fails requests that ScatterAlloc alone serves
      // (docs/design/xmalloc.md, "The underlying allocator: ScatterAlloc").
      underlying.active_window = 1;
      under.attach(pool, pool_bytes, meta, underlying);
    }
    // The underlying allocator's out-of-memory flag is a word of its own:
    // XMalloc drains its queues and asks again before it raises the pool's.
    under.error = reinterpret_cast<unsigned*>(meta + under_words);
    const Geometry g = geometry(pool_bytes, o);
    mem = pool;
    bytes = pool_bytes;
    queues = g.queues;
    anchor = meta + under_words + 1;
    buffers = BlockQueues::over(meta + under_words + 2, std::uint64_t{kClasses} * queues, g.slots);
    coalesce = o.coalesce;
  }

  /// The queues of all classes. When a pool on CUDA's device heap goes,
  /// its Pool gives the blocks they hold back to CUDA's malloc, one
  /// drain_queue per queue, since that heap outlives the pool (a pool of its
  /// own is freed whole).
  std::uint64_t queue_count() const { return std::uint64_t{kClasses} * queues; }

  // --- the raw API ----------------------------------------------------------------------

  /// 16-byte aligned memory for `n` bytes, or nullptr (and the out-of-memory
  /// flag) when neither the queues nor the underlying allocator can serve
  /// it. Device and host.
  DYNASOAR_HD void* malloc(std::uint64_t n) const {
    if (n > kLargestClass - kHeaderBytes) return malloc_large(n);
    const auto piece = static_cast<std::uint32_t>(aligned_size(n)) + kHeaderBytes;
    if (!coalesce) {
      const std::uint64_t block = new_block(piece, 1);
      return block == 0 ? nullptr : piece_at(block, piece, 0);
    }
    return malloc_coalesced(piece);
  }

  /// Returns memory from malloc(); nullptr is ignored. A pointer that is no
  /// live piece of this pool raises kPoolBadFree and frees nothing; not
  /// detected: a pointer freed before whose block has been handed out again
  /// with a piece at the same place. Device and host.
  DYNASOAR_HD void free(void* p) const {
    if (p == nullptr) return;
    const auto address = reinterpret_cast<std::uint64_t>(p);
    // On CUDA's device heap the pool's bounds are unknown: a pointer that
    // is no allocation at all may fault here, as it would in CUDA's free.
    if (address % kAlignment != 0 || address < mem + kHeaderBytes ||
        (!kDeviceHeap && address - mem > bytes))
      return bad_free();
    const std::uint64_t piece = address - kHeaderBytes;
    auto* word = reinterpret_cast<std::uint64_t*>(piece);
    const std::uint64_t w = platform::atomic_load(word);
    const auto offset = static_cast<std::uint32_t>(w);
    if ((w >> 32) != kLiveTag || offset % kAlignment != 0 || offset > piece - mem)
      return bad_free();
    const std::uint64_t block = piece - offset;
    const std::uint32_t k = class_word(block) & 0xFFFFu;
    if ((class_word(block) >> 16) != kBlockTag) return bad_free();
    if (k == kLargeClass ? offset != 0 : k >= kClasses || offset >= class_bytes(k))
      return bad_free();
    // One compare-and-swap decides between two frees of the same piece.
    std::uint64_t expected = w;
    if (!platform::atomic_compare_exchange(word, expected,
                                           (std::uint64_t{kFreedTag} << 32) | offset))
      return bad_free();
    release_piece(block, k);
  }

  // --- the steps of a coalesced malloc, and what tests inspect -------------------------

  /// A block for `pieces` pieces of `piece` bytes each (header included;
  /// pieces * piece <= kLargestClass), from a queue of its class or else
  /// from the underlying allocator, with its count set to `pieces`; 0 (and
  /// the out-of-memory flag) if there is none. A warp's leader takes one for
  /// the warp's group (Fig. 4 lines 5-9); tests call it directly, since a
  /// warp on the host has one lane. Device and host.
  DYNASOAR_HD std::uint64_t new_block(std::uint32_t piece, std::uint32_t pieces) const {
    const std::uint32_t k = class_of(piece * pieces);
    std::uint64_t block = 0;
    const std::uint32_t first = first_queue();
    // Forward progress: at most kQueueProbes queues of kQueueAttempts
    // dequeues each (attempts()).
    for (std::uint32_t i = 0; i < kQueueProbes && i < queues; ++i) {
      std::uint32_t payload = 0;
      const std::uint32_t qi = queue_of(k, first + i);
      if (attempts([&] { return buffers.dequeue(qi, payload); }) == BlockQueues::kDone) {
        block = block_at(payload);
        break;
      }
    }
    if (block == 0) block = underlying_malloc(class_bytes(k));
    if (block == 0) return fail();
    write_block_words(block, k, pieces);
    return block;
  }

  /// Piece `index` of a block of pieces of `piece` bytes: writes its header
  /// (Fig. 4 lines 12-13) and returns its data. Device and host.
  DYNASOAR_HD void* piece_at(std::uint64_t block, std::uint32_t piece, std::uint32_t index) const {
    const std::uint64_t at = block + std::uint64_t{index} * piece;
    platform::atomic_store(reinterpret_cast<std::uint64_t*>(at),
                           (std::uint64_t{kLiveTag} << 32) | (std::uint64_t{index} * piece));
    return reinterpret_cast<void*>(at + kHeaderBytes);
  }

  /// What one lane of a coalesced malloc does (Fig. 4): the lanes of
  /// `group` (a lane mask) asking for pieces of `piece` bytes are cut, in
  /// lane order, into shares of at most kLargestClass / piece lanes, one
  /// block each.
  struct Share {
    unsigned leader;      ///< lane that takes the share's block (its lowest lane)
    std::uint32_t index;  ///< the calling lane's piece in the block; 0 for the leader
    std::uint32_t pieces; ///< lanes of the share: the count its leader sets
  };
  /// The Share of lane `lane` (a member of `group`). Pure arithmetic, so
  /// that a host test can play every lane of a warp: the pieces of a share
  /// are exactly its lanes, each lane has its own index below the count,
  /// and every lane of a share names the same leader.
  DYNASOAR_HD static Share share_of(platform::warp::lane_mask group, unsigned lane,
                                    std::uint32_t piece) {
    const auto rank =
        static_cast<std::uint32_t>(platform::popc(group & ((platform::warp::lane_mask{1} << lane) - 1)));
    const auto lanes = static_cast<std::uint32_t>(platform::popc(group));
    const std::uint32_t per_block = kLargestClass / piece;  // >= 1
    const std::uint32_t first = rank - rank % per_block;    // rank of this share's leader
    Share s;
    s.leader = static_cast<unsigned>(platform::nth_set_bit(group, static_cast<int>(first)));
    s.index = rank - first;
    s.pieces = lanes - first < per_block ? lanes - first : per_block;
    return s;
  }

  /// The block that data pointer `p` (a live piece) lies in.
  DYNASOAR_HD static std::uint64_t block_of(const void* p) {
    const auto piece = reinterpret_cast<std::uint64_t>(p) - kHeaderBytes;
    return piece - static_cast<std::uint32_t>(
                       platform::atomic_load(reinterpret_cast<const std::uint64_t*>(piece)));
  }
  /// Live pieces of a block (its count).
  DYNASOAR_HD static std::uint32_t live_pieces(std::uint64_t block) {
    return platform::atomic_load(count_word(block));
  }
  /// A block's class word: kBlockTag << 16 | its class (kLargeClass for a large block).
  DYNASOAR_HD static std::uint32_t class_word(std::uint64_t block) {
    return platform::atomic_load(reinterpret_cast<const std::uint32_t*>(block + 12));
  }

  /// Index of queue `q` (taken modulo the queues) of class k.
  DYNASOAR_HD std::uint32_t queue_of(std::uint32_t k, std::uint32_t q) const {
    return k * queues + (q & (queues - 1));
  }
  /// The address of the i-th block of queue qi, counted from its head
  /// (i < buffers.size(qi)); only while no thread uses the queue.
  DYNASOAR_HD std::uint64_t queued_block(std::uint32_t qi, std::uint32_t i) const {
    return block_at(buffers.payload_at(qi, i));
  }

  /// The number of `block` in the queues' messages, in `number`: its offset
  /// from the pool in 16-byte units, or on CUDA's device heap from the
  /// anchor. False if it has none (on the device heap: a block more than
  /// 32 GiB from the anchor), and then the block is not queued.
  ///
  /// The anchor lies 32 GiB below the first block that asks for a number
  /// (or at 16), set once by a compare-and-swap from 0 and never changed,
  /// so the window covers 32 GiB on either side of that block: the whole
  /// device heap, if CUDA reserves it in one piece, and every block of it
  /// gets a number. Whoever dequeues a number reads the anchor after the
  /// enqueue that put it (an acquire of the release that published the
  /// message), and the enqueuer read or set it before: coherence gives the
  /// dequeuer the same anchor. No thread waits: the compare-and-swap is
  /// one attempt, and a lost one returns the winner's anchor.
  DYNASOAR_HD bool number_of(std::uint64_t block, std::uint32_t& number) const {
    std::uint64_t base = mem;
    if constexpr (kDeviceHeap) {
      base = platform::atomic_load(anchor);
      if (base == 0) {
        constexpr std::uint64_t kHalfWindow = (std::uint64_t{1} << 32) * kAlignment / 2;
        const std::uint64_t want = block > kHalfWindow + kAlignment ? block - kHalfWindow : kAlignment;
        base = platform::atomic_compare_exchange(anchor, base, want) ? want : base;
      }
      if (block < base || (block - base) / kAlignment > 0xFFFFFFFFull) return false;
    }
    number = static_cast<std::uint32_t>((block - base) / kAlignment);
    return true;
  }

  /// Gives the blocks queue `qi` holds back to the underlying allocator (a
  /// pool on CUDA's device heap that goes: PoolHandle runs one per queue,
  /// no other thread using the queues). Forward progress: at most `buffers.slots`
  /// dequeues, each one attempt.
  DYNASOAR_HD void drain_queue(std::uint32_t qi) const {
    for (std::uint32_t i = 0; i < buffers.slots; ++i) {
      std::uint32_t number = 0;
      if (buffers.dequeue(qi, number) != BlockQueues::kDone) break;
      under.free(reinterpret_cast<void*>(block_at(number)));
    }
  }

 private:
  static constexpr bool kOnScatter = std::is_same_v<Under, scatter::ScatterAlloc>;
  static constexpr bool kDeviceHeap = UnderlyingTraits<Under>::kDeviceHeap;

  // Words of the underlying allocator's side table (none for CUDA's malloc).
  static std::uint64_t underlying_words(std::uint64_t bytes, const Options& o) {
    if constexpr (kOnScatter)
      return scatter::ScatterAlloc::metadata_words(bytes, o.underlying);
    else
      return 0;
  }

  // The block of number `number` (number_of).
  DYNASOAR_HD std::uint64_t block_at(std::uint32_t number) const {
    const std::uint64_t base = kDeviceHeap ? platform::atomic_load(anchor) : mem;
    return base + std::uint64_t{number} * kAlignment;
  }

  DYNASOAR_HD static std::uint32_t* count_word(std::uint64_t block) {
    return reinterpret_cast<std::uint32_t*>(block + 8);
  }

  /// Sec. 5.2: a hash of the warp picks the first queue to try. A warp's
  /// malloc and a later free by a warp of the same index meet the same queue.
  DYNASOAR_HD std::uint32_t first_queue() const {
    return static_cast<std::uint32_t>(platform::mix64(platform::warp::warp_seed()));
  }

  DYNASOAR_HD std::uint64_t fail() const {
    platform::atomic_fetch_or(error, static_cast<unsigned>(raw::kPoolOutOfMemory));
    return 0;
  }
  DYNASOAR_HD void bad_free() const {
    platform::atomic_fetch_or(error, static_cast<unsigned>(raw::kPoolBadFree));
  }

  static constexpr std::uint32_t kQueueAttempts = UnderlyingTraits<Under>::kQueueAttempts;

  /// Runs one queue operation `op` again while it reports kContended, at
  /// most kQueueAttempts times in all (UnderlyingTraits), and returns its
  /// last outcome.
  /// Forward progress: a constant bound; and every kContended means that
  /// another thread's operation on the queue took effect first.
  template <class Op>
  DYNASOAR_HD static Outcome attempts(Op op) {
    Outcome r = op();
    for (std::uint32_t a = 1; a < kQueueAttempts && r == BlockQueues::kContended; ++a) r = op();
    return r;
  }

  DYNASOAR_HD static void write_block_words(std::uint64_t block, std::uint32_t k,
                                            std::uint32_t pieces) {
    platform::atomic_store(reinterpret_cast<std::uint32_t*>(block + 12), (kBlockTag << 16) | k);
    platform::atomic_store(count_word(block), pieces);
  }

  /// Sec. 5.1 (Fig. 4): the lanes asking for `piece` bytes of this pool
  /// together share blocks of up to kLargestClass / piece pieces: the lowest
  /// lane of each share takes the block, hands it to the others
  /// (warp::handover), and every lane writes its piece's header (the
  /// arithmetic is share_of).
  ///
  /// Forward progress: a follower waits for the leaders of its group's
  /// shares, lanes of the same warp whose new_block is bounded and waits for
  /// nobody (warp::handover's condition).
  DYNASOAR_HD void* malloc_coalesced(std::uint32_t piece) const {
    namespace warp = platform::warp;
    const warp::lane_mask present = warp::present_lanes();
    // Lanes of different pools (told apart by their queues: pools on the
    // device heap share it) take different blocks.
    const warp::lane_mask group = warp::match_any(present, piece) &
                                  warp::match_any(present, reinterpret_cast<std::uint64_t>(buffers.heads));
    const Share s = share_of(group, warp::lane_id() % 32u, piece);
    // The leader's word: its block (0: none, the flag is raised), marked.
    std::uint64_t word[1] = {s.index == 0 ? new_block(piece, s.pieces) | warp::kHandedOver : 0};
    warp::handover(group, word, s.leader);
    const std::uint64_t block = word[0] & ~warp::kHandedOver;  // blocks are 16-byte aligned
    void* data = block == 0 ? nullptr : piece_at(block, piece, s.index);
    // The whole group meets here: the block word (leader) and the piece
    // words are written before any of its pieces can be freed by a lane of
    // this warp.
    warp::sync(group);
    return data;
  }

  /// A request over the largest class: a block of its own from the
  /// underlying allocator, one piece, never queued.
  DYNASOAR_HD void* malloc_large(std::uint64_t n) const {
    if (n > bytes) return reinterpret_cast<void*>(fail());
    const std::uint64_t block = underlying_malloc(aligned_size(n) + kHeaderBytes);
    if (block == 0) return reinterpret_cast<void*>(fail());
    write_block_words(block, kLargeClass, 1);
    return piece_at(block, 0, 0);
  }

  /// The underlying allocator's memory; when it has none, the queues are
  /// drained into it and it is asked again, at most kReclaimRounds times.
  DYNASOAR_HD std::uint64_t underlying_malloc(std::uint64_t n) const {
    auto block = reinterpret_cast<std::uint64_t>(under.malloc(n));
    // Forward progress: at most kReclaimRounds drains and requests.
    for (std::uint32_t round = 0; block == 0 && round < kReclaimRounds; ++round) {
      drain();
      block = reinterpret_cast<std::uint64_t>(under.malloc(n));
    }
    return block;
  }

  /// Gives every queued block back to the underlying allocator. Forward
  /// progress: bounded by the queues' capacity, since each queue is asked
  /// at most `slots` times, and a queue that another thread changes
  /// meanwhile is left.
  DYNASOAR_HD void drain() const {
    for (std::uint32_t qi = 0; qi < kClasses * queues; ++qi) drain_queue(qi);
  }

  /// One piece of `block` (class k) is freed: the lanes of the warp that free
  /// pieces of the same block together subtract their number at once, and
  /// the one that brings the count to 0 gives the block back.
  DYNASOAR_HD void release_piece(std::uint64_t block, std::uint32_t k) const {
    std::uint32_t n = 1;
    if (coalesce) {
      namespace warp = platform::warp;
      const warp::lane_mask present = warp::present_lanes();
      const warp::lane_mask group = warp::match_any(present, block);
      // The group meets before its lowest lane subtracts for all of it:
      // match_any orders no memory, a barrier does among its lanes. So every
      // lane's last use of its piece comes before the lowest lane's release
      // below, and so before the block's next owner's use. Forward progress:
      // `present` holds only lanes that run this straight-line sequence
      // together (present_lanes), so every lane of `group` reaches this
      // barrier with the same mask; the others leave right after it.
      warp::sync(group);
      if (warp::lane_id() % 32u != static_cast<unsigned>(platform::ctz(group))) return;
      n = static_cast<std::uint32_t>(platform::popc(group));
    }
    // Acq_rel: the pieces' last uses come before the block's next owner's.
    const std::uint32_t old = platform::atomic_fetch_sub(count_word(block), n, platform::acq_rel);
    if (old < n) return bad_free();  // a header was forged or overwritten
    if (old == n) recycle(block, k);
  }

  /// Sec. 5.2: a free block goes to a queue of its class, or to the
  /// underlying allocator if kQueueProbes queues were full or contended.
  DYNASOAR_HD void recycle(std::uint64_t block, std::uint32_t k) const {
    std::uint32_t payload = 0;
    if (k != kLargeClass && number_of(block, payload)) {
      const std::uint32_t first = first_queue();
      // Forward progress: at most kQueueProbes queues of kQueueAttempts
      // enqueues each (attempts()), each enqueue bounded (append).
      for (std::uint32_t i = 0; i < kQueueProbes && i < queues; ++i) {
        const std::uint32_t qi = queue_of(k, first + i);
        if (attempts([&] { return buffers.enqueue(qi, payload); }) == BlockQueues::kDone) return;
      }
    }
    under.free(reinterpret_cast<void*>(block));
  }
};

/// XMalloc in front of our ScatterAlloc: the back end `xmalloc`.
using XMalloc = XMallocOn<scatter::ScatterAlloc>;
/// XMalloc in front of CUDA's device malloc (the C library's in a host
/// build): the paper's set-up, for the raw benchmark and tests.
using XMallocOnCudaMalloc = XMallocOn<cuda_malloc::CudaMalloc>;

namespace detail {
template <class Alloc>
struct DrainQueue {  // one queue's blocks back to the device heap
  Alloc alloc;
  DYNASOAR_HD void operator()(std::size_t q) const {
    alloc.drain_queue(static_cast<std::uint32_t>(q));
  }
};
}  // namespace detail

/// The pool of XMallocOn<Under> on the host: over ScatterAlloc its memory,
/// over CUDA's malloc the device heap, sized for it; and the zeroed side
/// table of the queues (and of ScatterAlloc). Owned by raw::PoolHandle.
template <class Under>
class XMallocPool {
  using Alloc = XMallocOn<Under>;
  static constexpr bool kOnDeviceHeap = UnderlyingTraits<Under>::kDeviceHeap;

 public:
  /// XMalloc's settings (Alloc::Options).
  using Options = typename Alloc::Options;
  /// Over CUDA's malloc: allocations still live when the pool goes stay in
  /// CUDA's heap.
  static constexpr bool kHeapOutlivesPool = kOnDeviceHeap;

  /// A pool of `bytes` (rounded down to 16) for `alloc`, with the settings
  /// of `pool_options`: its `coalesce`, and its `scatter` for an underlying
  /// ScatterAlloc; the rest at XMalloc's defaults.
  XMallocPool(std::uint64_t bytes, const raw::PoolOptions& pool_options, platform::Stream s,
              Alloc& alloc)
      : XMallocPool(bytes, options_from(pool_options), s, alloc) {}

  /// A pool of `bytes` (rounded down to 16) for `alloc`, its side table
  /// zeroed on `s`. Throws std::invalid_argument where XMallocOn::attach
  /// does, and over CUDA's malloc where the device heap cannot be had
  /// (cuda_malloc::reserve_device_heap).
  XMallocPool(std::uint64_t bytes, const Options& options, platform::Stream s, Alloc& alloc)
      : stream_(s) {
    std::uint64_t pool_bytes = bytes / kAlignment * kAlignment;
    if constexpr (kOnDeviceHeap) {
      pool_bytes = heap_bytes_ = cuda_malloc::reserve_device_heap(pool_bytes);
    } else {
      memory_ = raw::PoolMemory(bytes);
    }
    const std::uint64_t words = Alloc::metadata_words(pool_bytes, options);
    metadata_ = platform::Buffer<std::uint64_t>(words == 0 ? 1 : words);
    metadata_.zero(s);
    alloc.attach(memory_.address(), pool_bytes, metadata_.data(), options);
    alloc_ = alloc;
  }

  XMallocPool(const XMallocPool&) = delete;
  XMallocPool& operator=(const XMallocPool&) = delete;
  /// Takes over `other`'s pool, which is left empty.
  XMallocPool(XMallocPool&&) noexcept = default;
  /// Frees the pool. Over CUDA's malloc, the blocks the queues hold go back
  /// to CUDA's heap first, since it outlives the pool; allocations still
  /// live stay there, as they would with CudaMalloc.
  ~XMallocPool() { give_back_held_blocks(); }

  /// Pool bytes (over CUDA's malloc: the device heap's size, which may
  /// exceed the request if an earlier pool set it larger).
  std::uint64_t bytes() const { return kOnDeviceHeap ? heap_bytes_ : memory_.bytes(); }
  /// Address range of the pool, for tests: [begin, end) (over ScatterAlloc).
  std::uint64_t begin() const
    requires(!kOnDeviceHeap)
  {
    return memory_.address();
  }
  /// End of that range (see begin()).
  std::uint64_t end() const
    requires(!kOnDeviceHeap)
  {
    return memory_.address() + memory_.bytes();
  }

 private:
  static Options options_from(const raw::PoolOptions& po) {
    Options o;
    o.coalesce = po.coalesce;
    if constexpr (!kOnDeviceHeap) o.underlying = po.scatter;
    return o;
  }

  // See the destructor. Nothing for a moved-from pool (no side table).
  void give_back_held_blocks() noexcept {
    if constexpr (kOnDeviceHeap) {
      if (metadata_.size() == 0) return;
      try {
        platform::parallel_for(static_cast<std::size_t>(alloc_.queue_count()),
                               detail::DrainQueue<Alloc>{alloc_}, stream_);
        platform::synchronize(stream_);
      } catch (...) {  // a destructor must not throw; the blocks stay in CUDA's heap
      }
    }
  }

  platform::Stream stream_;
  Alloc alloc_{};                             // the allocator as set up, for the give-back
  std::uint64_t heap_bytes_ = 0;              // over CUDA's malloc: the device heap's size
  raw::PoolMemory memory_;                    // over ScatterAlloc: the pool
  platform::Buffer<std::uint64_t> metadata_;  // the side table
};

}  // namespace dynasoar::xmalloc
