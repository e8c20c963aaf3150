// The circular-list allocators of Vinkler & Havran (2014, Sec. 5.2-5.4,
// Alg. 3): the pool is a circular singly linked list of chunks, each with
// an 8-byte header (used flag, offset of the next chunk). A request walks
// the list from a shared offset to the first free chunk that is large
// enough, locks it with a compare-and-swap, splits it when it is more than
// MAX_FRAG times the request, and moves the offset past it. A free merges
// the chunk with the next one if that one is free.
//
//   CMalloc    flag and next offset in two 4-byte words; one shared offset
//   CFMalloc   flag fused into the next-offset word (one word per access)
//   CMMalloc   CMalloc with one offset per multiprocessor (per-SM heaps)
//   CFMMalloc  CFMalloc with one offset per multiprocessor
//
// Offsets count 16-byte granules: the header of the chunk at granule g lies
// in bytes [16g + 8, 16g + 16), its data from 16(g + 1) to the next header,
// and the last granule holds a sentinel header whose next is granule 0.
// Headers carry a tag derived from their position, and walks merge free
// chunks that free() left apart; docs/design/cmalloc.md describes both and
// every other deviation from the paper.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "dynasoar/allocator/cmalloc/presplit.h"
#include "dynasoar/allocator/raw/alignment.h"
#include "dynasoar/allocator/raw/pool_error.h"
#include "dynasoar/allocator/raw/pool_memory.h"
#include "dynasoar/allocator/raw/pool_options.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/warp.h"

// Diagnostic counters (bench/cmalloc/cmalloc_probe builds with
// DYNASOAR_CMALLOC_STATS): what the walks of a launch cost. Off otherwise.
#if defined(DYNASOAR_CMALLOC_STATS) && defined(__CUDACC__)
namespace dynasoar::cmalloc::stats {
enum Counter {
  kWalks,
  kHops,
  kBusy,
  kJumps,
  kInvalid,
  kGroupFallbacks,
  kMerges,
  kRunMerges,
  kFailedWalks,
  kWalkMerges,
  kCount
};
__device__ unsigned long long counters[kCount];
}  // namespace dynasoar::cmalloc::stats
#define DYNASOAR_CMALLOC_COUNT(c) DYNASOAR_CMALLOC_COUNT_IMPL(c)
#if DYNASOAR_DEVICE_CODE
#define DYNASOAR_CMALLOC_COUNT_IMPL(c) \
  atomicAdd(&::dynasoar::cmalloc::stats::counters[::dynasoar::cmalloc::stats::c], 1ull)
#else
#define DYNASOAR_CMALLOC_COUNT_IMPL(c) ((void)0)
#endif
#else
#define DYNASOAR_CMALLOC_COUNT(c) ((void)0)
#endif

namespace dynasoar::cmalloc {

using raw::aligned_size;
using raw::kAlignment;
using raw::kPoolOutOfMemory;

template <class Alloc>
class CircularPool;

/// Largest pool of the circular allocators, in granules (31-bit offsets).
inline constexpr std::uint64_t kMaxGranules = std::uint64_t{1} << 31;

// Tuning constants, fixed at compile time (the settings a pool chooses at
// run time are in raw::PoolOptions).

/// Merge on walk (raw::PoolOptions::merge_on_walk): free chunks too small for its
/// request that a walk passes before it starts joining them. Fewer join a
/// pool cut finer than its requests sooner, but also the pre-split's small
/// chunks, which serve concurrent small requests.
inline constexpr std::uint32_t kMergeAfterSmall = 16;
/// Most times one walk jumps ahead to the offset (CircularMalloc::walk): a
/// bound on how long a walk chases an offset that keeps moving.
inline constexpr unsigned kMaxJumps = 1u << 20;
/// Chunks a coalesced group's walk visits before its lanes walk one by one,
/// with one offset per multiprocessor: lower limits send more lanes walking
/// on their own, crowding the list; higher ones let a leader search long
/// for a chunk that may not exist.
inline constexpr std::uint64_t kGroupHops = 4096;
/// kGroupHops for the single-offset variants, whose group walks are far longer.
inline constexpr std::uint64_t kGroupHopsOneOffset = std::uint64_t{1} << 20;
/// How far ahead of a walk the offset must be for the walk to jump to it:
/// 256 KiB. Jumping closer queues every walk on the chunk at the offset;
/// jumping later leaves walks visiting chunks that concurrent walks took.
inline constexpr std::uint32_t kFollowGranules = 16384;

/// The circular-list allocators (Alg. 3, Sec. 5.2-5.4): `kFused` puts the used
/// flag into the next-offset word, `kMulti` gives each multiprocessor its own
/// offset. Trivially copyable: kernels receive it by value from
/// raw::PoolHandle::device(). Its fields and header helpers are public so
/// that its Pool (CircularPool) can set up the pool and walk the list on the host.
template <bool kFused, bool kMulti>
struct CircularMalloc {
  /// Name used in error messages: CMalloc, CFMalloc, CMMalloc or CFMMalloc.
  static constexpr const char* kName =
      kFused ? (kMulti ? "CFMMalloc" : "CFMalloc") : (kMulti ? "CMMalloc" : "CMalloc");
  /// Name of the back end (CMake's DYNASOAR_BACKEND): the name in lower case.
  static constexpr const char* kBackend =
      kFused ? (kMulti ? "cfmmalloc" : "cfmalloc") : (kMulti ? "cmmalloc" : "cmalloc");
  /// True: free() returns chunks to the list.
  static constexpr bool kCanFree = true;
  /// The host side of the pool: its memory, pre-split into a chunk list
  /// (Eq. 1), and the offsets.
  using Pool = CircularPool<CircularMalloc>;
  /// Whether the used flag shares the 8-byte header word with the next offset.
  static constexpr bool kFusedHeader = kFused;
  /// Whether there is one offset (and heap region) per multiprocessor.
  static constexpr bool kMultiOffset = kMulti;

  std::uint64_t mem;            ///< address of granule 0 (16-byte aligned)
  std::uint32_t granules;       ///< pool size; the sentinel is granule granules - 1
  std::uint32_t heaps;          ///< offsets: 1, or per_processor per multiprocessor
  std::uint32_t per_processor;  ///< multi-offset: heaps per multiprocessor, chosen by warp slot
  std::uint32_t region;         ///< granules per heap; heap h starts at granule h * region
  std::uint32_t* offsets;       ///< the paper's memOffset (per heap)
  std::uint32_t max_frag;       ///< split a chunk larger than request * max_frag
  bool coalesce;                ///< serve the lanes of a warp with one walk (see malloc)
  std::uint32_t merge_after_small;  ///< merge on walk after this many free chunks too small (walk)
  unsigned* error;              ///< raw::PoolError flags, set when a walk finds no chunk

  /// 16-byte aligned memory for `n` bytes, or nullptr (and the error flag)
  /// when a walk of two full circles found no free chunk large enough.
  ///
  /// Warp-level coalescing (not in Vinkler & Havran 2014; DynaSOAr's Sec. 4.2 does the
  /// same for its heap): the lanes of a warp that call malloc together are
  /// served by one walk. Their leader takes one chunk for all of them and
  /// cuts it into one chunk per lane, each with its own header, so every
  /// lane's memory is freed on its own as usual. If no chunk for the whole
  /// group is found, each lane walks for itself.
  DYNASOAR_HD void* malloc(std::uint64_t n) const {
    if (!coalesce) return malloc_uncoalesced(n);
    const std::uint64_t units = units_for(n);
    return units >= granules ? fail() : malloc_coalesced(static_cast<std::uint32_t>(units));
  }

  /// malloc as Vinkler & Havran 2014 Alg. 3 has it: every thread walks for itself.
  DYNASOAR_HD void* malloc_uncoalesced(std::uint64_t n) const {
    const std::uint64_t units = units_for(n);
    return units >= granules ? fail() : data(walk(static_cast<std::uint32_t>(units)));
  }

 private:
  /// Granules of a chunk for an n-byte request: its data and one header granule.
  DYNASOAR_HD static std::uint64_t units_for(std::uint64_t n) {
    return aligned_size(n) / kAlignment + 1;
  }

  DYNASOAR_HD void* malloc_coalesced(std::uint32_t units) const {
    namespace warp = platform::warp;
    // The lanes that allocate from this pool (lanes may call malloc on
    // different pools together; a group walks one pool's list).
    const warp::lane_mask group = warp::match_any(warp::present_lanes(), mem);
    const unsigned lane = warp::lane_id() % 32u;
    if (group == (warp::lane_mask{1} << lane)) return data(walk(units));  // alone: no group
    const auto leader = static_cast<unsigned>(platform::ctz(group));
    const auto last = static_cast<unsigned>(63 - platform::clz(static_cast<std::uint64_t>(group)));
    std::uint64_t before = 0, total = 0;  // granules of the lanes below this one, and of all
    for (warp::lane_mask m = group; m != 0; m &= m - 1) {
      const auto src = static_cast<unsigned>(platform::ctz(m));
      const std::uint32_t u = warp::shfl(group, units, src);
      if (src < lane) before += u;
      total += u;
    }
    // The leader's chunk and its end, handed over marked (warp::handover).
    std::uint64_t words[1] = {0};
    if (lane == leader) {
      std::uint32_t first = kNoChunk, stop = 0;
      if (total < granules) first = walk(static_cast<std::uint32_t>(total), &stop);
      words[0] = std::uint64_t{first} << 32 | std::uint64_t{stop} << 1 | warp::kHandedOver;
    }
    warp::handover(group, words, leader);
    const auto g = static_cast<std::uint32_t>(words[0] >> 32);
    if (g == kNoChunk) {  // no room for the group: one walk per lane
      DYNASOAR_CMALLOC_COUNT(kGroupFallbacks);
      return data(walk(units));
    }
    const std::uint32_t end = static_cast<std::uint32_t>(words[0]) >> 1;
    const auto mine = static_cast<std::uint32_t>(g + before);
    // The leader's header exists; the others write theirs (used) inside the
    // group's chunk, and only then does the leader link the first of them.
    if (lane != leader) {
      init_used(mine, lane == last ? end : mine + units);
      platform::thread_fence();
    }
    warp::sync(group);
    if (lane == leader) set_next(g, g + units);  // a group has two lanes or more (see above)
    return data(mine);
  }

 public:
  /// Returns memory from malloc() (Alg. 3, freeCMalloc); nullptr is ignored.
  ///
  /// With coalescing, the lanes of a warp that free together first join
  /// those of their chunks that follow one another (a coalesced malloc's
  /// group, freed together, is one run): the first chunk of a run absorbs
  /// the others, whose lanes own them, so this takes no compare-and-swap.
  /// Each run then does what Alg. 3 does for one chunk. Without it, a group's
  /// chunks stay separate when its lanes free them at once (each lane finds
  /// its successor still used), and the pool is cut into ever smaller chunks.
  DYNASOAR_HD void free(void* p) const {
    if (coalesce) {
      free_coalesced(p);
    } else if (p != nullptr) {
      const std::uint32_t g = granule_of(p);
      free_run(g, load_next(g));
    }
  }

  /// The offset this thread uses: its multiprocessor's (Sec. 5.4), or the
  /// one. With per_processor > 1 (not in the paper) the warps of a
  /// multiprocessor share its heaps by their slot.
  DYNASOAR_HD std::uint32_t home_heap() const {
    if constexpr (!kMulti) return 0;
    const std::uint32_t slot = per_processor > 1 ? platform::warp::warp_slot() % per_processor : 0;
    return (platform::warp::processor_id() * per_processor + slot) % heaps;
  }

 private:
  DYNASOAR_HD std::uint32_t granule_of(const void* p) const {
    return static_cast<std::uint32_t>((reinterpret_cast<std::uint64_t>(p) - mem) / kAlignment - 1);
  }

  /// The heap whose region holds granule g.
  DYNASOAR_HD std::uint32_t heap_of(std::uint32_t g) const {
    if constexpr (!kMulti) return 0;
    const std::uint32_t h = g / region;
    return h < heaps ? h : heaps - 1;
  }
  DYNASOAR_HD std::uint32_t heap_start(std::uint32_t h) const { return kMulti ? h * region : 0; }

  /// Whether a free may absorb the chunk at g. Not the sentinel, and not the
  /// first chunk of a heap: those headers stay valid for ever, so a walk that
  /// meets a stale header can restart from its heap's start (see walk).
  DYNASOAR_HD bool absorbable(std::uint32_t g) const {
    return g != granules - 1 && (!kMulti || g % region != 0 || g / region >= heaps);
  }

  /// Alg. 3's free for an owned run that starts at g and ends at `next`:
  /// absorb the following chunk if it is free, then mark the run free.
  DYNASOAR_HD void free_run(std::uint32_t g, std::uint32_t next) const {
    std::uint32_t after = 0;
    if (absorbable(next) && try_claim(next, after) == Claim::kTaken) {
      // The next chunk was free and is now ours: absorb it.
      set_next(g, after);
      invalidate(next);
      platform::atomic_store(&offsets[heap_of(g)], after, platform::release);
      DYNASOAR_CMALLOC_COUNT(kMerges);
    }
    release(g);  // release order: our writes (data, merged next) come first
  }

  DYNASOAR_HD void free_coalesced(void* p) const {
    namespace warp = platform::warp;
    // The lanes that free into this pool (granules of another pool would be
    // taken for neighbours of ours).
    const warp::lane_mask group = warp::match_any(warp::present_lanes(), mem);
    const unsigned lane = warp::lane_id() % 32u;
    const std::uint32_t g = p == nullptr ? kNoChunk : granule_of(p);
    const std::uint32_t next = p == nullptr ? kNoChunk : load_next(g);
    // succ: the lane whose chunk starts where this one ends; absorbed: some
    // lane's chunk ends where this one starts.
    unsigned succ = lane;
    bool absorbed = false;
    for (warp::lane_mask m = group; m != 0; m &= m - 1) {
      const auto src = static_cast<unsigned>(platform::ctz(m));
      const std::uint32_t their_g = warp::shfl(group, g, src);
      const std::uint32_t their_next = warp::shfl(group, next, src);
      // Never across a heap's first chunk (see absorbable): a warp may free
      // the last chunk of one heap and the first of the next together.
      if (g != kNoChunk && their_g == next && absorbable(next)) succ = src;
      if (g != kNoChunk && their_next == g && absorbable(g)) absorbed = true;
    }
    // Pointer jumping: after five rounds `end` is the end of the run that
    // starts here (runs have at most 32 chunks).
    std::uint32_t end = next;
    for (int round = 0; round < 5; ++round) {
      const std::uint32_t succ_end = warp::shfl(group, end, succ);
      const unsigned succ_succ = warp::shfl(group, succ, succ);
      end = succ_end;
      succ = succ_succ;
    }
    // The absorbed headers become invalid, visibly, before their run's head
    // links past them and frees the run (whose next owner may write there).
    if (g != kNoChunk && absorbed) {
      invalidate(g);
      platform::thread_fence();
    }
    warp::sync(group);
    if (g == kNoChunk || absorbed) return;
    if (end != next) {
      set_next(g, end);
      DYNASOAR_CMALLOC_COUNT(kRunMerges);
    }
    free_run(g, end);
  }

 public:
  /// Writes the sentinel header at the last granule: used, next is granule 0.
  DYNASOAR_HD void init_sentinel() const {
    const std::uint32_t g = granules - 1;
    if constexpr (kFused) {
      platform::atomic_store(fused_word(g), fused(g, true, 0));
    } else {
      platform::atomic_store(next_word(g), 0u);
      platform::atomic_store(flag_word(g), tag(g) | 1u);
    }
  }

  // --- headers ------------------------------------------------------------------------

  /// Position tag of the header at granule g; bit 0 is the used flag.
  DYNASOAR_HD static DYNASOAR_FORCEINLINE std::uint32_t tag(std::uint32_t g) {
    return (static_cast<std::uint32_t>(platform::mix64(g) >> 32) & ~1u) | 2u;  // never 0
  }
  static constexpr std::uint32_t kUsedBit = 1u << 31;  ///< fused form: flag in the next word

  /// Two-word form: the header word of the chunk at g that holds its tag and used flag.
  DYNASOAR_HD DYNASOAR_FORCEINLINE std::uint32_t* flag_word(std::uint32_t g) const {
    return reinterpret_cast<std::uint32_t*>(mem + kAlignment * g + 8);
  }
  /// Two-word form: the header word of the chunk at g that holds the next chunk's offset.
  DYNASOAR_HD DYNASOAR_FORCEINLINE std::uint32_t* next_word(std::uint32_t g) const {
    return reinterpret_cast<std::uint32_t*>(mem + kAlignment * g + 12);
  }
  /// Fused form: one 8-byte word, tag in the high half, used bit and next below.
  DYNASOAR_HD DYNASOAR_FORCEINLINE std::uint64_t* fused_word(std::uint32_t g) const {
    return reinterpret_cast<std::uint64_t*>(mem + kAlignment * g + 8);
  }
  /// The fused header word of the chunk at g: its tag, the used flag and `next`.
  DYNASOAR_HD static DYNASOAR_FORCEINLINE std::uint64_t fused(std::uint32_t g, bool used,
                                                              std::uint32_t next) {
    return (static_cast<std::uint64_t>(tag(g)) << 32) | (used ? kUsedBit : 0u) | next;
  }

  /// kSmall: free, but smaller than the min_units asked for (not claimed).
  enum class Claim { kTaken, kBusy, kSmall, kInvalid };

  /// Tries to mark the chunk at g used (Alg. 3 line 5); `next` receives its
  /// next offset either way. kInvalid: g holds no header (any more).
  ///
  /// The header is read before the compare-and-swap (test and test-and-set;
  /// Alg. 3 swaps at once): a chunk that is used, or free but smaller than
  /// `min_units`, is passed with one load instead of an atomic on a line
  /// that every walk behind this one also touches. A chunk too small is
  /// reported kBusy.
  DYNASOAR_HD Claim try_claim(std::uint32_t g, std::uint32_t& next,
                              std::uint32_t min_units = 0) const {
    if (g >= granules) return Claim::kInvalid;
    Claim c = Claim::kBusy;
    if constexpr (kFused) {
      std::uint64_t w = platform::atomic_load(fused_word(g), platform::acquire);
      if ((w >> 32) != tag(g)) return Claim::kInvalid;
      const std::uint32_t seen_next = static_cast<std::uint32_t>(w) & ~kUsedBit;
      if ((w & kUsedBit) == 0 && min_units != 0 && seen_next - g < min_units) {
        c = Claim::kSmall;
      } else if ((w & kUsedBit) == 0) {
        if (platform::atomic_compare_exchange(fused_word(g), w, w | kUsedBit, platform::acquire))
          c = Claim::kTaken;
        else if ((w >> 32) != tag(g))
          return Claim::kInvalid;
      }
      next = static_cast<std::uint32_t>(w) & ~kUsedBit;
    } else {
      std::uint32_t seen = platform::atomic_load(flag_word(g), platform::acquire);
      if ((seen | 1u) != (tag(g) | 1u)) return Claim::kInvalid;
      next = platform::atomic_load(next_word(g), platform::acquire);
      if (seen == tag(g) && min_units != 0 && next - g < min_units) {
        c = Claim::kSmall;
      } else if (seen == tag(g)) {
        if (platform::atomic_compare_exchange(flag_word(g), seen, tag(g) | 1u, platform::acquire)) {
          c = Claim::kTaken;
          // Ours now: its next may have changed since the read above.
          next = platform::atomic_load(next_word(g), platform::acquire);
        } else if (seen != (tag(g) | 1u)) {
          return Claim::kInvalid;
        }
      }
    }
    // A real header points forward, the sentinel back to granule 0.
    const bool plausible = g == granules - 1 ? next == 0 : (next > g && next < granules);
    if (!plausible) {
      if (c == Claim::kTaken) release(g);
      return Claim::kInvalid;
    }
    return c;
  }

  /// The next-chunk offset in the header at g (one atomic load, no ordering).
  DYNASOAR_HD std::uint32_t load_next(std::uint32_t g) const {
    if constexpr (kFused)
      return static_cast<std::uint32_t>(platform::atomic_load(fused_word(g))) & ~kUsedBit;
    else
      return platform::atomic_load(next_word(g));
  }

  /// Owner only: links the chunk to `next`, publishing what was written before.
  DYNASOAR_HD void set_next(std::uint32_t g, std::uint32_t next) const {
    if constexpr (kFused)
      platform::atomic_store(fused_word(g), fused(g, true, next), platform::release);
    else
      platform::atomic_store(next_word(g), next, platform::release);
  }

  /// Owner only: marks the chunk free (Alg. 3 lines 11 and 33).
  DYNASOAR_HD void release(std::uint32_t g) const {
    if constexpr (kFused)
      platform::atomic_fetch_and(fused_word(g), ~static_cast<std::uint64_t>(kUsedBit),
                                 platform::release);
    else
      platform::atomic_store(flag_word(g), tag(g), platform::release);
  }

  /// Owner only, after absorbing the chunk at g: its header becomes bytes
  /// that no walk accepts (tag 0; tags are never 0). Left as it was (used,
  /// valid tag), it would lie in the merged chunk's data, and a user who
  /// writes only part of those bytes (the low half, say, with padding above)
  /// could turn it into a valid free header that a late walk claims: its
  /// compare-and-swap would write into the user's object.
  DYNASOAR_HD void invalidate(std::uint32_t g) const {
    if constexpr (kFused)
      platform::atomic_store(fused_word(g), std::uint64_t{0});
    else
      platform::atomic_store(flag_word(g), 0u);
  }

  /// Writes the header of a new free chunk (published by the caller's set_next).
  DYNASOAR_HD void init_free(std::uint32_t g, std::uint32_t next) const {
    if constexpr (kFused) {
      platform::atomic_store(fused_word(g), fused(g, false, next));
    } else {
      platform::atomic_store(next_word(g), next);
      platform::atomic_store(flag_word(g), tag(g));
    }
  }

  /// No chunk: the result of a walk that found none, or a lane that frees nullptr.
  static constexpr std::uint32_t kNoChunk = ~std::uint32_t{0};
  /// Most times one walk follows the offset forward (cmalloc::kMaxJumps).
  static constexpr unsigned kMaxJumps = cmalloc::kMaxJumps;
  /// Chunks a coalesced group's walk visits before its lanes walk one by one
  /// (cmalloc::kGroupHops).
  static constexpr std::uint64_t kGroupHops = cmalloc::kGroupHops;
  /// kGroupHops for the single-offset variants (cmalloc::kGroupHopsOneOffset).
  static constexpr std::uint64_t kGroupHopsOneOffset = cmalloc::kGroupHopsOneOffset;
  /// How far ahead of a walk the offset must be for the walk to follow it
  /// (cmalloc::kFollowGranules).
  static constexpr std::uint32_t kFollowGranules = cmalloc::kFollowGranules;

  /// Where one walk (Alg. 3) stands between its steps.
  struct WalkState {
    std::uint32_t heap;           ///< the walk's heap (home_heap)
    std::uint32_t g;              ///< the chunk the walk is at
    std::uint32_t next = 0;       ///< its successor, as try_claim read it
    std::uint32_t prev = kNoChunk;  ///< the last chunk whose header was valid
    std::uint32_t counted;        ///< the granule up to which `walked` counts the walk
    std::uint64_t walked = 0;     ///< granules walked, the bound of two circles
    std::uint64_t hops = 0;       ///< chunks visited (a group's leader gives up after kGroupHops)
    std::uint32_t small = 0;      ///< free chunks passed because they were too small
    unsigned restarts = 0;        ///< restarts from the offset or the heap's first chunk
    unsigned jumps = 0;           ///< jumps to the offset (follow_offset)
  };

  /// Alg. 3: walks the list from the home offset for a free chunk of at
  /// least `units` granules, takes it (split if too large) and returns its
  /// first granule; kNoChunk (and the error flag) after two circles (three
  /// if it jumped; see follow_offset). With `end` (a group's leader) it
  /// gives up after kGroupHops chunks and raises no flag; `end` receives
  /// the granule after the chunk taken.
  ///
  /// Two circles: a full one can miss a chunk freed behind the walk. Jumps
  /// happen only in a first circle, which is not counted: they skip chunks
  /// that may have been freed since the offset passed them. A group's leader
  /// gives up early, and its lanes walk one by one: that costs less than a
  /// leader's search of a pool of millions of chunks for one that may not
  /// exist. Forward progress: every step adds at least one granule to
  /// `walked` (a jump the granules it skips), and a walk jumps at most
  /// kMaxJumps times, so a walk ends after at most three circles.
  DYNASOAR_HD std::uint32_t walk(std::uint32_t units, std::uint32_t* end = nullptr) const {
    DYNASOAR_CMALLOC_COUNT(kWalks);
    WalkState w = start_walk();
    while (w.walked <= (w.jumps == 0 ? 2ull : 3ull) * granules) {
      DYNASOAR_CMALLOC_COUNT(kHops);
      if (end != nullptr && ++w.hops > (kMulti ? kGroupHops : kGroupHopsOneOffset)) break;
      // A chunk smaller than the request is passed unclaimed (kSmall).
      Claim c = try_claim(w.g, w.next, units);
      if (c == Claim::kInvalid) {
        recover_from_stale_header(w);
        continue;
      }
      std::uint32_t size = w.g == granules - 1 ? 0 : w.next - w.g;
      if (c == Claim::kSmall && merge_on_walk(w, units, size)) c = Claim::kTaken;
      if (c == Claim::kTaken) {
        if (units <= size) {
          const std::uint32_t after = take(w.g, w.next, size, units, w.heap);
          if (end != nullptr) *end = after;
          return w.g;
        }
        release(w.g);  // too small
      } else {
        DYNASOAR_CMALLOC_COUNT(kBusy);
        if (follow_offset(w)) continue;
      }
      step_forward(w);
    }
    DYNASOAR_CMALLOC_COUNT(kFailedWalks);
    if (end == nullptr) fail();  // a group's leader falls back to per-lane walks instead
    return kNoChunk;
  }

  /// A walk's first step: at its heap's offset. Acquire: the header at the
  /// offset was written before the offset moved there.
  DYNASOAR_HD DYNASOAR_FORCEINLINE WalkState start_walk() const {
    WalkState w;
    w.heap = home_heap();
    w.g = platform::atomic_load(&offsets[w.heap], platform::acquire);
    w.counted = w.g;
    return w;
  }

  /// A stale header at w.g: step back to the last valid header, or else
  /// start again from the offset, which has probably moved on, and every
  /// second time from the heap's first chunk, whose header is never
  /// absorbed. An offset that names a stale header is moved to the heap's
  /// first chunk, so that walks stop following it there.
  DYNASOAR_HD DYNASOAR_FORCEINLINE void recover_from_stale_header(WalkState& w) const {
    DYNASOAR_CMALLOC_COUNT(kInvalid);
    std::uint32_t expected = w.g;
    if (platform::atomic_load(&offsets[w.heap]) == w.g)  // test first: the offset is a hot word
      platform::atomic_compare_exchange(&offsets[w.heap], expected, heap_start(w.heap));
    w.walked += 1;
    // The chunk before was valid a moment ago, and a free that absorbs a
    // chunk links its predecessor past it before it invalidates it: one
    // step back usually finds the list again. The chunk stepped back to was
    // counted up to `counted` when the walk left it; it now adds only what
    // it grew by since (step_forward), at least one granule: a walk that
    // trails a merge on walk steps back at every chunk the merge absorbs,
    // and counting the whole chunk each time would end its two circles
    // early on a pool with room.
    if (w.prev != kNoChunk) {
      w.g = w.prev;  // `counted` stays where the walk left prev
      w.prev = kNoChunk;
      return;
    }
    w.g = w.restarts++ % 2 == 0 ? platform::atomic_load(&offsets[w.heap], platform::acquire)
                                : heap_start(w.heap);
    w.counted = w.g;
  }

  /// Merge on walk: past merge_after_small small free chunks, one whose
  /// successor is free too is claimed and absorbs the free chunks after it
  /// (absorb_free_successors). True if the walk now holds w.g, of `size`
  /// granules.
  DYNASOAR_HD DYNASOAR_FORCEINLINE bool merge_on_walk(WalkState& w, std::uint32_t units,
                                                      std::uint32_t& size) const {
    if (w.small++ < merge_after_small || !absorbable(w.next) || !is_free(w.next) ||
        try_claim(w.g, w.next) != Claim::kTaken)
      return false;
    size = absorb_free_successors(w.g, w.next, units);
    return true;
  }

  /// Not in Alg. 3: passing a chunk it cannot have, a walk follows the
  /// offset if it has moved far ahead meanwhile (kFollowGranules), since the
  /// chunks in between were taken by the walks that started with this one.
  /// A jump counts the granules it skips, a walk jumps at most kMaxJumps
  /// times and only in its first circle, and then still walks two full
  /// circles before it gives up, as without jumps. True if it jumped.
  DYNASOAR_HD DYNASOAR_FORCEINLINE bool follow_offset(WalkState& w) const {
    if (w.jumps >= kMaxJumps || w.walked >= granules) return false;
    const std::uint32_t o = platform::atomic_load(&offsets[w.heap], platform::acquire);
    if (!ahead(o, w.next) || distance(w.next, o) < kFollowGranules) return false;
    DYNASOAR_CMALLOC_COUNT(kJumps);
    ++w.jumps;
    w.walked += distance(w.g, o);
    w.g = o;
    w.counted = w.g;
    return true;
  }

  /// On to the next chunk. `walked` grows by next - g (the chunk's size) on
  /// a step forward, which starts at `counted`; by what the chunk grew on a
  /// step back; by one granule for the pool's last granule (next wraps to
  /// 0) or a chunk that did not grow.
  DYNASOAR_HD DYNASOAR_FORCEINLINE void step_forward(WalkState& w) const {
    w.walked += w.next > w.counted ? w.next - w.counted : 1;
    w.prev = w.g;
    w.counted = w.next;
    w.g = w.next;
  }

  /// Merge on walk (not in Vinkler & Havran 2014): a walk that holds a free chunk too
  /// small for its request absorbs the free chunks that follow it, as free()
  /// absorbs one, until the chunk is large enough or the next one is in use.
  /// The paper merges only at free() and only with the next chunk, so after
  /// many small requests are freed the list stays cut into small free chunks
  /// and a larger request walks (and fails) over all of them although the
  /// pool is empty. Returns the new size; `next` is updated.
  DYNASOAR_HD std::uint32_t absorb_free_successors(std::uint32_t g, std::uint32_t& next,
                                                   std::uint32_t units) const {
    while (next - g < units && absorbable(next)) {
      std::uint32_t after = 0;
      if (try_claim(next, after) != Claim::kTaken) break;
      set_next(g, after);
      invalidate(next);
      next = after;
      DYNASOAR_CMALLOC_COUNT(kWalkMerges);
    }
    return next - g;
  }

  /// Whether the header at g is valid and free (one load; a hint only: the
  /// chunk may be taken before the caller's compare-and-swap).
  DYNASOAR_HD bool is_free(std::uint32_t g) const {
    if constexpr (kFused) {
      const std::uint64_t w = platform::atomic_load(fused_word(g), platform::acquire);
      return (w >> 32) == tag(g) && (w & kUsedBit) == 0;
    } else {
      return platform::atomic_load(flag_word(g), platform::acquire) == tag(g);
    }
  }

  /// Raises the out-of-memory flag; returns nullptr, for malloc to pass on.
  DYNASOAR_HD void* fail() const {
    platform::atomic_fetch_or(error, static_cast<unsigned>(kPoolOutOfMemory));
    return nullptr;
  }
  /// Address of the data of the chunk at g; nullptr for kNoChunk.
  DYNASOAR_HD void* data(std::uint32_t g) const {
    return g == kNoChunk
               ? nullptr
               : reinterpret_cast<void*>(mem + kAlignment * (static_cast<std::uint64_t>(g) + 1));
  }

  /// Writes the header of a chunk that is used from the start (the lanes'
  /// chunks of a coalesced request; published by the leader's set_next).
  DYNASOAR_HD void init_used(std::uint32_t g, std::uint32_t next) const {
    if constexpr (kFused) {
      platform::atomic_store(fused_word(g), fused(g, true, next));
    } else {
      platform::atomic_store(next_word(g), next);
      platform::atomic_store(flag_word(g), tag(g) | 1u);
    }
  }

  /// Alg. 3 lines 13-22: split off the rest if the chunk is too large and
  /// move the offset on; returns the granule after the chunk taken.
  DYNASOAR_HD std::uint32_t take(std::uint32_t g, std::uint32_t next, std::uint32_t size,
                                 std::uint32_t units, std::uint32_t heap) const {
    std::uint32_t after = next;
    if (units + 1 <= size && static_cast<std::uint64_t>(units) * max_frag <= size) {
      after = g + units;
      init_free(after, next);
      set_next(g, after);  // release: the new header is written before it is linked
    }
    advance_offset(heap, after);
    return after;
  }

  /// Granules from a forward to b around the circle.
  DYNASOAR_HD std::uint32_t distance(std::uint32_t a, std::uint32_t b) const {
    return b >= a ? b - a : b + granules - a;
  }
  /// Whether granule a lies ahead of b, by less than half the circle.
  DYNASOAR_HD bool ahead(std::uint32_t a, std::uint32_t b) const {
    const std::uint32_t d = distance(b, a);
    return d != 0 && d < granules / 2;
  }

  /// Alg. 3 line 21 sets the offset past the chunk taken. Walks that finish
  /// out of order would move it back over chunks just taken, and every walk
  /// that starts there visits them again; here it only moves forward (by
  /// less than half the circle). free() still moves it back, as in the
  /// paper, so that freed chunks are found.
  DYNASOAR_HD void advance_offset(std::uint32_t heap, std::uint32_t to) const {
    std::uint32_t seen = platform::atomic_load(&offsets[heap]);
    while (ahead(to, seen) &&
           !platform::atomic_compare_exchange(&offsets[heap], seen, to, platform::release)) {
    }
  }
};

/// Flag and next offset in two 4-byte words; one shared offset.
using CMalloc = CircularMalloc<false, false>;
/// Flag fused into the next-offset word; one shared offset.
using CFMalloc = CircularMalloc<true, false>;
/// CMalloc with one offset per multiprocessor (Sec. 5.4).
using CMMalloc = CircularMalloc<false, true>;
/// CFMalloc with one offset per multiprocessor (Sec. 5.4).
using CFMMalloc = CircularMalloc<true, true>;

/// Whether A is one of the circular allocators (CMalloc, CFMalloc, CMMalloc,
/// CFMMalloc): a pool of a chunk list, with presplit() and fragmentation().
template <class A>
inline constexpr bool kIsCircular = false;
/// The circular allocators (see above).
template <bool kFused, bool kMulti>
inline constexpr bool kIsCircular<CircularMalloc<kFused, kMulti>> = true;

/// Fragmentation of a circular pool (Vinkler & Havran 2014 Sec. 8, after Steinberger et
/// al.): regions are the chunks of the list, header included.
struct PoolFragmentation {
  std::uint64_t used_chunks = 0;         ///< chunks marked used (the sentinel excluded)
  std::uint64_t free_chunks = 0;         ///< chunks marked free
  std::uint64_t free_bytes = 0;          ///< bytes of the free chunks, headers included
  std::uint64_t largest_free_bytes = 0;  ///< bytes of the largest free chunk
  /// Eq. 2: mean over used chunks of (size - requested) / size.
  double internal = 0;
  /// Eq. 3: 1 - largest free chunk / all free bytes (0: all free memory in one piece).
  double external = 0;
};

namespace detail {
template <class Alloc>
struct WriteChunks {  // the pre-split headers, one chunk per index
  Alloc alloc;
  PreSplit plan;
  DYNASOAR_HD void operator()(std::size_t k) const {
    const auto h = static_cast<std::uint32_t>(k / plan.chunks_per_heap());
    const std::uint64_t i = k % plan.chunks_per_heap();
    alloc.init_free(plan.chunk_start(h, i), plan.chunk_end(h, i));
    if (k == 0) alloc.init_sentinel();
  }
};
}  // namespace detail

/// The pool of a circular allocator on the host: its memory, pre-split into
/// the chunks of Eq. 1, and the offsets; owned by raw::PoolHandle<Alloc>.
template <class Alloc>
class CircularPool {
 public:
  /// A pool of `bytes` (rounded down to 16) for `alloc`, pre-split on `s`.
  /// Throws std::invalid_argument for a pool larger than 31-bit offsets
  /// reach, settings it cannot use, or one too small for its heaps.
  CircularPool(std::uint64_t bytes, const raw::PoolOptions& options, platform::Stream s,
               Alloc& alloc)
      : memory_(bytes), stream_(s) {
    const std::uint64_t granules = bytes / kAlignment;
    alloc.mem = memory_.address();
    if (granules > kMaxGranules)
      throw std::invalid_argument(std::string(Alloc::kName) + ": at most " +
                                  std::to_string(kMaxGranules * kAlignment) +
                                  " bytes (31-bit offsets)");
    if (options.max_frag < 1)
      throw std::invalid_argument(std::string(Alloc::kName) + ": max_frag must be >= 1");
    if (options.heaps_per_processor < 1)
      throw std::invalid_argument(std::string(Alloc::kName) +
                                  ": heaps_per_processor must be >= 1");
    const std::uint32_t heaps =
        Alloc::kMultiOffset
            ? (options.heaps != 0 ? options.heaps
                                  : platform::processors() * options.heaps_per_processor)
            : 1;
    plan_ = PreSplit::plan(
        granules, heaps,
        static_cast<std::uint32_t>((options.min_chunk_bytes + kAlignment - 1) / kAlignment));
    offsets_ = platform::Buffer<std::uint32_t>(heaps);
    std::vector<std::uint32_t> roots(heaps);
    for (std::uint32_t h = 0; h < heaps; ++h) roots[h] = plan_.heap_start(h);
    offsets_.copy_from_host(roots.data(), heaps, 0, s);
    alloc.granules = static_cast<std::uint32_t>(granules);
    alloc.heaps = heaps;
    alloc.per_processor = options.heaps_per_processor;
    alloc.region = plan_.region;
    alloc.offsets = offsets_.data();
    alloc.max_frag = options.max_frag;
    alloc.coalesce = options.coalesce;
    alloc.merge_after_small = options.merge_on_walk ? kMergeAfterSmall : ~std::uint32_t{0};
    platform::parallel_for(static_cast<std::size_t>(plan_.chunks_per_heap() * heaps),
                           detail::WriteChunks<Alloc>{alloc, plan_}, s);
  }

  /// Pool bytes.
  std::uint64_t bytes() const { return memory_.bytes(); }
  /// Address range of the pool, for tests: [begin, end).
  std::uint64_t begin() const { return memory_.address(); }
  /// End of that range (see begin()).
  std::uint64_t end() const { return memory_.address() + memory_.bytes(); }
  /// The pre-split pattern.
  const PreSplit& presplit() const { return plan_; }

  /// Walks the chunk list (a copy on the host; no kernel may run meanwhile)
  /// and measures its fragmentation. `requested(data)` gives the bytes asked
  /// for by the allocation whose data starts at `data` (a host pointer into
  /// the copy), so that callers who store the size (the object API does, in
  /// its header) can report Eq. 2 exactly.
  template <class Requested>
  PoolFragmentation fragmentation(Requested&& requested) const {
    const std::vector<std::uint64_t> words = memory_.to_vector(stream_);
    const auto* bytes = reinterpret_cast<const unsigned char*>(words.data());
    const std::uint32_t sentinel = plan_.granules - 1;
    PoolFragmentation f;
    double internal_sum = 0;
    for (std::uint32_t g = 0; g < sentinel;) {
      std::uint32_t next = 0;
      bool used = false;
      if constexpr (Alloc::kFusedHeader) {
        std::uint64_t w = 0;
        std::memcpy(&w, bytes + kAlignment * g + 8, sizeof w);
        used = (w & Alloc::kUsedBit) != 0;
        next = static_cast<std::uint32_t>(w) & ~Alloc::kUsedBit;
      } else {
        std::uint32_t flag = 0;
        std::memcpy(&flag, bytes + kAlignment * g + 8, sizeof flag);
        std::memcpy(&next, bytes + kAlignment * g + 12, sizeof next);
        used = (flag & 1u) != 0;
      }
      if (next <= g || next > sentinel)
        throw std::runtime_error(std::string(Alloc::kName) + ": corrupt chunk list at granule " +
                                 std::to_string(g));
      const std::uint64_t size = std::uint64_t{next - g} * kAlignment;
      if (used) {
        ++f.used_chunks;
        const std::uint64_t asked = requested(bytes + kAlignment * (std::uint64_t{g} + 1));
        internal_sum +=
            static_cast<double>(size - std::min(asked, size)) / static_cast<double>(size);
      } else {
        ++f.free_chunks;
        f.free_bytes += size;
        f.largest_free_bytes = std::max(f.largest_free_bytes, size);
      }
      g = next;
    }
    f.internal = f.used_chunks == 0 ? 0.0 : internal_sum / static_cast<double>(f.used_chunks);
    f.external = f.free_bytes == 0 ? 0.0
                                   : 1.0 - static_cast<double>(f.largest_free_bytes) /
                                               static_cast<double>(f.free_bytes);
    return f;
  }

 private:
  raw::PoolMemory memory_;
  platform::Stream stream_;
  PreSplit plan_{};
  platform::Buffer<std::uint32_t> offsets_;  // the paper's memOffset, per heap
};

}  // namespace dynasoar::cmalloc
