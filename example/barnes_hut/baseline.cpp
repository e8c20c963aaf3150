// Barnes-Hut written by hand, without dynamic allocation: one array per
// property, the quadtree rebuilt from scratch every step in preallocated
// arrays (at most max_cells cells), one kernel per phase. It builds the
// same canonical tree as the object version updates (rules.h), sums in the
// same order and so computes the same numbers; it is both the reference the
// object version is checked against and the time to beat.
//
// The build is level by level from the root: bodies of the cells of one
// level that must split count themselves per quadrant (atomics), each such
// cell numbers its non-empty quadrants from a shared counter (so the next
// level's cells follow this level's in the arrays), and the bodies step
// down. Then every leaf gets a range of an index array, its bodies write
// themselves there and the leaf sorts the range by id; the centres of mass
// are summed level by level from the deepest. No thread ever waits.
#include <stdexcept>
#include <string>
#include <vector>

#include "example/barnes_hut/barnes_hut.h"
#include "example/barnes_hut/rules.h"
#include "example/common/device_info.h"
#include "example/common/run_loop.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/support/phase_timer.h"

namespace dynasoar::example::barnes_hut {
namespace {

struct Arrays {
  int n;
  unsigned capacity;  // cells
  // Bodies.
  float *x, *y, *vx, *vy, *ax, *ay, *mass;
  int* leaf;   // the cell it is in (during the build: the deepest so far)
  int* order;  // body indices, each leaf's in a range sorted by id
  // Cells.
  int *depth, *count, *parent, *child, *quad, *first, *fill;  // child, quad: 4 per cell
  std::uint32_t *ix, *iy;
  unsigned char* inner;
  float *cmass, *cx, *cy;
  unsigned* counters;  // [0] cells made, [1] next leaf range, [2] capacity exceeded, [3] walk stack
                       // overflow
};

struct Init {
  Arrays a;
  Physics p;
  std::uint64_t seed;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const InitialBody b = initial_body(p, seed, static_cast<int>(i));
    a.x[i] = b.x;
    a.y[i] = b.y;
    a.vx[i] = b.vx;
    a.vy[i] = b.vy;
    a.mass[i] = b.mass;
    a.ax[i] = a.ay[i] = 0.0f;
  }
};

DYNASOAR_HD inline void init_cell(const Arrays& a, int c, int up, int d, std::uint32_t cx,
                                  std::uint32_t cy, int n) {
  a.depth[c] = d;
  a.ix[c] = cx;
  a.iy[c] = cy;
  a.count[c] = n;
  a.parent[c] = up;
  a.inner[c] = 0;
  for (int q = 0; q < 4; ++q) a.child[4 * c + q] = -1;
}

struct StartBuild {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (i == 0) {
      init_cell(a, 0, -1, 0, 0u, 0u, a.n);
      a.counters[0] = 1;
      a.counters[1] = 0;
    }
    if (i < static_cast<std::size_t>(a.n)) a.leaf[i] = 0;
  }
};

// Cells of the level [lo, lo + k) that must split: clear their quadrant counts.
struct MarkLevel {
  Arrays a;
  int lo, level, leaf_capacity;
  DYNASOAR_HD void operator()(std::size_t j) const {
    const int c = lo + static_cast<int>(j);
    a.inner[c] = a.count[c] > leaf_capacity && level < kMaxDepth ? 1 : 0;
    for (int q = 0; q < 4; ++q) a.quad[4 * c + q] = 0;
  }
};

struct CountQuadrants {
  Arrays a;
  int lo, level;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = a.leaf[i];
    if (c < lo || !a.inner[c]) return;
    platform::atomic_fetch_add(&a.quad[4 * c + quadrant(key_of(a.x[i], a.y[i]), level)], 1);
  }
};

struct MakeChildren {
  Arrays a;
  int lo, level;
  DYNASOAR_HD void operator()(std::size_t j) const {
    const int c = lo + static_cast<int>(j);
    if (!a.inner[c]) return;
    for (int q = 0; q < 4; ++q) {
      const int k = a.quad[4 * c + q];
      if (k == 0) continue;
      const unsigned made = platform::atomic_fetch_add(&a.counters[0], 1u);
      if (made >= a.capacity) {  // cannot happen (max_cells is a bound); reported, not written
        platform::atomic_store(&a.counters[2], 1u);
        continue;
      }
      const int m = static_cast<int>(made);
      init_cell(a, m, c, level + 1, 2u * a.ix[c] + static_cast<std::uint32_t>(q & 1),
                2u * a.iy[c] + static_cast<std::uint32_t>(q >> 1), k);
      a.child[4 * c + q] = m;
    }
  }
};

struct StepDown {
  Arrays a;
  int lo, level;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = a.leaf[i];
    if (c < lo || !a.inner[c]) return;
    a.leaf[i] = a.child[4 * c + quadrant(key_of(a.x[i], a.y[i]), level)];
  }
};

struct AssignRanges {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t c) const {
    a.fill[c] = 0;
    if (a.inner[c]) return;
    a.first[c] = static_cast<int>(
        platform::atomic_fetch_add(&a.counters[1], static_cast<unsigned>(a.count[c])));
  }
};

struct Scatter {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = a.leaf[i];
    a.order[a.first[c] + platform::atomic_fetch_add(&a.fill[c], 1)] = static_cast<int>(i);
  }
};

/// Shell sort (no recursion, no extra memory; a leaf at kMaxDepth may be long).
DYNASOAR_HD inline void sort_ids(int* v, int k) {
  for (int gap = k / 2; gap > 0; gap /= 2)
    for (int i = gap; i < k; ++i) {
      const int t = v[i];
      int j = i;
      for (; j >= gap && v[j - gap] > t; j -= gap) v[j] = v[j - gap];
      v[j] = t;
    }
}

// One level of the centres of mass, cells [lo, lo + k): leaves sort and sum
// their bodies, inner cells their children.
struct Summarize {
  Arrays a;
  int lo;
  DYNASOAR_HD void operator()(std::size_t j) const {
    const int c = lo + static_cast<int>(j);
    MassSum s;
    if (a.inner[c]) {
      for (int q = 0; q < 4; ++q) {
        const int k = a.child[4 * c + q];
        if (k >= 0) s.add(a.cmass[k], a.cx[k], a.cy[k]);
      }
    } else {
      int* range = a.order + a.first[c];
      sort_ids(range, a.count[c]);
      for (int k = 0; k < a.count[c]; ++k) s.add(a.mass[range[k]], a.x[range[k]], a.y[range[k]]);
    }
    a.cmass[c] = s.m;
    a.cx[c] = s.cx();
    a.cy[c] = s.cy();
  }
};

/// The tree as rules.h's force walk reads it.
struct ArrayTree {
  using Node = int;
  Arrays a;
  DYNASOAR_HD Node root() const { return 0; }
  DYNASOAR_HD static bool is_none(Node c) { return c < 0; }
  DYNASOAR_HD int depth(Node c) const { return a.depth[c]; }
  DYNASOAR_HD float mass(Node c) const { return a.cmass[c]; }
  DYNASOAR_HD float cx(Node c) const { return a.cx[c]; }
  DYNASOAR_HD float cy(Node c) const { return a.cy[c]; }
  DYNASOAR_HD bool holds(Node c, Key k) const {
    return cell_contains(a.depth[c], a.ix[c], a.iy[c], k);
  }
  DYNASOAR_HD bool leaf(Node c) const { return a.inner[c] == 0; }
  DYNASOAR_HD Node child(Node c, int q) const { return a.child[4 * c + q]; }
  template <class F>
  DYNASOAR_HD void for_each_body(Node c, F&& f) const {
    const int* range = a.order + a.first[c];
    for (int k = 0; k < a.count[c]; ++k) f(a.x[range[k]], a.y[range[k]], a.mass[range[k]]);
  }
};

struct Forces {
  Arrays a;
  ForceParams f;
  DYNASOAR_HD void operator()(std::size_t i) const {
    float sx = 0.0f, sy = 0.0f;
    if (!tree_acceleration(ArrayTree{a}, f, a.x[i], a.y[i], sx, sy))
      platform::atomic_store(&a.counters[3], 1u);
    a.ax[i] = sx;
    a.ay[i] = sy;
  }
};

struct Move {
  Arrays a;
  Physics p;
  DYNASOAR_HD void operator()(std::size_t i) const {
    move(p, a.x[i], a.vx[i], a.ax[i]);
    move(p, a.y[i], a.vy[i], a.ay[i]);
  }
};

struct WriteBodies {
  Arrays a;
  FrameBody* out;
  DYNASOAR_HD void operator()(std::size_t i) const {
    out[i] = FrameBody{a.x[i],
                       a.y[i],
                       a.vx[i],
                       a.vy[i],
                       a.ax[i],
                       a.ay[i],
                       a.mass[i],
                       static_cast<int>(i),
                       static_cast<std::uint64_t>(a.leaf[i]) + 1};
  }
};

struct WriteCells {
  Arrays a;
  FrameCell* out;
  DYNASOAR_HD void operator()(std::size_t c) const {
    out[c] = FrameCell{static_cast<std::uint64_t>(c) + 1,
                       static_cast<std::uint64_t>(a.parent[c] + 1),
                       a.depth[c],
                       a.ix[c],
                       a.iy[c],
                       a.count[c],
                       a.cmass[c],
                       a.cx[c],
                       a.cy[c],
                       static_cast<std::uint8_t>(a.inner[c] ? 0 : 1)};
  }
};

struct Checksum {
  Arrays a;
  double* sum;
  DYNASOAR_HD void operator()(std::size_t i) const {
    platform::atomic_fetch_add(sum, checksum_term(a.x[i], a.y[i], a.vx[i], a.vy[i], a.mass[i]));
  }
};

}  // namespace

RunReport run(const Config& c) {
  if (c.bodies < 1) throw std::invalid_argument("barnes-hut: needs at least one body");
  if (c.physics.leaf_capacity < 1) throw std::invalid_argument("barnes-hut: leaf capacity below 1");
  refuse_checkpoints(c.checkpoint, "barnes_hut", "is the hand-written baseline");
  const auto n = static_cast<std::size_t>(c.bodies);
  const std::uint64_t cap64 = max_cells(c.bodies, c.physics.leaf_capacity);
  if (cap64 >= (std::uint64_t{1} << 31))
    throw std::invalid_argument("barnes-hut: too many bodies for int cell indices");
  const auto cap = static_cast<std::size_t>(cap64);
  std::vector<platform::Buffer<float>> body_floats, cell_floats;
  for (int k = 0; k < 7; ++k) body_floats.emplace_back(n);
  for (int k = 0; k < 3; ++k) cell_floats.emplace_back(cap);
  platform::Buffer<int> leaf(n), order(n), depth(cap), count(cap), parent(cap), child(4 * cap),
      quad(4 * cap), first(cap), fill(cap);
  platform::Buffer<std::uint32_t> ix(cap), iy(cap);
  platform::Buffer<unsigned char> inner(cap);
  platform::Buffer<unsigned> counters(4);
  const Arrays a{c.bodies,
                 static_cast<unsigned>(cap),
                 body_floats[0].data(),
                 body_floats[1].data(),
                 body_floats[2].data(),
                 body_floats[3].data(),
                 body_floats[4].data(),
                 body_floats[5].data(),
                 body_floats[6].data(),
                 leaf.data(),
                 order.data(),
                 depth.data(),
                 count.data(),
                 parent.data(),
                 child.data(),
                 quad.data(),
                 first.data(),
                 fill.data(),
                 ix.data(),
                 iy.data(),
                 inner.data(),
                 cell_floats[0].data(),
                 cell_floats[1].data(),
                 cell_floats[2].data(),
                 counters.data()};
  platform::Stream stream;
  counters.zero(stream);
  platform::parallel_for(n, Init{a, c.physics, c.seed}, stream);
  const ForceParams forces = force_params(c.physics, c.bodies);

  // The tree for the current positions; returns the number of cells.
  support::PhaseTimer* timing = nullptr;
  const auto mark = [&](const char* phase) {
    if (timing != nullptr) timing->mark(phase);
  };
  const auto build = [&]() -> std::size_t {
    platform::parallel_for(n, StartBuild{a}, stream);
    std::vector<int> level_start{0};
    std::size_t cells = 1;
    for (int level = 0; static_cast<std::size_t>(level_start.back()) < cells; ++level) {
      const int lo = level_start.back();
      const std::size_t k = cells - static_cast<std::size_t>(lo);
      platform::parallel_for(k, MarkLevel{a, lo, level, c.physics.leaf_capacity}, stream);
      if (level < kMaxDepth) {
        platform::parallel_for(n, CountQuadrants{a, lo, level}, stream);
        platform::parallel_for(k, MakeChildren{a, lo, level}, stream);
        platform::parallel_for(n, StepDown{a, lo, level}, stream);
      }
      level_start.push_back(static_cast<int>(cells));
      const std::vector<unsigned> made = counters.to_vector(stream);
      if (made[2] != 0) throw std::logic_error("barnes-hut baseline: more cells than max_cells");
      cells = made[0];
    }
    mark("tree: build");
    platform::parallel_for(cells, AssignRanges{a}, stream);
    platform::parallel_for(n, Scatter{a}, stream);
    for (std::size_t l = level_start.size() - 1; l-- > 0;)
      platform::parallel_for(static_cast<std::size_t>(level_start[l + 1] - level_start[l]),
                             Summarize{a, level_start[l]}, stream);
    mark("tree: summarize");
    return cells;
  };
  std::size_t cells = build();

  const auto copy_state = [&](int step) {
    Frame f;
    f.step = step;
    platform::Buffer<FrameBody> bodies(n);
    platform::parallel_for(n, WriteBodies{a, bodies.data()}, stream);
    f.bodies = bodies.to_vector(stream);
    platform::Buffer<FrameCell> out(cells);
    platform::parallel_for(cells, WriteCells{a, out.data()}, stream);
    f.cells = out.to_vector(stream);
    return f;
  };
  support::PhaseTimer timer(stream);
  timing = &timer;
  run_steps(c, timer, [&](int) {
    platform::parallel_for(n, Forces{a, forces}, stream);
    timer.mark("forces");
    platform::parallel_for(n, Move{a, c.physics}, stream);
    timer.mark("move");
    cells = build();
  }, [&](int step) { c.on_frame(copy_state(step)); });
  RunReport r =
      make_report(c, "baseline", device_description(), timer.total_ms(), timer.phases_ms());
  timing = nullptr;

  if (c.on_check) {
    platform::parallel_for(n, Forces{a, forces}, stream);
    c.on_check(copy_state(c.steps));
  }
  if (counters.to_vector(stream)[3] != 0)
    throw std::logic_error("barnes-hut baseline: the force walk's stack overflowed");
  platform::Buffer<double> sum(1);
  sum.zero(stream);
  platform::parallel_for(n, Checksum{a, sum.data()}, stream);
  r.float_checksum = sum.to_vector(stream)[0] + static_cast<double>(n);
  r.live = {{"Body", n}, {"TreeNode", cells}};
  r.heap.emplace_back("memory", std::to_string((n * (7 * sizeof(float) + 2 * sizeof(int)) +
                                                cap * (3 * sizeof(float) + 15 * sizeof(int) + 1)) >>
                                               10) +
                                    " KiB of arrays, room for " + std::to_string(cap) + " cells");
  return r;
}

}  // namespace dynasoar::example::barnes_hut
