// ScatterAlloc (Steinberger, Kenzel, Kainz and Schmalstieg, InPar 2012;
// Steinberger et al. 2012) behind the raw allocators' API:
// malloc(bytes) and free(p) in device and host code, 16-byte aligned memory,
// an error flag. The pool is cut into pages of one chunk size each, grouped
// into regions and super blocks with fill levels (Sec. 5.1, 5.4); a request
// hashes to a start page (Eq. 3), reserves a chunk with one atomic add on a
// page's counter and then claims a bit (Sec. 6.1). The layout, every
// deviation from the paper and the forward-progress argument of each loop
// are in docs/design/scatter.md.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "dynasoar/allocator/raw/alignment.h"
#include "dynasoar/allocator/raw/pool_error.h"
#include "dynasoar/allocator/raw/pool_memory.h"
#include "dynasoar/allocator/raw/pool_options.h"
#include "dynasoar/allocator/scatter/options.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/warp.h"

namespace dynasoar::scatter {

using raw::aligned_size;
using raw::kAlignment;
using raw::kPoolBadFree;
using raw::kPoolOutOfMemory;

class ScatterPool;

// Tuning constants, fixed at compile time (the settings a pool chooses at
// run time are in Options below).

/// Bytes of a page (Sec. 8 uses 4 KiB): larger pages serve larger requests
/// without a run of pages, at a longer bit field per page in the side table.
inline constexpr std::uint32_t kPageBytes = 4096;
/// Most times one page reset repeats itself (ScatterAlloc::reset): more
/// leave fewer pages split but empty under churn, at a longer worst-case free.
inline constexpr std::uint32_t kResetAttempts = 4;
/// Downward passes of a search for a run of pages (ScatterAlloc::malloc_run):
/// more find runs that concurrent searches skipped or freed meanwhile, at a
/// longer search before a request that cannot be served fails.
inline constexpr std::uint32_t kRunPasses = 4;

/// Most chunks on a page: chunks of the smallest size, 16 bytes.
inline constexpr std::uint32_t kMaxChunks = kPageBytes / kAlignment;
/// 64-bit words of a page's bit field.
inline constexpr std::uint32_t kPageWords = kMaxChunks / 64;
static_assert(kMaxChunks < (1u << 15),
              "a grant packs a page's chunk count in 16 bits and its base in 15");
static_assert(kMaxChunks % 64 == 0, "a page's bit field is whole 64-bit words");

/// A page's entry of the usage table (Sec. 5.2, Fig. 1).
struct PageUsage {
  /// 0: not split; 16..kPageBytes: the size of its chunks; kRunHead | n: the
  /// first page of a run of n pages; kRunTail: another page of a run.
  std::uint32_t chunk;
  /// Chunks reserved (tryUsePage line 2); kLocked added while free() resets
  /// the page's chunk size.
  std::uint32_t count;
  /// 1 while the page is counted as full in its region's and super block's
  /// fill levels (Sec. 5.4), else 0: the reservation that fills the page sets
  /// it, the next free of one of its chunks (or its reset) clears it, and
  /// only who flips it changes the counters, so they never drift.
  std::uint32_t counted_full;
  /// Keeps the bit field 8-byte aligned.
  std::uint32_t unused;
  /// One bit per chunk, set while the chunk is in use.
  std::uint64_t bits[kPageWords];
};

/// ScatterAlloc's device allocator: trivially copyable, passed to kernels by
/// value (raw::PoolHandle<ScatterAlloc>::device()). Its fields are public
/// for its Pool (ScatterPool) and for tests that inspect the usage table.
struct ScatterAlloc {
  /// Name used in error messages.
  static constexpr const char* kName = "ScatterAlloc";
  /// Name of the back end (CMake's DYNASOAR_BACKEND).
  static constexpr const char* kBackend = "scatter_alloc";
  /// True: free() returns chunks to their pages.
  static constexpr bool kCanFree = true;
  /// The settings its Pool passes to metadata_words and attach.
  using Options = scatter::Options;
  /// The host side of the pool: its memory and its side table.
  using Pool = ScatterPool;

  /// Chunk word of the first page of a run, or'ed with the run's pages.
  static constexpr std::uint32_t kRunHead = 0x80000000u;
  /// Chunk word of the other pages of a run.
  static constexpr std::uint32_t kRunTail = 0xFFFFFFFFu;
  /// Added to a page's count while its chunk size is reset: every
  /// reservation then sees a full page.
  static constexpr std::uint32_t kLocked = 1u << 30;
  /// Most times one reset repeats itself (scatter::kResetAttempts).
  static constexpr std::uint32_t kResetAttempts = scatter::kResetAttempts;
  /// Downward passes of a search for a run of pages (scatter::kRunPasses).
  static constexpr std::uint32_t kRunPasses = scatter::kRunPasses;

  std::uint64_t mem;            ///< address of page 0 (16-byte aligned)
  PageUsage* pages;             ///< the usage table, one entry per page
  std::int32_t* region_full;    ///< full pages per region (a hint)
  std::int32_t* super_full;     ///< full pages per super block (a hint)
  std::uint32_t* active;        ///< the active super block (Sec. 5.4)
  std::uint32_t page_count;     ///< pages of the pool
  std::uint32_t super_pages;    ///< pages per super block
  std::uint32_t super_blocks;   ///< super blocks; the last may have fewer pages
  std::uint32_t window;         ///< super blocks searches start in (Options::active_window)
  std::uint32_t region_pages;   ///< pages per region
  std::uint32_t region_shift;   ///< log2(region_pages) if a power of two, else 32
  std::uint32_t super_regions;  ///< regions of a super block of super_pages pages
  std::uint32_t max_frag;       ///< see Options::max_frag
  std::uint32_t k_size;         ///< k_S of Eq. 3
  std::uint32_t k_mp;           ///< k_mp of Eq. 3
  bool spread;                  ///< see Options::spread
  bool coalesce;                ///< see Options::coalesce
  unsigned* error;              ///< raw::PoolError flags

  // --- set-up (host) ------------------------------------------------------------------

  /// 64-bit words of side table (usage table and counters) for a pool of
  /// `bytes`. Its Pool allocates them zeroed: every page unsplit and free.
  static std::uint64_t metadata_words(std::uint64_t bytes, const Options& o) {
    const std::uint64_t pages = bytes / kPageBytes;
    const std::uint64_t supers =
        o.super_block_pages == 0 ? 0 : (pages + o.super_block_pages - 1) / o.super_block_pages;
    const std::uint64_t regions =
        o.region_pages == 0 ? 0 : (pages + o.region_pages - 1) / o.region_pages;
    return pages * (sizeof(PageUsage) / 8) + (regions + supers + 1 + 1) / 2;
  }

  /// Points the allocator at a pool of `bytes` at `pool` and at its zeroed
  /// side table `meta` (metadata_words long). Host only. Throws
  /// std::invalid_argument for a pool of no page or settings it cannot use.
  void attach(std::uint64_t pool, std::uint64_t bytes, std::uint64_t* meta, const Options& o) {
    const std::string name = kName;
    if (bytes < kPageBytes)
      throw std::invalid_argument(name + ": a pool of " + std::to_string(bytes) +
                                  " bytes is too small; it needs at least one page of " +
                                  std::to_string(kPageBytes) + " bytes");
    if (bytes / kPageBytes >= (std::uint64_t{1} << 31))
      throw std::invalid_argument(name + ": at most 2^31 - 1 pages of " +
                                  std::to_string(kPageBytes) + " bytes");
    if (o.region_pages == 0 || o.super_block_pages == 0 ||
        o.super_block_pages % o.region_pages != 0)
      throw std::invalid_argument(name +
                                  ": region_pages must be >= 1 and divide super_block_pages");
    if (o.max_frag < 1) throw std::invalid_argument(name + ": max_frag must be >= 1");
    if (o.active_window < 1) throw std::invalid_argument(name + ": active_window must be >= 1");
    mem = pool;
    page_count = static_cast<std::uint32_t>(bytes / kPageBytes);
    super_pages = o.super_block_pages;
    super_blocks = (page_count + super_pages - 1) / super_pages;
    window = o.active_window < super_blocks ? o.active_window : super_blocks;
    region_pages = o.region_pages;
    region_shift = 32;
    for (std::uint32_t b = 0; b < 32; ++b)
      if (region_pages == std::uint32_t{1} << b) region_shift = b;
    super_regions = super_pages / region_pages;
    const std::uint32_t regions = (page_count + region_pages - 1) / region_pages;
    pages = reinterpret_cast<PageUsage*>(meta);
    auto* counters =
        reinterpret_cast<std::int32_t*>(meta + std::uint64_t{page_count} * (sizeof(PageUsage) / 8));
    region_full = counters;
    super_full = counters + regions;
    active = reinterpret_cast<std::uint32_t*>(counters + regions + super_blocks);
    max_frag = o.max_frag;
    k_size = o.k_size;
    k_mp = o.k_mp;
    spread = o.spread;
    coalesce = o.coalesce;
  }

  // --- the raw API ----------------------------------------------------------------------

  /// 16-byte aligned memory for `n` bytes, or nullptr (and the out-of-memory
  /// flag) when no page and no run of pages can serve it. Device and host.
  DYNASOAR_HD void* malloc(std::uint64_t n) const {
    if (n > kPageBytes) return malloc_run(n);
    const auto size = static_cast<std::uint32_t>(aligned_size(n));
    return coalesce ? malloc_coalesced(size) : malloc_one(size);
  }

  /// Returns memory from malloc(); nullptr is ignored. A pointer that is no
  /// live allocation of this pool (freed before, from elsewhere, or not the
  /// start of a chunk) raises kPoolBadFree and frees nothing; not detected:
  /// a pointer freed before whose chunk has been handed out again. Device and host.
  DYNASOAR_HD void free(void* p) const {
    if (p == nullptr) return;
    const auto address = reinterpret_cast<std::uint64_t>(p);
    if (address < mem || address - mem >= std::uint64_t{page_count} * kPageBytes) return bad_free();
    const auto q = static_cast<std::uint32_t>((address - mem) / kPageBytes);
    const auto offset = static_cast<std::uint32_t>((address - mem) % kPageBytes);
    PageUsage& page = pages[q];
    const std::uint32_t c = platform::atomic_load(&page.chunk, platform::acquire);
    if (c >= kRunHead) {
      if (c == kRunTail || offset != 0) return bad_free();
      return free_run(q, c);
    }
    if (c == 0 || offset % c != 0 || offset / c >= kPageBytes / c) return bad_free();
    const std::uint32_t spot = offset / c;
    const std::uint64_t mask = std::uint64_t{1} << (spot % 64);
    // Release: the owner's use of the chunk comes before the chunk is free.
    const std::uint64_t old =
        platform::atomic_fetch_and(&page.bits[spot / 64], ~mask, platform::release);
    if ((old & mask) == 0) return bad_free();  // the bit was clear: a second free
    uncount_full(q);                           // the page has a free chunk now
    release(q, 1);
    reactivate(q, address);
  }

  // --- what tests and the design note inspect ------------------------------------------

  /// Chunks on a page of chunk size c (0 for a page that is not split).
  DYNASOAR_HD static std::uint32_t spots_of(std::uint32_t c) {
    return c == 0 || c > kPageBytes ? 0 : kPageBytes / c;
  }

  /// Eq. 3: the page of super block s at which a search for `size` bytes by
  /// multiprocessor `mp` starts (an index into that super block), and with
  /// spread, warp slot `slot` of it that many pages further as a
  /// warp's 32 requests of `size` take (at least one).
  DYNASOAR_HD std::uint32_t hash_page(std::uint32_t size, std::uint32_t mp, std::uint32_t slot,
                                      std::uint32_t s) const {
    std::uint64_t h = std::uint64_t{size} * k_size + std::uint64_t{mp} * k_mp;
    if (spread) h += std::uint64_t{slot} * ((32u * size + kPageBytes - 1) / kPageBytes);
    return modulo(h, pages_in(s));
  }

  /// The stride between the regions a warp visits (spread): from a hash of
  /// its multiprocessor and slot, in [1, regions) (1 for one region), coprime to `regions` so
  /// that the visits cover every region once. A power of two (the default
  /// settings) takes any odd stride, with no division; otherwise the loop
  /// ends at the latest at 1.
  DYNASOAR_HD static std::uint32_t region_step(std::uint32_t mp, std::uint32_t slot,
                                               std::uint32_t regions) {
    if (regions <= 2) return 1;
    // 32-bit multiplicative hash: this runs on every search, and a 64-bit
    // modulo is a long instruction sequence on the GPU.
    std::uint32_t h = mp * 0x9E3779B1u + slot * 0x85EBCA77u;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 13;
    if ((regions & (regions - 1)) == 0) return (h & (regions - 1)) | 1u;
    std::uint32_t step = 1 + h % (regions - 1);
    while (gcd(step, regions) != 1) step = step + 1 == regions ? 1 : step + 1;
    return step;
  }

  /// Greatest common divisor (Euclid).
  DYNASOAR_HD static std::uint32_t gcd(std::uint32_t a, std::uint32_t b) {
    while (b != 0) {
      const std::uint32_t t = a % b;
      a = b;
      b = t;
    }
    return a;
  }

 private:
  /// A reservation of `granted` chunks on page `page` of chunk size `chunk`;
  /// `base` is the count before it (a hint where free chunks are).
  struct Grant {
    std::uint32_t page = 0;
    std::uint32_t chunk = 0;
    std::uint32_t granted = 0;
    std::uint32_t base = 0;
    std::uint32_t spots = 0;  ///< chunks of the page (spots_of(chunk))
  };

  DYNASOAR_HD std::uint32_t pages_in(std::uint32_t s) const {
    const std::uint32_t first = s * super_pages;
    return page_count - first < super_pages ? page_count - first : super_pages;
  }

  /// The region of page `q` of a super block: a shift for the default
  /// (power-of-two) regions, since a 32-bit division is some twenty
  /// instructions and a one-lane search issues little else.
  DYNASOAR_HD std::uint32_t region_of(std::uint32_t q) const {
    return region_shift < 32 ? q >> region_shift : q / region_pages;
  }

  /// Regions of super block s (the last may be shorter).
  DYNASOAR_HD std::uint32_t regions_in(std::uint32_t s) const {
    const std::uint32_t n = pages_in(s);
    return n == super_pages ? super_regions : (n + region_pages - 1) / region_pages;
  }

  /// h mod n, with a mask where n is a power of two (the default super
  /// blocks): a 64-bit division is a long instruction sequence on the GPU.
  DYNASOAR_HD static std::uint32_t modulo(std::uint64_t h, std::uint32_t n) {
    return (n & (n - 1)) == 0 ? static_cast<std::uint32_t>(h) & (n - 1)
                              : static_cast<std::uint32_t>(h % n);
  }

  DYNASOAR_HD void* fail() const {
    platform::atomic_fetch_or(error, static_cast<unsigned>(kPoolOutOfMemory));
    return nullptr;
  }
  DYNASOAR_HD void bad_free() const {
    platform::atomic_fetch_or(error, static_cast<unsigned>(kPoolBadFree));
  }

  DYNASOAR_HD void* chunk_address(std::uint32_t q, std::uint32_t chunk, std::uint32_t spot) const {
    return reinterpret_cast<void*>(mem + std::uint64_t{q} * kPageBytes +
                                   std::uint64_t{spot} * chunk);
  }

  /// One lane's request (Alg. alloc): a reservation, then a free bit.
  DYNASOAR_HD void* malloc_one(std::uint32_t size) const {
    const Grant g = find(size, 1);
    if (g.granted == 0) return fail();
    return chunk_address(g.page, g.chunk, take_spot(g.page, g.spots, g.base));
  }

  /// The lanes of a warp that ask for `size` of this pool together
  /// (match_any on the size and the pool): their lowest lane searches for a page and reserves as
  /// many chunks as there are lanes with one atomic add; the lanes that got one (the lowest
  /// `granted`) find their bits, starting at consecutive spots so that a warp's chunks lie side by
  /// side (Sec. 6.1). The others go on with the next search. Bounded: each round serves at least
  /// one lane, or finds no page with room at all and fails the rest, so at most 32 rounds; in a
  /// round the others wait only for the leader's bounded search (warp::handover).
  DYNASOAR_HD void* malloc_coalesced(std::uint32_t size) const {
    namespace warp = platform::warp;
    // The same size and the same pool: lanes may call malloc on different
    // ScatterAlloc objects together, and a follower uses the leader's page.
    const warp::lane_mask present = warp::present_lanes();
    const warp::lane_mask group = warp::match_any(present, size) & warp::match_any(present, mem);
    const unsigned lane = warp::lane_id() % 32u;
    if (group == (warp::lane_mask{1} << lane)) return malloc_one(size);
    warp::lane_mask remaining = group;
    for (;;) {
      const auto leader = static_cast<unsigned>(platform::ctz(remaining));
      const auto want = static_cast<std::uint32_t>(platform::popc(remaining));
      // The leader's grant, packed into two words for warp::handover
      // (platform/warp.h says why a barrier and a shuffle are not enough).
      std::uint64_t words[2] = {0, 0};
      if (lane == leader) {
        const Grant mine = find(size, want);
        words[0] =
            std::uint64_t{mine.page} << 32 | std::uint64_t{mine.granted} << 1 | warp::kHandedOver;
        // base < spots <= kMaxChunks (256): bits 1-15 and 16-31, with the mark in bit 0.
        words[1] = std::uint64_t{mine.chunk} << 32 | std::uint64_t{mine.spots} << 16 |
                   std::uint64_t{mine.base} << 1 | warp::kHandedOver;
      }
      warp::handover(remaining, words, leader);
      Grant g;
      g.page = static_cast<std::uint32_t>(words[0] >> 32);
      g.granted = static_cast<std::uint32_t>(words[0]) >> 1;
      g.chunk = static_cast<std::uint32_t>(words[1] >> 32);
      g.spots = static_cast<std::uint32_t>(words[1] >> 16) & 0xFFFFu;
      g.base = (static_cast<std::uint32_t>(words[1]) & 0xFFFFu) >> 1;
      if (g.granted == 0) return fail();  // find() found no chunk of this size for us
      const auto rank = static_cast<std::uint32_t>(
          platform::popc(remaining & ((warp::lane_mask{1} << lane) - 1)));
      if (rank < g.granted)
        return chunk_address(g.page, g.chunk, take_spot(g.page, g.spots, g.base + rank));
      for (std::uint32_t i = 0; i < g.granted; ++i) remaining &= remaining - 1;  // the served lanes
    }
  }

  /// Where a warp's search starts in a super block: the region and the
  /// offset in it of the page of Eq. 3 (hash_page), and the stride between
  /// regions (region_step).
  struct Probe {
    std::uint32_t region;
    std::uint32_t offset;
    std::uint32_t step;
  };
  DYNASOAR_HD Probe probe(std::uint32_t size, std::uint32_t mp, std::uint32_t slot,
                          std::uint32_t s) const {
    const std::uint32_t start = hash_page(size, mp, slot, s);
    const std::uint32_t region = region_of(start);
    return {region, start - region * region_pages,
            spread ? region_step(mp, slot, regions_in(s)) : 1u};
  }

  /// The search of Alg. alloc over the super blocks, starting at this
  /// multiprocessor's super block of the active window (Sec. 5.4 has one
  /// active super block; Options::active_window). The first pass follows the fill levels: it skips
  /// super blocks and regions that are nine tenths full. If it finds nothing, a second pass (not in the
  /// paper) visits every page, so that counters that lag (see count_full) never hide a free chunk,
  /// and a third accepts any chunk size from the request up to a page. Bounded: at most three
  /// visits of every page.
  DYNASOAR_HD Grant find(std::uint32_t size, std::uint32_t want) const {
    const auto mp = static_cast<std::uint32_t>(platform::warp::processor_id());
    const auto slot = static_cast<std::uint32_t>(platform::warp::warp_slot());
    // The window of active super blocks (Options::active_window): this
    // multiprocessor's super block in it.
    std::uint32_t base = platform::atomic_load(active);
    if (base >= super_blocks) base = 0;  // never stored; defensive
    const std::uint32_t offset = window == 1 ? 0 : modulo(mp, window);
    const std::uint32_t start =
        base + offset < super_blocks ? base + offset : base + offset - super_blocks;
    // Every super block but the last has super_pages pages: one probe serves
    // them all, computed once per search rather than once per super block.
    const Probe whole = probe(size, mp, slot, 0);
    for (int pass = 0; pass < 3; ++pass) {
      // The last pass also takes chunks more than max_frag times the request:
      // a pool with no page of a fitting size serves it rather than fail.
      const std::uint32_t smax =
          pass == 2 || size * max_frag > kPageBytes ? kPageBytes : size * max_frag;
      for (std::uint32_t k = 0; k < super_blocks; ++k) {
        const std::uint32_t s = start + k < super_blocks ? start + k : start + k - super_blocks;
        const Probe at = pages_in(s) == super_pages ? whole : probe(size, mp, slot, s);
        const std::uint32_t first_region =
            s * super_regions;        // super_pages is a multiple of region_pages
        std::int32_t first_full = 0;  // the first region's fill level (pass 0)
        if (pass == 0) {
          // The super block's fill level and that of the region the search
          // starts in, with two independent loads that the hardware
          // overlaps: one dependent round trip less on every search.
          first_full = platform::atomic_load(&region_full[first_region + at.region]);
          if (std::int64_t{platform::atomic_load(&super_full[s])} * 10 >=
              std::int64_t{pages_in(s)} * 9)
            continue;
        }
        const Grant g = search_super(s, size, smax, want, at, first_region, pass == 0, first_full);
        if (g.granted != 0) {
          if (s != start) {
            // Move the window so that this multiprocessor starts at s next
            // time (with one super block: make s the active one). One
            // attempt: the pointer is a hint, nobody waits on it.
            std::uint32_t expected = base;
            platform::atomic_compare_exchange(active, expected,
                                              s >= offset ? s - offset : s + super_blocks - offset);
          }
          return g;
        }
      }
    }
    return Grant{};
  }

  /// Alg. alloc within super block s: region by region, each region once,
  /// skipping a region whose fill level is too high (with `hints`; lines 5-6
  /// and 30-31). `first_full` is the fill level of the first region, read
  /// by the caller with the super block's. The first region is the one of the start page
  /// (`at.region`), searched from that page (`at.offset`) around the region. The paper goes on to
  /// the next region; with `spread` the next region is `at.step` regions further (a stride coprime
  /// to the regions, so each is visited once), and every region is searched from the same offset as
  /// the first. Bounded by the super block's pages.
  DYNASOAR_HD Grant search_super(std::uint32_t s, std::uint32_t size, std::uint32_t smax,
                                 std::uint32_t want, Probe at, std::uint32_t first_region,
                                 bool hints, std::int32_t first_full) const {
    const std::uint32_t first = s * super_pages;
    const std::uint32_t n = pages_in(s);
    const std::uint32_t regions = regions_in(s);
    // Region r of this super block is region first_region + r of the pool,
    // with no division per region visited: a search passes several full
    // regions, and a division would be a good part of each step.
    std::uint32_t r = at.region;
    for (std::uint32_t k = 0; k < regions; ++k) {
      const std::uint32_t lo = r * region_pages;
      const std::uint32_t len = n - lo < region_pages ? n - lo : region_pages;
      const std::int32_t full = !hints   ? 0
                                : k == 0 ? first_full
                                         : platform::atomic_load(&region_full[first_region + r]);
      if (std::int64_t{full} * 10 < std::int64_t{len} * 9) {
        // The last region of a pool may be shorter than the offset.
        const std::uint32_t from = k != 0 && !spread ? 0
                                   : at.offset < len ? at.offset
                                                     : at.offset % len;
        for (std::uint32_t i = 0; i < len; ++i) {
          const std::uint32_t q = first + lo + (from + i < len ? from + i : from + i - len);
          const Grant g = try_page(q, size, smax, want);
          if (g.granted != 0) return g;
        }
      }
      r += at.step;  // step < regions, or 1 for one region
      if (r >= regions) r -= regions;
    }
    return Grant{};
  }

  /// Alg. alloc lines 8-27 for page q: use it if its chunk size fits, or
  /// split it for `size` if it is not split yet.
  DYNASOAR_HD Grant try_page(std::uint32_t q, std::uint32_t size, std::uint32_t smax,
                             std::uint32_t want) const {
    PageUsage& page = pages[q];
    // Both words with two independent loads, which the hardware can overlap.
    std::uint32_t c = platform::atomic_load(&page.chunk);
    const std::uint32_t reserved = platform::atomic_load(&page.count);
    const bool unsplit = c == 0;
    if (unsplit) {
      // Acq_rel: a thread that later reads this size synchronises with us,
      // and we with the reset or run free that last cleared the word (both
      // clear it with a release).
      std::uint32_t expected = 0;
      c = platform::atomic_compare_exchange(&page.chunk, expected, size, platform::acq_rel)
              ? size
              : expected;
    }
    if (c < size || c > smax) return Grant{};  // run pages have the high bit: never in range
    // Not in the paper: a page that looks full is passed with this load
    // instead of an add and a give-back on its counter (two atomic round
    // trips on a word that every searcher of the page contends for). The
    // add of reserve() still decides; the load only saves it.
    // reserved >= spots_of(c), without the division (the page loop's most
    // expensive step besides its loads): floor(P / c) <= reserved exactly
    // when P < (reserved + 1) * c.
    if (!unsplit && (std::uint64_t{reserved} + 1) * c > kPageBytes) return Grant{};
    return reserve(q, c, want);
  }

  /// tryUsePage lines 2-6: reserve up to `want` chunks with one atomic add.
  /// Returns how many were granted (0: the page is full, being reset, or no
  /// longer split for c).
  DYNASOAR_HD Grant reserve(std::uint32_t q, std::uint32_t c, std::uint32_t want) const {
    PageUsage& page = pages[q];
    const std::uint32_t spots = spots_of(c);
    // Acquire: the frees of this page's chunks (release) come before our use.
    const std::uint32_t old = platform::atomic_fetch_add(&page.count, want, platform::acquire);
    if (old >= spots) {  // full, or locked by a reset (kLocked)
      release(q, want);
      return Grant{};
    }
    const std::uint32_t granted = want < spots - old ? want : spots - old;
    if (granted < want) release(q, want - granted);  // we still hold `granted`: never reaches 0
    // Not in the paper: between our read of the chunk size and the add, the
    // page may have emptied, been reset and split for another size. While we
    // hold a reservation no reset can happen (it needs a count of 0), so one
    // more read tells whether c is still the page's size. Relaxed: our add
    // acquired the unlock of any reset before it (every change of the count
    // is a read-modify-write, so it reads from that unlock's release
    // sequence), which cleared the size, so this load sees 0 or a later
    // size, never the c of before the reset.
    if (platform::atomic_load(&page.chunk) != c) {
      release(q, granted);
      return Grant{};
    }
    // tryUsePage line 6: this reservation filled the page. We hold chunks of
    // it, so it cannot be reset before the flag is set.
    if (old + granted == spots) count_full(q);
    return Grant{q, c, granted, old, spots};
  }

  /// Gives back `n` reservations of page q. If the count reaches 0, the
  /// page's chunk size is reset.
  DYNASOAR_HD void release(std::uint32_t q, std::uint32_t n) const {
    const std::uint32_t old = platform::atomic_fetch_sub(&pages[q].count, n, platform::acq_rel);
    if (old == n) reset(q);
  }

  /// Sec. 5.4: page q is full; it counts as one full page of its region and
  /// super block. The counters change only with a flip of the page's flag,
  /// so they do not drift as a count derived from the reservations would
  /// (docs/design/scatter.md, "A flag per page keeps the fill levels exact").
  DYNASOAR_HD void count_full(std::uint32_t q) const {
    if (platform::atomic_exchange(&pages[q].counted_full, 1u) == 0u) add_full(q, 1, 1);
  }

  /// Page q has a free chunk (a free) or is empty (its reset): it no longer
  /// counts as full. One load on the free path when it did not.
  DYNASOAR_HD void uncount_full(std::uint32_t q) const {
    if (platform::atomic_load(&pages[q].counted_full) != 0u &&
        platform::atomic_exchange(&pages[q].counted_full, 0u) != 0u)
      add_full(q, 1, -1);
  }

  /// Alg. free lines 12-16: the page is empty; lock it by moving its count
  /// from 0 to kLocked (one attempt: a failure means a new reservation or
  /// another reset holds it, and then there is nothing to do), clear its
  /// chunk size, unlock. A reservation that meets the lock fails and gives
  /// back what it added; no thread waits for the holder, whose steps are
  /// bounded.
  /// Only a chunk size is reset: run pages (whose word a reservation may have
  /// counted on while it read a stale size) are their owner's.
  ///
  /// Not in the paper: a thread that split the page while it was locked
  /// gives its reservation back without a reset of its own, so a reset that
  /// finds the page split again after its unlock repeats itself, at most
  /// kResetAttempts times (bounded).
  DYNASOAR_HD void reset(std::uint32_t q) const {
    PageUsage& page = pages[q];
    for (std::uint32_t attempt = 0; attempt < kResetAttempts; ++attempt) {
      std::uint32_t expected = 0;
      if (!platform::atomic_compare_exchange(&page.count, expected, kLocked, platform::acquire))
        return;
      uncount_full(q);  // defensive: the page's last free cleared the flag already
      const std::uint32_t c = platform::atomic_load(&page.chunk);
      // Release: a run that takes the page with a compare-and-swap on this
      // 0 acquires it, so the chunks' last writes come before the run's.
      if (c != 0 && c <= kPageBytes) platform::atomic_store(&page.chunk, 0u, platform::release);
      // Release: the cleared size is seen by whoever reserves after the unlock.
      if (platform::atomic_fetch_sub(&page.count, kLocked, platform::release) != kLocked) return;
      const std::uint32_t again = platform::atomic_load(&page.chunk);
      if (again == 0 || again > kPageBytes) return;
    }
  }

  /// tryUsePage lines 7-19: the bit of a free chunk of page q, which has
  /// `spots` chunks, starting at spot `hint`. The caller holds a reservation, so at every moment
  /// fewer chunks than the page has are set by others and some bit is clear. Lock-free: an attempt
  /// fails only when another thread set that bit first, and a circle over all words that finds none
  /// clear means that other threads set and cleared bits meanwhile (a state with every bit set
  /// never exists).
  DYNASOAR_HD std::uint32_t take_spot(std::uint32_t q, std::uint32_t spots,
                                      std::uint32_t hint) const {
    PageUsage& page = pages[q];
    const std::uint32_t words = (spots + 63) / 64;
    // A hint is a reservation's count before it plus a rank below what it
    // was granted: below spots.
    const std::uint32_t spot = hint < spots ? hint : hint % spots;
    std::uint32_t w = spot / 64;
    auto b = static_cast<unsigned>(spot % 64);
    // The hinted bit is tried at once, without reading its word first: the
    // reservations of a page hand out consecutive hints, so the bit is
    // mostly clear, and this saves a dependent load (setting a bit that is
    // already set changes nothing). After that the word's value seen by the
    // last attempt says where the clear bits are.
    // Acquire: the chunk's last owner freed it with a release.
    std::uint64_t mask = std::uint64_t{1} << b;
    std::uint64_t seen = platform::atomic_fetch_or(&page.bits[w], mask, platform::acquire);
    if ((seen & mask) == 0) return spot;
    for (;;) {
      const std::uint32_t in_word = spots - 64 * w < 64 ? spots - 64 * w : 64;
      const std::uint64_t clear = ~seen & platform::low_bits(in_word);
      if (clear == 0) {
        w = w + 1 == words ? 0 : w + 1;
        b = 0;
        seen = platform::atomic_load(&page.bits[w]);
        continue;
      }
      b = static_cast<unsigned>(platform::find_set_rotated(clear, b));
      mask = std::uint64_t{1} << b;
      seen = platform::atomic_fetch_or(&page.bits[w], mask, platform::acquire);
      if ((seen & mask) == 0) return 64 * w + b;
    }
  }

  /// Sec. 6.3: a request larger than a page takes a run of whole pages. Runs
  /// are searched from the top of the pool downwards (small requests start
  /// in the active window, the first super blocks at first), and claimed page by
  /// page from the run's top with a compare-and-swap of the chunk word from
  /// 0; a page that is not free ends the attempt, the pages claimed are given
  /// back, and the search goes on below that page. Up to kRunPasses
  /// downward passes (searches that run side by side push each other down,
  /// and runs freed above a search are found by a later pass), with a pause
  /// between two: bounded by kRunPasses times the pages of the pool. Under
  /// contention a request may still fail although a run exists (other
  /// searches held its pages at the moments it looked), but only after every
  /// pass met that.
  DYNASOAR_HD void* malloc_run(std::uint64_t n) const {
    const std::uint64_t need64 = (n + kPageBytes - 1) / kPageBytes;
    if (need64 > page_count) return fail();
    const auto need = static_cast<std::uint32_t>(need64);
    for (std::uint32_t pass = 0; pass < kRunPasses; ++pass) {
      if (pass != 0) platform::spin_pause();  // lets claimers that hold pages finish
      std::int64_t start = std::int64_t{page_count} - need;
      while (start >= 0) {
        const auto base = static_cast<std::uint32_t>(start);
        std::uint32_t q = base + need;  // claimed: [q, base + need)
        while (q > base) {
          const std::uint32_t value = q - 1 == base ? (kRunHead | need) : kRunTail;
          std::uint32_t expected = 0;
          if (platform::atomic_load(&pages[q - 1].chunk) != 0 ||
              !platform::atomic_compare_exchange(&pages[q - 1].chunk, expected, value,
                                                 platform::acq_rel))
            break;
          --q;
        }
        if (q == base) {
          add_full(base, need, 1);
          return chunk_address(base, 0, 0);
        }
        for (std::uint32_t r = q; r < base + need; ++r)
          platform::atomic_store(&pages[r].chunk, 0u, platform::release);
        start = std::int64_t{q - 1} - need;  // page q - 1 is taken: the next run lies below it
      }
    }
    return fail();
  }

  /// Frees the run whose first page q holds `head`. One compare-and-swap
  /// decides between two frees of the same run: the loser reports a bad free.
  DYNASOAR_HD void free_run(std::uint32_t q, std::uint32_t head) const {
    std::uint32_t expected = head;
    if (!platform::atomic_compare_exchange(&pages[q].chunk, expected, 0u, platform::acq_rel))
      return bad_free();
    const std::uint32_t need = head & ~kRunHead;
    add_full(q, need, -1);
    for (std::uint32_t r = q + 1; r < q + need; ++r)
      platform::atomic_store(&pages[r].chunk, 0u, platform::release);
  }

  /// Adds `sign` full pages to the fill levels of pages [first, first + n):
  /// one page (count_full), or the pages of a run, which count as full so
  /// that small requests skip regions that runs fill (Sec. 5.4). One add per
  /// region and super block the pages touch; exact, since only the run's
  /// owner counts its pages.
  DYNASOAR_HD void add_full(std::uint32_t first, std::uint32_t n, std::int32_t sign) const {
    const std::uint32_t end = first + n;
    // Adds to counts[g] the run's pages in group g of `group_pages` pages.
    const auto count_per_group = [&](auto* counts, std::uint32_t group_pages) {
      for (std::uint32_t at = first; at < end;) {
        const std::uint32_t stop = (at / group_pages + 1) * group_pages;
        const std::uint32_t k = (stop < end ? stop : end) - at;
        platform::atomic_fetch_add(&counts[at / group_pages], sign * static_cast<std::int32_t>(k));
        at += k;
      }
    };
    count_per_group(region_full, region_pages);
    count_per_group(super_full, super_pages);
  }

  /// Sec. 5.4: a free in a super block that is not an active one makes it
  /// the first of the window with a chance that falls with its fill level: 1/4 when empty,
  /// none from half full on (our numbers; the paper gives none). Decided by
  /// a hash of the address, so no random state is needed.
  DYNASOAR_HD void reactivate(std::uint32_t q, std::uint64_t address) const {
    if (super_blocks == window) return;  // every super block is active
    const std::uint32_t s = q / super_pages;
    std::uint32_t current = platform::atomic_load(active);
    if ((s >= current ? s - current : s + super_blocks - current) < window) return;
    const std::int64_t full = platform::atomic_load(&super_full[s]);
    const std::int64_t room = std::int64_t{pages_in(s)} - 2 * full;
    if (room <= 0) return;
    const std::uint64_t h = platform::mix64(address) % (std::uint64_t{4} * pages_in(s));
    if (static_cast<std::int64_t>(h) < room) platform::atomic_compare_exchange(active, current, s);
  }
};

/// The pool of ScatterAlloc on the host: its memory and its zeroed side
/// table (usage table and fill levels); owned by raw::PoolHandle<ScatterAlloc>.
class ScatterPool {
 public:
  /// A pool of `bytes` (rounded down to 16) for `alloc`, with the settings
  /// of `options.scatter`.
  ScatterPool(std::uint64_t bytes, const raw::PoolOptions& options, platform::Stream s,
              ScatterAlloc& alloc)
      : ScatterPool(bytes, options.scatter, s, alloc) {}

  /// A pool of `bytes` (rounded down to 16) for `alloc`, its side table
  /// zeroed on `s`. Throws std::invalid_argument for a pool of no page or
  /// settings ScatterAlloc cannot use (ScatterAlloc::attach).
  ScatterPool(std::uint64_t bytes, const Options& options, platform::Stream s, ScatterAlloc& alloc)
      : memory_(bytes) {
    const std::uint64_t words = ScatterAlloc::metadata_words(memory_.bytes(), options);
    metadata_ = platform::Buffer<std::uint64_t>(words == 0 ? 1 : words);
    metadata_.zero(s);
    alloc.attach(memory_.address(), memory_.bytes(), metadata_.data(), options);
  }

  /// Pool bytes.
  std::uint64_t bytes() const { return memory_.bytes(); }
  /// Address range of the pool, for tests: [begin, end).
  std::uint64_t begin() const { return memory_.address(); }
  /// End of that range (see begin()).
  std::uint64_t end() const { return memory_.address() + memory_.bytes(); }

 private:
  raw::PoolMemory memory_;
  platform::Buffer<std::uint64_t> metadata_;  // the side table
};

}  // namespace dynasoar::scatter
