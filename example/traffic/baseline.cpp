// Traffic written by hand, without dynamic allocation (after the original
// DynaSOAr's baseline_soa): one array per property, a car's properties at
// its cell's index, and one kernel per phase; the producers and the lights
// have arrays of their own. Same rules (rules.h), same checksum as the
// object version on every back end.
//
// A car moves by copying its properties to the cell at the end of its path
// (no other car enters that cell in the step, rules.h) and marking it;
// a last kernel turns the marks into cars, so that no thread reads what
// another one writes within a kernel.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/support/phase_timer.h"
#include "example/common/device_info.h"
#include "example/common/run_loop.h"
#include "example/traffic/device_network.h"
#include "example/traffic/rules.h"
#include "example/traffic/traffic.h"

namespace dynasoar::example::traffic {
namespace {

// The cells a car passes in its move.
struct Path {
  std::int32_t cell[kMaxVelocity];
};

struct Arrays {
  NetView net;
  // Cells.
  std::uint8_t* has_car;
  std::uint8_t* arriving;  // a car moved here in this step's Move
  std::uint8_t* limit;     // the speed limit now: 0 at a red light
  // Cars, at their cell's index.
  RandomStream* rng;
  Path* path;
  std::uint8_t* velocity;
  std::uint8_t* max_velocity;
  // Producers, by their own index.
  const std::int32_t* producer_cell;
  RandomStream* producer_rng;
  // Lights, by intersection.
  std::int32_t* timer;
  std::int32_t* phase;
  unsigned long long* counters;  // [0] cars made, [1] cars removed
};

/// How a car sees the network (rules.h's plan_move).
struct Road {
  const Arrays* a;
  DYNASOAR_HD bool free(int c) const { return a->has_car[c] == 0; }
  DYNASOAR_HD bool stops(int c) const { return (a->net.flags[c] & kTarget) != 0 || a->net.out_count(c) == 0; }
  DYNASOAR_HD int limit(int c) const { return a->limit[c]; }
  DYNASOAR_HD int out_count(int c) const { return a->net.out_count(c); }
  DYNASOAR_HD int out(int c, int k) const { return a->net.out_cell(c, k); }
};

struct Initialize {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    a.has_car[i] = 0;
    a.arriving[i] = 0;
    a.limit[i] = (a.net.flags[i] & kLight) != 0 ? std::uint8_t{0} : a.net.speed[i];
  }
};

struct InitializeProducer {
  Arrays a;
  std::uint64_t seed;
  DYNASOAR_HD void operator()(std::size_t p) const { a.producer_rng[p] = producer_stream(seed, a.producer_cell[p]); }
};

struct Produce {
  Arrays a;
  std::uint64_t seed;
  DYNASOAR_HD void operator()(std::size_t p) const {
    const int c = a.producer_cell[p];
    if (a.has_car[c] != 0) return;
    RandomStream r = a.producer_rng[p];
    if (makes_car(r)) {
      a.max_velocity[c] = static_cast<std::uint8_t>(new_car_max_velocity(r));
      a.velocity[c] = 0;
      a.rng[c] = car_stream(seed, c, r);
      a.has_car[c] = 1;
      platform::atomic_fetch_add(&a.counters[0], 1ull);
    }
    a.producer_rng[p] = r;
  }
};

struct Lights {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int n = a.net.in_degree[i];
    if (n == 0 || !light_switches(a.timer[i])) return;
    const std::int32_t* cells = a.net.in + i * kMaxDegree;
    a.limit[cells[a.phase[i]]] = 0;
    a.phase[i] = a.phase[i] + 1 == n ? 0 : a.phase[i] + 1;
    const int green = cells[a.phase[i]];
    a.limit[green] = a.net.speed[green];
  }
};

struct Plan {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (a.has_car[i] == 0) return;
    const int c = static_cast<int>(i);
    int route[kMaxVelocity];
    RandomStream r = a.rng[c];
    const int v = plan_move(Road{&a}, c, r, a.velocity[c], a.max_velocity[c], route);
    for (int k = 0; k < v; ++k) a.path[c].cell[k] = route[k];
    a.velocity[c] = static_cast<std::uint8_t>(v);
    a.rng[c] = r;
  }
};

struct Move {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const int c = static_cast<int>(i);
    if (a.has_car[c] == 0 || a.velocity[c] == 0) return;
    const int to = a.path[c].cell[a.velocity[c] - 1];
    a.has_car[c] = 0;
    if (Road{&a}.stops(to)) {
      platform::atomic_fetch_add(&a.counters[1], 1ull);
      return;
    }
    a.rng[to] = a.rng[c];
    a.velocity[to] = a.velocity[c];
    a.max_velocity[to] = a.max_velocity[c];
    a.arriving[to] = 1;
  }
};

struct Arrive {
  Arrays a;
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (a.arriving[i] == 0) return;
    a.arriving[i] = 0;
    a.has_car[i] = 1;
  }
};

struct Checksum {
  Arrays a;
  unsigned long long* sums;  // [0] checksum, [1] cars
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (a.has_car[i] == 0) return;
    const int c = static_cast<int>(i);
    platform::atomic_fetch_add(&sums[0], static_cast<unsigned long long>(checksum_term(
                                             c, a.velocity[c], a.max_velocity[c], a.rng[c].position())));
    platform::atomic_fetch_add(&sums[1], 1ull);
  }
};

struct WriteFrame {
  Arrays a;
  std::uint8_t* out;
  DYNASOAR_HD void operator()(std::size_t i) const { out[i] = frame_byte(a.has_car[i] != 0, a.limit[i] == 0); }
};

}  // namespace

RunReport run(const Config& c) {
  refuse_checkpoints(c.checkpoint, "traffic", "is the hand-written baseline");
  const Network net = build_network(c.intersections, c.seed);
  const auto n = static_cast<std::size_t>(net.cells());
  const auto lights = static_cast<std::size_t>(net.intersections);
  platform::Stream stream;
  const DeviceNetwork device_net(net, stream);
  std::vector<std::int32_t> producer_cells;
  producer_cells.reserve(static_cast<std::size_t>(net.producers));
  for (std::size_t i = 0; i < n; ++i)
    if ((net.flags[i] & kProducer) != 0) producer_cells.push_back(static_cast<std::int32_t>(i));
  const std::size_t producers = producer_cells.size();

  platform::Buffer<std::uint8_t> bytes(n * 5);
  platform::Buffer<RandomStream> rng(n), producer_rng(producers);
  platform::Buffer<Path> path(n);
  platform::Buffer<std::int32_t> producer_cell(producers), light_state(2 * lights);
  producer_cell.copy_from_host(producer_cells.data(), producers, stream);
  light_state.zero(stream);
  platform::Buffer<unsigned long long> counters(2);
  counters.zero(stream);
  std::uint8_t* base = bytes.data();
  const Arrays a{device_net.view(), base,         base + n,     base + 2 * n,          rng.data(),
                 path.data(),       base + 3 * n, base + 4 * n, producer_cell.data(), producer_rng.data(),
                 light_state.data(), light_state.data() + lights, counters.data()};
  platform::parallel_for(n, Initialize{a}, stream);
  platform::parallel_for(producers, InitializeProducer{a, c.seed}, stream);

  // The viewer's copy of the cells, only where a frame is due.
  const auto send_frame = [&](int step) {
    platform::Buffer<std::uint8_t> frame(n);
    platform::parallel_for(n, WriteFrame{a, frame.data()}, stream);
    c.on_frame(Frame{step, &net, frame.to_vector(stream)});
  };
  support::PhaseTimer timer(stream);
  run_steps(c, timer, [&](int) {
    platform::parallel_for(producers, Produce{a, c.seed}, stream);
    timer.mark("produce");
    platform::parallel_for(lights, Lights{a}, stream);
    timer.mark("lights");
    platform::parallel_for(n, Plan{a}, stream);
    timer.mark("plan");
    platform::parallel_for(n, Move{a}, stream);
    platform::parallel_for(n, Arrive{a}, stream);
    timer.mark("move");
  }, send_frame);

  RunReport r = make_report(c, net, "baseline", device_description(), timer.total_ms(), timer.phases_ms());
  platform::Buffer<unsigned long long> sums(2);
  sums.zero(stream);
  platform::parallel_for(n, Checksum{a, sums.data()}, stream);
  const std::vector<unsigned long long> s = sums.to_vector(stream);
  const std::vector<unsigned long long> made = counters.to_vector(stream);
  r.checksum = s[0];
  r.live = {{"Car", s[1]}};
  r.heap.emplace_back(churn_line(made[0], made[1]));
  const std::size_t array_bytes = n * (5 + sizeof(RandomStream) + sizeof(Path)) +
                                  producers * (sizeof(std::int32_t) + sizeof(RandomStream)) +
                                  lights * 2 * sizeof(std::int32_t);
  r.heap.emplace_back("memory", std::to_string(array_bytes >> 20) + " MiB of arrays besides the network");
  return r;
}

}  // namespace dynasoar::example::traffic
