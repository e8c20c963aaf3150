// Heap compaction (parallel_defrag, after CompactGpu, ISMM 2019) on both
// block layouts. A graph of nodes, springs and tags is built, most of it is
// destroyed by a do-all that also creates new objects (so the survivors sit
// in scattered slots of many blocks), and then each class is compacted.
// Afterwards: the same objects exist, each once, with the same field
// values; every pointer field leads to a live object of a right class and
// to the same object (by id) as before; fewer blocks are in use; and the
// block states agree with the bitmaps (paper App. A.5).
#include <dynasoar/debug.h>
#include <dynasoar/dynasoar.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "move/graph_census.h"

namespace {

using namespace move_test;

template <class Layout>
class DefragTest : public GraphTest<Layout> {};

TYPED_TEST_SUITE(DefragTest, Layouts, LayoutNames);

TYPED_TEST(DefragTest, KeepsEveryObjectAndPointer) {
  using Mo = typename TestFixture::M;
  typename TestFixture::Handle heap(std::uint64_t{64} << 20);
  this->build(heap);
  this->fragment(heap);
  const Summary before = this->census(heap);
  ASSERT_EQ(before.bad_pointers, 0u);
  ASSERT_EQ(before.bad_values, 0u);
  ASSERT_GT(before.objects, 1000u);
  const std::uint64_t blocks_before = TestFixture::blocks_of(heap);

  dynasoar::DefragResult total;
  total += heap.template parallel_defrag<typename Mo::Spring>();
  total += heap.template parallel_defrag<typename Mo::NodeBase>();  // Node and Anchor
  total += heap.template parallel_defrag<typename Mo::Tag>();
  EXPECT_GT(total.blocks_freed, 0u);
  EXPECT_GT(total.objects_moved, 0u);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");

  const Summary after = this->census(heap);
  EXPECT_EQ(after.bad_pointers, 0u);
  EXPECT_EQ(after.bad_values, 0u);
  EXPECT_EQ(after.objects, before.objects);
  EXPECT_EQ(after.signature, before.signature);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < before.seen.size(); ++i) {
    EXPECT_LE(after.seen[i], 1u) << "object seen twice at " << i;
    differ += after.seen[i] != before.seen[i];
  }
  EXPECT_EQ(differ, 0u);
  EXPECT_EQ(TestFixture::blocks_of(heap), blocks_before - total.blocks_freed);

  // A second compaction finds little left to do, and changes nothing.
  heap.template parallel_defrag<typename Mo::Spring>();
  const Summary again = this->census(heap);
  EXPECT_EQ(again.signature, before.signature);
  EXPECT_EQ(again.bad_pointers, 0u);

  // The heap goes on: new objects fill the freed blocks, and the compacted ones can be destroyed.
  this->build(heap);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
  EXPECT_EQ(this->census(heap).bad_pointers, 0u);
}

TYPED_TEST(DefragTest, LeavesFullBlocksAndRetainedCandidatesAlone) {
  using Mo = typename TestFixture::M;
  {
    // parallel_new fills whole blocks (a kernel of `new`s need not, on the
    // GPU): the few partly full blocks it leaves (the last group's, made by
    // `new`) are fewer than the candidates a compaction leaves alone.
    typename TestFixture::Handle full(std::uint64_t{64} << 20);
    full.template parallel_new<typename Mo::Spring>(6400);
    const dynasoar::DefragResult r = full.template parallel_defrag<typename Mo::Spring>();
    EXPECT_LE(r.candidates, dynasoar::DefragOptions{}.retained);
    EXPECT_EQ(r.blocks_freed, 0u);
    EXPECT_EQ(r.objects_moved, 0u);
    EXPECT_EQ(full.template count<typename Mo::Spring>(), 6400u);
  }
  typename TestFixture::Handle heap(std::uint64_t{64} << 20);
  this->build(heap);
  this->fragment(heap);
  dynasoar::DefragOptions all_retained;
  all_retained.retained = 1u << 30;
  EXPECT_EQ(heap.template parallel_defrag<typename Mo::Spring>(all_retained).blocks_freed, 0u);
  dynasoar::DefragOptions half;  // F = 1: blocks at most half full, one target each
  half.factor = 1;
  half.retained = 0;
  const dynasoar::DefragResult h = heap.template parallel_defrag<typename Mo::Spring>(half);
  EXPECT_GT(h.blocks_freed, 0u);
  EXPECT_LE(h.blocks_freed * 2, h.candidates);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
  EXPECT_EQ(this->census(heap).bad_pointers, 0u);
}

TYPED_TEST(DefragTest, PolicyCompactsAtStepBoundaries) {
  dynasoar::HandleOptions o;
  o.defrag.enabled = true;
  o.defrag.every = 2;
  o.defrag.options.retained = 0;
  typename TestFixture::Handle heap(std::uint64_t{64} << 20, o);
  this->build(heap);
  EXPECT_EQ(heap.compact_if_fragmented().blocks_freed, 0u);  // the first call of two does not look
  // The second looks: on the GPU the build's `new`s may leave partly full blocks to compact.
  const dynasoar::DefragResult built = heap.compact_if_fragmented();
  this->fragment(heap);
  EXPECT_EQ(heap.compact_if_fragmented().blocks_freed, 0u);  // no look
  const dynasoar::DefragResult r = heap.compact_if_fragmented();
  EXPECT_GT(r.blocks_freed, 0u);
  EXPECT_EQ(heap.defrag_policy_result().blocks_freed, built.blocks_freed + r.blocks_freed);
  EXPECT_EQ(heap.defrag_policy_result().objects_moved, built.objects_moved + r.objects_moved);
  EXPECT_EQ(dynasoar::debug::check_consistency(heap), "");
  const Summary s = this->census(heap);
  EXPECT_EQ(s.bad_pointers, 0u);
  EXPECT_EQ(s.bad_values, 0u);
}

TYPED_TEST(DefragTest, PolicyIsOffByDefault) {
  typename TestFixture::Handle heap(std::uint64_t{64} << 20);
  this->build(heap);
  this->fragment(heap);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(heap.compact_if_fragmented().blocks_freed, 0u);
}

TYPED_TEST(DefragTest, RefusesIndexedClassesAndBadOptions) {
  using Mo = typename TestFixture::M;
  typename TestFixture::Handle heap(std::uint64_t{16} << 20);
  auto table = heap.template parallel_new_indexed<typename Mo::Tag>(100);
  (void)table;
  try {
    heap.template parallel_defrag<typename Mo::Tag>();
    ADD_FAILURE() << "no exception";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("the objects of Tag were made by parallel_new_indexed"),
              std::string::npos)
        << e.what();
  }
  dynasoar::DefragOptions bad;
  bad.factor = 0;
  EXPECT_THROW(heap.template parallel_defrag<typename Mo::Spring>(bad), std::invalid_argument);
  EXPECT_EQ(heap.template count<typename Mo::Tag>(), 100u);
}

}  // namespace
