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
#include <vector>

#include <dynasoar/dynasoar.h>

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
  const std::size_t workers = dynasoar::platform::kCudaBuild ? 131072 : 64;
  const int rounds = dynasoar::test::stress_rounds(dynasoar::platform::kCudaBuild ? 64 : 20000);
  const std::size_t objects = workers * kHeld;
  // Room for every worker's objects as Large ones (the worst case) twice over.
  Handle heap(2 * Handle::bytes_for<Large>(objects));
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
  EXPECT_EQ(heap.check_consistency(), "");
  if (dynasoar::platform::kCudaBuild) {
    EXPECT_GE(objects, 1000000u);
  }

  dynasoar::platform::parallel_for(objects, DestroyAll{heap.device(), held.data()});
  dynasoar::platform::synchronize();
  EXPECT_EQ(heap.count<Tiny>() + heap.count<Medium>() + heap.count<Large>(), 0u);
  EXPECT_EQ(heap.allocated_blocks(), 0u) << "every block is free once every object is destroyed";
  EXPECT_EQ(heap.check_consistency(), "");
}

}  // namespace
