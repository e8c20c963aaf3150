// n-body written by hand, without dynamic allocation (the baseline of
// DynaSOAr paper Sec. 6): one array per property, indexed by body, and one
// kernel per phase over all bodies; each thread sums its body's
// acceleration over all bodies from global memory. In the collision variant
// absorbed bodies are marked dead and skipped. Same physics (rules.h), same
// checksum up to rounding as the object version on every back end.
#include <stdexcept>
#include <string>
#include <vector>

#include "example/common/device_info.h"
#include "example/common/run_loop.h"
#include "example/nbody/nbody.h"
#include "example/nbody/rules.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/support/phase_timer.h"

namespace dynasoar::example::nbody {
namespace {

struct Arrays {
  int n;
  float *x, *y, *vx, *vy, *ax, *ay, *mass;
  unsigned char* alive;
  unsigned char* absorbed;
  int* target;  // collision variant: index of the merge partner, -1: none
  float *in_mass, *in_mx, *in_my, *in_px, *in_py;
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
    a.alive[i] = 1;
    a.absorbed[i] = 0;
    a.target[i] = -1;
    a.in_mass[i] = a.in_mx[i] = a.in_my[i] = a.in_px[i] = a.in_py[i] = 0.0f;
  }
};

// Without collisions every body is alive: no test in the inner loop.
template <bool kCollisions>
struct Forces {
  Arrays a;
  Physics p;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (kCollisions && !a.alive[i]) return;
    const float px = a.x[i], py = a.y[i];
    float sx = 0.0f, sy = 0.0f;
    for (int j = 0; j < a.n; ++j)
      if (!kCollisions || a.alive[j]) add_acceleration(p, px, py, a.x[j], a.y[j], a.mass[j], sx, sy);
    a.ax[i] = sx;
    a.ay[i] = sy;
  }
};

struct Move {
  Arrays a;
  Physics p;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (!a.alive[i]) return;
    move(p, a.x[i], a.vx[i], a.ax[i]);
    move(p, a.y[i], a.vy[i], a.ay[i]);
  }
};

struct FindPartner {
  Arrays a;
  Physics p;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (!a.alive[i]) return;
    const float px = a.x[i], py = a.y[i], m = a.mass[i];
    const int me = static_cast<int>(i);
    int best = -1;
    float best_mass = 0.0f;
    for (int j = 0; j < a.n; ++j) {
      if (!a.alive[j]) continue;
      const float dx = a.x[j] - px, dy = a.y[j] - py, om = a.mass[j];
      if (may_merge_into(p, dx * dx + dy * dy, m, me, om, j) && better_partner(om, j, best_mass, best)) {
        best = j;
        best_mass = om;
      }
    }
    a.target[i] = best;
  }
};

struct GiveToPartner {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (!a.alive[i]) return;
    const int t = a.target[i];
    if (t < 0 || a.target[t] >= 0) return;
    const float m = a.mass[i];
    platform::atomic_fetch_add(&a.in_mass[t], m);
    platform::atomic_fetch_add(&a.in_mx[t], m * a.x[i]);
    platform::atomic_fetch_add(&a.in_my[t], m * a.y[i]);
    platform::atomic_fetch_add(&a.in_px[t], m * a.vx[i]);
    platform::atomic_fetch_add(&a.in_py[t], m * a.vy[i]);
    a.absorbed[i] = 1;
  }
};

struct TakeIn {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (!a.alive[i]) return;
    if (a.absorbed[i]) {
      a.alive[i] = 0;
      return;
    }
    const float im = a.in_mass[i];
    if (im == 0.0f) return;
    const float m = a.mass[i], total = m + im;
    a.x[i] = (m * a.x[i] + a.in_mx[i]) / total;
    a.y[i] = (m * a.y[i] + a.in_my[i]) / total;
    a.vx[i] = (m * a.vx[i] + a.in_px[i]) / total;
    a.vy[i] = (m * a.vy[i] + a.in_py[i]) / total;
    a.mass[i] = total;
    a.in_mass[i] = a.in_mx[i] = a.in_my[i] = a.in_px[i] = a.in_py[i] = 0.0f;
  }
};

// The viewer's copy; merged: it took in another body.
struct WriteFrame {
  Arrays a;
  Physics p;
  std::uint64_t seed;
  FrameBody* out;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const float m = a.mass[i];
    out[i] = FrameBody{a.x[i], a.y[i], m, a.alive[i],
                       m != initial_body(p, seed, static_cast<int>(i)).mass};
  }
};

struct Checksum {
  Arrays a;
  double* sum;
  unsigned long long* count;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (!a.alive[i]) return;
    platform::atomic_fetch_add(sum, checksum_term(a.x[i], a.y[i], a.vx[i], a.vy[i], a.mass[i]));
    platform::atomic_fetch_add(count, 1ull);
  }
};

}  // namespace

RunReport run(const Config& c) {
  check_one_rank(c.ranks, "this program");
  if (c.bodies < 1) throw std::invalid_argument("n-body: needs at least one body");
  refuse_checkpoints(c.checkpoint, "nbody", "is the hand-written baseline");
  const auto n = static_cast<std::size_t>(c.bodies);
  std::vector<platform::Buffer<float>> floats;
  for (int k = 0; k < 12; ++k) floats.emplace_back(n);
  platform::Buffer<unsigned char> alive(n), absorbed(n);
  platform::Buffer<int> target(n);
  const Arrays a{c.bodies,           floats[0].data(),  floats[1].data(), floats[2].data(),
                 floats[3].data(),   floats[4].data(),  floats[5].data(), floats[6].data(),
                 alive.data(),       absorbed.data(),   target.data(),    floats[7].data(),
                 floats[8].data(),   floats[9].data(),  floats[10].data(), floats[11].data()};
  platform::Stream stream;
  platform::parallel_for(n, Init{a, c.physics, c.seed}, stream);

  // The viewer's copy of the bodies, only where a frame is due.
  const auto send_frame = [&](int step) {
    platform::Buffer<FrameBody> bodies(n);
    platform::parallel_for(n, WriteFrame{a, c.physics, c.seed, bodies.data()}, stream);
    c.on_frame(Frame{step, c.collisions, bodies.to_vector(stream)});
  };
  support::PhaseTimer timer(stream);
  run_steps(c, timer, [&](int) {
    if (c.collisions)
      platform::parallel_for(n, Forces<true>{a, c.physics}, stream);
    else
      platform::parallel_for(n, Forces<false>{a, c.physics}, stream);
    timer.mark("forces");
    platform::parallel_for(n, Move{a, c.physics}, stream);
    timer.mark("move");
    if (c.collisions) {
      platform::parallel_for(n, FindPartner{a, c.physics}, stream);
      timer.mark("merge partners");
      platform::parallel_for(n, GiveToPartner{a}, stream);
      platform::parallel_for(n, TakeIn{a}, stream);
      timer.mark("merge");
    }
  }, send_frame);

  RunReport r = make_report(c, "baseline", device_description(), timer.total_ms(), timer.phases_ms());
  platform::Buffer<double> sum(1);
  platform::Buffer<unsigned long long> count(1);
  sum.zero(stream);
  count.zero(stream);
  platform::parallel_for(n, Checksum{a, sum.data(), count.data()}, stream);
  const std::uint64_t bodies = count.to_vector(stream)[0];
  r.float_checksum = sum.to_vector(stream)[0] + static_cast<double>(bodies);
  r.live = {{"Body", bodies}};
  r.heap.emplace_back("memory", std::to_string((n * (12 * sizeof(float) + 2 + sizeof(int))) >> 10) +
                                    " KiB of arrays");
  return r;
}

}  // namespace dynasoar::example::nbody
