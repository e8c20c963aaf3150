// Traffic as an SMMO program: the cells of the street network, the traffic
// lights and the cars are objects, linked by pointer fields (a cell's
// successors, the car on it, a car's cell and planned path, a light's
// cells). ProducerCell, a subclass of Cell, makes cars with `new` inside a
// do-all over the producers alone; a car that reaches its target destroys
// itself. A step is four do-alls (rules.h). The same source is built for
// every back end that can free (traffic_<back end>).
#include <dynasoar/dynasoar.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "dynasoar/support/phase_timer.h"
#include "example/common/checkpoint.h"
#include "example/common/device_info.h"
#include "example/common/make_heap.h"
#include "example/common/run_loop.h"
#include "example/traffic/device_network.h"
#include "example/traffic/rules.h"
#include "example/traffic/traffic.h"

namespace dynasoar::example::traffic {
namespace {

class Cell;
class ProducerCell;
class Car;
class TrafficLight;
using AllocatorT = dynasoar::Allocator<Cell, ProducerCell, Car, TrafficLight>;

/// What the step's methods need: the seed of the cars' streams, the
/// allocator, and the counts of cars made and removed.
struct World {
  std::uint64_t seed;
  AllocatorT alloc;
  unsigned long long* counters;  // [0] cars made, [1] cars removed
};

/// What building the network needs: its arrays and every cell by its index
/// (plain cells and producers are made by one parallel_new_indexed each).
struct Setup {
  NetView net;
  dynasoar::ObjectIndex<AllocatorT, Cell> plain;
  dynasoar::ObjectIndex<AllocatorT, ProducerCell> producers;
  const std::int32_t* local;  // cell c's index in `plain` or `producers`

  DYNASOAR_HD Cell* cell_at(int c) const;
};

class Cell : public AllocatorT::Base {
 public:
  declare_field_types(Cell, Cell*[kMaxDegree], Car*, int, int, int, int, bool)
  Field<Cell, 0> outgoing;       // the cells a car may enter from here
  Field<Cell, 1> car;            // the car on this cell, or null
  Field<Cell, 2> num_outgoing;
  Field<Cell, 3> max_velocity;   // the street's speed limit
  Field<Cell, 4> current_max_velocity;  // the limit now: 0 at a red light
  Field<Cell, 5> id;             // index in the network
  Field<Cell, 6> is_target;      // cars that reach it leave the network

  /// Cell ids[j] of the network.
  DYNASOAR_HD Cell(int j, NetView net, const std::int32_t* ids)
      : car(nullptr), num_outgoing(net.out_count(ids[j])), max_velocity(net.speed[ids[j]]),
        current_max_velocity((net.flags[ids[j]] & kLight) != 0 ? 0 : static_cast<int>(net.speed[ids[j]])),
        id(ids[j]), is_target((net.flags[ids[j]] & kTarget) != 0) {}

  DYNASOAR_HD bool is_free() const { return static_cast<Car*>(car) == nullptr; }

  /// Points to the cells after this one.
  DYNASOAR_HD void link(Setup s) {
    for (int k = 0; k < num_outgoing; ++k) outgoing[k] = s.cell_at(s.net.out_cell(id, k));
  }

  DYNASOAR_HD void write_frame(std::uint8_t* out) {
    out[static_cast<int>(id)] = frame_byte(!is_free(), current_max_velocity == 0);
  }
};

class ProducerCell : public Cell {
 public:
  declare_field_types(ProducerCell, RandomStream)
  Field<ProducerCell, 0> rng;

  DYNASOAR_HD ProducerCell(int j, NetView net, const std::int32_t* ids, std::uint64_t seed)
      : Cell(j, net, ids), rng(producer_stream(seed, ids[j])) {}

  DYNASOAR_HD void create_car(World w);
};

/// How a car sees the network (rules.h's plan_move).
struct Road {
  DYNASOAR_HD bool free(const Cell* c) const { return c->is_free(); }
  DYNASOAR_HD bool stops(const Cell* c) const { return c->is_target || c->num_outgoing == 0; }
  DYNASOAR_HD int limit(const Cell* c) const { return c->current_max_velocity; }
  DYNASOAR_HD int out_count(const Cell* c) const { return c->num_outgoing; }
  DYNASOAR_HD Cell* out(const Cell* c, int k) const { return c->outgoing[k]; }
};

class Car : public AllocatorT::Base {
 public:
  declare_field_types(Car, RandomStream, Cell*[kMaxVelocity], Cell*, int, int)
  Field<Car, 0> rng;
  Field<Car, 1> path;          // the cells it passes in this step's move
  Field<Car, 2> position;
  Field<Car, 3> velocity;      // cells it moves in this step
  Field<Car, 4> max_velocity;

  DYNASOAR_HD Car(const RandomStream& r, Cell* at, int max_v)
      : rng(r), position(at), velocity(0), max_velocity(max_v) {}

  /// Phase 3: the path and the velocity of this step.
  DYNASOAR_HD void prepare() {
    Cell* route[kMaxVelocity];
    RandomStream r = rng;
    const int v = plan_move(Road{}, static_cast<Cell*>(position), r, velocity, max_velocity, route);
    for (int i = 0; i < v; ++i) path[i] = route[i];
    velocity = v;
    rng = r;
  }

  /// Phase 4: to the end of the path; off the network at a target.
  DYNASOAR_HD void move(World w) {
    const int v = velocity;
    if (v == 0) return;
    Cell* to = path[v - 1];
    static_cast<Cell*>(position)->car = nullptr;
    if (Road{}.stops(to)) {
      platform::atomic_fetch_add(&w.counters[1], 1ull);
      dynasoar::destroy(w.alloc, this);
      return;
    }
    to->car = this;
    position = to;
  }

  /// sums[0]: the checksum; sums[1]: cars whose cell does not point back to
  /// them (two cars that entered one cell), which must stay 0.
  DYNASOAR_HD void add_checksum(unsigned long long* sums) {
    const Cell* at = position;
    if (static_cast<Car*>(at->car) != this) platform::atomic_fetch_add(&sums[1], 1ull);
    platform::atomic_fetch_add(&sums[0], static_cast<unsigned long long>(
                                             checksum_term(at->id, velocity, max_velocity, rng->position())));
  }
};

/// Phase 1: a free producer makes a car on itself, now and then.
DYNASOAR_HD void ProducerCell::create_car(World w) {
  if (!is_free()) return;
  RandomStream r = rng;
  if (makes_car(r)) {
    const int max_v = new_car_max_velocity(r);
    Car* made = new (w.alloc) Car(car_stream(w.seed, id, r), this, max_v);
    car = made;  // null if the heap is full (the error flag is raised)
    if (made != nullptr) platform::atomic_fetch_add(&w.counters[0], 1ull);
  }
  rng = r;
}

/// An intersection's lights: the last cells of the streets that end there,
/// green one at a time, in turn.
class TrafficLight : public AllocatorT::Base {
 public:
  declare_field_types(TrafficLight, Cell*[kMaxDegree], int, int, int)
  Field<TrafficLight, 0> cells;
  Field<TrafficLight, 1> num_cells;
  Field<TrafficLight, 2> timer;
  Field<TrafficLight, 3> phase;  // the cell that has green (after the first switch)

  /// The lights of intersection i; all red at the start (the cells' constructors).
  DYNASOAR_HD TrafficLight(int i, Setup s) : num_cells(s.net.in_degree[i]), timer(0), phase(0) {
    for (int k = 0; k < num_cells; ++k) cells[k] = s.cell_at(s.net.in[i * kMaxDegree + k]);
  }

  /// Phase 2.
  DYNASOAR_HD void step() {
    const int n = num_cells;
    if (n == 0) return;
    int t = timer;
    const bool switches = light_switches(t);
    timer = t;
    if (!switches) return;
    Cell* red = cells[phase];
    red->current_max_velocity = 0;
    phase = phase + 1 == n ? 0 : phase + 1;
    Cell* green = cells[phase];
    green->current_max_velocity = static_cast<int>(green->max_velocity);
  }
};

DYNASOAR_HD Cell* Setup::cell_at(int c) const {
  if ((net.flags[c] & kProducer) != 0) return producers[static_cast<std::size_t>(local[c])];
  return plain[static_cast<std::size_t>(local[c])];
}

template <class T>
platform::Buffer<T> upload(const std::vector<T>& v) {
  platform::Buffer<T> b(v.size());
  b.copy_from_host(v.data(), v.size());
  return b;
}

}  // namespace

RunReport run(const Config& c) {
  const Network net = build_network(c.intersections, c.seed);
  const auto cells = static_cast<std::size_t>(net.cells());
  using Handle = dynasoar::AllocatorHandle<AllocatorT>;
  const std::uint64_t heap_bytes = c.heap_bytes != 0 ? c.heap_bytes : default_pool_bytes<AllocatorT>(default_heap_bytes(net));
  check_checkpoints<AllocatorT>(c.checkpoint, "traffic");
  Handle heap = make_heap<Handle>(heap_bytes, cells);
  platform::Buffer<unsigned long long> counters(2);
  counters.zero(heap.stream());

  // --resume: the cells, lights and cars as they were after step `resumed`,
  // and the counts of cars made and removed before. The network on the host
  // is built again from the seed (the identity holds its cell count).
  const std::string identity = run_identity(make_report(c, net, "", "", 0, {}));
  std::string state;
  const int resumed = resume(heap, c.checkpoint, identity, c.steps, &state);
  if (resumed != 0) {
    const std::vector<std::uint64_t> saved = saved_counts(state, 2, c.checkpoint.resume);
    const std::vector<unsigned long long> k(saved.begin(), saved.end());
    counters.copy_from_host(k.data(), k.size(), 0, heap.stream());
  } else {
    // The network's cells: plain ones and producers, each numbered within
    // its class; then the links between them and the lights.
    const DeviceNetwork device_net(net, heap.stream());
    std::vector<std::int32_t> local(cells), plain_ids, producer_ids;
    for (std::size_t i = 0; i < cells; ++i) {
      std::vector<std::int32_t>& ids = (net.flags[i] & kProducer) != 0 ? producer_ids : plain_ids;
      local[i] = static_cast<std::int32_t>(ids.size());
      ids.push_back(static_cast<std::int32_t>(i));
    }
    const platform::Buffer<std::int32_t> local_buffer = upload(local), plain_buffer = upload(plain_ids),
                                         producer_buffer = upload(producer_ids);
    const auto plain = heap.parallel_new_indexed<Cell>(plain_ids.size(), device_net.view(),
                                                       static_cast<const std::int32_t*>(plain_buffer.data()));
    const auto producers = heap.parallel_new_indexed<ProducerCell>(
        producer_ids.size(), device_net.view(), static_cast<const std::int32_t*>(producer_buffer.data()), c.seed);
    const Setup setup{device_net.view(), plain.index(), producers.index(), local_buffer.data()};
    heap.parallel_do<Cell, &Cell::link>(setup);
    heap.parallel_new<TrafficLight>(static_cast<std::size_t>(net.intersections), setup);
  }
  const World w{c.seed, heap.device(), counters.data()};

  // The viewer's copy of the cells, only where a frame is due.
  const auto send_frame = [&](int step) {
    platform::Buffer<std::uint8_t> bytes(cells);
    heap.parallel_do<Cell, &Cell::write_frame>(bytes.data());
    c.on_frame(Frame{step, &net, bytes.to_vector(heap.stream())});
  };
  support::PhaseTimer timer(heap.stream());
  const double enumeration_before = enumeration_seconds(heap);
  run_steps(c, timer, [&](int step) {
    heap.parallel_do_async<ProducerCell, &ProducerCell::create_car>(w);
    timer.mark("produce");
    heap.parallel_do_async<TrafficLight, &TrafficLight::step>();
    timer.mark("lights");
    heap.parallel_do_async<Car, &Car::prepare>();
    timer.mark("plan");
    heap.parallel_do_async<Car, &Car::move>(w);
    timer.mark("move");
    check_heap_now_and_then(heap, step, c.steps);
    end_of_step(heap, timer);  // --defrag
    checkpoint_if_due(heap, c.checkpoint, identity, step, timer, [&] {
      const std::vector<unsigned long long> k = counters.to_vector(heap.stream());
      return std::vector<std::uint64_t>(k.begin(), k.end());
    });
  }, send_frame, resumed + 1);

  RunReport r = make_report(c, net, backend::Selected::kName, device_description(), timer.total_ms(),
                            timer.phases_ms());
  if constexpr (HasRegistry<Handle>)
    r.extra_ms.emplace_back("registry enumeration (host clock)", (enumeration_seconds(heap) - enumeration_before) * 1e3);

  platform::Buffer<unsigned long long> sums(2);
  sums.zero(heap.stream());
  heap.parallel_do<Car, &Car::add_checksum>(sums.data());
  const std::vector<unsigned long long> s = sums.to_vector(heap.stream());
  if (s[1] != 0)
    throw std::logic_error("traffic: " + std::to_string(s[1]) + " cars share a cell with another car");
  r.checksum = s[0];
  const std::vector<unsigned long long> made = counters.to_vector(heap.stream());
  const std::uint64_t producer_count = heap.count<ProducerCell>();
  r.live = {{"Cell", heap.count<Cell>() - producer_count},  // count<Cell> counts its subclass too
            {"ProducerCell", producer_count},
            {"Car", heap.count<Car>()},
            {"TrafficLight", heap.count<TrafficLight>()}};
  r.heap.emplace_back(churn_line(made[0], made[1]));
  r.heap.emplace_back("heap", std::to_string(heap.heap_bytes() >> 20) + " MiB");
  report_compaction(heap, r);
  const char* names[] = {"Cell", "ProducerCell", "Car", "TrafficLight"};  // the allocator's type list, in order
  report_statistics<Cell, Car, TrafficLight>(heap, r, names);
  return r;
}

}  // namespace dynasoar::example::traffic
