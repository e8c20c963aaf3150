// The lock-free core of the SOA heap (Springer & Masuhara 2019, Sec. 3.4-3.6, 4.2,
// App. A.1-A.4): slot reservation and freeing in blocks, block
// initialisation, block invalidation with rollback, and allocation with
// warp-level request coalescing and bitmap rotation.
//
// HeapState lives in back-end memory and is shared by every thread; it is
// not templated on the user's classes (types are run-time ids here), so
// this code is compiled once per program, not once per class.
//
// Every block has the same size and structure (header below, then the data
// segment), so the header fields of a block are valid whatever type the
// block has now; that is what makes optimistic reservation followed by a
// rollback safe (App. A.2).
#pragma once

#include <cstdint>

#include "dynasoar/allocator/soa/layout.h"
#include "dynasoar/allocator/soa/object_pointer.h"
#include "dynasoar/bitmap/bitmap.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/warp.h"

namespace dynasoar::soa {

/// One 64-bit bitmap of a block: bit i stands for slot i.
using word = std::uint64_t;
/// Every bit of a block bitmap set.
inline constexpr word kAllSlots = ~word{0};

/// The bookkeeping of one block. Not in the block (as the paper's header
/// is, Sec. 3.3): the heap keeps an array of them, header b for block b,
/// so that every block's data starts on a 128-byte boundary
/// (kBlockAlignment says why). 32 bytes: a sector of its own.
struct alignas(32) BlockHeader {
  word allocation;  ///< bit i set: slot i in use (or beyond capacity, or invalidated)
  word destroyed;   ///< bit i set: slot i's object was destroyed and no new one took it
  /// Run-time type id of the objects in the block.
  std::uint32_t type;
};
static_assert(sizeof(BlockHeader) == 32, "a block header is one 32-byte sector");

/// Slots beyond the capacity are permanently set (App. A.1).
DYNASOAR_HD DYNASOAR_FORCEINLINE constexpr word padding_bits(unsigned capacity) {
  return capacity >= kMaxSlots ? word{0} : ~((word{1} << capacity) - 1);
}

// Tuning: the switches below are chosen per heap (HeapOptions), the
// constant after them at compile time.

/// Tuning switches (the ablation of paper Fig. 12c switches the first two off).
struct HeapOptions {
  bool coalesce = true;   ///< warp-level request coalescing (Sec. 4.2)
  bool rotate = true;     ///< rotate bitmap searches by warp and retry (Sec. 4.2)
  /// Searches for an active block before a new block is taken (Sec. 4.2):
  /// more fill partly used blocks, at longer searches while they are full.
  int active_retries = 4;
};

/// Searches again, after one that found no slot, before `new` reports the
/// heap full: more ride out longer moments in which another thread holds a
/// block it took but has not made active yet, at a longer wait before a
/// heap that is full says so.
inline constexpr int kOutOfMemoryLooks = 4;

/// Reasons for the error flag; the host handle turns them into messages.
enum HeapError : unsigned {
  kHeapOk = 0,              ///< no error
  kHeapOutOfMemory = 1,     ///< a `new` found no free slot
  kHeapDoubleFree = 2,      ///< a `destroy` of an object whose slot was free already
  kHeapForeignPointer = 4,  ///< a `destroy` of a pointer that is no object of this heap
};

/// The device side of the SOA heap (Sec. 3.4-3.6): the blocks, their bitmaps
/// and the error flag, shared by every thread and passed to kernels by value.
/// Its fields are public so that the library's kernels and host handle can
/// reach them.
struct HeapState {
  std::uint64_t blocks;  ///< address of block 0 (kBlockAlignment-aligned)
  /// The blocks' headers: headers[b] is block b's.
  BlockHeader* headers;
  /// Size of every block (its header is in `headers`, not in the block).
  std::uint64_t block_bytes;
  /// Tuning switches.
  HeapOptions options;
  unsigned* error;  ///< HeapError flags, raised by any thread (raise_error)
  /// platform::ErrorFlags::seen() of `error`: set by the first raise of a
  /// flag, so that the blocking parallel_do learns of errors by a wait alone.
  unsigned* error_seen;
  /// Threads between taking a free block and making it active (in
  /// initialize_block, for a block that will have free slots). While there
  /// are any, a `new` that finds no slot is not out of memory yet.
  unsigned* initializing;
  /// Blocks of no type, free to be taken by any type.
  Bitmap free_blocks;
  Bitmap allocated[model::kMaxTypes];  ///< per type: blocks of exactly this type
  Bitmap active[model::kMaxTypes];     ///< per type: allocated blocks with a free slot
  unsigned capacity[model::kMaxTypes];    ///< 0 for abstract types

  /// Address of block b.
  DYNASOAR_HD DYNASOAR_FORCEINLINE std::uint64_t block_address(bit_index b) const {
    return blocks + static_cast<std::uint64_t>(b) * block_bytes;
  }
  /// The header of block b.
  DYNASOAR_HD DYNASOAR_FORCEINLINE BlockHeader* header(bit_index b) const { return headers + b; }
  /// Slots of a block of `type` that hold objects (padding bits removed).
  DYNASOAR_HD DYNASOAR_FORCEINLINE word live_slots(bit_index b, unsigned type) const {
    return platform::atomic_load(&header(b)->allocation) & ~padding_bits(capacity[type]);
  }
  /// Index of the block that holds the object at `pointer` (no range check).
  DYNASOAR_HD DYNASOAR_FORCEINLINE bit_index block_of(std::uint64_t pointer) const {
    return static_cast<bit_index>((pointer_block(pointer) - blocks) / block_bytes);
  }

  /// Raises HeapError `flag` (platform::ErrorFlags::raise).
  DYNASOAR_HD void raise_error(HeapError flag) const {
    platform::ErrorFlags::raise(error, error_seen, static_cast<unsigned>(flag));
  }

  // --- allocation (Alg. 1 and 6, with coalescing) ------------------------------------

  /// Allocates one object of type `type` for the calling thread and returns
  /// its pointer, or 0 when the heap is out of memory (the error flag is
  /// raised then). Threads of a warp that call this together for the same
  /// type are served by one leader (Sec. 4.2).
  DYNASOAR_HD std::uint64_t allocate(unsigned type) const {
    namespace warp = platform::warp;
    const unsigned cap = capacity[type];
    const unsigned lane = warp::lane_id();
    const warp::lane_mask self = warp::lane_mask{1} << (lane % 32u);
    const warp::lane_mask group = options.coalesce ? warp::match_any(warp::present_lanes(), type) : self;
    const auto leader = static_cast<unsigned>(platform::ctz(group));
    const auto rank = static_cast<unsigned>(platform::popc(group & warp::lanes_below()));
    unsigned remaining = static_cast<unsigned>(platform::popc(group));
    unsigned served = 0;
    std::uint64_t seed = options.rotate ? platform::mix64(warp::warp_seed() * 32 + leader) : 0;
    std::uint64_t result = 0;
    while (remaining > 0) {  // the same number of rounds in every lane of the group
      // The leader's block and the slots it got, handed over marked
      // (warp::handover).
      std::uint64_t words[3] = {0, 0, 0};  // block; the slot mask's low and high halves
      if (lane == leader) {
        bit_index mine = kNoBit;
        word slots = 0;
        reserve_for_group(type, cap, remaining, seed, mine, slots);
        words[0] = std::uint64_t{mine} << 1 | warp::kHandedOver;
        words[1] = (slots & 0xFFFFFFFFu) << 1 | warp::kHandedOver;
        words[2] = (slots >> 32) << 1 | warp::kHandedOver;
      }
      warp::handover(group, words, leader);
      const auto block = static_cast<bit_index>(words[0] >> 1);
      const word got = (words[1] >> 1) | (words[2] >> 1) << 32;
      if (block == kNoBit) {
        if (lane == leader) raise_error(kHeapOutOfMemory);
        break;
      }
      const auto n = static_cast<unsigned>(platform::popc(got));
      if (rank >= served && rank < served + n)
        result = make_pointer(block_address(block),
                              static_cast<unsigned>(platform::nth_set_bit(got, static_cast<int>(rank - served))),
                              cap, type);
      served += n;
      remaining -= n;
      seed += 0x9E3779B97F4A7C15ull;
    }
    return result;
  }

  /// Frees the object at `pointer` (Alg. 2). Its fields must not be used
  /// afterwards; the destructor has run.
  ///
  /// A pointer that is no live object of this heap changes nothing and
  /// raises an error flag instead: kHeapForeignPointer if its bits name no
  /// slot of this heap (another heap's object, or not an object pointer),
  /// kHeapDoubleFree if its object was destroyed before (the slot's
  /// `destroyed` bit is set), its slot is free, its block was freed, or the
  /// block now holds another class. Not detected: a slot that was freed and
  /// has been taken by a new object of the same class (the pointer is that
  /// object's; it is freed, and that object's own destroy is then reported).
  ///
  /// Why a `destroyed` word and not the allocation bit alone: a block's
  /// deletion (try_delete_block) sets every free slot's allocation bit, so
  /// a second destroy at that moment would look like the free of a live
  /// object. The `destroyed` bit is set by the first destroy and cleared
  /// only when a new object takes the slot (claim_slots, initialize_block).
  DYNASOAR_HD void deallocate(std::uint64_t pointer) const {
    const unsigned type = pointer_type(pointer);
    const unsigned slot = pointer_slot(pointer);
    // Every field of the heap this needs, read here at once: read where
    // they are used, each would come after a branch or an atomic (which the
    // compiler does not move loads across), a chain of round trips ahead of
    // the first atomic on every destroy's path.
    const std::uint64_t base = blocks, bytes = block_bytes;
    BlockHeader* const hdrs = headers;
    const bit_index block_count = free_blocks.capacity();  // a bit per block
    const unsigned cap = capacity[type % model::kMaxTypes];
    // Below the heap the difference wraps around: too large as well.
    const std::uint64_t offset = pointer_block(pointer) - base;
    const std::uint64_t b = offset / bytes;
    if (type >= model::kMaxTypes || cap == 0 || pointer_capacity(pointer) != cap || slot >= cap ||
        b >= block_count || b * bytes != offset) {
      raise_error(kHeapForeignPointer);
      return;
    }
    const auto block = static_cast<bit_index>(b);
    BlockHeader* const h = hdrs + block;
    // A live object's block keeps its class while the object holds its slot.
    if (platform::atomic_load(&h->type) != type) {
      raise_error(kHeapDoubleFree);
      return;
    }
    const word mask = word{1} << slot;
    if ((platform::atomic_fetch_or(&h->destroyed, mask) & mask) != 0) {
      raise_error(kHeapDoubleFree);
      return;  // destroyed before, and no new object took the slot since
    }
    word* bits = &h->allocation;
    // Release: the object's last writes happen before its slot is taken
    // again (the reservation acquires). Nothing read after this needs an
    // acquire; the block's deletion acquires on its own (try_delete_block).
    const word before = platform::atomic_fetch_and(bits, ~mask, platform::release);
    if ((before & mask) == 0) {  // the slot was free: the fetch_and changed nothing
      raise_error(kHeapDoubleFree);
      return;
    }
    // A freed block has every bit set, like a full one; a full block that
    // holds a live object is never in the free-block bitmap (read only here,
    // where a full block turns active: the bitmap costs a load).
    if (before == kAllSlots && free_blocks.get(block)) {
      platform::atomic_fetch_or(bits, mask, platform::acq_rel);  // the freed block's bit back
      raise_error(kHeapDoubleFree);
      return;
    }
    slots_released(block, before, mask, type, cap);
  }

  // --- the steps ---------------------------------------------------------------------

  /// Searches again after one that found no slot, before `new` fails
  /// (soa::kOutOfMemoryLooks).
  static constexpr int kOutOfMemoryLooks = soa::kOutOfMemoryLooks;

  /// Leader of a group: reserves between 1 and `wanted` slots in one block of
  /// `type`; `block` is kNoBit when the heap is out of memory.
  DYNASOAR_HD void reserve_for_group(unsigned type, unsigned cap, unsigned wanted, std::uint64_t& seed,
                                     bit_index& block, word& got) const {
    // Without rotation every thread searches from the same position (seed 0).
    const bool rotate = options.rotate;
    int looks = 0;
    // Not in the paper: after a claim on a block found in the active bitmap
    // failed (others filled it first), a group that wants at least half a
    // block takes a fresh block in the next round rather than searching
    // again, since under heavy allocation such searches mostly end on
    // blocks just filled. Smaller groups keep searching, so that they fill
    // partly used blocks.
    const bool large = 2 * wanted >= cap;
    const int retries = options.active_retries;  // read once: the acquires below invalidate L1
    bool lost = false;
    for (;; seed = rotate ? platform::mix64(seed + 1) : 0) {
      block = kNoBit;
      for (int r = 0; r < retries && block == kNoBit && !lost; ++r)
        block = active[type].try_find_set(rotate ? seed + static_cast<std::uint64_t>(r) : 0);
      const bool searched = block != kNoBit;
      if (block == kNoBit) block = initialize_block(type, cap, seed);
      // No free block: before reporting the heap full, read level 0 of the
      // active blocks, which the searches above may have missed (they give
      // up early under contention, and the upper levels may lag). Without
      // this, a heap sized for exactly n objects could fail the n-th.
      if (block == kNoBit) block = active[type].scan_for_set(seed);
      if (block == kNoBit) {
        // Nor while another thread has taken the last free block and not yet
        // made it active: wait until no block is being initialised and look
        // again, a few times (a block taken during our look may need
        // another). Progress: the threads counted run
        // initialize_block, which waits for no thread that waits here, and
        // every thread counts itself only for a bounded number of looks, so
        // the count reaches 0; a heap that is full reports it after
        // kOutOfMemoryLooks looks.
        if (looks++ == kOutOfMemoryLooks) return;  // out of memory
        platform::thread_fence();
        while (platform::atomic_load(initializing) != 0) platform::spin_pause();
        platform::thread_fence();
        continue;
      }
      got = claim_slots(block, type, wanted, seed);
      if (got != 0) return;
      lost = lost || (searched && large);
    }
  }

  /// Second half of an allocation, after `block` was selected for `type`:
  /// reserves between 1 and `wanted` of its slots, or returns 0 if the block
  /// was filled, emptied and invalidated, or handed to another type since it
  /// was selected (App. A.2, A.3); the caller then searches again.
  DYNASOAR_HD word claim_slots(bit_index block, unsigned type, unsigned wanted, std::uint64_t seed) const {
    bool filled = false;
    const word got = reserve_slots(block, wanted, seed, filled);
    if (got == 0) return 0;  // full or invalidated meanwhile
    // The type may have changed between selection and reservation; once a
    // slot is ours it cannot change any more (invalidation fails). The
    // reservation acquired the block's initialisation, so the type read
    // here is the one that came with the free slots (App. A.2).
    const auto actual = platform::atomic_load(&header(block)->type);
    if (filled) active[actual].clear(block);
    if (actual == type) {
      // New objects in these slots: a destroy of theirs is no double destroy.
      // Done before the pointers leave this thread, so their destroys see it.
      platform::atomic_fetch_and(&header(block)->destroyed, ~got);
      return got;
    }
    release_slots(block, got, actual);  // block replaced by another type: roll back
    return 0;
  }

  /// Atomically sets up to `wanted` free bits of the block's allocation
  /// bitmap, starting at a rotated position; returns the bits this thread
  /// set (0 if the block had none free) and whether it set the last one.
  DYNASOAR_HD word reserve_slots(bit_index block, unsigned wanted, std::uint64_t seed, bool& filled) const {
    word* bits = &header(block)->allocation;
    const auto rotation = options.rotate ? static_cast<unsigned>((seed >> 17) & 63u) : 0u;
    word current = platform::atomic_load(bits);
    while (current != kAllSlots) {
      word candidates = platform::rotr(~current, rotation);
      if (static_cast<unsigned>(platform::popc(candidates)) > wanted)
        candidates &= platform::low_bits(static_cast<unsigned>(platform::nth_set_bit(candidates, static_cast<int>(wanted))));
      const word mask = platform::rotl(candidates, rotation);
      // Acquire, not acq_rel: the slots' earlier objects and the block's
      // type (App. A.2) must be seen, but nothing this thread wrote before
      // needs publishing, and a release half costs a fence ahead of the
      // atomic.
      const word before = platform::atomic_fetch_or(bits, mask, platform::acquire);
      const word mine = mask & ~before;
      if (mine != 0) {
        filled = (before | mask) == kAllSlots;
        return mine;
      }
      current = before | mask;
    }
    return 0;
  }

  /// Takes a free block and makes it an empty, active block of `type`
  /// (Alg. 8); kNoBit when no block is free. With `taken`, those slots are
  /// reserved for the caller from the start (parallel_new takes whole blocks
  /// this way), and a block born full is not active. With `prefer`, that
  /// block is taken if it is still free, else any (parallel_new_indexed
  /// asks for a run of consecutive blocks this way).
  DYNASOAR_HD bit_index initialize_block(unsigned type, unsigned cap, std::uint64_t seed,
                                         word taken = 0, bit_index prefer = kNoBit) const {
    // Counted before the block is taken (the fence orders the two), so a
    // thread that then finds no free block also sees the count.
    const bool counted = taken != kAllSlots;
    if (counted) {
      platform::atomic_fetch_add(initializing, 1u);
      platform::thread_fence();
    }
    bit_index block = prefer != kNoBit && free_blocks.try_clear(prefer) ? prefer : kNoBit;
    for (; block == kNoBit; ++seed) {
      block = free_blocks.try_find_and_clear(seed);
      if (block != kNoBit) break;
      // A failed search means no free block, or a race with threads that
      // change the bitmap: then its top level is not 0 for long, and we
      // search again. A top level of 0 may lag behind level 0 (another
      // thread is between the two levels of a set or clear), so level 0,
      // the truth, decides before we report the heap full.
      if (platform::atomic_load(free_blocks.level_data(free_blocks.levels() - 1)) == 0) {
        block = free_blocks.scan_and_clear(seed);
        if (block == kNoBit) {
          if (counted) platform::atomic_fetch_sub(initializing, 1u, platform::release);
          return kNoBit;
        }
      }
    }
    BlockHeader* h = header(block);
    // Acquire the block's last deletion (an RMW reads the newest value), so
    // the previous objects' writes are done before ours begin.
    platform::atomic_fetch_or(&h->allocation, kAllSlots, platform::acquire);
    platform::atomic_store(&h->type, static_cast<std::uint32_t>(type));
    platform::atomic_store(&h->destroyed, word{0});  // published with the free slots below
    // Threads that reserve a slot in this block must see the new type first
    // (App. A.2): the release store publishes the type with the free slots
    // (the paper's fence between the two writes).
    const word initial = padding_bits(cap) | taken;
    platform::atomic_store(&h->allocation, initial, platform::release);
    allocated[type].set(block);
    if (initial != kAllSlots) active[type].set(block);
    if (counted) platform::atomic_fetch_sub(initializing, 1u, platform::release);  // after the set
    return block;
  }

  /// Clears `mask` (slots held by the caller) in the block of type `type`
  /// and updates the block bitmaps (Alg. 2, 7).
  DYNASOAR_HD void release_slots(bit_index block, word mask, unsigned type) const {
    // Release: the object's last writes happen before its slot is reusable.
    const word before = platform::atomic_fetch_and(&header(block)->allocation, ~mask, platform::acq_rel);
    slots_released(block, before, mask, type, capacity[type]);
  }

  /// The rest of release_slots, once `mask` was cleared from the block's
  /// allocation bitmap, which held `before`; `cap` is capacity[type].
  DYNASOAR_HD void slots_released(bit_index block, word before, word mask, unsigned type, unsigned cap) const {
    if (before == kAllSlots) active[type].set(block);  // was full: a slot is free now
    if ((before & ~mask) == padding_bits(cap)) try_delete_block(block);
  }

  /// The caller emptied the block: invalidate it and return it to the free
  /// blocks, unless another thread reserved a slot meanwhile (Alg. 9, App. A.2).
  ///
  /// The class is read from the block header after the invalidation, not
  /// taken from the caller: between the caller's release and this call,
  /// other threads may have filled and emptied the block, deleted it, and
  /// initialised it for another class. Invalidating that block is harmless
  /// (it is rolled back or the block is empty), but its bitmaps are those of
  /// the new class. Once our fetch_or has set every free slot, the block
  /// cannot change class until we roll back, so the class read then is the
  /// block's own.
  DYNASOAR_HD void try_delete_block(bit_index block) const {
    word* bits = &header(block)->allocation;
    for (;;) {
      const word before = platform::atomic_fetch_or(bits, kAllSlots, platform::acq_rel);
      if (before == kAllSlots) return;  // full, or already deleted: nothing to do
      const auto type = platform::atomic_load(&header(block)->type);
      const word padding = padding_bits(capacity[type]);
      if (before == padding) {  // we set every slot: the block is ours
        active[type].clear(block);
        allocated[type].clear(block);
        free_blocks.set(block);
        return;
      }
      const word invalidated = ~before;
      // Others hold slots: roll back. Our invalidation filled the block, which
      // should have deactivated it; that step was deferred. If someone freed a
      // slot in between, it saw a full block and now waits to activate it:
      // do the deferred deactivation so that it can.
      const word rolled = platform::atomic_fetch_and(bits, ~invalidated, platform::acq_rel);
      if (rolled != kAllSlots) active[type].clear(block);
      if ((rolled & ~invalidated) != padding) return;  // still in use
      // everyone else left while we held the slots: try again
    }
  }
};

}  // namespace dynasoar::soa
