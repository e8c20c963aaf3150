// wa-tor written by hand, without dynamic allocation (the baseline of
// DynaSOAr paper Sec. 6): one array per property, indexed by cell, and one
// kernel per phase over all cells. Same rules (rules.h), same checksum as the
// object version on every back end.
//
// The update kernels pull: the thread of a cell that chose a requester moves
// that agent's state in and writes what stays behind (nothing or a newborn)
// into the cell it came from. Each cell is written by exactly one thread, so
// no agent can be moved twice in one kernel.
#include <stdexcept>
#include <string>
#include <vector>

#include "example/common/device_info.h"
#include "example/common/run_loop.h"
#include "example/wator/rules.h"
#include "example/wator/wator.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/support/phase_timer.h"

namespace dynasoar::example::wator {
namespace {

struct Arrays {
  Kind* kind;
  int* age;
  int* energy;
  unsigned* requests;    // request bits (decide clears them for the next phase)
  signed char* chosen;  // direction of the requester a cell chose, -1: none
};

struct Populate {
  Grid g;
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    const Kind k = initial_kind(g, c);
    a.kind[c] = k;
    a.age[c] = k == Kind::kEmpty ? 0 : initial_age(g, c, k);
    a.energy[c] = k == Kind::kShark ? kSharkStartEnergy : 0;
  }
};

// Sets a request bit in the neighbour chosen among `mask`.
DYNASOAR_HD inline void request_move(const Grid& g, const Arrays& a, int c, unsigned mask,
                                     Purpose purpose) {
  const int d = pick_direction(mask, g.random(c, purpose));
  if (d >= 0) platform::atomic_fetch_or(&a.requests[g.neighbor(c, d)], 1u << opposite(d));
}
DYNASOAR_HD inline unsigned neighbors_of_kind(const Grid& g, const Arrays& a, int c, Kind k) {
  unsigned mask = 0;
  for (int d = 0; d < 4; ++d)
    if (a.kind[g.neighbor(c, d)] == k) mask |= 1u << d;
  return mask;
}

struct FishPrepare {
  Grid g;
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    if (a.kind[c] != Kind::kFish) return;
    a.age[c] += 1;
    request_move(g, a, c, neighbors_of_kind(g, a, c, Kind::kEmpty), kFishMove);
  }
};

struct SharkPrepare {
  Grid g;
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    if (a.kind[c] != Kind::kShark) return;
    a.age[c] += 1;
    a.energy[c] -= 1;
    if (a.energy[c] <= 0) return;  // dies; asks for nothing
    const unsigned fish = neighbors_of_kind(g, a, c, Kind::kFish);
    request_move(g, a, c, fish != 0 ? fish : neighbors_of_kind(g, a, c, Kind::kEmpty), kSharkMove);
  }
};

struct Decide {
  Grid g;
  Arrays a;
  Purpose purpose;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    const unsigned r = a.requests[c];
    if (r != 0) a.requests[c] = 0u;
    a.chosen[c] = static_cast<signed char>(r == 0 ? -1 : pick_direction(r, g.random(c, purpose)));
  }
};

struct FishUpdate {
  Grid g;
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int to = static_cast<int>(i);
    if (a.chosen[to] < 0) return;
    const int from = g.neighbor(to, a.chosen[to]);
    const bool breed = a.age[from] >= kFishBreedTime;
    a.kind[to] = Kind::kFish;
    a.age[to] = breed ? 0 : a.age[from];
    a.kind[from] = breed ? Kind::kFish : Kind::kEmpty;
    a.age[from] = 0;
  }
};

struct SharkUpdate {
  Grid g;
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int to = static_cast<int>(i);
    if (a.chosen[to] < 0) return;
    const int from = g.neighbor(to, a.chosen[to]);
    const bool breed = a.age[from] >= kSharkBreedTime;
    const int eaten = a.kind[to] == Kind::kFish ? kSharkFishEnergy : 0;
    a.kind[to] = Kind::kShark;
    a.age[to] = breed ? 0 : a.age[from];
    a.energy[to] = a.energy[from] + eaten;
    a.kind[from] = breed ? Kind::kShark : Kind::kEmpty;
    a.age[from] = 0;
    a.energy[from] = breed ? kSharkStartEnergy : 0;
  }
};

// After the moves, a shark without energy is one that starved this step:
// every shark that moved or was born has energy left.
struct SharkStarve {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (a.kind[i] == Kind::kShark && a.energy[i] <= 0) {
      a.kind[i] = Kind::kEmpty;
      a.age[i] = 0;
      a.energy[i] = 0;
    }
  }
};

struct Checksum {
  Arrays a;
  unsigned long long* sum;
  unsigned long long* counts;  // [0] fish, [1] sharks
  DYNASOAR_HD void operator()(std::size_t i) const {
    const Kind k = a.kind[i];
    if (k == Kind::kEmpty) return;
    platform::atomic_fetch_add(sum, static_cast<unsigned long long>(checksum_term(
                                        static_cast<int>(i), k, a.age[i],
                                        k == Kind::kShark ? a.energy[i] : 0)));
    platform::atomic_fetch_add(&counts[k == Kind::kShark ? 1 : 0], 1ull);
  }
};

/// The checksum, the fish and the sharks, in that order.
std::vector<unsigned long long> count_agents(const Arrays& a, std::size_t n, platform::Stream stream) {
  platform::Buffer<unsigned long long> sums(3);
  sums.zero(stream);
  platform::parallel_for(n, Checksum{a, sums.data(), sums.data() + 1}, stream);
  return sums.to_vector(stream);
}

}  // namespace

RunReport run(const Config& c) {
  check_one_rank(c.ranks, "this program");
  if (c.width < 2 || c.height < 2) throw std::invalid_argument("wa-tor: the grid needs at least 2x2 cells");
  refuse_checkpoints(c.checkpoint, "wator", "is the hand-written baseline");
  Grid grid{c.width, c.height, c.seed, 0};
  const auto n = static_cast<std::size_t>(grid.cells());
  platform::Buffer<Kind> kind(n);
  platform::Buffer<int> age(n), energy(n);
  platform::Buffer<unsigned> requests(n);
  platform::Buffer<signed char> chosen(n);
  const Arrays a{kind.data(), age.data(), energy.data(), requests.data(), chosen.data()};
  platform::Stream stream;
  requests.zero(stream);
  platform::parallel_for(n, Populate{grid, a}, stream);

  // The viewer's copy of the grid, only where a frame is due.
  const auto send_frame = [&](int step) {
    const std::vector<Kind> k = kind.to_vector(stream);
    Frame f{step, c.width, c.height, std::vector<std::uint8_t>(k.size())};
    for (std::size_t i = 0; i < k.size(); ++i) f.cells[i] = static_cast<std::uint8_t>(k[i]);
    c.on_frame(f);
  };
  support::PhaseTimer timer(stream);
  double traced_ms = 0;  // --trace: total up to the last step
  run_steps(c, timer, [&](int step) {
    grid.step = step;
    platform::parallel_for(n, FishPrepare{grid, a}, stream);
    timer.mark("fish prepare");
    platform::parallel_for(n, Decide{grid, a, kFishDecide}, stream);
    timer.mark("decide");
    platform::parallel_for(n, FishUpdate{grid, a}, stream);
    timer.mark("fish update");
    platform::parallel_for(n, SharkPrepare{grid, a}, stream);
    timer.mark("shark prepare");
    platform::parallel_for(n, Decide{grid, a, kSharkDecide}, stream);
    timer.mark("decide");
    platform::parallel_for(n, SharkUpdate{grid, a}, stream);
    platform::parallel_for(n, SharkStarve{a}, stream);
    timer.mark("shark update");
    if (c.on_trace) {
      const double total = timer.total_ms();  // waits for the step
      timer.pause();
      StepTrace t;
      t.step = step;
      t.ms = total - traced_ms;
      traced_ms = total;
      const std::vector<unsigned long long> s = count_agents(a, n, stream);
      t.fish = s[1];
      t.sharks = s[2];
      c.on_trace(t);
      timer.resume();
    }
  }, send_frame);

  RunReport r = make_report(c, "baseline", device_description(), timer.total_ms(), timer.phases_ms());
  const std::vector<unsigned long long> s = count_agents(a, n, stream);
  r.checksum = s[0];
  r.live = {{"Fish", s[1]}, {"Shark", s[2]}};
  r.heap.emplace_back("memory", std::to_string(n * (sizeof(Kind) + 2 * sizeof(int) + sizeof(unsigned) + 1) >> 20) + " MiB of arrays");
  return r;
}

}  // namespace dynasoar::example::wator
