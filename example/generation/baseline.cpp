// The generation example written by hand, without dynamic allocation: the
// dense form, a 16-bit state per cell in two arrays (0 dead, 1 alive, 2 to
// states + 1 dying) and one kernel per step over the whole grid that
// computes the next generation from the current one. Same rules (rules.h),
// same checksum as the object version on every back end.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/support/phase_timer.h"
#include "example/common/device_info.h"
#include "example/common/run_loop.h"
#include "example/generation/generation.h"
#include "example/generation/rules.h"
#include "example/gol/gol.h"
#include "example/gol/initial.h"

namespace dynasoar::example::generation {
namespace {

struct Start {
  const unsigned char* alive;
  std::uint16_t* state;
  DYNASOAR_HD void operator()(std::size_t i) const { state[i] = alive[i] != 0 ? 1 : 0; }
};

struct Step {
  Grid g;
  int states;
  const std::uint16_t* now;
  std::uint16_t* next;
  unsigned long long* counters;  // [0] cells born, [1] cells that finished dying
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    const int v = now[c];
    if (v >= 2) {  // dying: one step on, or dead after the last
      const bool last = v == states + 1;
      next[c] = static_cast<std::uint16_t>(last ? 0 : v + 1);
      if (last) platform::atomic_fetch_add(&counters[1], 1ull);
      return;
    }
    int around[8];
    g.neighbors(c, around);
    int n = 0;
    for (int k = 0; k < 8; ++k) n += now[around[k]] == 1 ? 1 : 0;
    if (v == 1) {
      next[c] = survives(n) ? 1 : 2;
    } else {
      next[c] = born(n) ? 1 : 0;
      if (born(n)) platform::atomic_fetch_add(&counters[0], 1ull);
    }
  }
};

struct Checksum {
  const std::uint16_t* state;
  unsigned long long* sums;  // [0] checksum, [1] alive and dying cells
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (state[i] == 0) return;
    platform::atomic_fetch_add(&sums[0], static_cast<unsigned long long>(checksum_term(static_cast<int>(i), state[i] - 1)));
    platform::atomic_fetch_add(&sums[1], 1ull);
  }
};

struct WriteFrame {
  const std::uint16_t* state;
  int states;
  std::uint8_t* out;
  DYNASOAR_HD void operator()(std::size_t i) const {
    out[i] = state[i] == 0 ? std::uint8_t{kFrameDead} : frame_byte(state[i] - 1, states);
  }
};

}  // namespace

RunReport run(const Config& c) {
  if (c.width < 3 || c.height < 3) throw std::invalid_argument("generation: the grid needs at least 3x3 cells");
  if (c.states < 1 || c.states > 65534)
    throw std::invalid_argument("generation: the baseline holds 1 to 65534 dying steps");
  refuse_checkpoints(c.checkpoint, "generation", "is the hand-written baseline");
  const Grid grid{c.width, c.height};
  const auto n = static_cast<std::size_t>(grid.cells());
  platform::Stream stream;
  platform::Buffer<std::uint16_t> a(n), b(n);
  platform::Buffer<unsigned long long> counters(2);
  counters.zero(stream);
  {
    platform::Buffer<unsigned char> initial(n);
    platform::parallel_for(n, gol::FillSoup{initial.data(), c.seed, gol::soup_threshold(c.density)}, stream);
    platform::parallel_for(n, Start{initial.data(), a.data()}, stream);
    platform::synchronize(stream);
  }
  std::uint16_t* now = a.data();
  std::uint16_t* next = b.data();

  // The viewer's copy of the grid, only where a frame is due.
  const auto send_frame = [&](int step) {
    platform::Buffer<std::uint8_t> bytes(n);
    platform::parallel_for(n, WriteFrame{now, c.states, bytes.data()}, stream);
    Frame f{step, c.width, c.height, bytes.to_vector(stream)};
    mark_candidates(f);
    c.on_frame(f);
  };
  support::PhaseTimer timer(stream);
  run_steps(c, timer, [&](int) {
    platform::parallel_for(n, Step{grid, c.states, now, next, counters.data()}, stream);
    timer.mark("step");
    std::swap(now, next);
  }, send_frame);

  RunReport r = make_report(c, "baseline", device_description(), timer.total_ms(), timer.phases_ms());
  platform::Buffer<unsigned long long> sums(2);
  sums.zero(stream);
  platform::parallel_for(n, Checksum{now, sums.data()}, stream);
  const std::vector<unsigned long long> s = sums.to_vector(stream);
  const std::vector<unsigned long long> k = counters.to_vector(stream);
  r.checksum = s[0];
  r.live = {{"Alive", s[1]}};
  r.heap.emplace_back(churn_line(k[0], k[1]));
  r.heap.emplace_back("memory", std::to_string((2 * n * sizeof(std::uint16_t)) >> 20) + " MiB of arrays");
  return r;
}

}  // namespace dynasoar::example::generation
