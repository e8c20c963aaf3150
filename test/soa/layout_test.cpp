// The heap's two block layouts (allocator/soa/layout.h): SOA, one array per
// field (DynaSOAr), and AOS, whole objects (BitmapAlloc, paper Sec. 6).
// The AOS layout must keep everything of the SOA heap but the place of a
// field's value: the same capacities and block size (so the same blocks and
// bitmaps), every object's fields inside its own slot of `stride` bytes,
// naturally aligned and not overlapping, inherited fields at the same
// offset in every subclass, and a program's results the same on both.
// soa_test.cpp checks the SOA layout's own arithmetic.
#include <dynasoar/debug.h>
#include <dynasoar/dynasoar.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using dynasoar::Field;
using dynasoar::soa::Layout;
using ull = unsigned long long;

struct Vec3 {
  float x, y, z;
};

// The classes of soa_test.cpp, on a heap of layout L.
template <Layout L>
struct World {
  class Small;
  class Mid;
  class Big;
  class Shape;
  class Circle;
  class Ring;
  using Alloc = dynasoar::HeapAllocator<L, Small, Mid, Big, Shape, Circle, Ring>;
  using Handle = dynasoar::AllocatorHandle<Alloc>;
  using Registry = typename Alloc::Registry;

  class Small : public Alloc::Base {  // 4 bytes: 64 a block
   public:
    declare_field_types(Small, int)
    Field<Small, 0> value;
    DYNASOAR_HD explicit Small(int i) : value(i) {}
    DYNASOAR_HD void bump(int by) { value += by; }
    DYNASOAR_HD void destroy_if_odd(Alloc alloc) {
      if (value % 2 != 0) dynasoar::destroy(alloc, this);
    }
    DYNASOAR_HD void add_to(ull* sum) {
      dynasoar::platform::atomic_fetch_add(sum, static_cast<ull>(static_cast<int>(value)));
    }
  };

  // 33 bytes of fields; as a struct 40 (char, 7 bytes padding, double, Vec3, int[3]).
  class Mid : public Alloc::Base {
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
    DYNASOAR_HD void add_to(ull* sums) {
      const Vec3 p = pos;
      const ull v = static_cast<ull>(static_cast<unsigned char>(static_cast<char>(tag))) +
                    static_cast<ull>(static_cast<double>(weight) * 2.0) +
                    static_cast<ull>(p.x + p.y + p.z) + static_cast<ull>(triple[0] + triple[2]);
      dynasoar::platform::atomic_fetch_add(&sums[0], v);
    }
  };

  class Big : public Alloc::Base {  // 64 bytes: 4 a block
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
    DYNASOAR_HD explicit Big(int i)
        : a(i), g(-i), signature(static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull) {}
  };

  // Shape (abstract) <- Circle <- Ring.
  class Shape : public Alloc::Base {
   public:
    declare_abstract_field_types(Shape, float, int)
    Field<Shape, 0> area;
    Field<Shape, 1> id;
    DYNASOAR_HD void scale(float by) { area *= by; }
    DYNASOAR_HD void add_to(ull* sums) {
      dynasoar::platform::atomic_fetch_add(&sums[1], static_cast<ull>(static_cast<float>(area)));
      dynasoar::platform::atomic_fetch_add(&sums[2], static_cast<ull>(static_cast<int>(id)));
    }
  };

  class Circle : public Shape {
   public:
    declare_field_types(Circle, float)
    Field<Circle, 0> radius;
    DYNASOAR_HD explicit Circle(int i) : radius(static_cast<float>(i)) {
      this->area = 3.0f * static_cast<float>(i);
      this->id = i;
    }
  };

  class Ring : public Circle {
   public:
    declare_field_types(Ring, float, short)
    Field<Ring, 0> inner;
    Field<Ring, 1> tag;
    DYNASOAR_HD explicit Ring(int i)
        : Circle(i), inner(0.5f * static_cast<float>(i)), tag(static_cast<short>(-i)) {}
  };
};

using Soa = World<Layout::kSoa>;
using Aos = World<Layout::kAos>;

// --- the AOS layout's arithmetic --------------------------------------------------------

template <class C>
using AosInfo = typename Aos::Registry::template Info<C>;

TEST(SoaAosLayout, CapacitiesAndBlockSizeAreTheSoaHeaps) {
  using S = Soa::Registry;
  using A = Aos::Registry;
  static_assert(A::kLayout == Layout::kAos && S::kLayout == Layout::kSoa);
  EXPECT_EQ(A::kCapacity<Aos::Small>, S::kCapacity<Soa::Small>);
  EXPECT_EQ(A::kCapacity<Aos::Mid>, S::kCapacity<Soa::Mid>);
  EXPECT_EQ(A::kCapacity<Aos::Big>, S::kCapacity<Soa::Big>);
  EXPECT_EQ(A::kCapacity<Aos::Circle>, S::kCapacity<Soa::Circle>);
  EXPECT_EQ(A::kCapacity<Aos::Ring>, S::kCapacity<Soa::Ring>);
  EXPECT_TRUE(std::equal(std::begin(A::kCapacityById), std::end(A::kCapacityById),
                         std::begin(S::kCapacityById)));
  EXPECT_EQ(Aos::Handle::kBlockBytes, Soa::Handle::kBlockBytes);
  EXPECT_EQ(Aos::Handle::kBlockBytes, 512u);  // the headers are kept apart
  // A heap of the same bytes has the same blocks.
  Soa::Handle soa(Soa::Handle::kBlockBytes * 37 + 100);
  Aos::Handle aos(Soa::Handle::kBlockBytes * 37 + 100);
  EXPECT_EQ(aos.num_blocks(), soa.num_blocks());
  EXPECT_EQ(aos.num_blocks(), 37u);
}

TEST(SoaAosLayout, FieldsLieAtStructOffsets) {
  // Each field at the next multiple of its alignment; the stride is the end
  // rounded up to the largest alignment.
  static_assert(AosInfo<Aos::Small>::kStride == 4);
  static_assert(AosInfo<Aos::Mid>::kFieldOffset<0> == 0);
  static_assert(AosInfo<Aos::Mid>::kFieldOffset<1> == 8);
  static_assert(AosInfo<Aos::Mid>::kFieldOffset<2> == 16);
  static_assert(AosInfo<Aos::Mid>::kFieldOffset<3> == 28);
  static_assert(AosInfo<Aos::Mid>::kStride == 40);
  static_assert(AosInfo<Aos::Big>::kStride == 64);
  static_assert(AosInfo<Aos::Circle>::kStride == 12);
  static_assert(AosInfo<Aos::Ring>::kFieldOffset<4> == 16);
  static_assert(AosInfo<Aos::Ring>::kStride == 20);
  // Every class's objects fit the SOA heap's data segment of 512 bytes.
  EXPECT_LE(AosInfo<Aos::Mid>::data_bytes(Aos::Registry::kCapacity<Aos::Mid>), 512u);
  EXPECT_EQ(AosInfo<Aos::Mid>::data_bytes(7), 280u);
  EXPECT_EQ(AosInfo<Aos::Small>::data_bytes(64), 256u);
}

TEST(SoaAosLayout, InheritedFieldsKeepTheirOffsets) {
  // Shape's fields in Circle and Ring, Circle's in Ring.
  EXPECT_EQ(AosInfo<Aos::Circle>::kFieldOffset<0>, AosInfo<Aos::Shape>::kFieldOffset<0>);
  EXPECT_EQ(AosInfo<Aos::Circle>::kFieldOffset<1>, AosInfo<Aos::Shape>::kFieldOffset<1>);
  EXPECT_EQ(AosInfo<Aos::Ring>::kFieldOffset<0>, AosInfo<Aos::Shape>::kFieldOffset<0>);
  EXPECT_EQ(AosInfo<Aos::Ring>::kFieldOffset<1>, AosInfo<Aos::Shape>::kFieldOffset<1>);
  EXPECT_EQ(AosInfo<Aos::Ring>::kFieldOffset<2>, AosInfo<Aos::Circle>::kFieldOffset<2>);
  EXPECT_EQ(AosInfo<Aos::Ring>::kFieldOffset<2>, 8u);
  // The stride follows the runtime class, whatever the static class.
  constexpr unsigned circle = Aos::Alloc::type_id<Aos::Circle>();
  constexpr unsigned ring = Aos::Alloc::type_id<Aos::Ring>();
  EXPECT_EQ(AosInfo<Aos::Shape>::stride_of(circle), 12u);
  EXPECT_EQ(AosInfo<Aos::Shape>::stride_of(ring), 20u);
  EXPECT_EQ(AosInfo<Aos::Circle>::stride_of(ring), 20u);
  EXPECT_EQ(AosInfo<Aos::Ring>::stride_of(ring), 20u);
}

// Where stride padding outgrows the SOA arrays (char and double: 9 bytes of
// fields, a 16-byte stride), the AOS block grows and the capacity stays.
template <Layout L>
struct PaddedWorld {
  class Padded;
  using Alloc = dynasoar::HeapAllocator<L, Padded>;
  class Padded : public Alloc::Base {
   public:
    declare_field_types(Padded, char, double)
    Field<Padded, 0> c;
    Field<Padded, 1> d;
  };
};

TEST(SoaAosLayout, BlockGrowsOnlyWhereObjectsDoNotFit) {
  using PaddedAos = PaddedWorld<Layout::kAos>;
  using PaddedSoa = PaddedWorld<Layout::kSoa>;
  EXPECT_EQ(PaddedAos::Alloc::Registry::kCapacity<PaddedAos::Padded>, 64u);
  EXPECT_EQ(PaddedSoa::Alloc::Registry::kCapacity<PaddedSoa::Padded>, 64u);
  // SOA: 64 + 512 bytes of arrays, a block of 640 (a multiple of 128).
  EXPECT_EQ(PaddedSoa::Alloc::Handle::kBlockBytes, 640u);
  EXPECT_EQ(PaddedAos::Alloc::Handle::kBlockBytes, 64u * 16u);
}

// --- field addresses of live objects -----------------------------------------------------

// Per i: a Mid, a Ring and a Circle, each as its pointer and its fields'
// addresses (the Ring's and Circle's inherited ones through base pointers).
constexpr std::size_t kWords = 15;
template <class W>
struct ProbeAddresses {
  typename W::Alloc alloc;
  std::uint64_t* out;
  DYNASOAR_HD void operator()(std::size_t i) const {
    using Shape = typename W::Shape;
    using Circle = typename W::Circle;
    std::uint64_t* o = out + kWords * i;
    const auto at = [](const auto* p) { return reinterpret_cast<std::uint64_t>(p); };
    auto* m = new (alloc) typename W::Mid(static_cast<int>(i));
    auto* r = new (alloc) typename W::Ring(static_cast<int>(i));
    auto* c = new (alloc) Circle(static_cast<int>(i));
    Shape* rs = r;
    Circle* rc = r;
    Shape* cs = c;
    const std::uint64_t w[kWords] = {at(m),           at(&m->tag),   at(&m->weight), at(&m->pos),
                                     at(&m->triple),  at(r),         at(&rs->area),  at(&rs->id),
                                     at(&rc->radius), at(&r->inner), at(&r->tag),    at(c),
                                     at(&cs->area),   at(&cs->id),   at(&c->radius)};
    for (std::size_t k = 0; k < kWords; ++k) o[k] = w[k];
  }
};

struct FieldShape {
  std::uint64_t size, align;
};

// The fields at `a` of the object `p` lie in its slot, naturally aligned,
// in order and without overlap, at `offsets`; "" or the first violation.
std::string check_object(std::uint64_t p, const std::uint64_t* a,
                         const std::vector<FieldShape>& fields,
                         const std::vector<std::uint64_t>& offsets, std::uint64_t stride,
                         std::uint64_t block_bytes) {
  namespace soa = dynasoar::soa;
  const std::uint64_t slot = soa::pointer_slot(p);
  const std::uint64_t lo = soa::pointer_block(p) + slot * stride;
  const std::uint64_t hi = lo + stride;
  if (hi > soa::pointer_block(p) + block_bytes)
    return "slot " + std::to_string(slot) + " ends beyond the block";
  for (std::size_t k = 0; k < fields.size(); ++k) {
    const std::string f = "field " + std::to_string(k) + " of slot " + std::to_string(slot);
    if (a[k] < lo || a[k] + fields[k].size > hi) return f + " lies outside its slot";
    if (a[k] % fields[k].align != 0) return f + " is misaligned";
    if (a[k] - lo != offsets[k]) return f + " is at offset " + std::to_string(a[k] - lo);
    if (k > 0 && a[k - 1] + fields[k - 1].size > a[k]) return f + " overlaps the field before";
  }
  return {};
}

TEST(SoaAosLayout, FieldsOfAnObjectLieInItsSlot) {
  Aos::Handle heap(Aos::Handle::kBlockBytes * 64);
  constexpr std::size_t n = 100;
  dynasoar::platform::Buffer<std::uint64_t> out(kWords * n);
  dynasoar::platform::parallel_for(n, ProbeAddresses<Aos>{heap.device(), out.data()});
  const std::vector<std::uint64_t> o = out.to_vector();
  const std::vector<FieldShape> mid = {{1, 1}, {8, 8}, {12, 4}, {12, 4}};
  const std::vector<FieldShape> ring = {{4, 4}, {4, 4}, {4, 4}, {4, 4}, {2, 2}};
  const std::vector<FieldShape> circle = {{4, 4}, {4, 4}, {4, 4}};
  std::vector<std::uint64_t> slots_seen;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t* w = &o[kWords * i];
    ASSERT_NE(w[0] * w[5] * w[11], 0u) << "allocation " << i << " failed";
    EXPECT_EQ(check_object(w[0], w + 1, mid, {0, 8, 16, 28}, 40, Aos::Handle::kBlockBytes), "")
        << "Mid " << i;
    EXPECT_EQ(check_object(w[5], w + 6, ring, {0, 4, 8, 12, 16}, 20, Aos::Handle::kBlockBytes), "")
        << "Ring " << i << " (inherited fields through Shape* and Circle*)";
    EXPECT_EQ(check_object(w[11], w + 12, circle, {0, 4, 8}, 12, Aos::Handle::kBlockBytes), "")
        << "Circle " << i << " (through Shape*)";
    for (const std::size_t k : {std::size_t{0}, std::size_t{5}, std::size_t{11}})
      slots_seen.push_back(dynasoar::soa::pointer_block(w[k]) + dynasoar::soa::pointer_slot(w[k]));
  }
  std::sort(slots_seen.begin(), slots_seen.end());
  EXPECT_EQ(std::adjacent_find(slots_seen.begin(), slots_seen.end()), slots_seen.end())
      << "two objects in one slot";
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
}

// --- the same program on both layouts ----------------------------------------------------

template <class L>
class SoaLayouts : public ::testing::Test {
 public:
  using Classes = World<L::value>;
};
using BothLayouts = ::testing::Types<std::integral_constant<Layout, Layout::kSoa>,
                                     std::integral_constant<Layout, Layout::kAos>>;
struct LayoutNames {
  template <class L>
  static std::string GetName(int) {
    return L::value == Layout::kSoa ? "soa" : "aos";
  }
};
TYPED_TEST_SUITE(SoaLayouts, BothLayouts, LayoutNames);

// Values through the DSL: constructors, do-alls over a base class with
// subclasses of different strides, objects that destroy themselves; sums
// of every field read back.
template <class W>
std::vector<ull> run_program() {
  typename W::Handle heap(W::Handle::kBlockBytes * 400);
  heap.template parallel_new<typename W::Small>(5000);
  heap.template parallel_new<typename W::Mid>(700);
  heap.template parallel_new<typename W::Circle>(500);
  heap.template parallel_new<typename W::Ring>(300);
  heap.template parallel_new<typename W::Big>(90);
  heap.template parallel_do<typename W::Small, &W::Small::bump>(3);
  heap.template parallel_do<typename W::Small, &W::Small::destroy_if_odd>(heap.device());
  heap.template parallel_do<typename W::Shape, &W::Shape::scale>(2.0f);
  dynasoar::platform::Buffer<ull> sums(4);
  sums.zero();
  heap.template parallel_do<typename W::Small, &W::Small::add_to>(sums.data() + 3);
  heap.template parallel_do<typename W::Mid, &W::Mid::add_to>(sums.data());
  heap.template parallel_do<typename W::Shape, &W::Shape::add_to>(sums.data());
  std::vector<ull> r = sums.to_vector();
  r.push_back(heap.template count<typename W::Small>());
  r.push_back(heap.template count<typename W::Shape>());
  r.push_back(heap.template count<typename W::Big>());
  r.push_back(heap.allocated_blocks());
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
  return r;
}

TYPED_TEST(SoaLayouts, ProgramComputesTheKnownResult) {
  const std::vector<ull> r = run_program<typename TestFixture::Classes>();
  ASSERT_EQ(r.size(), 8u);
  ull mid = 0, area = 0, ids = 0, small = 0;
  for (int i = 0; i < 700; ++i)
    mid += static_cast<ull>(i % 100) + static_cast<ull>(i) + static_cast<ull>(6 * i) +
           static_cast<ull>(2 * i + 2);
  for (int i = 0; i < 500; ++i) area += static_cast<ull>(6 * i), ids += static_cast<ull>(i);
  for (int i = 0; i < 300; ++i) area += static_cast<ull>(6 * i), ids += static_cast<ull>(i);
  for (int i = 0; i < 5000; ++i)
    if ((i + 3) % 2 == 0) small += static_cast<ull>(i + 3);
  EXPECT_EQ(r[0], mid) << "Mid fields";
  EXPECT_EQ(r[1], area) << "Shape areas, scaled through the base class";
  EXPECT_EQ(r[2], ids) << "Shape ids";
  EXPECT_EQ(r[3], small) << "Small values after the destroys";
  EXPECT_EQ(r[4], 2500u);
  EXPECT_EQ(r[5], 800u);
  EXPECT_EQ(r[6], 90u);
}

TEST(SoaAosLayout, ProgramResultsAndBlocksEqualTheSoaHeaps) {
  EXPECT_EQ(run_program<Aos>(), run_program<Soa>()) << "sums, counts and blocks in use";
}

// Many `new`s and destroys of two classes of different strides at once:
// the survivors keep their values.
template <class W>
struct NewMany {
  typename W::Alloc alloc;
  DYNASOAR_HD void operator()(std::size_t i) const {
    new (alloc) typename W::Small(static_cast<int>(i));
    new (alloc) typename W::Big(static_cast<int>(i));
  }
};

TYPED_TEST(SoaLayouts, ConcurrentNewKeepsValues) {
  using W = typename TestFixture::Classes;
  constexpr std::size_t n = 4000;
  // Room for both classes' objects, and for the partly filled blocks that
  // concurrent warps leave on a GPU (one heap sized for the Big objects
  // alone ran out on the H100): this test is about values, not capacity.
  auto heap = W::Handle::template for_objects<typename W::Big>(4 * n + 64 * 256);
  dynasoar::platform::parallel_for(n, NewMany<W>{heap.device()}, heap.stream());
  heap.check_errors();
  heap.template parallel_do<typename W::Small, &W::Small::destroy_if_odd>(heap.device());
  dynasoar::platform::Buffer<ull> sum(1);
  sum.zero();
  heap.template parallel_do<typename W::Small, &W::Small::add_to>(sum.data());
  EXPECT_EQ(sum.to_vector()[0], ull{n / 2} * (n / 2 - 1)) << "0 + 2 + ... + (n - 2)";
  EXPECT_EQ(heap.template count<typename W::Small>(), n / 2);
  EXPECT_EQ(heap.template count<typename W::Big>(), n);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
}

}  // namespace
