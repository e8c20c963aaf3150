// Game of life written by hand, without dynamic allocation (the baseline of
// DynaSOAr paper Sec. 6): one byte per cell in two arrays, and one kernel
// per step over the whole grid that computes the next generation from the
// current one. Same checksum as the object version on every back end.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "example/common/device_info.h"
#include "example/common/run_loop.h"
#include "example/gol/gol.h"
#include "example/gol/initial.h"
#include "example/gol/rules.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/support/phase_timer.h"

namespace dynasoar::example::gol {
namespace {

struct Step {
  Grid g;
  const unsigned char* now;
  unsigned char* next;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    int around[8];
    g.neighbors(c, around);
    int n = 0;
    for (int k = 0; k < 8; ++k) n += now[around[k]];
    next[c] = next_alive(now[c] != 0, n) ? 1 : 0;
  }
};

struct Checksum {
  const unsigned char* alive;
  unsigned long long* sums;  // [0] checksum, [1] alive cells
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (alive[i] == 0) return;
    platform::atomic_fetch_add(&sums[0], static_cast<unsigned long long>(checksum_term(static_cast<int>(i))));
    platform::atomic_fetch_add(&sums[1], 1ull);
  }
};

}  // namespace

RunReport run(const Config& c) {
  check_one_rank(c.ranks, "this program");
  if (c.width < 3 || c.height < 3) throw std::invalid_argument("game of life: the grid needs at least 3x3 cells");
  refuse_checkpoints(c.checkpoint, "gol", "is the hand-written baseline");
  const Grid grid{c.width, c.height};
  const auto n = static_cast<std::size_t>(grid.cells());
  platform::Stream stream;
  platform::Buffer<unsigned char> a(n), b(n);
  initial_state(c, a, stream);
  unsigned char* now = a.data();
  unsigned char* next = b.data();

  // The viewer's copy of the grid, only where a frame is due.
  const auto send_frame = [&](int step) {
    Frame f{step, c.width, c.height, std::vector<std::uint8_t>(n)};
    (now == a.data() ? a : b).copy_to_host(f.cells.data(), n, 0, stream);
    mark_candidates(f);
    c.on_frame(f);
  };
  support::PhaseTimer timer(stream);
  run_steps(c, timer, [&](int) {
    platform::parallel_for(n, Step{grid, now, next}, stream);
    timer.mark("step");
    std::swap(now, next);
  }, send_frame);

  RunReport r = make_report(c, "baseline", device_description(), timer.total_ms(), timer.phases_ms());
  platform::Buffer<unsigned long long> sums(2);
  sums.zero(stream);
  platform::parallel_for(n, Checksum{now, sums.data()}, stream);
  const std::vector<unsigned long long> s = sums.to_vector(stream);
  r.checksum = s[0];
  r.live = {{"Alive", s[1]}};
  r.heap.emplace_back("memory", std::to_string((2 * n) >> 20) + " MiB of arrays");
  return r;
}

}  // namespace dynasoar::example::gol
