// Checkpoints (move/checkpoint.h): a heap saved and loaded into a new heap
// has the same objects with the same fields, and every pointer leads to the
// same object as before (the graph of graph_model.h, on both block layouts
// and across them, into heaps of other sizes); every kind of bad input is
// refused with a message that names it and leaves the heap as it was;
// object tables come back; a run resumed from a checkpoint computes what
// the run without one computes; and the file the host build wrote, under
// move/data/, loads in every build and is what every build writes.
#include <dynasoar/debug.h>
#include <dynasoar/dynasoar.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "move/graph_census.h"
#include "support/temp_dir.h"

#ifndef DYNASOAR_TEST_DATA_DIR
#error \
    "move_test needs DYNASOAR_TEST_DATA_DIR, the folder of its checkpoint file (test/CMakeLists.txt)"
#endif

// --- small models: one class, in versions that differ -----------------------------------

namespace walk_v1 {
class Walker;
using Alloc = dynasoar::SoaAllocator<Walker>;
class Walker : public Alloc::Base {
 public:
  declare_field_types(Walker, float, int, Walker*)
  Field<Walker, 0> x;
  Field<Walker, 1> id;
  Field<Walker, 2> next;  // the last field of the last class: its column ends the data
  DYNASOAR_HD Walker(int i, int first)
      : x(static_cast<float>(i + first) * 0.5f), id(i + first), next(nullptr) {}
};
}  // namespace walk_v1

namespace walk_v2 {  // Walker's first field is a double
class Walker;
using Alloc = dynasoar::SoaAllocator<Walker>;
class Walker : public Alloc::Base {
 public:
  declare_field_types(Walker, double, int, Walker*)
  Field<Walker, 0> x;
  Field<Walker, 1> id;
  Field<Walker, 2> next;
  DYNASOAR_HD explicit Walker(int i) : x(i), id(i), next(nullptr) {}
};
}  // namespace walk_v2

namespace walk_v3 {  // the class is named Runner
class Runner;
using Alloc = dynasoar::SoaAllocator<Runner>;
class Runner : public Alloc::Base {
 public:
  declare_field_types(Runner, float, int, Runner*)
  Field<Runner, 0> x;
  Field<Runner, 1> id;
  Field<Runner, 2> next;
  DYNASOAR_HD explicit Runner(int i) : x(0.0f), id(i), next(nullptr) {}
};
}  // namespace walk_v3

namespace walk_v4 {  // a second class
class Walker;
class Extra;
using Alloc = dynasoar::SoaAllocator<Walker, Extra>;
class Walker : public Alloc::Base {
 public:
  declare_field_types(Walker, float, int, Walker*)
  Field<Walker, 0> x;
  Field<Walker, 1> id;
  Field<Walker, 2> next;
  DYNASOAR_HD explicit Walker(int i) : x(0.0f), id(i), next(nullptr) {}
};
class Extra : public Alloc::Base {
 public:
  declare_field_types(Extra, int)
  Field<Extra, 0> n;
  DYNASOAR_HD explicit Extra(int i) : n(i) {}
};
}  // namespace walk_v4

// --- the model of the resume test: walkers with random state on cells -------------------

namespace drift {
class Cell;
class Walker;
using Alloc = dynasoar::SoaAllocator<Cell, Walker>;
using CellIndex = dynasoar::ObjectIndex<Alloc, Cell>;
inline constexpr int kCells = 256;

struct World {
  CellIndex cells;
  int step;
  Alloc alloc;
};

class Cell : public Alloc::Base {
 public:
  declare_field_types(Cell, std::uint32_t, std::uint32_t)
  Field<Cell, 0> id;
  Field<Cell, 1> visits;
  DYNASOAR_HD explicit Cell(int i) : id(static_cast<std::uint32_t>(i)), visits(0u) {}
  DYNASOAR_HD void add_checksum(unsigned long long* sum) {
    dynasoar::platform::atomic_fetch_add(
        sum, static_cast<unsigned long long>(
                 dynasoar::platform::mix64(std::uint64_t{id} * 977u + visits)));
  }
};

class Walker : public Alloc::Base {
 public:
  declare_field_types(Walker, std::uint64_t, Cell*, int)
  Field<Walker, 0> state;  // its random numbers: the next is mix64(state + step)
  Field<Walker, 1> cell;
  Field<Walker, 2> age;
  DYNASOAR_HD Walker(int i, std::uint64_t seed, CellIndex cells)
      : state(dynasoar::platform::mix64(seed + static_cast<std::uint64_t>(i))),
        cell(nullptr),
        age(0) {
    cell = cells[static_cast<std::uint64_t>(state) % kCells];
  }
  DYNASOAR_HD Walker(std::uint64_t s, Cell* c) : state(s), cell(c), age(0) {}

  /// Moves to a random cell; now and then has a child, and dies when old.
  DYNASOAR_HD void step(World w) {
    const std::uint64_t s = dynasoar::platform::mix64(state + static_cast<std::uint64_t>(w.step));
    state = s;
    Cell* c = w.cells[s % kCells];
    cell = c;
    dynasoar::platform::atomic_fetch_add(&c->visits, 1u);
    age += 1;
    if ((s >> 59) == 0)
      new (w.alloc) Walker(dynasoar::platform::mix64(s ^ 0x9e3779b97f4a7c15ull), c);
    if (age > 30 && ((s >> 40) & 7u) == 0) dynasoar::destroy(w.alloc, this);
  }
  DYNASOAR_HD void add_checksum(unsigned long long* sum) {
    const Cell* c = cell;
    dynasoar::platform::atomic_fetch_add(
        sum, static_cast<unsigned long long>(dynasoar::platform::mix64(
                 static_cast<std::uint64_t>(state) ^ (std::uint64_t{c->id} << 32) ^
                 static_cast<std::uint64_t>(static_cast<int>(age)))));
  }
};
}  // namespace drift

// --- the model of the committed file: an abstract class, tables with holes, every pointer kind ---

namespace fixture {
class Thing;
class Site;
class Hub;
using Alloc = dynasoar::SoaAllocator<Thing, Site, Hub>;
using SiteIndex = dynasoar::ObjectIndex<Alloc, Site>;
inline constexpr int kSites = 100;

/// Sites 9, 19, ..., 99 are destroyed before the save; nothing points to them.
DYNASOAR_HD inline bool culled(int i) { return i % 10 == 9; }
DYNASOAR_HD inline int next_of(int i) { return (i * 7 + 3) % kSites; }

class Thing : public Alloc::Base {
 public:
  declare_abstract_field_types(Thing, std::uint32_t)
  Field<Thing, 0> tag;
  DYNASOAR_HD explicit Thing(std::uint32_t t) : tag(t) {}
};

class Site : public Thing {
 public:
  declare_field_types(Site, int, float, Site*, Hub*)
  Field<Site, 0> id;
  Field<Site, 1> weight;
  Field<Site, 2> next;  // a pointer to its own class
  Field<Site, 3> hub;   // to another class
  DYNASOAR_HD explicit Site(int i)
      : Thing(static_cast<std::uint32_t>(i) + 1000u),
        id(i),
        weight(static_cast<float>(i) * 0.25f),
        next(nullptr),
        hub(nullptr) {}
  DYNASOAR_HD void link(SiteIndex sites, Hub* h) {
    next = culled(next_of(id)) ? nullptr : sites[static_cast<std::size_t>(next_of(id))];
    hub = h;
  }
  DYNASOAR_HD void cull(Alloc alloc) {
    if (culled(id)) dynasoar::destroy(alloc, this);
  }
};

class Hub : public Thing {
 public:
  declare_field_types(Hub, std::uint64_t, Site*, std::array<Site*, 2>, Thing*)
  Field<Hub, 0> code;
  Field<Hub, 1> first;
  Field<Hub, 2> pair;  // a std::array of pointers
  Field<Hub, 3> any;   // a pointer to an abstract class
  DYNASOAR_HD explicit Hub(int)
      : Thing(7u), code(0x0123456789abcdefull), first(nullptr), any(nullptr) {
    for (std::size_t k = 0; k < 2; ++k) pair[k] = nullptr;
  }
  DYNASOAR_HD void publish(Hub** out) { *out = this; }
  DYNASOAR_HD void link(SiteIndex sites) {
    first = sites[1];
    pair[0] = sites[2];
    pair[1] = sites[3];
    any = sites[4];
  }
};
}  // namespace fixture

namespace {

using namespace move_test;
using dynasoar::move::CheckpointError;
using dynasoar::platform::Buffer;

/// Runs f and expects a CheckpointError whose message has `part`.
template <class F>
void expect_error(F&& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one that says \"" << part << "\"";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

/// A heap has no object and its bitmaps and blocks agree.
template <class H>
void expect_empty(H& heap) {
  EXPECT_EQ(heap.allocated_blocks(), 0u);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
}

// --- the graph, on both layouts -----------------------------------------------------------------

template <class Layout>
class CheckpointGraphTest : public GraphTest<Layout> {};
TYPED_TEST_SUITE(CheckpointGraphTest, Layouts, LayoutNames);

/// Two censuses of the same objects.
void expect_same(const Summary& a, const Summary& b) {
  EXPECT_EQ(b.bad_pointers, 0u);
  EXPECT_EQ(b.bad_values, 0u);
  EXPECT_EQ(b.objects, a.objects);
  EXPECT_EQ(b.signature, a.signature);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < a.seen.size(); ++i) differ += a.seen[i] != b.seen[i];
  EXPECT_EQ(differ, 0u);
}

TYPED_TEST(CheckpointGraphTest, RoundTripIntoHeapsOfOtherSizes) {
  using Mo = typename TestFixture::M;
  using Heap = typename TestFixture::Handle;
  Heap heap(std::uint64_t{64} << 20);
  TestFixture::build(heap);
  TestFixture::fragment(heap);
  const Summary before = TestFixture::census(heap);
  ASSERT_EQ(before.bad_pointers, 0u);
  ASSERT_GT(before.objects, 1000u);

  std::stringstream file;
  heap.save_checkpoint(file, std::string("step 7\0seed", 11));
  for (const std::uint64_t mib : {std::uint64_t{3}, std::uint64_t{96}}) {
    Heap other(mib << 20);
    std::istringstream in(file.str());
    EXPECT_EQ(other.load_checkpoint(in), std::string("step 7\0seed", 11));
    EXPECT_EQ(dynasoar::debug::check_consistency(other), "");
    expect_same(before, TestFixture::census(other));
    EXPECT_EQ(other.template count<typename Mo::Node>(), heap.template count<typename Mo::Node>());
    EXPECT_EQ(other.template count<typename Mo::Tag>(), heap.template count<typename Mo::Tag>());
    // Each class's objects lie in whole blocks, in file order: fewer blocks than before.
    EXPECT_LT(TestFixture::blocks_of(other), TestFixture::blocks_of(heap));

    // Saved again, the loaded heap gives the same bytes: the file is its order.
    std::stringstream again;
    other.save_checkpoint(again, std::string("step 7\0seed", 11));
    EXPECT_EQ(again.str(), file.str());
  }

  // The loaded heap goes on: new objects beside the loaded ones, destroys, compaction.
  Heap other(std::uint64_t{64} << 20);
  file.seekg(0);
  other.load_checkpoint(file);
  TestFixture::build(other);
  TestFixture::fragment(other);
  other.template parallel_defrag<typename Mo::Spring>();
  EXPECT_EQ(dynasoar::debug::check_consistency(other), "");
  const Summary later = TestFixture::census(other);
  EXPECT_EQ(later.bad_pointers, 0u);
  EXPECT_EQ(later.bad_values, 0u);
}

TEST(CheckpointLayouts, FilesLoadIntoTheOtherLayout) {
  using Soa = GraphTest<SoaTag>;
  using Aos = GraphTest<AosTag>;
  Soa::Handle soa(std::uint64_t{64} << 20);
  Soa::build(soa);
  Soa::fragment(soa);
  const Summary before = Soa::census(soa);
  std::stringstream file;
  soa.save_checkpoint(file);
  EXPECT_EQ(dynasoar::move::read_checkpoint_info(file).backend, "dynasoar");

  // The class lists are the same (names without their namespaces), the format has no layout in it.
  Aos::Handle aos(std::uint64_t{32} << 20);
  file.seekg(0);
  aos.load_checkpoint(file);
  EXPECT_EQ(dynasoar::debug::check_consistency(aos), "");
  expect_same(before, Aos::census(aos));

  std::stringstream back;
  aos.save_checkpoint(back);
  EXPECT_EQ(dynasoar::move::read_checkpoint_info(back).backend, "bitmap_alloc");
  Soa::Handle soa_again(std::uint64_t{64} << 20);
  back.seekg(0);
  soa_again.load_checkpoint(back);
  expect_same(before, Soa::census(soa_again));
}

// --- bad input: a message that names it, and the heap unchanged -------------------------------

class CheckpointErrors : public ::testing::Test {
 protected:
  using G = GraphTest<SoaTag>;
  void SetUp() override {
    G::Handle heap(std::uint64_t{32} << 20);
    G::build(heap);
    G::fragment(heap);
    census_ = G::census(heap);
    std::ostringstream out;
    heap.save_checkpoint(out, "user bytes");
    bytes_ = out.str();
  }
  /// Loads `bytes` into `heap` from a stream.
  template <class H>
  static std::string load(H& heap, const std::string& bytes) {
    std::istringstream in(bytes);
    return heap.load_checkpoint(in);
  }
  /// The heap is empty, and the whole file still loads into it.
  void expect_unchanged_and_usable(G::Handle& heap) {
    expect_empty(heap);
    EXPECT_EQ(load(heap, bytes_), "user bytes");
    expect_same(census_, G::census(heap));
  }
  Summary census_;
  std::string bytes_;
};

TEST_F(CheckpointErrors, TruncatedFile) {
  const std::size_t n = bytes_.size();
  for (const std::size_t cut :
       {std::size_t{0}, std::size_t{5}, std::size_t{30}, n / 3, n / 2, n - 9, n - 1}) {
    SCOPED_TRACE("cut at " + std::to_string(cut) + " of " + std::to_string(n));
    G::Handle heap(std::uint64_t{32} << 20);
    expect_error([&] { load(heap, bytes_.substr(0, cut)); }, "it was cut short");
    expect_unchanged_and_usable(heap);
  }
}

TEST_F(CheckpointErrors, WrongMagic) {
  G::Handle heap(std::uint64_t{32} << 20);
  std::string bad = bytes_;
  bad[1] = 'X';
  expect_error([&] { load(heap, bad); }, "wrong magic number; this is no dynasoar checkpoint");
  expect_error([&] { load(heap, "P3\n# a picture\n"); }, "wrong magic number");
  expect_unchanged_and_usable(heap);
}

TEST_F(CheckpointErrors, AnotherVersion) {
  G::Handle heap(std::uint64_t{32} << 20);
  std::string bad = bytes_;
  const std::uint32_t version = 2;
  std::memcpy(bad.data() + 8, &version, sizeof version);
  expect_error([&] { load(heap, bad); }, "format version 2; this program reads version 1 only");
  expect_unchanged_and_usable(heap);
}

TEST_F(CheckpointErrors, AnotherProgramsClasses) {
  G::Handle heap(std::uint64_t{32} << 20);
  // The graph's file into programs of other classes, and theirs into the graph's.
  dynasoar::AllocatorHandle<walk_v1::Alloc> walkers(std::uint64_t{4} << 20);
  expect_error(
      [&] { load(walkers, bytes_); },
      "the file's classes are NodeBase, Node, Anchor, Spring, Tag; this program's are Walker");
  expect_empty(walkers);

  walkers.parallel_new<walk_v1::Walker>(100, 0);
  std::ostringstream out;
  walkers.save_checkpoint(out);
  const std::string walker_file = out.str();
  expect_error([&] { load(heap, walker_file); },
               "a checkpoint loads only into a program with the same classes");

  dynasoar::AllocatorHandle<walk_v2::Alloc> v2(std::uint64_t{4} << 20);
  expect_error(
      [&] { load(v2, walker_file); },
      "field 0 of Walker is float (4 bytes) in the file, double (8 bytes) in this program");
  expect_empty(v2);
  dynasoar::AllocatorHandle<walk_v3::Alloc> v3(std::uint64_t{4} << 20);
  expect_error([&] { load(v3, walker_file); },
               "class 0 is Walker in the file, Runner in this program");
  expect_empty(v3);
  dynasoar::AllocatorHandle<walk_v4::Alloc> v4(std::uint64_t{4} << 20);
  expect_error([&] { load(v4, walker_file); },
               "the file's classes are Walker; this program's are Walker, Extra");
  expect_empty(v4);
  expect_unchanged_and_usable(heap);
}

TEST_F(CheckpointErrors, HeapTooSmall) {
  // One block for each class: room for a few objects only.
  G::Handle heap(G::Handle::kConcreteClasses * G::Handle::kBlockBytes);
  expect_error([&] { load(heap, bytes_); }, "this heap has 4 (");
  expect_error([&] { load(heap, bytes_); }, "Give the heap at least");
  expect_empty(heap);
}

TEST_F(CheckpointErrors, HeapNotEmpty) {
  G::Handle heap(std::uint64_t{32} << 20);
  G::build(heap);
  const Summary before = G::census(heap);
  expect_error([&] { load(heap, bytes_); }, "the heap is not empty");
  expect_same(before, G::census(heap));
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
}

/// The ring of walkers: walker i's next is walker i + 1 (mod n), or null
/// where that one is `culled`.
struct LinkRing {
  dynasoar::ObjectIndex<walk_v1::Alloc, walk_v1::Walker> walkers;
  int culled_every;  // walkers i with i % culled_every == culled_every - 1 are culled (0: none)
  DYNASOAR_HD bool culled(std::size_t i) const {
    return culled_every != 0 && static_cast<int>(i) % culled_every == culled_every - 1;
  }
  DYNASOAR_HD void operator()(std::size_t i) const {
    const std::size_t j = (i + 1) % walkers.size();
    walkers[i]->next = culled(j) ? nullptr : walkers[j];
  }
};

struct Cull {
  LinkRing ring;
  walk_v1::Alloc alloc;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (ring.culled(i)) dynasoar::destroy(alloc, ring.walkers[i]);
  }
};

TEST_F(CheckpointErrors, ReferenceToNoObject) {
  using Handle = dynasoar::AllocatorHandle<walk_v1::Alloc>;
  Handle walkers(std::uint64_t{4} << 20);
  const auto table = walkers.parallel_new_indexed<walk_v1::Walker>(10, 0);
  dynasoar::platform::parallel_for(10, LinkRing{table.index(), 0});
  std::ostringstream out;
  walkers.save_checkpoint(out);
  const std::string good = out.str();
  // The file ends with the column of Walker::next and the end marker. The
  // table's group has 64 positions (a block's slots), its last 54 holes.
  std::istringstream header(good);
  const std::uint64_t positions = dynasoar::move::read_checkpoint_info(header).census[0].positions;
  EXPECT_EQ(positions, walk_v1::Alloc::Registry::kCapacityById[0]);
  const std::size_t first_reference = good.size() - 8 - positions * 8;
  std::uint64_t reference = 0;
  std::memcpy(&reference, good.data() + first_reference, 8);
  EXPECT_EQ(reference, 1u);  // class 0, position 1: walker 0's next is walker 1
  for (const std::uint64_t bad_reference : {std::uint64_t{99}, (std::uint64_t{5} << 56) | 1u}) {
    std::string bad = good;
    std::memcpy(bad.data() + first_reference, &bad_reference, 8);
    Handle other(std::uint64_t{4} << 20);
    expect_error([&] { load(other, bad); },
                 "field 2 (Walker*) of an object of Walker holds the reference " +
                     dynasoar::move::detail::hex(bad_reference) +
                     ", which names no object of the file");
    expect_empty(other);
    EXPECT_EQ(load(other, good), "");
  }
}

TEST_F(CheckpointErrors, SaveOfAPointerToADestroyedObject) {
  dynasoar::AllocatorHandle<walk_v1::Alloc> walkers(std::uint64_t{4} << 20);
  const auto table = walkers.parallel_new_indexed<walk_v1::Walker>(10, 0);
  dynasoar::platform::parallel_for(10, LinkRing{table.index(), 0});
  // Walker 4 goes, and walker 3 still points to it.
  dynasoar::platform::parallel_for(10, Cull{LinkRing{table.index(), 5}, walkers.device()});
  walkers.check_errors();
  std::ostringstream out;
  expect_error([&] { walkers.save_checkpoint(out); },
               "field 2 (Walker*) of an object of Walker holds 0x");
  expect_error([&] { walkers.save_checkpoint(out); }, "which is no live object of this heap");
  EXPECT_EQ(out.str(), "");  // nothing was written
  // A file: nothing written either, not even a partial file.
  const dynasoar::test::TempDir dir("checkpoint_dangling");
  expect_error([&] { walkers.save_checkpoint(dir / "walkers.ckpt"); }, "no live object");
  EXPECT_FALSE(std::filesystem::exists(dir / "walkers.ckpt"));
  EXPECT_FALSE(std::filesystem::exists(dir / "walkers.ckpt.part"));
}

TEST(CheckpointFiles, MissingAndUnwritableFiles) {
  dynasoar::AllocatorHandle<walk_v1::Alloc> walkers(std::uint64_t{4} << 20);
  const dynasoar::test::TempDir dir("checkpoint_files");
  expect_error([&] { walkers.load_checkpoint(dir / "none.ckpt"); }, "cannot read");
  expect_error([&] { walkers.save_checkpoint(dir / "no_such_folder" / "w.ckpt"); }, "cannot write");
  // A save replaces the file only when complete; the second save replaces the first.
  walkers.parallel_new<walk_v1::Walker>(3, 0);
  walkers.save_checkpoint(dir / "w.ckpt", "one");
  walkers.parallel_new<walk_v1::Walker>(3, 10);
  walkers.save_checkpoint(dir / "w.ckpt", "two");
  dynasoar::AllocatorHandle<walk_v1::Alloc> other(std::uint64_t{4} << 20);
  EXPECT_EQ(other.load_checkpoint(dir / "w.ckpt"), "two");
  EXPECT_EQ(other.count<walk_v1::Walker>(), 6u);
}

// --- object tables ------------------------------------------------------------------------------

/// ids[i] = the id of table entry i and of its next (-1 for null), for entries not culled.
struct ReadRing {
  LinkRing ring;
  int* ids;
  int* next_ids;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (ring.culled(i)) return;
    const walk_v1::Walker* w = ring.walkers[i];
    ids[i] = w->id;
    const walk_v1::Walker* n = w->next;
    next_ids[i] = n == nullptr ? -1 : static_cast<int>(n->id);
  }
};

/// Reads the ring of table `t` and checks entry i against walker `first + i`.
template <class Table>
void expect_ring(const Table& t, int culled_every, int first) {
  const std::size_t n = t.size();
  Buffer<int> ids(n), next_ids(n);
  const LinkRing ring{t.index(), culled_every};
  dynasoar::platform::parallel_for(n, ReadRing{ring, ids.data(), next_ids.data()});
  dynasoar::platform::synchronize();
  const std::vector<int> id = ids.to_vector(), next = next_ids.to_vector();
  for (std::size_t i = 0; i < n; ++i) {
    if (ring.culled(i)) continue;
    EXPECT_EQ(id[i], first + static_cast<int>(i)) << "entry " << i;
    const std::size_t j = (i + 1) % n;
    EXPECT_EQ(next[i], ring.culled(j) ? -1 : first + static_cast<int>(j)) << "entry " << i;
  }
}

TEST(CheckpointTables, TablesComeBackWithTheirHoles) {
  using Handle = dynasoar::AllocatorHandle<walk_v1::Alloc>;
  Handle heap(std::uint64_t{4} << 20);
  // Walkers made one by one first, so that the tables' blocks are not the heap's first.
  heap.parallel_new<walk_v1::Walker>(70, 5000);
  const auto a = heap.parallel_new_indexed<walk_v1::Walker>(150, 0);
  const auto b = heap.parallel_new_indexed<walk_v1::Walker>(10, 1000);
  dynasoar::platform::parallel_for(150, LinkRing{a.index(), 7});
  dynasoar::platform::parallel_for(150, Cull{LinkRing{a.index(), 7}, heap.device()});
  dynasoar::platform::parallel_for(10, LinkRing{b.index(), 0});
  heap.check_errors();
  expect_ring(a, 7, 0);
  std::stringstream file;
  heap.save_checkpoint(file);
  const dynasoar::move::CheckpointInfo info = dynasoar::move::read_checkpoint_info(file);
  ASSERT_EQ(info.census.size(), 1u);
  EXPECT_EQ(info.census[0].tables, (std::vector<std::uint64_t>{150, 10}));
  EXPECT_EQ(info.census[0].live, 70u + 150u - 21u + 10u);

  Handle other(std::uint64_t{2} << 20);
  file.seekg(0);
  other.load_checkpoint(file);
  EXPECT_EQ(dynasoar::debug::check_consistency(other), "");
  EXPECT_EQ(other.count<walk_v1::Walker>(), 70u + 150u - 21u + 10u);
  const auto a2 = other.restored_table<walk_v1::Walker>(0);
  const auto b2 = other.restored_table<walk_v1::Walker>(1);
  EXPECT_EQ(a2.size(), 150u);
  EXPECT_EQ(b2.size(), 10u);
  EXPECT_TRUE(a2.index().consecutive());
  expect_ring(a2, 7, 0);
  expect_ring(b2, 0, 1000);
  try {
    other.restored_table<walk_v1::Walker>(2);
    ADD_FAILURE() << "no exception";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("restored_table: Walker has 2 object tables, not 3"),
              std::string::npos)
        << e.what();
  }
  // The tables hold pointers: the loaded class does not move.
  EXPECT_THROW(other.parallel_defrag<walk_v1::Walker>(), std::logic_error);
  // The heap's own tables are there too, after those it loaded.
  const auto c = other.parallel_new_indexed<walk_v1::Walker>(5, 2000);
  dynasoar::platform::parallel_for(5, LinkRing{c.index(), 0});
  expect_ring(other.restored_table<walk_v1::Walker>(2), 0, 2000);
}

// --- resume: a run saved half way and loaded goes on as the run without ------------------------

template <class H>
void drift_steps(H& heap, const drift::CellIndex& cells, int first, int last) {
  for (int s = first; s <= last; ++s)
    heap.template parallel_do<drift::Walker, &drift::Walker::step>(
        drift::World{cells, s, heap.device()});
}

template <class H>
unsigned long long drift_checksum(H& heap) {
  Buffer<unsigned long long> sum(1);
  sum.zero();
  heap.template parallel_do<drift::Walker, &drift::Walker::add_checksum>(sum.data());
  heap.template parallel_do<drift::Cell, &drift::Cell::add_checksum>(sum.data());
  return sum.to_vector()[0] + heap.template count<drift::Walker>();
}

TEST(CheckpointResume, HalfWayAndLoadedComputesWhatTheStraightRunDoes) {
  using Handle = dynasoar::AllocatorHandle<drift::Alloc>;
  constexpr std::uint64_t kSeed = 1234;
  constexpr int kWalkers = 3000;
  const auto start = [&](Handle& heap) {
    auto cells = heap.parallel_new_indexed<drift::Cell>(drift::kCells);
    heap.parallel_new<drift::Walker>(kWalkers, kSeed, cells.index());
    return cells;
  };
  Handle straight(std::uint64_t{8} << 20);
  const auto cells = start(straight);
  drift_steps(straight, cells.index(), 1, 100);
  const unsigned long long expected = drift_checksum(straight);
  EXPECT_NE(straight.count<drift::Walker>(),
            static_cast<std::uint64_t>(kWalkers));  // births and deaths

  const dynasoar::test::TempDir dir("checkpoint_resume");
  {
    Handle first(std::uint64_t{8} << 20);
    const auto first_cells = start(first);
    drift_steps(first, first_cells.index(), 1, 50);
    // snippet-begin: save
    const int step = 50;  // the program's own state goes beside the objects, as bytes
    std::string user(sizeof step, '\0');
    std::memcpy(user.data(), &step, sizeof step);
    first.save_checkpoint(dir / "drift.ckpt", user);  // every live object of every class
    // snippet-end: save
  }
  // snippet-begin: load
  Handle second(std::uint64_t{12} << 20);  // a new heap, of any size that holds the objects
  const std::string user = second.load_checkpoint(dir / "drift.ckpt");
  int step = 0;
  std::memcpy(&step, user.data(), sizeof step);
  // The table of parallel_new_indexed, entry i at the cell that was entry i:
  const auto loaded_cells = second.restored_table<drift::Cell>();
  drift_steps(second, loaded_cells.index(), step + 1, 100);
  // snippet-end: load
  ASSERT_EQ(user.size(), sizeof step);
  ASSERT_EQ(step, 50);
  EXPECT_EQ(drift_checksum(second), expected);
  EXPECT_EQ(second.count<drift::Walker>(), straight.count<drift::Walker>());
}

// --- the file the host build wrote --------------------------------------------------------------

const std::filesystem::path kFixtureFile =
    std::filesystem::path(DYNASOAR_TEST_DATA_DIR) / "fixture-v1.ckpt";
const std::string kFixtureUser =
    "fixture of test/move/checkpoint_test.cpp, written by the host build";

/// The fixture's objects in a new heap: 100 sites in a table, 10 of them
/// destroyed, and a hub.
template <class H>
void build_fixture(H& heap) {
  const auto sites = heap.template parallel_new_indexed<fixture::Site>(fixture::kSites);
  heap.template parallel_new<fixture::Hub>(1);
  Buffer<fixture::Hub*> hub(1);
  heap.template parallel_do<fixture::Hub, &fixture::Hub::publish>(hub.data());
  heap.template parallel_do<fixture::Hub, &fixture::Hub::link>(sites.index());
  heap.template parallel_do<fixture::Site, &fixture::Site::link>(sites.index(), hub.to_vector()[0]);
  heap.template parallel_do<fixture::Site, &fixture::Site::cull>(heap.device());
}

/// What Check found, per site of the table and for the hub.
struct FixtureOut {
  int sites[fixture::kSites][4];  // id, next's id (-1: null), tag, weight * 4
  int hub_ok;
};

/// Reads every live site through the table and the hub through the sites.
struct Check {
  fixture::SiteIndex sites;
  FixtureOut* out;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (fixture::culled(static_cast<int>(i))) return;
    const fixture::Site* s = sites[i];
    const fixture::Site* n = s->next;
    out->sites[i][0] = s->id;
    out->sites[i][1] = n == nullptr ? -1 : static_cast<int>(n->id);
    out->sites[i][2] = static_cast<int>(static_cast<std::uint32_t>(s->tag));
    out->sites[i][3] = static_cast<int>(static_cast<float>(s->weight) * 4.0f);
    if (i == 0) {
      const fixture::Hub* h = s->hub;
      const std::array<fixture::Site*, 2> pair = h->pair;
      out->hub_ok = h->code == 0x0123456789abcdefull && h->tag == 7u && h->first == sites[1] &&
                    pair[0] == sites[2] && pair[1] == sites[3] &&
                    static_cast<const void*>(h->any) == sites[4];
    }
  }
};

std::string read_fixture() {
  std::ifstream in(kFixtureFile, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

template <class Alloc>
void expect_fixture_loads() {
  dynasoar::AllocatorHandle<Alloc> heap(std::uint64_t{1} << 20);
  EXPECT_EQ(heap.load_checkpoint(kFixtureFile), kFixtureUser);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
  EXPECT_EQ(heap.template count<fixture::Site>(), 90u);
  EXPECT_EQ(heap.template count<fixture::Hub>(), 1u);
  const auto sites = heap.template restored_table<fixture::Site>();
  ASSERT_EQ(sites.size(), static_cast<std::size_t>(fixture::kSites));
  Buffer<FixtureOut> out(1);
  out.zero();
  dynasoar::platform::parallel_for(fixture::kSites, Check{sites.index(), out.data()});
  const FixtureOut got = out.to_vector()[0];
  for (int i = 0; i < fixture::kSites; ++i) {
    if (fixture::culled(i)) continue;
    EXPECT_EQ(got.sites[i][0], i);
    EXPECT_EQ(got.sites[i][1], fixture::culled(fixture::next_of(i)) ? -1 : fixture::next_of(i));
    EXPECT_EQ(got.sites[i][2], 1000 + i);
    EXPECT_EQ(got.sites[i][3], i);
  }
  EXPECT_EQ(got.hub_ok, 1);
}

TEST(CheckpointFixture, TheHostBuildsFileDescribesTheFixture) {
  std::ifstream in(kFixtureFile, std::ios::binary);
  ASSERT_TRUE(in) << kFixtureFile;
  const dynasoar::move::CheckpointInfo info = dynasoar::move::read_checkpoint_info(in);
  EXPECT_EQ(info.version, 1u);
  EXPECT_EQ(info.backend, "dynasoar");
  EXPECT_EQ(info.user, kFixtureUser);
  ASSERT_EQ(info.classes.size(), 3u);
  EXPECT_EQ(info.classes, dynasoar::move::describe_classes<fixture::Alloc::Registry>());
  EXPECT_EQ(info.classes[1].name, "Site");
  EXPECT_TRUE(info.classes[0].abstract);
  EXPECT_EQ(info.classes[2].fields[3].type, "array<Site*, 2>");
  EXPECT_EQ(info.classes[2].fields[3].pointers, 2u);
  EXPECT_EQ(info.census[1].positions, 128u);  // two groups of 64 sites, the holes included
  EXPECT_EQ(info.census[1].live, 90u);
  EXPECT_EQ(info.census[1].tables, std::vector<std::uint64_t>{100});
  EXPECT_EQ(info.census[2].live, 1u);
}

TEST(CheckpointFixture, TheHostBuildsFileLoadsInThisBuild) {
  expect_fixture_loads<fixture::Alloc>();
}

TEST(CheckpointFixture, ThisBuildWritesTheHostBuildsBytes) {
  dynasoar::AllocatorHandle<fixture::Alloc> heap(std::uint64_t{1} << 20);
  build_fixture(heap);
  std::ostringstream out;
  heap.save_checkpoint(out, kFixtureUser);
  // DYNASOAR_WRITE_CHECKPOINT_FIXTURE=1 writes the file anew (after a change of the format or the
  // fixture).
  if (const char* write = std::getenv("DYNASOAR_WRITE_CHECKPOINT_FIXTURE");
      write != nullptr && *write == '1') {
    std::ofstream(kFixtureFile, std::ios::binary) << out.str();
  }
  EXPECT_EQ(out.str(), read_fixture()) << "the bytes of " << kFixtureFile
                                       << " changed: a change of the format takes a new version "
                                          "(docs/design/checkpoint-format.md)";
}

}  // namespace
