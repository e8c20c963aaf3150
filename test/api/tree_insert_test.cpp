// A method that waits for work another thread has begun, on every back end
// that frees: the quadtree insertion of the original DynaSOAr's dynamic
// Barnes-Hut (tree_insert.h), whose splitting thread spins until the body it
// moves down has its parent set. Every step's tree is compared with the
// canonical tree computed on the host, so a lost or duplicated body, a node
// too many or a wrong parent fails the test; a hang is caught by ctest's
// time limit (and, where it is on, the watchdog).
#include "api/tree_insert.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "support/backends.h"
#include "support/sanitized.h"

namespace {

namespace tree = dynasoar::test::tree;

template <class Backend>
class TreeInsertion : public ::testing::Test {};
TYPED_TEST_SUITE(TreeInsertion, dynasoar::test::AllBackends, dynasoar::test::BackendNames);

struct Case {
  int bodies, steps, seeds;
};

// Sizes from 1 000 to 300 000 bodies on the GPU; the host tier and the
// sanitizers run the smaller ones.
std::vector<Case> cases() {
  if (dynasoar::test::under_sanitizer()) return {{1000, 4, 1}};
  if (!dynasoar::platform::kCudaBuild) return {{1000, 10, 3}, {20000, 4, 1}};
  return {{1000, 20, 8}, {20000, 10, 3}, {300000, 5, 2}};
}

TYPED_TEST(TreeInsertion, BodiesWaitForTheirInsertersAndTheTreeStaysExact) {
  using B = TypeParam;
  if constexpr (!B::kFrees) {
    GTEST_SKIP() << B::kName << " does not free: the tree's nodes are destroyed every step";
  } else {
    using W = tree::World<B>;
    for (const Case c : cases()) {
      for (int s = 0; s < c.seeds; ++s) {
        const std::uint64_t seed =
            1000 * static_cast<std::uint64_t>(c.bodies) + static_cast<std::uint64_t>(s);
        SCOPED_TRACE(std::to_string(c.bodies) + " bodies, seed " + std::to_string(seed));
        typename W::Handle heap(std::uint64_t{256} << 20);
        tree::run_steps<W>(heap, c.bodies, c.steps, seed, [&](int step, const tree::StepResult& r) {
          const tree::Reference want = tree::reference(c.bodies, step, seed);
          EXPECT_EQ(r.failures, 0u)
              << "step " << step << ": a second CAS failed or a new returned null";
          EXPECT_EQ(r.errors, 0u) << "step " << step << ": bodies or nodes in the wrong place";
          EXPECT_EQ(r.bodies, static_cast<std::uint64_t>(c.bodies)) << "step " << step;
          EXPECT_EQ(r.inner, want.inner) << "step " << step << ": nodes of the canonical tree";
          EXPECT_EQ(r.checksum, want.checksum) << "step " << step << ": the bodies' depths";
        });
        EXPECT_EQ(heap.template count<typename W::Body>(), static_cast<std::uint64_t>(c.bodies));
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

}  // namespace
