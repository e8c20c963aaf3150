// The SOA heap, the field DSL and the parallel operations (paper Sec. 2-3,
// App. B). Every operation runs through the executor, so the same test runs
// on host threads (host tier) and as kernels (device tier).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include <dynasoar/dynasoar.h>
#include <dynasoar/debug.h>

namespace {

struct Vec3 {
  float x, y, z;
};

class Small;
class Mid;
class Big;
class Shape;
class Circle;
class Ring;
using TestAlloc = dynasoar::SoaAllocator<Small, Mid, Big, Shape, Circle, Ring>;
using Handle = dynasoar::AllocatorHandle<TestAlloc>;

class Small : public TestAlloc::Base {
 public:
  declare_field_types(Small, int)
  Field<Small, 0> value;

  DYNASOAR_HD explicit Small(int i) : value(i) {}
  DYNASOAR_HD void bump(int by) { value += by; }
  DYNASOAR_HD void spawn(TestAlloc alloc, unsigned long long* visited) {
    dynasoar::platform::atomic_fetch_add(visited, 1ull);
    new (alloc) Small(-1);
  }
  DYNASOAR_HD void destroy_if_odd(TestAlloc alloc) {
    if (value % 2 != 0) dynasoar::destroy(alloc, this);
  }
  DYNASOAR_HD void add_to(unsigned long long* sum) {
    dynasoar::platform::atomic_fetch_add(sum, static_cast<unsigned long long>(static_cast<int>(value)));
  }
};

// snippet-begin: fields
// 33 bytes of fields of mixed sizes and alignments.
class Mid : public TestAlloc::Base {
 public:
  declare_field_types(Mid, char, double, Vec3, int[3])
  Field<Mid, 0> tag;
  Field<Mid, 1> weight;
  Field<Mid, 2> pos;
  Field<Mid, 3> triple;

  DYNASOAR_HD explicit Mid(int i) : tag(static_cast<char>(i % 100)), weight(i * 0.5) {
    pos->x = static_cast<float>(i);
    pos->y = 2.0f * static_cast<float>(i);
    pos->z = 3.0f * static_cast<float>(i);
    for (int k = 0; k < 3; ++k) triple[k] = i + k;
  }
};
// snippet-end: fields

// 64 bytes: 16 times Small.
class Big : public TestAlloc::Base {
 public:
  declare_field_types(Big, double, double, double, double, double, double, double, std::uint64_t)
  Field<Big, 0> a;
  Field<Big, 1> b;
  Field<Big, 2> c;
  Field<Big, 3> d;
  Field<Big, 4> e;
  Field<Big, 5> f;
  Field<Big, 6> g;
  Field<Big, 7> signature;

  DYNASOAR_HD explicit Big(int i) : signature(static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull) {}
};

// snippet-begin: inheritance
// Three levels: Shape (abstract) <- Circle <- Ring.
class Shape : public TestAlloc::Base {
 public:
  declare_abstract_field_types(Shape, float, int)
  Field<Shape, 0> area;
  Field<Shape, 1> id;
  DYNASOAR_HD void scale(float by) { area *= by; }
};

class Circle : public Shape {
 public:
  declare_field_types(Circle, float)
  Field<Circle, 0> radius;
  DYNASOAR_HD explicit Circle(int i) : radius(static_cast<float>(i)) {
    area = 3.0f * static_cast<float>(i);
    id = i;
  }
};

class Ring : public Circle {
 public:
  declare_field_types(Ring, float, short)
  Field<Ring, 0> inner;
  Field<Ring, 1> tag;
  DYNASOAR_HD explicit Ring(int i) : Circle(i), inner(0.5f * static_cast<float>(i)), tag(static_cast<short>(-i)) {}
};
// snippet-end: inheritance

using Registry = TestAlloc::Registry;

TEST(SoaLayout, CapacitiesFollowObjectSizes) {
  // Object bytes: Small 4, Mid 1+8+12+12 = 33, Big 64, Circle 4+4+4 = 12, Ring 18.
  static_assert(Registry::Info<Mid>::kObjectBytes == 33);
  static_assert(Registry::Info<Ring>::kObjectBytes == 18);
  static_assert(Registry::kSmallestObjectBytes == 4);
  EXPECT_EQ(Registry::kCapacity<Small>, 64u);
  EXPECT_EQ(Registry::kCapacity<Mid>, 64u * 4 / 33);
  EXPECT_EQ(Registry::kCapacity<Big>, 4u);
  EXPECT_EQ(Registry::kCapacity<Circle>, 64u * 4 / 12);
  EXPECT_EQ(Registry::kCapacity<Ring>, 64u * 4 / 18);
  EXPECT_EQ(Registry::kCapacityById[TestAlloc::type_id<Shape>()], 0u) << "abstract classes have no blocks";
  // Inherited fields first; the base of Ring is Circle, of Circle Shape.
  static_assert(std::is_same_v<Registry::DirectBase<Ring>, Circle>);
  static_assert(std::is_same_v<Registry::DirectBase<Circle>, Shape>);
  static_assert(std::is_same_v<Registry::DirectBase<Shape>, void>);
  static_assert(Registry::Info<Ring>::kNumInherited == 3);
  // Each array starts on a 64-byte boundary: Ring (capacity 14) arrays of
  // 56, 56, 56, 56 and 28 bytes.
  EXPECT_EQ(Registry::Info<Ring>::array_offset<0>(14), 0u);
  EXPECT_EQ(Registry::Info<Ring>::array_offset<3>(14), 192u);
  EXPECT_EQ(Registry::Info<Ring>::array_offset<4>(14), 256u);
  // The largest data segment: Small 256, Mid (7 slots) 64 + 64 + 128 + 128,
  // Big (4) 8 * 64, Circle (21) 3 * 128, Ring 5 * 64; the headers are kept
  // apart, and 512 is a multiple of the 128-byte block alignment.
  EXPECT_EQ(Handle::kBlockBytes, 512u);
  EXPECT_FALSE(TestAlloc::is_a<Shape>(nullptr));
}

// Addresses and values of fields, computed independently of the DSL.
struct ProbeFields {
  TestAlloc alloc;
  std::uint64_t* out;  // per object: 8 words
  DYNASOAR_HD void operator()(std::size_t i) const {
    std::uint64_t* o = out + 8 * i;
    Mid* m = new (alloc) Mid(static_cast<int>(i));
    Ring* r = new (alloc) Ring(static_cast<int>(i));
    Shape* s = r;  // a base pointer to a subclass object
    o[0] = reinterpret_cast<std::uint64_t>(m);
    o[1] = reinterpret_cast<std::uint64_t>(&m->weight);
    o[2] = reinterpret_cast<std::uint64_t>(&m->triple);
    o[3] = reinterpret_cast<std::uint64_t>(r);
    o[4] = reinterpret_cast<std::uint64_t>(&s->id);
    o[5] = reinterpret_cast<std::uint64_t>(&r->inner);
    const double w = m->weight;
    const Vec3 p = m->pos;
    o[6] = (w == static_cast<double>(i) * 0.5 && p.y == 2.0f * static_cast<float>(i) && m->triple[2] == static_cast<int>(i) + 2 &&
            m->tag == static_cast<char>(i % 100)) ? 1 : 0;
    s->scale(2.0f);
    o[7] = (s->area == 6.0f * static_cast<float>(i) && s->id == static_cast<int>(i) && r->radius == static_cast<float>(i) &&
            r->tag == static_cast<short>(-static_cast<int>(i)) && s->is_a<Circle>() && s->is_a<Ring>() &&
            !m->is_a<Shape>() && s->cast<Mid>() == nullptr) ? 1 : 0;
  }
};

TEST(SoaDsl, FieldAddressesAndValues) {
  Handle heap(Handle::kBlockBytes * 64);
  constexpr std::size_t n = 100;
  dynasoar::platform::Buffer<std::uint64_t> out(8 * n);
  dynasoar::platform::parallel_for(n, ProbeFields{heap.device(), out.data()});
  const std::vector<std::uint64_t> o = out.to_vector();
  namespace soa = dynasoar::soa;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t* r = &o[8 * i];
    ASSERT_NE(r[0], 0u);
    ASSERT_NE(r[3], 0u);
    const std::uint64_t mid_block = soa::pointer_block(r[0]);
    EXPECT_EQ(soa::pointer_type(r[0]), TestAlloc::type_id<Mid>());
    EXPECT_EQ(soa::pointer_capacity(r[0]), 7u);
    // From the block's first byte (the headers are kept apart). Mid,
    // capacity 7: tag at 0, weight at 64, pos at 128, triple at 256.
    EXPECT_EQ(r[1], mid_block + 64 + soa::pointer_slot(r[0]) * 8);
    EXPECT_EQ(r[2], mid_block + 256 + soa::pointer_slot(r[0]) * 12);
    // Ring, capacity 14, through a Shape*: id at 64; inner (Ring's own) at 192.
    const std::uint64_t ring_block = soa::pointer_block(r[3]);
    EXPECT_EQ(r[4], ring_block + 64 + soa::pointer_slot(r[3]) * 4);
    EXPECT_EQ(r[5], ring_block + 192 + soa::pointer_slot(r[3]) * 4);
    EXPECT_EQ(mid_block % dynasoar::soa::kBlockAlignment, 0u);
    EXPECT_EQ(ring_block % dynasoar::soa::kBlockAlignment, 0u);
    EXPECT_EQ(r[6], 1u) << "Mid fields of object " << i;
    EXPECT_EQ(r[7], 1u) << "Ring fields through Shape* of object " << i;
  }
  EXPECT_EQ(heap.count<Mid>(), n);
  EXPECT_EQ(heap.count<Shape>(), n);
  EXPECT_EQ(heap.count<Circle>(), n) << "Rings are Circles";
  EXPECT_EQ(heap.count<Ring>(), n);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
}

// snippet-begin: device-do
struct SumSmall {
  TestAlloc alloc;
  unsigned long long* sum;
  DYNASOAR_HD void operator()(std::size_t) const { alloc.device_do<Small, &Small::add_to>(sum); }
};
// snippet-end: device-do

TEST(SoaOps, ParallelNewDoCountDestroy) {
  Handle heap(Handle::bytes_for<Small>(20000) + Handle::kBlockBytes * 8);
  constexpr int n = 10000;
  heap.parallel_new<Small>(n);
  EXPECT_EQ(heap.count<Small>(), static_cast<std::uint64_t>(n));
  heap.parallel_do<Small, &Small::bump>(3);
  dynasoar::platform::Buffer<unsigned long long> sum(1);
  sum.zero();
  dynasoar::platform::parallel_for(1, SumSmall{heap.device(), sum.data()});
  unsigned long long s = 0;
  sum.copy_to_host(&s, 1);
  EXPECT_EQ(s, static_cast<unsigned long long>(n) * (n - 1) / 2 + 3ull * n) << "sum of i + 3 over all objects";

  // Objects created during a do-all are not visited by it.
  dynasoar::platform::Buffer<unsigned long long> visited(1);
  visited.zero();
  heap.parallel_do<Small, &Small::spawn>(heap.device(), visited.data());
  visited.copy_to_host(&s, 1);
  EXPECT_EQ(s, static_cast<unsigned long long>(n));
  EXPECT_EQ(heap.count<Small>(), 2ull * n);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");

  // Objects destroy themselves inside a do-all: values i + 3 for i < n, and n times -1.
  heap.parallel_do<&Small::destroy_if_odd>(heap.device());
  EXPECT_EQ(heap.count<Small>(), static_cast<std::uint64_t>(n / 2));
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
  const auto stats = heap.statistics<Small>();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].objects, static_cast<std::uint64_t>(n / 2));
  EXPECT_GE(stats[0].blocks, static_cast<std::uint64_t>(n / 2 / 64));
}

// The do-all kernel's numbering of its threads (DoAll::spread): a
// permutation of [0, threads) that keeps the 64 threads of a heap block of
// 64 slots consecutive and in one thread block, and gives the first heap
// blocks to different thread blocks, so that a do-all over few objects
// reaches every multiprocessor.
TEST(SoaKernels, DoAllSpreadsItsFirstHeapBlocksOverThreadBlocks) {
  using Kernel = dynasoar::soa::detail::DoAll<Small, &Small::bump, decltype(dynasoar::platform::pack_args(0)),
                                              0, 64>;
  constexpr std::size_t kBlock = dynasoar::soa::kDoAllBlockThreads;
  static_assert(Kernel::kSpreadUnit == 64, "a heap block of 64 slots is one unit");
  for (std::size_t thread_blocks : {std::size_t{1}, std::size_t{3}, std::size_t{132}}) {
    Kernel k{};
    k.threads = thread_blocks * kBlock;
    std::vector<char> seen(k.threads, 0);
    std::vector<std::size_t> block_of_heap_block(k.threads / 64, k.threads);
    for (std::size_t i = 0; i < k.threads; ++i) {
      const std::size_t t = k.spread(i);
      ASSERT_LT(t, k.threads);
      EXPECT_EQ(seen[t], 0) << "number " << t << " given twice";
      seen[t] = 1;
      if (i % 64 != 0) {
        EXPECT_EQ(t, k.spread(i - 1) + 1) << "a heap block's numbers are consecutive";
      }
      std::size_t& b = block_of_heap_block[t / 64];
      if (b == k.threads) b = i / kBlock;
      EXPECT_EQ(b, i / kBlock) << "heap block " << t / 64 << " is split over thread blocks";
    }
    // The first thread_blocks heap blocks lie in as many different thread blocks.
    std::vector<char> used(thread_blocks, 0);
    for (std::size_t h = 0; h < thread_blocks; ++h) used[block_of_heap_block[h]] = 1;
    EXPECT_EQ(std::count(used.begin(), used.end(), 1), static_cast<long>(thread_blocks));
  }
}

TEST(SoaOps, ParallelDoOverSubclasses) {
  Handle heap(Handle::kBlockBytes * 256);
  heap.parallel_new<Circle>(500);
  heap.parallel_new<Ring>(300);
  EXPECT_EQ(heap.count<Shape>(), 800u);
  heap.parallel_do<Shape, &Shape::scale>(0.0f);  // visits Circles and Rings
  heap.parallel_do<&Shape::scale>(1.0f);
  EXPECT_EQ(heap.count<Circle>(), 800u);
  EXPECT_EQ(heap.count<Ring>(), 300u);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
}

// snippet-begin: out-of-memory
TEST(SoaOps, OutOfMemoryIsReportedAndHarmless) {
  Handle heap(Handle::kBlockBytes * 10);  // 10 blocks: at most 40 Bigs
  EXPECT_THROW(heap.parallel_new<Big>(100), dynasoar::OutOfMemory);
  EXPECT_EQ(heap.count<Big>(), 40u) << "new fails only once every slot is used";
  EXPECT_FALSE(heap.out_of_memory()) << "check_errors clears the flag";
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
}
// snippet-end: out-of-memory

// One `new` per thread, as inside a user's kernel (parallel_new fills whole
// blocks instead).
struct NewSmallEach {
  TestAlloc alloc;
  DYNASOAR_HD void operator()(std::size_t i) const { new (alloc) Small(static_cast<int>(i)); }
};

// Warps that find no active block open one each, so blocks start partly
// filled; when the free blocks run out, the allocation must still find the
// remaining slots of the active blocks. On the GPU 2000 warps share 1000
// blocks here.
TEST(SoaOps, HeapSizedByObjectCountHoldsThatMany) {
  constexpr std::size_t n = 64 * 1000;
  auto heap = Handle::for_objects<Small>(n);
  EXPECT_EQ(heap.num_blocks(), 1000u + 4u) << "plus one block for each other concrete class";
  dynasoar::platform::parallel_for(n, NewSmallEach{heap.device()}, heap.stream());
  EXPECT_NO_THROW(heap.check_errors());
  EXPECT_EQ(heap.count<Small>(), n);
  EXPECT_LE(heap.statistics<Small>()[0].blocks, 1004u);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
}

// parallel_new packs its objects into whole blocks, object i in slot
// i % capacity of its block: the do-alls over them run full warps.
TEST(SoaOps, ParallelNewFillsWholeBlocks) {
  constexpr unsigned cap = TestAlloc::Registry::kCapacity<Small>;
  constexpr std::size_t n = cap * 100 + 10;
  Handle heap(Handle::bytes_for<Small>(2 * n) + Handle::kBlockBytes * 8);
  heap.parallel_new<Small>(n);
  auto stats = heap.statistics<Small>();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].objects, n);
  EXPECT_EQ(stats[0].blocks, (n + cap - 1) / cap) << "every block full but the last";
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "") << "the last block, partly filled, is active; full ones are not";
  dynasoar::platform::Buffer<unsigned long long> sum(1);
  sum.zero();
  heap.parallel_do<Small, &Small::add_to>(sum.data());
  EXPECT_EQ(sum.to_vector()[0], static_cast<unsigned long long>(n) * (n - 1) / 2) << "each i once";
  // A `new` finds the free slots of the last block.
  dynasoar::platform::parallel_for(cap - 10, NewSmallEach{heap.device()}, heap.stream());
  heap.check_errors();
  stats = heap.statistics<Small>();
  EXPECT_EQ(stats[0].objects, n + cap - 10);
  EXPECT_LE(stats[0].blocks, (n + cap - 1) / cap + 1);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
}

// parallel_new fails only where `new` would: its last n % capacity objects,
// and any whose whole block it cannot get, are made by `new`, which fills
// the free slots of the class's blocks. 10 blocks hold 40 Bigs (4 a block).
TEST(SoaOps, ParallelNewUsesFreeSlotsBeforeFailing) {
  constexpr unsigned cap = TestAlloc::Registry::kCapacity<Big>;
  static_assert(cap == 4, "the numbers below assume 4 Bigs a block");
  Handle heap(Handle::kBlockBytes * 10);
  for (int call = 0; call < 5; ++call) heap.parallel_new<Big>(6);  // 1 whole block and 2 by `new` each
  EXPECT_EQ(heap.count<Big>(), 30u);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
  EXPECT_NO_THROW(heap.parallel_new<Big>(10)) << "2 free blocks for 8, 2 free slots for the rest";
  EXPECT_EQ(heap.count<Big>(), 40u);
  EXPECT_THROW(heap.parallel_new<Big>(1), dynasoar::OutOfMemory);
  EXPECT_EQ(heap.count<Big>(), 40u);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");

  Handle small_calls(Handle::kBlockBytes * 10);
  for (int call = 0; call < 20; ++call) EXPECT_NO_THROW(small_calls.parallel_new<Big>(2)) << "call " << call;
  EXPECT_EQ(small_calls.count<Big>(), 40u);
  EXPECT_EQ(dynasoar::debug::check_consistency(small_calls), "");
}

TEST(SoaOps, RejectsBadHeapSizes) {
  EXPECT_THROW(Handle(Handle::kBlockBytes * 2), std::invalid_argument) << "5 concrete classes need 5 blocks";
}

}  // namespace
