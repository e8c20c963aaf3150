// The public API's promises to user code, on every back end and in both tiers:
// instance checks on pointers that may be null, a do-all over one class
// without its subclasses, field idioms of ordinary C++ (a field in a
// conditional expression or as an index), the library's random numbers (the
// same on host and device), and the device stack size for recursive methods.
#include <dynasoar/debug.h>
#include <dynasoar/dynasoar.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/backends.h"

namespace {

using dynasoar::Field;
using dynasoar::platform::atomic_fetch_add;
using ull = unsigned long long;

template <class Backend>
struct Zoo {
  class Fish;
  class Shark;
  class Counter;
  using Alloc = typename Backend::template Allocator<Fish, Shark, Counter>;
  using Handle = dynasoar::AllocatorHandle<Alloc>;

  class Fish : public Alloc::Base {
   public:
    declare_field_types(Fish, int, float, float[4])
    Field<Fish, 0> index;
    Field<Fish, 1> weight;
    Field<Fish, 2> scores;

    DYNASOAR_HD explicit Fish(int i) : index(i % 4), weight(static_cast<float>(i)) {
      for (int k = 0; k < 4; ++k) scores[k] = static_cast<float>(10 * k);
    }
    DYNASOAR_HD void count(ull* n) { atomic_fetch_add(n, 1ull); }
    DYNASOAR_HD void destroy_self(Alloc alloc) { dynasoar::destroy(alloc, this); }
    // Every plain Fish makes a Shark (a subclass, visited by the same do-all).
    DYNASOAR_HD void spawn_shark(Alloc alloc, ull* visits) {
      atomic_fetch_add(visits, 1ull);
      if (!dynasoar::is_a<Shark>(this)) new (alloc) Shark(-1);
    }
    // The free functions on `this` (never null here) and the member forms.
    DYNASOAR_HD void classify(ull* out) {
      if (dynasoar::is_a<Shark>(this)) atomic_fetch_add(&out[0], 1ull);
      if (dynasoar::cast<Shark>(this) != nullptr) atomic_fetch_add(&out[1], 1ull);
      if (this->template is_a<Shark>()) atomic_fetch_add(&out[2], 1ull);
      if (dynasoar::is_a<Fish>(this) && dynasoar::cast<Fish>(this) == this) atomic_fetch_add(&out[3], 1ull);
    }
    // snippet-begin: idioms
    // Ordinary idioms with fields: a field as one branch of ?: next to a
    // literal of another type, and a field as the index of an array field.
    DYNASOAR_HD void idioms(ull* out) {
      const double heavy = weight > 100.0f ? weight : 1.0;
      const float picked = scores[index];
      atomic_fetch_add(&out[0], static_cast<ull>(heavy));
      atomic_fetch_add(&out[1], static_cast<ull>(picked));
    }
    // snippet-end: idioms
  };

  class Shark : public Fish {
   public:
    declare_field_types(Shark, int)
    Field<Shark, 0> teeth;
    DYNASOAR_HD explicit Shark(int i) : Fish(i), teeth(i) {}
  };

  // snippet-begin: random-stream
  // An object with its own random stream, kept in a field between calls.
  class Counter : public Alloc::Base {
   public:
    declare_field_types(Counter, int, dynasoar::RandomStream)
    Field<Counter, 0> id;
    Field<Counter, 1> rng;
    DYNASOAR_HD explicit Counter(int i) : id(i), rng(dynasoar::RandomStream(7, static_cast<std::uint64_t>(i))) {}
    DYNASOAR_HD void draw(std::uint32_t* out) {
      dynasoar::RandomStream s = rng;
      out[static_cast<int>(id)] = s.next_u32();
      rng = s;
    }
  };
  // snippet-end: random-stream
};

// Reads a pointer from memory the compiler cannot see through and applies the
// free is_a / cast to it: out = {is_a<Fish>, cast<Shark> != nullptr, is_a<Shark>}.
template <class Z>
struct NullChecks {
  typename Z::Fish* const* slot;
  ull* out;
  DYNASOAR_HD void operator()(std::size_t) const {
    typename Z::Fish* p = *slot;
    out[0] = dynasoar::is_a<typename Z::Fish>(p) ? 1 : 0;
    out[1] = dynasoar::cast<typename Z::Shark>(p) != nullptr ? 1 : 0;
    out[2] = dynasoar::is_a<typename Z::Shark>(p) ? 1 : 0;
  }
};

template <class Backend>
class ApiTest : public ::testing::Test {
 protected:
  using Classes = Zoo<Backend>;
  static constexpr std::uint64_t kHeapBytes = std::uint64_t{64} << 20;
};

TYPED_TEST_SUITE(ApiTest, dynasoar::test::AllBackends, dynasoar::test::BackendNames);

// dynasoar::is_a / cast are false / nullptr for a null pointer, in the
// optimised build, on host threads or in a kernel; on objects they agree with
// the member forms.
TYPED_TEST(ApiTest, IsAAndCastAreDefinedForNull) {
  using Z = typename TestFixture::Classes;
  typename Z::Handle heap(TestFixture::kHeapBytes);
  dynasoar::platform::Buffer<typename Z::Fish*> slot(1);
  slot.zero();
  dynasoar::platform::Buffer<ull> out(3);
  out.zero();
  dynasoar::platform::parallel_for(1, NullChecks<Z>{slot.data(), out.data()});
  EXPECT_EQ(out.to_vector(), (std::vector<ull>{0, 0, 0})) << "is_a<Fish>, cast<Shark>, is_a<Shark> of nullptr";

  constexpr int kFish = 500, kSharks = 200;
  heap.template parallel_new<typename Z::Fish>(kFish);
  heap.template parallel_new<typename Z::Shark>(kSharks);
  dynasoar::platform::Buffer<ull> kinds(4);
  kinds.zero();
  heap.template parallel_do<typename Z::Fish, &Z::Fish::classify>(kinds.data());
  EXPECT_EQ(kinds.to_vector(), (std::vector<ull>{kSharks, kSharks, kSharks, kFish + kSharks}));
}

// parallel_do_single_type visits objects of exactly the named class;
// parallel_do visits its subclasses too.
TYPED_TEST(ApiTest, SingleTypeDoAllSkipsSubclasses) {
  using Z = typename TestFixture::Classes;
  typename Z::Handle heap(TestFixture::kHeapBytes);
  constexpr int kFish = 700, kSharks = 300;
  heap.template parallel_new<typename Z::Fish>(kFish);
  heap.template parallel_new<typename Z::Shark>(kSharks);
  dynasoar::platform::Buffer<ull> n(2);
  n.zero();
  // snippet-begin: single-type
  heap.template parallel_do_single_type<typename Z::Fish, &Z::Fish::count>(n.data());
  heap.template parallel_do<typename Z::Fish, &Z::Fish::count>(n.data() + 1);
  // snippet-end: single-type
  EXPECT_EQ(n.to_vector(), (std::vector<ull>{kFish, kFish + kSharks}));
}

// count<T> counts T and its subclasses; count_single_type<T> T alone.
TYPED_TEST(ApiTest, SingleTypeCountSkipsSubclasses) {
  using Z = typename TestFixture::Classes;
  typename Z::Handle heap(TestFixture::kHeapBytes);
  heap.template parallel_new<typename Z::Fish>(700);
  heap.template parallel_new<typename Z::Shark>(300);
  EXPECT_EQ(heap.template count<typename Z::Fish>(), 1000u);
  EXPECT_EQ(heap.template count_single_type<typename Z::Fish>(), 700u);
  EXPECT_EQ(heap.template count_single_type<typename Z::Shark>(), 300u);
  EXPECT_EQ(heap.template count_single_type<typename Z::Counter>(), 0u);
}

// A handle sized for several classes holds that many objects of each at
// once; on the DynaSOAr heap that is a guarantee: the heap has exactly the
// blocks they fill, plus one for every other class.
TYPED_TEST(ApiTest, ForObjectsOfSeveralClassesHoldsThemAll) {
  using Z = typename TestFixture::Classes;
  constexpr std::uint64_t kFish = 5000, kCounters = 3000;
  auto heap = Z::Handle::template for_objects<typename Z::Fish, typename Z::Counter>({kFish, kCounters});
  if constexpr (dynasoar::backend::HeapBackend<TypeParam>) {
    EXPECT_EQ(heap.heap_bytes(), Z::Handle::template bytes_for<typename Z::Fish>(kFish) +
                                     Z::Handle::template bytes_for<typename Z::Counter>(kCounters) +
                                     Z::Handle::kBlockBytes)
        << "whole blocks of Fish and Counters and one block of Sharks";
  }
  EXPECT_NO_THROW(heap.template parallel_new<typename Z::Fish>(kFish));
  EXPECT_NO_THROW(heap.template parallel_new<typename Z::Counter>(kCounters));
  EXPECT_EQ(heap.template count<typename Z::Fish>(), kFish);
  EXPECT_EQ(heap.template count<typename Z::Counter>(), kCounters);
}

// Objects created during a parallel_do are not visited by it, also when their
// class is a subclass of the visited one (its objects are visited after the
// creating class's).
TYPED_TEST(ApiTest, ObjectsOfSubclassesCreatedDuringADoAllAreNotVisited) {
  using Z = typename TestFixture::Classes;
  typename Z::Handle heap(TestFixture::kHeapBytes);
  constexpr int kFish = 600, kSharks = 200;
  heap.template parallel_new<typename Z::Fish>(kFish);
  heap.template parallel_new<typename Z::Shark>(kSharks);
  dynasoar::platform::Buffer<ull> visits(1);
  visits.zero();
  heap.template parallel_do<typename Z::Fish, &Z::Fish::spawn_shark>(heap.device(), visits.data());
  EXPECT_EQ(visits.to_vector()[0], ull{kFish + kSharks}) << "objects made during the do-all were visited";
  EXPECT_EQ(heap.template count<typename Z::Shark>(), ull{kSharks + kFish});
}

// A `new` that fails in the do-all of the first visited class (Fish) is
// reported by the blocking parallel_do, whose last do-all is another
// class's (Shark's); on the DynaSOAr heap the failed `new` also marks the
// error word's host mirror, which check_errors reads after its wait. Then a
// do-all that raises nothing reports nothing.
TYPED_TEST(ApiTest, BlockingDoAllReportsAFailedNewInAnyVisitedClass) {
  using Z = typename TestFixture::Classes;
  if constexpr (!dynasoar::backend::HeapBackend<TypeParam>) {
    GTEST_SKIP() << "the DynaSOAr heap's test: a heap sized for its Fish alone (for_objects); "
                    "the byte allocators' blocking parallel_do reads the flags with a copy, "
                    "as check_errors (errors_test)";
  } else {
    constexpr int kFish = 4096;
    auto heap = Z::Handle::template for_objects<typename Z::Fish>(kFish);
    heap.template parallel_new<typename Z::Fish>(kFish);
    dynasoar::platform::Buffer<ull> visits(1);
    visits.zero();
    // Every Fish makes a Shark; one block of Sharks holds far fewer.
    EXPECT_THROW((heap.template parallel_do<typename Z::Fish, &Z::Fish::spawn_shark>(heap.device(), visits.data())),
                 dynasoar::OutOfMemory);
    EXPECT_EQ(visits.to_vector()[0], ull{kFish});
    EXPECT_NO_THROW((heap.template parallel_do<typename Z::Fish, &Z::Fish::count>(visits.data())));
    EXPECT_NO_THROW((heap.template parallel_do_single_type<typename Z::Counter, &Z::Counter::draw>(static_cast<std::uint32_t*>(nullptr))))
        << "a do-all over no objects reports nothing";
  }
}

// `cond ? field : 1.0` and `array_field[int_field]` compile and mean what
// they mean for plain members.
TYPED_TEST(ApiTest, FieldsInConditionalsAndAsIndices) {
  using Z = typename TestFixture::Classes;
  typename Z::Handle heap(TestFixture::kHeapBytes);
  constexpr int kFish = 400;
  heap.template parallel_new<typename Z::Fish>(kFish);
  dynasoar::platform::Buffer<ull> out(2);
  out.zero();
  heap.template parallel_do<typename Z::Fish, &Z::Fish::idioms>(out.data());
  ull heavy = 0, picked = 0;
  for (int i = 0; i < kFish; ++i) {
    heavy += i > 100 ? static_cast<ull>(i) : 1;
    picked += static_cast<ull>(10 * (i % 4));
  }
  EXPECT_EQ(out.to_vector(), (std::vector<ull>{heavy, picked}));
}

// A RandomStream kept in a field continues where the last call stopped.
TYPED_TEST(ApiTest, RandomStreamInAField) {
  using Z = typename TestFixture::Classes;
  typename Z::Handle heap(TestFixture::kHeapBytes);
  constexpr int kCounters = 300;
  heap.template parallel_new<typename Z::Counter>(kCounters);
  dynasoar::platform::Buffer<std::uint32_t> out(kCounters);
  heap.template parallel_do<typename Z::Counter, &Z::Counter::draw>(out.data());
  heap.template parallel_do<typename Z::Counter, &Z::Counter::draw>(out.data());
  std::vector<std::uint32_t> want(kCounters);
  for (int i = 0; i < kCounters; ++i) {
    dynasoar::RandomStream s(7, static_cast<std::uint64_t>(i));
    s.next_u32();
    want[i] = s.next_u32();
  }
  EXPECT_EQ(out.to_vector(), want);
}

// Reads object i's id through an ObjectIndex, in a kernel (or host threads).
template <class Index>
struct ReadIds {
  Index index;
  int* out;
  DYNASOAR_HD void operator()(std::size_t i) const { out[i] = static_cast<int>(index[i]->id); }
};

// parallel_new_indexed: index[i] is object i, also in the last, partly
// filled block of the block heap, and stays so when later `new`s fill that
// block's free slots.
TYPED_TEST(ApiTest, ParallelNewIndexedFindsObjectI) {
  using Z = typename TestFixture::Classes;
  typename Z::Handle heap(TestFixture::kHeapBytes);
  constexpr int kCounters = 1000, kMore = 333;  // no multiple of any capacity
  // snippet-begin: indexed
  dynasoar::ObjectTable<typename Z::Alloc, typename Z::Counter> table =
      heap.template parallel_new_indexed<typename Z::Counter>(kCounters);
  // table.index() is trivially copyable: pass it to kernels; index[i] is object i.
  // snippet-end: indexed
  ASSERT_EQ(table.size(), std::size_t{kCounters});
  heap.template parallel_new<typename Z::Counter>(kMore);
  // The index moves with its table; the table moved from is empty.
  auto moved = std::move(table);
  EXPECT_EQ(table.size(), 0u);
  ASSERT_EQ(moved.size(), std::size_t{kCounters});
  dynasoar::platform::Buffer<int> ids(kCounters);
  dynasoar::platform::parallel_for(kCounters, ReadIds<typename decltype(moved)::Index>{moved.index(), ids.data()});
  std::vector<int> want(kCounters);
  for (int i = 0; i < kCounters; ++i) want[i] = i;
  EXPECT_EQ(ids.to_vector(), want);
  EXPECT_EQ(heap.template count<typename Z::Counter>(), ull{kCounters + kMore});
  EXPECT_EQ(heap.template parallel_new_indexed<typename Z::Counter>(0).size(), 0u);
  if constexpr (dynasoar::backend::HeapBackend<TypeParam>) {
    EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
  }
}

// On the block heap every group of objects needs a free block: where fewer
// are free (too small a heap, or blocks held by another class), it throws
// OutOfMemory before anything is made.
TYPED_TEST(ApiTest, ParallelNewIndexedNeedsABlockPerGroup) {
  using Z = typename TestFixture::Classes;
  if constexpr (!dynasoar::backend::HeapBackend<TypeParam>) {
    GTEST_SKIP() << "the block heap's test: byte allocators have no blocks per group";
  } else {
    // Blocks for 200 Counters and one block for each other class.
    auto heap = Z::Handle::template for_objects<typename Z::Counter>(200);
    EXPECT_THROW(heap.template parallel_new_indexed<typename Z::Counter>(100000), dynasoar::OutOfMemory);
    EXPECT_EQ(heap.template count<typename Z::Counter>(), 0u);
    // Fish in three blocks: one more than their own, so one Counter block short.
    const std::size_t fish_per_block = heap.template statistics<typename Z::Fish>()[0].capacity;
    heap.template parallel_new<typename Z::Fish>(3 * fish_per_block);
    EXPECT_THROW(heap.template parallel_new_indexed<typename Z::Counter>(200), dynasoar::OutOfMemory);
    EXPECT_EQ(heap.template count<typename Z::Counter>(), 0u) << "objects were made although it threw";
    EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
    heap.template parallel_do<typename Z::Fish, &Z::Fish::destroy_self>(heap.device());
    EXPECT_NO_THROW(heap.template parallel_new_indexed<typename Z::Counter>(200));
    EXPECT_EQ(heap.template count<typename Z::Counter>(), 200u);
  }
}

// Destroys object i of an index where i / cap is even (every other group).
template <class Alloc, class Index>
struct DestroyEveryOtherGroup {
  Alloc alloc;
  Index objects;
  unsigned cap;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if ((i / cap) % 2 == 0) dynasoar::destroy(alloc, objects[i]);
  }
};

// On the block heap a new heap gives the groups of parallel_new_indexed
// consecutive blocks, and the index finds them by arithmetic; where the free
// blocks are scattered (another class took every other block) the index
// keeps each group's block. Object i is found either way.
TYPED_TEST(ApiTest, ParallelNewIndexedOnConsecutiveAndScatteredBlocks) {
  using Z = typename TestFixture::Classes;
  if constexpr (!dynasoar::backend::HeapBackend<TypeParam>) {
    GTEST_SKIP() << "the block heap's test: byte allocators keep a pointer per object";
  } else {
    using Table = dynasoar::ObjectTable<typename Z::Alloc, typename Z::Counter>;
    const auto ids_of = [](const Table& table) {
      dynasoar::platform::Buffer<int> ids(table.size());
      dynasoar::platform::parallel_for(table.size(), ReadIds<typename Table::Index>{table.index(), ids.data()});
      return ids.to_vector();
    };
    const auto upto = [](std::size_t n) {
      std::vector<int> v(n);
      for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i);
      return v;
    };
    typename Z::Handle fresh(TestFixture::kHeapBytes);
    const Table consecutive = fresh.template parallel_new_indexed<typename Z::Counter>(1000);
    EXPECT_TRUE(consecutive.index().consecutive()) << "a new heap has a run of free blocks";
    EXPECT_EQ(ids_of(consecutive), upto(1000));

    // Fish in every other block: no two free blocks are neighbours.
    typename Z::Handle heap(TestFixture::kHeapBytes);
    const std::size_t blocks = heap.num_blocks();
    const unsigned fish_cap = heap.template statistics<typename Z::Fish>()[0].capacity;
    const unsigned counter_cap = heap.template statistics<typename Z::Counter>()[0].capacity;
    ASSERT_GE(blocks, 8u);
    const auto fish = heap.template parallel_new_indexed<typename Z::Fish>(blocks * fish_cap);
    ASSERT_TRUE(fish.index().consecutive());
    dynasoar::platform::parallel_for(
        blocks * fish_cap,
        DestroyEveryOtherGroup<typename Z::Alloc, typename decltype(fish)::Index>{heap.device(), fish.index(), fish_cap});
    heap.check_errors();
    const std::size_t n = (blocks / 2) * counter_cap - 1;
    const Table scattered = heap.template parallel_new_indexed<typename Z::Counter>(n);
    EXPECT_FALSE(scattered.index().consecutive()) << "no two free blocks were neighbours";
    EXPECT_EQ(ids_of(scattered), upto(n));
    EXPECT_EQ(heap.template count<typename Z::Counter>(), n);
    EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
  }
}

// Philox4x32-10 known answers (the generator's published test vectors).
TEST(Random, PhiloxKnownAnswers) {
  const dynasoar::Philox4x32 zero = dynasoar::philox4x32({{0, 0, 0, 0}}, 0);
  EXPECT_EQ(std::vector<std::uint32_t>(zero.v, zero.v + 4),
            (std::vector<std::uint32_t>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  const dynasoar::Philox4x32 ones =
      dynasoar::philox4x32({{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, ~std::uint64_t{0});
  EXPECT_EQ(std::vector<std::uint32_t>(ones.v, ones.v + 4),
            (std::vector<std::uint32_t>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  const dynasoar::Philox4x32 pi = dynasoar::philox4x32(
      {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0x299f31d0a4093822ull);
  EXPECT_EQ(std::vector<std::uint32_t>(pi.v, pi.v + 4),
            (std::vector<std::uint32_t>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

// Value k of stream s: RandomStream(seed, s) drawn k + 1 times. Written by
// kernels (or host threads) and compared with the same values computed here.
struct DrawStreams {
  std::uint32_t* u32;
  float* unit;
  std::uint32_t* dice;
  DYNASOAR_HD void operator()(std::size_t s) const {
    dynasoar::RandomStream rng(42, s);
    for (int k = 0; k < 4; ++k) u32[4 * s + k] = rng.next_u32();
    unit[s] = rng.uniform();
    dice[s] = rng.below(6) + dynasoar::random_below(dynasoar::random_u32(42, 1, 2, static_cast<std::uint32_t>(s)), 6) * 6;
  }
};

TEST(Random, SameNumbersInKernelsAndOnTheHost) {
  constexpr std::size_t kStreams = 1000;
  dynasoar::platform::Buffer<std::uint32_t> u32(4 * kStreams), dice(kStreams);
  dynasoar::platform::Buffer<float> unit(kStreams);
  dynasoar::platform::parallel_for(kStreams, DrawStreams{u32.data(), unit.data(), dice.data()});
  std::vector<std::uint32_t> want_u32(4 * kStreams), want_dice(kStreams);
  std::vector<float> want_unit(kStreams);
  for (std::size_t s = 0; s < kStreams; ++s)
    DrawStreams{want_u32.data(), want_unit.data(), want_dice.data()}(s);
  EXPECT_EQ(u32.to_vector(), want_u32);
  EXPECT_EQ(unit.to_vector(), want_unit);
  EXPECT_EQ(dice.to_vector(), want_dice);
  // Not a constant: the values of a stream differ, and so do the streams.
  EXPECT_NE(want_u32[0], want_u32[1]);
  EXPECT_NE(want_u32[0], want_u32[4]);
  std::uint64_t sum = 0;
  for (float f : want_unit) {
    EXPECT_GE(f, 0.0f);
    EXPECT_LT(f, 1.0f);
    sum += static_cast<std::uint64_t>(f * 1000);
  }
  EXPECT_NEAR(static_cast<double>(sum) / kStreams, 500.0, 40.0) << "uniform() is far from uniform";
}

// The stack of GPU threads grows on request (and never shrinks); the host
// build has nothing to set.
TEST(DeviceStack, SetGrowsTheLimit) {
  if constexpr (dynasoar::platform::kCudaBuild) {
    const std::size_t before = dynasoar::device_stack_size();
    EXPECT_GT(before, 0u);
    EXPECT_GE(dynasoar::set_device_stack_size(before + 4096), before + 4096);
    EXPECT_GE(dynasoar::set_device_stack_size(256), before + 4096) << "the limit must not shrink";
  } else {
    EXPECT_EQ(dynasoar::set_device_stack_size(1 << 16), 0u);
    EXPECT_EQ(dynasoar::device_stack_size(), 0u);
  }
}

}  // namespace
