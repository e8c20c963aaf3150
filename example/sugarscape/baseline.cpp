// Sugarscape written by hand, without dynamic allocation: one array per
// property, indexed by cell (an agent's properties live at its cell's
// index), and one kernel per phase over all cells. Same rules (rules.h),
// same checksum as the object version on every back end.
//
// Where the object version moves an agent or places a child by writing
// into another cell, the kernels here pull: the thread of the cell that
// granted a request copies the agent in (or makes the child) from the
// requester's properties, which no thread writes in that kernel, and a
// second kernel clears the cells that agents left. The flags of a step's
// requests are cleared by the next step's first kernel.
#include <stdexcept>
#include <string>
#include <vector>

#include "example/common/device_info.h"
#include "example/common/run_loop.h"
#include "example/sugarscape/rules.h"
#include "example/sugarscape/sugarscape.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/support/phase_timer.h"

namespace dynasoar::example::sugarscape {
namespace {

struct Arrays {
  // Cells.
  int* sugar;
  int* given;   // sugar given away this step, an eighth of it to each cell within kMaxVision
  int* growth;
  int* chosen;  // the requester a cell granted in the last decide, -1: none
  // Agents, at their cell's index.
  Kind* kind;
  int* vision;
  int* age;
  int* max_age;
  int* held;  // the agent's sugar
  int* endowment;
  int* metabolism;
  int* request;         // requested cell, -1: none
  int* permission;      // 1: the requested cell granted it
  int* female_request;  // males: the female proposed to (her cell), -1: none
  int* accepted;        // males: 1 if she accepted
  int* children;        // females
  int* max_children;    // females

  DYNASOAR_HD Traits traits(int c) const {
    return Traits{vision[c], max_age[c], endowment[c], metabolism[c], max_children[c]};
  }
  DYNASOAR_HD void clear_requests(int c) const {
    request[c] = -1;
    permission[c] = 0;
    female_request[c] = -1;
    accepted[c] = 0;
  }
  /// A new agent at cell c.
  DYNASOAR_HD void place(int c, Kind k, const Traits& t) const {
    kind[c] = k;
    vision[c] = t.vision;
    age[c] = 0;
    max_age[c] = t.max_age;
    held[c] = t.endowment;
    endowment[c] = t.endowment;
    metabolism[c] = t.metabolism;
    children[c] = 0;
    max_children[c] = k == Kind::kFemale ? t.max_children : 0;
    clear_requests(c);
  }
};

struct Populate {
  Grid g;
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    a.sugar[c] = 0;
    a.given[c] = 0;
    a.growth[c] = grow_rate(g, c);
    a.chosen[c] = -1;
    const Kind k = initial_kind(g, c);
    if (k == Kind::kNone) {
      a.kind[c] = Kind::kNone;
      a.clear_requests(c);
    } else {
      a.place(c, k, initial_traits(g, c));
    }
  }
};

// Also clears the agents' requests of the last step.
struct Grow {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    const int s = grown(a.sugar[c], a.growth[c]);
    const int d = diffusion(s);
    a.given[c] = d;
    a.sugar[c] = s - d;
    if (a.kind[c] != Kind::kNone) a.clear_requests(c);
  }
};

struct Diffuse {
  Grid g;
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    int received = 0;
    g.for_each_near(c, kMaxVision, [&](int n) { received += a.given[n] / 8; });
    a.sugar[c] += received;
  }
};

struct AgeAndMetabolize {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    if (a.kind[c] == Kind::kNone) return;
    a.age[c] += 1;
    a.held[c] -= a.metabolism[c];
    if (a.age[c] > a.max_age[c] || a.held[c] <= 0) a.kind[c] = Kind::kNone;
  }
};

struct PrepareMove {
  Grid g;
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    if (a.kind[c] == Kind::kNone) return;
    Best best(g.random(c, kMove));
    g.for_each_near(c, a.vision[c], [&](int n) {
      if (a.kind[n] == Kind::kNone) best.offer(n, a.sugar[n]);
    });
    a.request[c] = best.best;
  }
};

// Grants the cell to one of the agents within kMaxVision that asked for it.
struct Decide {
  Grid g;
  Arrays a;
  Purpose purpose;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    Best best(g.random(c, purpose));
    g.for_each_near(c, kMaxVision, [&](int n) {
      if (a.kind[n] != Kind::kNone && a.request[n] == c) best.offer(n, 0);
    });
    a.chosen[c] = best.best;
    if (best.best >= 0) a.permission[best.best] = 1;
  }
};

// The granted agents move in (pulled by their new cell); every agent
// harvests where it ends up. The cells they left are cleared by Leave.
struct Move {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    const int from = a.chosen[c];
    if (from >= 0) {
      a.kind[c] = a.kind[from];
      a.vision[c] = a.vision[from];
      a.age[c] = a.age[from];
      a.max_age[c] = a.max_age[from];
      a.held[c] = a.held[from];
      a.endowment[c] = a.endowment[from];
      a.metabolism[c] = a.metabolism[from];
      a.children[c] = a.children[from];
      a.max_children[c] = a.max_children[from];
      a.clear_requests(c);
    } else if (a.kind[c] == Kind::kNone || a.permission[c] != 0) {
      return;  // empty, or its agent moved away
    }
    a.held[c] += a.sugar[c];
    a.sugar[c] = 0;
    a.request[c] = -1;
  }
};

struct Leave {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (a.permission[i] != 0) {
      a.kind[i] = Kind::kNone;
      a.permission[i] = 0;
    }
  }
};

struct Propose {
  Grid g;
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    if (a.kind[c] != Kind::kMale || !ready_to_mate(a.age[c], a.held[c], a.endowment[c])) return;
    Best best(g.random(c, kPropose));
    g.for_each_near(c, a.vision[c], [&](int n) {
      if (a.kind[n] == Kind::kFemale && ready_to_mate(a.age[n], a.held[n], a.endowment[n]))
        best.offer(n, a.held[n]);
    });
    a.female_request[c] = best.best;
  }
};

struct Accept {
  Grid g;
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    if (a.kind[c] != Kind::kFemale || a.children[c] >= a.max_children[c]) return;
    Best best(g.random(c, kAccept));
    g.for_each_near(c, kMaxVision, [&](int n) {
      if (a.kind[n] == Kind::kMale && a.female_request[n] == c) best.offer(n, a.held[n]);
    });
    if (best.best >= 0) a.accepted[best.best] = 1;
  }
};

struct Birthplace {
  Grid g;
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    if (a.kind[c] != Kind::kMale || a.accepted[c] == 0) return;
    Best best(g.random(c, kBirthplace));
    g.for_each_near(c, a.vision[c], [&](int n) {
      if (a.kind[n] == Kind::kNone) best.offer(n, 0);
    });
    a.request[c] = best.best;
  }
};

// A cell that granted a father makes the child from the parents' traits
// (which no thread changes here); each father pays his and the mother's
// share of the child's sugar.
struct Birth {
  Grid g;
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    if (const int father = a.chosen[c]; father >= 0) {
      const int mother = a.female_request[father];
      Traits f = a.traits(father);
      f.max_children = 0;
      a.place(c, child_kind(g, c), child_traits(f, a.traits(mother)));
    } else if (a.kind[c] == Kind::kMale && a.accepted[c] != 0 && a.permission[c] != 0) {
      const int mother = a.female_request[c];
      a.children[mother] += 1;
      a.held[c] -= a.endowment[c] / 2;
      a.held[mother] -= a.endowment[mother] / 2;
    }
  }
};

struct Checksum {
  Arrays a;
  unsigned long long* sums;  // [0] checksum, [1] males, [2] females
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    const Kind k = a.kind[c];
    const bool agent = k != Kind::kNone;
    platform::atomic_fetch_add(&sums[0], static_cast<unsigned long long>(checksum_term(
                                             c, a.sugar[c], k, agent ? a.age[c] : 0, agent ? a.held[c] : 0,
                                             k == Kind::kFemale ? a.children[c] : 0)));
    if (agent) platform::atomic_fetch_add(&sums[k == Kind::kMale ? 1 : 2], 1ull);
  }
};

struct WriteFrame {
  Arrays a;
  std::uint8_t* out;
  DYNASOAR_HD void operator()(std::size_t i) const { out[i] = frame_byte(a.sugar[i], a.kind[i]); }
};

}  // namespace

RunReport run(const Config& c) {
  if (c.width < 2 || c.height < 2) throw std::invalid_argument("sugarscape: the grid needs at least 2x2 cells");
  refuse_checkpoints(c.checkpoint, "sugarscape", "is the hand-written baseline");
  Grid grid{c.width, c.height, c.seed, 0};
  const auto n = static_cast<std::size_t>(grid.cells());
  constexpr int kIntArrays = 16;
  platform::Buffer<int> ints(n * kIntArrays);
  platform::Buffer<Kind> kind(n);
  int* base = ints.data();
  const auto array = [&](int k) { return base + static_cast<std::size_t>(k) * n; };
  const Arrays a{array(0),  array(1),  array(2),  array(3),  kind.data(), array(4),  array(5),
                 array(6),  array(7),  array(8),  array(9),  array(10),   array(11), array(12),
                 array(13), array(14), array(15)};
  platform::Stream stream;
  platform::parallel_for(n, Populate{grid, a}, stream);

  // The viewer's copy of the grid, only where a frame is due.
  const auto send_frame = [&](int step) {
    platform::Buffer<std::uint8_t> bytes(n);
    platform::parallel_for(n, WriteFrame{a, bytes.data()}, stream);
    c.on_frame(Frame{step, c.width, c.height, bytes.to_vector(stream)});
  };
  support::PhaseTimer timer(stream);
  run_steps(c, timer, [&](int step) {
    grid.step = step;
    platform::parallel_for(n, Grow{a}, stream);
    platform::parallel_for(n, Diffuse{grid, a}, stream);
    timer.mark("sugar");
    platform::parallel_for(n, AgeAndMetabolize{a}, stream);
    timer.mark("age");
    platform::parallel_for(n, PrepareMove{grid, a}, stream);
    platform::parallel_for(n, Decide{grid, a, kMovePermit}, stream);
    platform::parallel_for(n, Move{a}, stream);
    platform::parallel_for(n, Leave{a}, stream);
    timer.mark("move");
    platform::parallel_for(n, Propose{grid, a}, stream);
    platform::parallel_for(n, Accept{grid, a}, stream);
    platform::parallel_for(n, Birthplace{grid, a}, stream);
    platform::parallel_for(n, Decide{grid, a, kBirthPermit}, stream);
    platform::parallel_for(n, Birth{grid, a}, stream);
    timer.mark("mate");
  }, send_frame);

  RunReport r = make_report(c, "baseline", device_description(), timer.total_ms(), timer.phases_ms());
  platform::Buffer<unsigned long long> sums(3);
  sums.zero(stream);
  platform::parallel_for(n, Checksum{a, sums.data()}, stream);
  const std::vector<unsigned long long> s = sums.to_vector(stream);
  r.checksum = s[0];
  r.live = {{"Male", s[1]}, {"Female", s[2]}};
  r.heap.emplace_back("memory", std::to_string(n * (kIntArrays * sizeof(int) + sizeof(Kind)) >> 20) + " MiB of arrays");
  return r;
}

}  // namespace dynasoar::example::sugarscape
