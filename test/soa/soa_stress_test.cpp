// Concurrent stress of the SOA heap: many workers interleave `new` and
// `destroy` of three classes of different sizes at random, each keeping a
// few objects with a signature in their fields. Afterwards: every kept
// object still holds its signature, no pointer is held twice, the counts
// match, the block states agree with the bitmaps; after everything is
// destroyed every block is free again. On the GPU the workers end holding
// over a million objects.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <dynasoar/dynasoar.h>
#include <dynasoar/debug.h>

#include "support/rng.h"
#include "support/stress_rounds.h"

namespace {

using dynasoar::platform::Buffer;

class Tiny;
class Medium;
class Large;
using StressAlloc = dynasoar::SoaAllocator<Tiny, Medium, Large>;

class Tiny : public StressAlloc::Base {  // 8 bytes, 64 per block
 public:
  declare_field_types(Tiny, std::uint64_t)
  Field<Tiny, 0> sig;
  DYNASOAR_HD explicit Tiny(std::uint64_t s) : sig(s) {}
  DYNASOAR_HD bool holds(std::uint64_t s) const { return sig == s; }
};

class Medium : public StressAlloc::Base {  // 24 bytes, 21 per block
 public:
  declare_field_types(Medium, std::uint32_t, std::uint64_t, std::uint32_t, std::uint64_t)
  Field<Medium, 0> low;
  Field<Medium, 1> sig;
  Field<Medium, 2> high;
  Field<Medium, 3> neg;
  DYNASOAR_HD explicit Medium(std::uint64_t s)
      : low(static_cast<std::uint32_t>(s)), sig(s), high(static_cast<std::uint32_t>(s >> 32)), neg(~s) {}
  DYNASOAR_HD bool holds(std::uint64_t s) const {
    return sig == s && low == static_cast<std::uint32_t>(s) && high == static_cast<std::uint32_t>(s >> 32) &&
           neg == ~s;
  }
};

class Large : public StressAlloc::Base {  // 72 bytes, 7 per block
 public:
  declare_field_types(Large, std::uint64_t, double[8])
  Field<Large, 0> sig;
  Field<Large, 1> values;
  DYNASOAR_HD explicit Large(std::uint64_t s) : sig(s) {
    for (int k = 0; k < 8; ++k) values[k] = static_cast<double>(s % 1000003) + k;
  }
  DYNASOAR_HD bool holds(std::uint64_t s) const {
    for (int k = 0; k < 8; ++k)
      if (values[k] != static_cast<double>(s % 1000003) + k) return false;
    return sig == s;
  }
};

using Handle = dynasoar::AllocatorHandle<StressAlloc>;
constexpr int kHeld = 8;  // objects a worker may hold

struct Held {
  std::uint64_t pointer;  // 0: none
  std::uint64_t sig;
};

DYNASOAR_HD bool holds(std::uint64_t p, std::uint64_t s) {
  if (StressAlloc::is_a<Tiny>(reinterpret_cast<void*>(p))) return reinterpret_cast<Tiny*>(p)->holds(s);
  if (StressAlloc::is_a<Medium>(reinterpret_cast<void*>(p))) return reinterpret_cast<Medium*>(p)->holds(s);
  return reinterpret_cast<Large*>(p)->holds(s);
}

DYNASOAR_HD std::uint64_t create(StressAlloc alloc, unsigned type, std::uint64_t s) {
  if (type == 0) return reinterpret_cast<std::uint64_t>(new (alloc) Tiny(s));
  if (type == 1) return reinterpret_cast<std::uint64_t>(new (alloc) Medium(s));
  return reinterpret_cast<std::uint64_t>(new (alloc) Large(s));
}

DYNASOAR_HD void destroy_any(StressAlloc alloc, std::uint64_t p) {
  if (StressAlloc::is_a<Tiny>(reinterpret_cast<void*>(p)))
    dynasoar::destroy(alloc, reinterpret_cast<Tiny*>(p));
  else if (StressAlloc::is_a<Medium>(reinterpret_cast<void*>(p)))
    dynasoar::destroy(alloc, reinterpret_cast<Medium*>(p));
  else
    dynasoar::destroy(alloc, reinterpret_cast<Large*>(p));
}

struct Churn {
  StressAlloc alloc;
  Held* held;  // kHeld per worker
  unsigned long long* errors;
  int rounds;
  std::size_t workers_wanted;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t workers) const {
    if (w >= workers_wanted) return;  // the GPU rounds the worker count up
    (void)workers;
    dynasoar::test::Rng rng(0xC0FFEE, w);
    Held mine[kHeld] = {};
    for (int r = 0; r < rounds; ++r) {
      const int j = static_cast<int>(rng.below(kHeld));
      if (mine[j].pointer != 0) {  // check and destroy
        if (!holds(mine[j].pointer, mine[j].sig)) dynasoar::platform::atomic_fetch_add(errors, 1ull);
        destroy_any(alloc, mine[j].pointer);
        mine[j].pointer = 0;
      } else {
        const std::uint64_t s = dynasoar::platform::mix64(w * 1000003ull + static_cast<std::uint64_t>(r));
        mine[j] = {create(alloc, static_cast<unsigned>(rng.below(3)), s), s};
        if (mine[j].pointer == 0) dynasoar::platform::atomic_fetch_add(errors, 1ull << 32);  // out of memory
      }
    }
    // End full-handed, so the final state holds kHeld objects per worker.
    for (int j = 0; j < kHeld; ++j)
      if (mine[j].pointer == 0) {
        const std::uint64_t s = dynasoar::platform::mix64(~(w * kHeld + static_cast<std::uint64_t>(j)));
        mine[j] = {create(alloc, static_cast<unsigned>(j % 3), s), s};
      }
    for (int j = 0; j < kHeld; ++j) held[w * kHeld + j] = mine[j];
  }
};

struct Verify {
  const Held* held;
  unsigned long long* errors;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (held[i].pointer == 0 || !holds(held[i].pointer, held[i].sig)) dynasoar::platform::atomic_fetch_add(errors, 1ull);
  }
};

struct DestroyAll {
  StressAlloc alloc;
  const Held* held;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (held[i].pointer != 0) destroy_any(alloc, held[i].pointer);
  }
};

TEST(SoaStress, RandomNewDestroyKeepsObjectsAndBlocksIntact) {
  // On the GPU 2^17 workers, or as many as are resident at once if fewer
  // (a cooperative launch needs them all; the allocator's registers decide,
  // and a change of its code once left room for 101 376 only).
  const std::size_t workers = dynasoar::platform::kCudaBuild
                                  ? std::min<std::size_t>(131072, dynasoar::platform::max_workers<Churn>())
                                  : 64;
  const int rounds = dynasoar::test::stress_rounds(dynasoar::platform::kCudaBuild ? 64 : 20000);
  const std::size_t objects = workers * kHeld;
  // Room for every worker's objects as Large ones (the worst case) four
  // times over. Random frees leave many partly used blocks (Sec. 6.3); on
  // the host, with 64 threads on few cores, a thread preempted between the
  // two levels of a bitmap update hides active blocks for a time slice, and
  // allocations open new blocks meanwhile. Twice over ran out in some runs.
  Handle heap(4 * Handle::bytes_for<Large>(objects));
  Buffer<Held> held(objects);
  Buffer<unsigned long long> errors(1);
  errors.zero();
  // Workers that run concurrently (OS threads on the host).
  dynasoar::platform::parallel_workers(workers, Churn{heap.device(), held.data(), errors.data(), rounds, workers});
  dynasoar::platform::synchronize();
  unsigned long long e = 0;
  errors.copy_to_host(&e, 1);
  EXPECT_EQ(e & 0xFFFFFFFFu, 0u) << "objects lost their signature before being destroyed";
  EXPECT_EQ(e >> 32, 0u) << "allocations failed although the heap had room";
  EXPECT_NO_THROW(heap.check_errors());

  errors.zero();
  dynasoar::platform::parallel_for(objects, Verify{held.data(), errors.data()});
  errors.copy_to_host(&e, 1);
  EXPECT_EQ(e, 0u) << "kept objects that lost their signature";

  const std::vector<Held> h = held.to_vector();
  std::vector<std::uint64_t> pointers;
  std::uint64_t per_type[3] = {0, 0, 0};
  for (const Held& x : h) {
    pointers.push_back(x.pointer & ~(0xFFull << 56));  // the location, without the type id
    per_type[dynasoar::soa::pointer_type(x.pointer)]++;
  }
  std::sort(pointers.begin(), pointers.end());
  EXPECT_EQ(std::adjacent_find(pointers.begin(), pointers.end()), pointers.end()) << "a slot is held twice";
  EXPECT_EQ(heap.count<Tiny>(), per_type[0]);
  EXPECT_EQ(heap.count<Medium>(), per_type[1]);
  EXPECT_EQ(heap.count<Large>(), per_type[2]);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
  if (dynasoar::platform::kCudaBuild) {
    EXPECT_GE(objects, 1000000u);
  }

  dynasoar::platform::parallel_for(objects, DestroyAll{heap.device(), held.data()});
  dynasoar::platform::synchronize();
  EXPECT_EQ(heap.count<Tiny>() + heap.count<Medium>() + heap.count<Large>(), 0u);
  EXPECT_EQ(heap.allocated_blocks(), 0u) << "every block is free once every object is destroyed";
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
}

// Workers that make `per_worker` Tiny objects each, in a heap with exactly
// enough slots for all of them.
struct FillExactly {
  StressAlloc alloc;
  std::uint64_t* pointers;
  unsigned long long* failed;
  std::size_t workers_wanted;
  int per_worker;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t) const {
    if (w >= workers_wanted) return;
    for (int k = 0; k < per_worker; ++k) {
      const std::size_t i = w * static_cast<std::size_t>(per_worker) + static_cast<std::size_t>(k);
      pointers[i] = create(alloc, 0, i);
      if (pointers[i] == 0) dynasoar::platform::atomic_fetch_add(failed, 1ull);
    }
  }
};

// A heap filled to its last slot, over and over: no `new` may fail, even
// while other threads hold the last free blocks between taking them and
// making them active (HeapState::initializing). Under compute-sanitizer
// racecheck's schedule a heap with 8 blocks to spare reported itself full.
TEST(SoaStress, HeapFilledToTheLastSlotNeverReportsFull) {
  constexpr bool gpu = dynasoar::platform::kCudaBuild;
  const std::size_t blocks = gpu ? 4096 : 64;
  const int per_worker = gpu ? 8 : 64;
  const std::size_t objects = blocks * 64;  // Tiny: 64 per block
  const std::size_t workers = objects / static_cast<std::size_t>(per_worker);
  Handle heap(Handle::kBlockBytes * blocks);
  ASSERT_EQ(heap.num_blocks(), blocks);
  Buffer<std::uint64_t> pointers(objects);
  Buffer<unsigned long long> failed(1);
  const int rounds = dynasoar::test::stress_rounds(gpu ? 16 : 400);
  for (int r = 0; r < rounds; ++r) {
    SCOPED_TRACE("round " + std::to_string(r));
    failed.zero();
    dynasoar::platform::parallel_workers(
        workers, FillExactly{heap.device(), pointers.data(), failed.data(), workers, per_worker});
    dynasoar::platform::synchronize();
    unsigned long long f = 0;
    failed.copy_to_host(&f, 1);
    ASSERT_EQ(f, 0u) << "allocations failed in a heap with a slot for each";
    ASSERT_NO_THROW(heap.check_errors());
    ASSERT_EQ(heap.count<Tiny>(), objects);
    std::vector<Held> held(objects);
    const std::vector<std::uint64_t> p = pointers.to_vector();
    for (std::size_t i = 0; i < objects; ++i) held[i] = {p[i], i};
    Buffer<Held> device_held(objects);
    device_held.copy_from_host(held.data(), objects);
    dynasoar::platform::parallel_for(objects, DestroyAll{heap.device(), device_held.data()});
    dynasoar::platform::synchronize();
    ASSERT_EQ(heap.allocated_blocks(), 0u);
  }
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
}


// Workers that reserve slots the way a warp's leader does for a group of
// `wanted` requests (HeapState::reserve_for_group, the step after match_any):
// each records the block and the slots it got. With wanted at least half a
// block, a lost claim sends the next round to a fresh block
// (docs/design/heap.md, "Allocation"); a host build's groups are single
// threads, so only this test reaches that path there.
struct ReserveForGroups {
  StressAlloc alloc;
  unsigned wanted;
  int calls;                  // per worker
  std::uint64_t* blocks;      // [w * calls + c]: the block, or kNoBit
  dynasoar::soa::word* slots; // [w * calls + c]: the slots reserved
  std::size_t workers_wanted;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t) const {
    if (w >= workers_wanted) return;
    dynasoar::soa::HeapState* st = alloc.state();
    constexpr unsigned tiny = StressAlloc::type_id<Tiny>();
    std::uint64_t seed = dynasoar::platform::mix64(w + 1);
    for (int c = 0; c < calls; ++c) {
      dynasoar::bit_index block = dynasoar::kNoBit;
      dynasoar::soa::word got = 0;
      st->reserve_for_group(tiny, 64, wanted, seed, block, got);
      blocks[w * static_cast<std::size_t>(calls) + static_cast<std::size_t>(c)] = block;
      slots[w * static_cast<std::size_t>(calls) + static_cast<std::size_t>(c)] = got;
      seed = dynasoar::platform::mix64(seed + 1);
    }
  }
};

TEST(SoaStress, GroupsOfHalfABlockGetDisjointSlotsUnderContention) {
  constexpr bool gpu = dynasoar::platform::kCudaBuild;
  const std::size_t workers = gpu ? 16384 : 8;
  const int calls = gpu ? 4 : 300;
  constexpr unsigned kWanted = 32;  // half of Tiny's 64 slots
  // Room for every request in whole blocks, and a quarter more.
  const std::size_t blocks = workers * static_cast<std::size_t>(calls) * kWanted / 64 * 5 / 4 + 8;
  Handle heap(Handle::kBlockBytes * blocks);
  const std::size_t n = workers * static_cast<std::size_t>(calls);
  Buffer<std::uint64_t> block_of(n);
  Buffer<dynasoar::soa::word> slots_of(n);
  dynasoar::platform::parallel_workers(
      workers, ReserveForGroups{heap.device(), kWanted, calls, block_of.data(), slots_of.data(), workers});
  dynasoar::platform::synchronize();
  const std::vector<std::uint64_t> b = block_of.to_vector();
  const std::vector<dynasoar::soa::word> g = slots_of.to_vector();
  std::vector<dynasoar::soa::word> taken(heap.num_blocks(), 0);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_NE(b[i], static_cast<std::uint64_t>(dynasoar::kNoBit)) << "request " << i << " found no slot";
    ASSERT_LT(b[i], heap.num_blocks());
    ASSERT_NE(g[i], 0u) << "request " << i << " got no slot";
    ASSERT_LE(static_cast<unsigned>(dynasoar::platform::popc(g[i])), kWanted);
    ASSERT_EQ(taken[b[i]] & g[i], 0u) << "a slot of block " << b[i] << " was reserved twice";
    taken[b[i]] |= g[i];
    total += static_cast<std::uint64_t>(dynasoar::platform::popc(g[i]));
  }
  EXPECT_EQ(heap.count<Tiny>(), total);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
}

// --- The contention scenarios of App. A, step by step --------------------------------
//
// A thread that allocates first selects a block in the active bitmap, then
// reserves slots in it. Between the two steps other threads may empty the
// block (it is invalidated and freed) or even hand it to another class. The
// tests below stop a thread after its selection, run the other threads'
// steps to completion, and then let the first thread go on with
// HeapState::claim_slots, the code an allocation runs after its selection.
// Each step is a separate one-thread launch, so the interleaving is exact.

using dynasoar::soa::HeapState;

enum class Step {
  kNewTiny, kNewMedium, kNewLarge, kDestroyFirst, kSelectTiny, kClaimTiny,
  kEmptyAndInvalidate, kFinishDeletion  // try_delete_block of slots[1]'s block, in two halves
};

struct RunStep {
  StressAlloc alloc;
  Step step;
  unsigned wanted;                    // kClaimTiny: slots to ask for
  std::uint64_t* slots;               // [0] first pointer, [1] selected block, [2] result
  DYNASOAR_HD void operator()(std::size_t) const {
    HeapState* st = alloc.state();
    constexpr unsigned tiny = StressAlloc::type_id<Tiny>();
    switch (step) {
      case Step::kNewTiny: slots[2] = create(alloc, 0, 1); break;
      case Step::kNewMedium: slots[2] = create(alloc, 1, 2); break;
      case Step::kNewLarge: slots[2] = create(alloc, 2, 3); break;
      case Step::kDestroyFirst: destroy_any(alloc, slots[0]); break;
      case Step::kSelectTiny:
        slots[1] = st->active[tiny].try_find_set(0);
        slots[2] = st->block_of(slots[0]);
        break;
      case Step::kClaimTiny: slots[2] = st->claim_slots(static_cast<dynasoar::bit_index>(slots[1]), tiny, wanted, 12345); break;
      case Step::kEmptyAndInvalidate: {  // destroy slots[1]'s object, the block's last, and stop
        const auto block = st->block_of(slots[1]);  // after the deleter's fetch_or (Alg. 9)
        const dynasoar::soa::word mask = dynasoar::soa::word{1} << dynasoar::soa::pointer_slot(slots[1]);
        dynasoar::platform::atomic_fetch_or(&st->header(block)->destroyed, mask);
        dynasoar::platform::atomic_fetch_and(&st->header(block)->allocation, ~mask);
        slots[2] = dynasoar::platform::atomic_fetch_or(&st->header(block)->allocation, dynasoar::soa::kAllSlots);
        break;
      }
      case Step::kFinishDeletion: {  // the rest of the deleter's steps
        const auto block = st->block_of(slots[1]);
        st->active[tiny].clear(block);
        st->allocated[tiny].clear(block);
        st->free_blocks.set(block);
        break;
      }
    }
  }
};

class SoaAppendixA : public ::testing::Test {
 protected:
  // Three blocks: one per class, nothing to spare.
  SoaAppendixA() : heap_(Handle::kBlockBytes * 3), slots_(3) { slots_.zero(); }
  std::uint64_t run(Step step, unsigned wanted = 1) {
    dynasoar::platform::parallel_for(1, RunStep{heap_.device(), step, wanted, slots_.data()});
    return slots_.to_vector()[2];
  }
  std::uint64_t at(int i) { return slots_.to_vector()[static_cast<std::size_t>(i)]; }
  void keep_first(std::uint64_t p) {
    std::uint64_t v[3] = {p, 0, 0};
    slots_.copy_from_host(v, 3);
  }
  Handle heap_;
  Buffer<std::uint64_t> slots_;
};

TEST_F(SoaAppendixA, BlockEmptiedAfterItWasSelected) {
  const std::uint64_t p = run(Step::kNewTiny);
  ASSERT_NE(p, 0u);
  keep_first(p);
  run(Step::kSelectTiny);
  const std::uint64_t block = at(1);
  ASSERT_NE(block, static_cast<std::uint64_t>(dynasoar::kNoBit)) << "the Tiny block is active";
  ASSERT_EQ(block, at(2)) << "the only Tiny block, the one that holds the object, was selected";
  run(Step::kDestroyFirst);  // another thread empties the selected block: it is freed
  EXPECT_EQ(heap_.allocated_blocks(), 0u);
  EXPECT_EQ(run(Step::kClaimTiny), 0u) << "a freed, invalidated block must not hand out slots";
  EXPECT_EQ(heap_.allocated_blocks(), 0u) << "the failed claim left the block free";
  EXPECT_EQ(heap_.count<Tiny>(), 0u);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap_), "");
  EXPECT_NE(run(Step::kNewTiny), 0u) << "the allocation searches again and succeeds";
  EXPECT_EQ(dynasoar::debug::check_consistency(heap_), "");
}

// An object destroyed twice, the second time while another thread deletes
// its emptied block: the deleter's invalidation has set every free slot's
// allocation bit, the object's included, and has not yet freed the block.
// The second destroy must be reported and change nothing. It used to look
// like the free of a live object in a full block and activated the block,
// waiting for ever here (the block's active bit was still set), and on the
// GPU (where the deleter goes on) a later initialisation of the block waited
// for ever instead: an object of a do-all that destroyed itself twice hung.
TEST_F(SoaAppendixA, SecondDestroyWhileTheBlockIsDeleted) {
  const std::uint64_t p = run(Step::kNewTiny);
  const std::uint64_t q = run(Step::kNewTiny);
  ASSERT_NE(p, 0u);
  ASSERT_NE(q, 0u);
  std::uint64_t v[3] = {p, q, 0};
  slots_.copy_from_host(v, 3);
  ASSERT_EQ(heap_.allocated_blocks(), 1u) << "both objects share a block";
  run(Step::kDestroyFirst);  // the first destroy of p
  EXPECT_NO_THROW(heap_.check_errors());
  EXPECT_EQ(run(Step::kEmptyAndInvalidate), dynasoar::soa::padding_bits(64))
      << "the deleter found the block empty: it is the block's";
  run(Step::kDestroyFirst);  // p again, between the deleter's two halves
  run(Step::kFinishDeletion);
  try {
    heap_.check_errors();
    ADD_FAILURE() << "the second destroy was not reported";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("destroyed twice"), std::string::npos) << e.what();
  }
  EXPECT_EQ(heap_.allocated_blocks(), 0u);
  EXPECT_EQ(heap_.count<Tiny>(), 0u);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap_), "");
  for (int i = 0; i < 3; ++i) EXPECT_NE(run(Step::kNewTiny), 0u) << "the freed block serves again";
  EXPECT_EQ(dynasoar::debug::check_consistency(heap_), "");
}

// wanted = 1 reserves one of the 20 free slots; wanted = 64 takes all of
// them, which fills the block and deactivates it before the rollback
// re-activates it.
class SoaAppendixAReinit : public SoaAppendixA, public ::testing::WithParamInterface<unsigned> {};

TEST_P(SoaAppendixAReinit, BlockHandedToAnotherClassAfterItWasSelected) {
  for (int i = 0; i < 7; ++i) ASSERT_NE(run(Step::kNewLarge), 0u);    // one full Large block
  for (int i = 0; i < 21; ++i) ASSERT_NE(run(Step::kNewMedium), 0u);  // one full Medium block
  const std::uint64_t p = run(Step::kNewTiny);                        // the last free block
  ASSERT_NE(p, 0u);
  keep_first(p);
  run(Step::kSelectTiny);
  ASSERT_NE(at(1), static_cast<std::uint64_t>(dynasoar::kNoBit));
  run(Step::kDestroyFirst);  // the Tiny block is emptied and freed ...
  const std::uint64_t m = run(Step::kNewMedium);  // ... and becomes a Medium block
  ASSERT_NE(m, 0u);
  EXPECT_EQ(heap_.statistics<Medium>()[0].blocks, 2u) << "the freed block went to Medium";
  EXPECT_EQ(run(Step::kClaimTiny, GetParam()), 0u) << "slots of a Medium block must not become Tiny objects";
  EXPECT_EQ(heap_.count<Tiny>(), 0u);
  EXPECT_EQ(heap_.count<Medium>(), 22u) << "the rollback returned exactly the slots it took";
  EXPECT_EQ(dynasoar::debug::check_consistency(heap_), "") << "the block is active for Medium again, with 20 free slots";
  for (int i = 0; i < 20; ++i) EXPECT_NE(run(Step::kNewMedium), 0u) << "Medium slot " << i;
  EXPECT_EQ(heap_.count<Medium>(), 42u);
  EXPECT_EQ(run(Step::kNewTiny), 0u) << "no block is left for Tiny";
  EXPECT_THROW(heap_.check_errors(), dynasoar::OutOfMemory);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap_), "");
}

INSTANTIATE_TEST_SUITE_P(Wanted, SoaAppendixAReinit, ::testing::Values(1u, 64u));

// The same scenarios at random: a heap of six blocks shared by three classes
// and many workers that allocate an object, check it and destroy it at once,
// so blocks are emptied, freed and re-initialised for another class all the
// time. Allocations may fail (the heap is tiny); a failure must be a clean
// nullptr, and no slot may be handed to two workers.
struct TypeChurn {
  StressAlloc alloc;
  unsigned long long* counters;  // [0] corrupted objects, [1] failed allocations, [2] objects made
  int rounds;
  std::size_t workers_wanted;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t) const {
    if (w >= workers_wanted) return;  // the GPU rounds the worker count up
    dynasoar::test::Rng rng(0xA11A, w);
    unsigned long long made = 0, failed = 0, corrupted = 0;
    for (int r = 0; r < rounds; ++r) {
      const std::uint64_t s = dynasoar::platform::mix64(w * 7919ull + static_cast<std::uint64_t>(r));
      const std::uint64_t p = create(alloc, static_cast<unsigned>(rng.below(3)), s);
      if (p == 0) {
        ++failed;
        continue;
      }
      ++made;
      if (!holds(p, s)) ++corrupted;  // another worker got the same slot
      destroy_any(alloc, p);
    }
    dynasoar::platform::atomic_fetch_add(&counters[0], corrupted);
    dynasoar::platform::atomic_fetch_add(&counters[1], failed);
    dynasoar::platform::atomic_fetch_add(&counters[2], made);
  }
};

TEST(SoaStress, TinyHeapBlocksChangeClassUnderContention) {
  const std::size_t workers = dynasoar::platform::kCudaBuild ? 8192 : 8;
  const int rounds = dynasoar::test::stress_rounds(dynasoar::platform::kCudaBuild ? 64 : 20000);
  Handle heap(Handle::kBlockBytes * 6);
  Buffer<unsigned long long> counters(3);
  counters.zero();
  dynasoar::platform::parallel_workers(workers, TypeChurn{heap.device(), counters.data(), rounds, workers});
  dynasoar::platform::synchronize();
  const std::vector<unsigned long long> c = counters.to_vector();
  EXPECT_EQ(c[0], 0u) << "objects changed while their owner held them";
  EXPECT_EQ(c[1] + c[2], static_cast<unsigned long long>(workers) * static_cast<unsigned long long>(rounds));
  EXPECT_GT(c[2], 0u);
  if (c[1] > 0) {
    EXPECT_THROW(heap.check_errors(), dynasoar::OutOfMemory);
  }
  EXPECT_EQ(heap.allocated_blocks(), 0u) << "every object was destroyed, so every block is free";
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
}

}  // namespace
