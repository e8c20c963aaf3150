// The structure example written by hand, without dynamic allocation: one
// array per property, nodes by their index and springs by their index at
// the start, a node's springs as spring indices in kMaxDegree slots. A
// removed node or spring is only marked so (kind kNone, alive 0), and every
// kernel runs over all slots of its array and skips the marked ones, as the
// original's baseline does. Same rules (rules.h), same checksum as the
// object version on every back end.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/support/phase_timer.h"
#include "example/common/device_info.h"
#include "example/common/run_loop.h"
#include "example/structure/rules.h"
#include "example/structure/structure.h"

namespace dynasoar::example::structure {
namespace {

struct Arrays {
  // Nodes.
  Kind* kind;  // kNone: removed
  float* pos_x;
  float* pos_y;
  float* vel_x;  // nodes and pull nodes
  float* vel_y;
  float* mass;   // nodes
  int* num_springs;
  int* distance;
  int* springs;  // [node * kMaxDegree + slot]: a spring's index, -1: none
  // Springs.
  int* alive;    // 0: broken or removed
  int* p1;
  int* p2;
  int* first_slot;
  float* factor;
  float* rest;
  float* force;
  float* force_x;
  float* force_y;
  float* max_force;
  int* cut_off;

  /// Spring s leaves both ends' slots; an end whose last spring it was is removed.
  DYNASOAR_HD void remove_spring(int s) const {
    const int slot = first_slot[s];
    leave(p1[s], slot);
    leave(p2[s], second_slot(slot));
    alive[s] = 0;
  }
  DYNASOAR_HD void leave(int n, int slot) const {
    springs[n * kMaxDegree + slot] = -1;
    if (platform::atomic_fetch_sub(&num_springs[n], 1) == 1) kind[n] = Kind::kNone;
  }
};

struct MakeNodes {
  Lattice l;
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t idx) const {
    const int i = static_cast<int>(idx);
    const Kind k = node_kind(l, i);
    a.kind[i] = k;
    a.pos_x[i] = initial_x(l, i);
    a.pos_y[i] = initial_y(l, i);
    a.vel_x[i] = k == Kind::kPull ? pull_velocity(l, i, kPullX) : 0.0f;
    a.vel_y[i] = k == Kind::kPull ? pull_velocity(l, i, kPullY) : 0.0f;
    a.mass[i] = k == Kind::kNode ? initial_mass(l, i) : 0.0f;
    a.num_springs[i] = initial_degree(l, i);
    a.distance[i] = 0;
    for (int s = 0; s < kMaxDegree; ++s) a.springs[i * kMaxDegree + s] = -1;
  }
};

struct MakeSprings {
  Lattice l;
  Arrays a;
  const int* codes;
  DYNASOAR_HD void operator()(std::size_t idx) const {
    const int s = static_cast<int>(idx);
    const int code = codes[s];
    const int slot = code_slot(code);
    const int first = code_first_end(code), second = neighbour(l, first, slot);
    a.alive[s] = 1;
    a.p1[s] = first;
    a.p2[s] = second;
    a.first_slot[s] = slot;
    a.factor[s] = spring_factor(l, code);
    a.rest[s] = rest_length(l, first, second);
    a.force[s] = 0.0f;
    a.force_x[s] = 0.0f;
    a.force_y[s] = 0.0f;
    a.max_force[s] = kMaxForce;
    a.cut_off[s] = 0;
    a.springs[first * kMaxDegree + slot] = s;
    a.springs[second * kMaxDegree + second_slot(slot)] = s;
  }
};

struct Pull {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (a.kind[i] != Kind::kPull) return;
    a.pos_x[i] = pulled(a.pos_x[i], a.vel_x[i]);
    a.pos_y[i] = pulled(a.pos_y[i], a.vel_y[i]);
  }
};

struct ComputeForce {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t idx) const {
    const int s = static_cast<int>(idx);
    if (a.alive[s] == 0) return;
    const int i = a.p1[s], j = a.p2[s];
    const SpringForce f = spring_force(a.pos_x[i], a.pos_y[i], a.pos_x[j], a.pos_y[j], a.factor[s], a.rest[s]);
    a.force[s] = f.size;
    a.force_x[s] = f.x;
    a.force_y[s] = f.y;
    if (breaks(f.size, a.max_force[s])) a.remove_spring(s);
  }
};

struct Move {
  Lattice l;
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t idx) const {
    const int i = static_cast<int>(idx);
    if (a.kind[i] != Kind::kNode) return;
    float fx = 0.0f, fy = 0.0f;
    for (int slot = 0; slot < kMaxDegree; ++slot) {
      const int s = a.springs[i * kMaxDegree + slot];
      if (s >= 0) add_force(fx, fy, SpringForce{a.force[s], a.force_x[s], a.force_y[s]}, first_end(l, i, slot));
    }
    move_coordinate(a.pos_x[i], a.vel_x[i], fx, a.mass[i]);
    move_coordinate(a.pos_y[i], a.vel_y[i], fy, a.mass[i]);
  }
};

struct InitializeSearch {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    a.distance[i] = a.kind[i] == Kind::kAnchor || a.kind[i] == Kind::kPull ? 0 : static_cast<int>(kUnreached);
  }
};

// Every node at `level` gives its unreached neighbours the next level.
struct Visit {
  Lattice l;
  Arrays a;
  int level;
  unsigned* found;
  DYNASOAR_HD void operator()(std::size_t idx) const {
    const int i = static_cast<int>(idx);
    if (a.kind[i] == Kind::kNone || platform::atomic_load(&a.distance[i]) != level) return;
    platform::atomic_store(found, 1u);
    for (int slot = 0; slot < kMaxDegree; ++slot) {
      const int s = a.springs[i * kMaxDegree + slot];
      if (s < 0) continue;
      const int other = first_end(l, i, slot) ? a.p2[s] : a.p1[s];
      int expected = kUnreached;
      platform::atomic_compare_exchange(&a.distance[other], expected, level + 1);
    }
  }
};

struct MarkCutOff {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t idx) const {
    const int i = static_cast<int>(idx);
    if (a.kind[i] == Kind::kNone) return;
    if (a.num_springs[i] == 0) {
      a.kind[i] = Kind::kNone;
      return;
    }
    if (a.distance[i] != kUnreached) return;
    for (int slot = 0; slot < kMaxDegree; ++slot) {
      const int s = a.springs[i * kMaxDegree + slot];
      if (s >= 0) platform::atomic_store(&a.cut_off[s], 1);
    }
  }
};

struct RemoveCutOff {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t idx) const {
    const int s = static_cast<int>(idx);
    if (a.alive[s] != 0 && a.cut_off[s] != 0) a.remove_spring(s);
  }
};

// sums: [0] checksum, [1] anchors, [2] pull nodes, [3] nodes, [4] springs.
struct NodeChecksum {
  Arrays a;
  unsigned long long* sums;
  DYNASOAR_HD void operator()(std::size_t idx) const {
    const int i = static_cast<int>(idx);
    const Kind k = a.kind[i];
    if (k == Kind::kNone) return;
    platform::atomic_fetch_add(&sums[0], static_cast<unsigned long long>(node_term(
                                             i, k, a.pos_x[i], a.pos_y[i], a.vel_x[i], a.vel_y[i], a.num_springs[i])));
    platform::atomic_fetch_add(&sums[static_cast<int>(k)], 1ull);
  }
};

struct SpringChecksum {
  Arrays a;
  unsigned long long* sums;
  DYNASOAR_HD void operator()(std::size_t idx) const {
    const int s = static_cast<int>(idx);
    if (a.alive[s] == 0) return;
    platform::atomic_fetch_add(&sums[0], static_cast<unsigned long long>(spring_term(s, a.force[s])));
    platform::atomic_fetch_add(&sums[4], 1ull);
  }
};

struct WriteNodes {
  Arrays a;
  FrameNode* out;
  DYNASOAR_HD void operator()(std::size_t i) const {
    out[i] = a.kind[i] == Kind::kNone ? FrameNode{}
                                      : FrameNode{a.pos_x[i], a.pos_y[i], static_cast<std::uint8_t>(a.kind[i])};
  }
};

struct WriteSprings {
  Arrays a;
  FrameSpring* out;
  DYNASOAR_HD void operator()(std::size_t s) const {
    if (a.alive[s] == 0) {
      out[s] = FrameSpring{};
      return;
    }
    const int i = a.p1[s], j = a.p2[s];
    out[s] = FrameSpring{a.pos_x[i], a.pos_y[i], a.pos_x[j], a.pos_y[j], load_byte(a.force[s], a.max_force[s]), 1};
  }
};

}  // namespace

RunReport run(const Config& c) {
  if (c.nodes < 2) throw std::invalid_argument("structure: needs at least 2 nodes");
  if (c.iterations < 1) throw std::invalid_argument("structure: needs at least 1 iteration per step");
  refuse_checkpoints(c.checkpoint, "structure", "is the hand-written baseline");
  const Lattice lattice = make_lattice(c.nodes, c.seed);
  const std::vector<int> codes = spring_codes(lattice);
  const auto n = static_cast<std::size_t>(c.nodes);
  const std::size_t m = codes.size();
  const std::size_t m1 = std::max<std::size_t>(m, 1);  // no array of size 0

  platform::Stream stream;
  platform::Buffer<Kind> kind(n);
  constexpr int kNodeFloats = 5, kNodeInts = 2 + kMaxDegree, kSpringFloats = 6, kSpringInts = 5;
  platform::Buffer<float> node_floats(n * kNodeFloats);
  platform::Buffer<int> node_ints(n * kNodeInts);
  platform::Buffer<float> spring_floats(m1 * kSpringFloats);
  platform::Buffer<int> spring_ints(m1 * kSpringInts);
  const auto nf = [&](int k) { return node_floats.data() + static_cast<std::size_t>(k) * n; };
  const auto ni = [&](int k) { return node_ints.data() + static_cast<std::size_t>(k) * n; };
  const auto sf = [&](int k) { return spring_floats.data() + static_cast<std::size_t>(k) * m1; };
  const auto si = [&](int k) { return spring_ints.data() + static_cast<std::size_t>(k) * m1; };
  const Arrays a{kind.data(), nf(0),  nf(1),  nf(2),  nf(3),  nf(4),  ni(0),  ni(1),  ni(2),  si(0), si(1),
                 si(2),       si(3),  sf(0),  sf(1),  sf(2),  sf(3),  sf(4),  sf(5),  si(4)};
  {
    platform::Buffer<int> dcodes(m1);
    dcodes.copy_from_host(codes.data(), m, stream);
    platform::parallel_for(n, MakeNodes{lattice, a}, stream);
    platform::parallel_for(m, MakeSprings{lattice, a, dcodes.data()}, stream);
    platform::synchronize(stream);
  }

  // The viewer's copy of the structure, only where a frame is due.
  const auto send_frame = [&](int step) {
    platform::Buffer<FrameNode> nodes(n);
    platform::Buffer<FrameSpring> links(m1);
    platform::parallel_for(n, WriteNodes{a, nodes.data()}, stream);
    platform::parallel_for(m, WriteSprings{a, links.data()}, stream);
    std::vector<FrameSpring> s = links.to_vector(stream);
    s.resize(m);
    c.on_frame(Frame{step, lattice.columns, lattice.rows(), nodes.to_vector(stream), std::move(s)});
  };
  platform::Buffer<unsigned> found(kBfsLevelsPerCheck);  // found[j]: a node was at the batch's level j
  support::PhaseTimer timer(stream);
  run_steps(c, timer, [&](int) {
    platform::parallel_for(n, Pull{a}, stream);
    timer.mark("pull");
    for (int k = 0; k < c.iterations; ++k) {
      platform::parallel_for(m, ComputeForce{a}, stream);
      timer.mark("spring forces");
      platform::parallel_for(n, Move{lattice, a}, stream);
      timer.mark("move");
    }
    platform::parallel_for(n, InitializeSearch{a}, stream);
    for (int level = 0;; level += kBfsLevelsPerCheck) {
      found.zero(stream);
      for (int j = 0; j < kBfsLevelsPerCheck; ++j)
        platform::parallel_for(n, Visit{lattice, a, level + j, found.data() + j}, stream);
      if (found.to_vector(stream)[kBfsLevelsPerCheck - 1] == 0) break;
    }
    timer.mark("search");
    platform::parallel_for(n, MarkCutOff{a}, stream);
    platform::parallel_for(m, RemoveCutOff{a}, stream);
    timer.mark("remove");
  }, send_frame);

  RunReport r = make_report(c, static_cast<int>(m), "baseline", device_description(), timer.total_ms(),
                            timer.phases_ms());
  platform::Buffer<unsigned long long> sums(5);
  sums.zero(stream);
  platform::parallel_for(n, NodeChecksum{a, sums.data()}, stream);
  platform::parallel_for(m, SpringChecksum{a, sums.data()}, stream);
  const std::vector<unsigned long long> s = sums.to_vector(stream);
  r.checksum = s[0];
  r.live = {{"AnchorNode", s[1]}, {"AnchorPullNode", s[2]}, {"Node", s[3]}, {"Spring", s[4]}};
  r.heap.emplace_back("removed", removed_text(s[1] + s[2] + s[3], c.nodes, s[4], static_cast<int>(m)));
  const std::size_t bytes = n * (sizeof(Kind) + kNodeFloats * sizeof(float) + kNodeInts * sizeof(int)) +
                            m1 * (kSpringFloats * sizeof(float) + kSpringInts * sizeof(int));
  r.heap.emplace_back("memory", std::to_string(bytes >> 20) + " MiB of arrays");
  return r;
}

}  // namespace dynasoar::example::structure
