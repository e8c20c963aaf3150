// wa-tor over several ranks (wator_distributed): the object version of
// objects.cpp with the grid split into bands of rows (distributed::Stripes),
// one heap and one GPU per rank. It computes the single-rank checksum: the
// rules are the same (rules.h), every random draw is keyed by the global
// cell, step and purpose, and the request/decide scheme is a function of the
// grid alone.
//
// What each rank keeps: the cells of its band and a ghost row on either
// side (copies of the neighbours' border cells), and the fish and sharks of
// its band. A cell carries `occupant` (empty, fish, shark) beside its agent
// pointer, because a ghost has no agent: pointers never cross ranks.
//
// A phase (fish, then sharks) on every rank:
//   1. halo: the ghosts' occupants refreshed from their owners;
//   2. prepare: each agent sets a request bit in the neighbour it picked,
//      which may be a ghost;
//   3. halo: the request bits of every copy of a border cell OR-ed
//      together, so that both ranks of a border cell see the same requests
//      and make the same choice;
//   4. decide: every cell, ghosts too, picks a requester; it tells the agent
//      only if the agent is this rank's. A border cell whose fish is eaten
//      by the other rank's shark loses the fish here;
//   5. update: the chosen agents move, into ghosts too;
//   6. ghosts' agent pointers cleared, and migrate: the agents that moved
//      into a ghost (update listed them as departures) go to the rank that
//      owns the cell, whose arrival method links them to it.
#include <dynasoar/dynasoar.h>

#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "dynasoar/distributed/halo.h"
#include "dynasoar/distributed/migrate.h"
#include "dynasoar/distributed/run.h"
#include "dynasoar/support/phase_timer.h"
#include "example/common/device_info.h"
#include "example/common/make_heap.h"
#include "example/common/run_loop.h"
#include "example/wator/rules.h"
#include "example/wator/wator.h"

namespace dynasoar::example::wator {
namespace {

class Cell;
class Agent;
class Fish;
class Shark;
using AllocatorT = dynasoar::Allocator<Cell, Agent, Fish, Shark>;
using Handle = dynasoar::AllocatorHandle<AllocatorT>;

/// What every method needs: the grid and step, this rank's band, its cells
/// by local index, the allocator.
struct World {
  Grid grid;
  distributed::Stripes stripes;
  dynasoar::ObjectIndex<AllocatorT, Cell> cells;
  AllocatorT alloc;
  distributed::Departures<Fish>::Device fish_leaving;    // fish that moved into a ghost
  distributed::Departures<Shark>::Device shark_leaving;  // sharks that did

  /// The cell of global index `i` (this rank's or a ghost).
  DYNASOAR_HD Cell* cell(int i) const { return cells[static_cast<std::size_t>(stripes.local_index(i, grid.width))]; }
  /// Whether cell `i` is in this rank's band.
  DYNASOAR_HD bool owns(int i) const { return stripes.owns_index(i, grid.width); }
};

class Cell : public AllocatorT::Base {
 public:
  declare_field_types(Cell, Agent*, unsigned, int, std::uint8_t)
  Field<Cell, 0> agent;     // the fish or shark here (null in ghosts)
  Field<Cell, 1> requests;  // bit d: the agent in direction d wants to move here
  Field<Cell, 2> id;        // global index in the grid
  Field<Cell, 3> occupant;  // Kind of the agent here: what a ghost tells its neighbours

  DYNASOAR_HD Cell(int local, World w)
      : agent(nullptr), requests(0u), id(global_id(local, w)), occupant(static_cast<std::uint8_t>(Kind::kEmpty)) {}

  DYNASOAR_HD static int global_id(int local, const World& w) {
    return w.stripes.global_row(local / w.grid.width) * w.grid.width + local % w.grid.width;
  }
  DYNASOAR_HD void set(Agent* a, Kind k) {
    agent = a;
    occupant = static_cast<std::uint8_t>(k);
  }
  /// A newborn of kind k, or nothing where its `new` failed (a full heap,
  /// reported at the next check): the occupant must say what the pointer holds.
  DYNASOAR_HD void take(Agent* newborn, Kind k) { set(newborn, newborn != nullptr ? k : Kind::kEmpty); }
  DYNASOAR_HD Kind kind() const { return static_cast<Kind>(static_cast<std::uint8_t>(occupant)); }

  DYNASOAR_HD void populate(World w);
  DYNASOAR_HD void decide(World w, Purpose purpose);
  DYNASOAR_HD void clear_agent() { agent = nullptr; }
  DYNASOAR_HD void add_checksum(World w, unsigned long long* sum);
};

class Agent : public AllocatorT::Base {
 public:
  declare_abstract_field_types(Agent, int, int)
  Field<Agent, 0> position;      // global cell index
  Field<Agent, 1> new_position;  // set by the cell that chose this agent

  DYNASOAR_HD explicit Agent(int cell) : position(cell), new_position(cell) {}

 protected:
  DYNASOAR_HD void request_move(const World& w, int p, unsigned mask, Purpose purpose) {
    new_position = p;
    const int d = pick_direction(mask, w.grid.random(p, purpose));
    if (d >= 0) platform::atomic_fetch_or(&w.cell(w.grid.neighbor(p, d))->requests, 1u << opposite(d));
  }
  /// Neighbours of cell p holding `kind`, as a direction mask.
  DYNASOAR_HD static unsigned neighbors(const World& w, int p, Kind kind) {
    unsigned mask = 0;
    for (int d = 0; d < 4; ++d)
      if (w.cell(w.grid.neighbor(p, d))->kind() == kind) mask |= 1u << d;
    return mask;
  }
};

class Fish : public Agent {
 public:
  declare_field_types(Fish, int)
  Field<Fish, 0> age;

  DYNASOAR_HD Fish(int cell, int a) : Agent(cell), age(a) {}

  DYNASOAR_HD void prepare(World w) {
    const int p = position;
    age += 1;
    request_move(w, p, neighbors(w, p, Kind::kEmpty), kFishMove);
  }

  DYNASOAR_HD void update(World w) {
    const int from = position, to = new_position;
    if (to == from) return;
    w.cell(to)->set(this, Kind::kFish);
    if (!w.owns(to)) w.fish_leaving.leave(this, w.stripes.owner(to / w.grid.width));
    if (age >= kFishBreedTime) {
      w.cell(from)->take(new (w.alloc) Fish(from, 0), Kind::kFish);
      age = 0;
    } else {
      w.cell(from)->set(nullptr, Kind::kEmpty);
    }
    position = to;
  }

  // snippet-begin: arrived
  /// On the rank it moved to: takes its cell.
  DYNASOAR_HD void arrived(World w) { w.cell(position)->set(this, Kind::kFish); }
  // snippet-end: arrived
};

class Shark : public Agent {
 public:
  declare_field_types(Shark, int, int)
  Field<Shark, 0> age;
  Field<Shark, 1> energy;

  DYNASOAR_HD Shark(int cell, int a) : Agent(cell), age(a), energy(kSharkStartEnergy) {}

  DYNASOAR_HD void prepare(World w) {
    const int p = position, e = energy - 1;
    age += 1;
    energy = e;
    if (e <= 0) {
      new_position = p;
      return;
    }
    const unsigned fish = neighbors(w, p, Kind::kFish);
    request_move(w, p, fish != 0 ? fish : neighbors(w, p, Kind::kEmpty), kSharkMove);
  }

  DYNASOAR_HD void update(World w) {
    const int from = position, to = new_position;
    if (energy <= 0) {
      w.cell(from)->set(nullptr, Kind::kEmpty);
      dynasoar::destroy(w.alloc, this);
      return;
    }
    if (to == from) return;
    Cell* target = w.cell(to);
    if (target->kind() == Kind::kFish) {  // a ghost's fish is destroyed by its own rank (Cell::decide)
      if (Agent* prey = target->agent; prey != nullptr) dynasoar::destroy(w.alloc, prey->cast<Fish>());
      energy += kSharkFishEnergy;
    }
    target->set(this, Kind::kShark);
    if (!w.owns(to)) w.shark_leaving.leave(this, w.stripes.owner(to / w.grid.width));
    if (age >= kSharkBreedTime) {
      w.cell(from)->take(new (w.alloc) Shark(from, 0), Kind::kShark);
      age = 0;
    } else {
      w.cell(from)->set(nullptr, Kind::kEmpty);
    }
    position = to;
  }

  DYNASOAR_HD void arrived(World w) { w.cell(position)->set(this, Kind::kShark); }
};

DYNASOAR_HD void Cell::populate(World w) {
  if (!w.owns(id)) return;
  const Kind k = initial_kind(w.grid, id);
  if (k == Kind::kFish)
    take(new (w.alloc) Fish(id, initial_age(w.grid, id, k)), k);
  else if (k == Kind::kShark)
    take(new (w.alloc) Shark(id, initial_age(w.grid, id, k)), k);
}

DYNASOAR_HD void Cell::decide(World w, Purpose purpose) {
  const unsigned r = requests;
  if (r == 0) return;
  requests = 0u;
  const int d = pick_direction(r, w.grid.random(id, purpose));
  const int from = w.grid.neighbor(id, d);
  if (w.owns(from)) {
    static_cast<Agent*>(w.cell(from)->agent)->new_position = static_cast<int>(id);
  } else if (purpose == kSharkDecide && w.owns(id) && kind() == Kind::kFish) {
    // Another rank's shark moves onto this rank's fish: the fish is eaten here.
    dynasoar::destroy(w.alloc, static_cast<Agent*>(agent)->cast<Fish>());
    set(nullptr, Kind::kEmpty);
  }
}

DYNASOAR_HD void Cell::add_checksum(World w, unsigned long long* sum) {
  if (!w.owns(id)) return;
  Agent* a = agent;
  std::uint64_t term = 0;
  if (a != nullptr) {
    if (Shark* s = a->cast<Shark>())
      term = checksum_term(id, Kind::kShark, s->age, s->energy);
    else
      term = checksum_term(id, Kind::kFish, a->cast<Fish>()->age, 0);
  }
  platform::atomic_fetch_add(sum, static_cast<unsigned long long>(term));
}

void refuse_options(const Config& c) {
  if (c.checkpoint.active())
    throw std::invalid_argument("--checkpoint-every/--resume: wator_distributed has no checkpoints; "
                                "wator_dynasoar has");
  if (c.on_frame || c.on_trace)
    throw std::invalid_argument("--render/--snapshot/--trace: wator_distributed has no viewer or trace; "
                                "wator_dynasoar has");
}

// snippet-begin: phase
/// One phase of the agents of class A (the steps at the top of this file).
template <class A, auto Prepare, auto Update>
void phase(Handle& heap, distributed::Communicator& comm, distributed::TableHalo<Handle, Cell>& halo,
           distributed::Departures<A>& leaving, const World& w, Purpose decide, support::PhaseTimer& timer) {
  halo.refresh_fields<&Cell::occupant>();
  timer.mark("halo");
  heap.parallel_do_async<A, Prepare>(w);
  timer.mark("prepare");
  halo.combine<&Cell::requests>(distributed::HaloCombine::kBitOr);
  timer.mark("halo");
  heap.parallel_do_async<Cell, &Cell::decide>(w, decide);
  timer.mark("decide");
  heap.parallel_do_async<A, Update>(w);
  timer.mark("update");
  halo.parallel_do_received<&Cell::clear_agent>();
  distributed::migrate_departures<A, &A::arrived>(heap, comm, leaving, w);
  timer.mark("migrate");
}
// snippet-end: phase

/// One rank's run; fills `report` on rank 0.
void run_rank(const Config& c, distributed::Communicator& comm, RunReport& report) {
  // snippet-begin: setup
  const distributed::Stripes stripes(c.height, comm.size(), comm.rank());
  const int local_cells = stripes.local_rows() * c.width;
  const std::uint64_t heap_bytes =
      c.heap_bytes != 0 ? c.heap_bytes : default_heap_bytes(c.width, stripes.local_rows());
  Handle heap(heap_bytes);
  Grid grid{c.width, c.height, c.seed, 0};
  // An agent leaves for a ghost cell at most: room for two ghost rows.
  distributed::Departures<Fish> fish_leaving(2 * static_cast<std::size_t>(c.width));
  distributed::Departures<Shark> shark_leaving(2 * static_cast<std::size_t>(c.width));
  const auto world = [&](const dynasoar::ObjectIndex<AllocatorT, Cell>& index) {
    return World{grid, stripes, index, heap.device(), fish_leaving.device(), shark_leaving.device()};
  };
  auto cells = heap.parallel_new_indexed<Cell>(static_cast<std::size_t>(local_cells), world({}));
  distributed::TableHalo<Handle, Cell> halo(comm, cells, stripes.sends(c.width), stripes.receives(c.width));
  heap.parallel_do<Cell, &Cell::populate>(world(cells.index()));
  // snippet-end: setup
  support::PhaseTimer timer(heap.stream());
  Config local = c;
  if (comm.rank() != 0) local.on_step = nullptr;
  run_steps(local, timer, [&](int step) {
    grid.step = step;
    const World w = world(cells.index());
    phase<Fish, &Fish::prepare, &Fish::update>(heap, comm, halo, fish_leaving, w, kFishDecide, timer);
    phase<Shark, &Shark::prepare, &Shark::update>(heap, comm, halo, shark_leaving, w, kSharkDecide, timer);
    check_heap_now_and_then(heap, step, c.steps);
  }, [](int) {});

  const double total_ms = comm.all_reduce(timer.total_ms(), distributed::ReduceOp::kMax);
  platform::Buffer<unsigned long long> sum(1);
  sum.zero();
  heap.parallel_do<Cell, &Cell::add_checksum>(world(cells.index()), sum.data());
  const std::uint64_t checksum = comm.all_reduce<std::uint64_t>(sum.to_vector()[0]);
  const std::uint64_t fish = comm.all_reduce<std::uint64_t>(heap.count<Fish>());
  const std::uint64_t sharks = comm.all_reduce<std::uint64_t>(heap.count<Shark>());
  // Rank 0's report; every rank's where each rank is a process of its own
  // (dynasoar_launch), each printing its own (the values are the same).
  if (comm.rank() != 0 && !distributed::launched_as_rank()) return;
  report = make_report(c, std::string(backend::Selected::kName) + ", " + std::to_string(comm.size()) + " ranks (" +
                              comm.transport().name() + ")",
                       device_description(), total_ms, timer.phases_ms());
  report.checksum = checksum;
  report.live = {{"Cell", static_cast<std::uint64_t>(c.width) * static_cast<std::uint64_t>(c.height)},
                 {"Fish", fish},
                 {"Shark", sharks}};
  report.heap.emplace_back("heap per rank", std::to_string(heap.heap_bytes() >> 20) + " MiB");
}

}  // namespace

RunReport run(const Config& c) {
  if (c.width < 2 || c.height < 2) throw std::invalid_argument("wa-tor: the grid needs at least 2x2 cells");
  refuse_options(c);
  RunReport report;
  distributed::run_ranks(c.ranks, [&](distributed::Communicator& comm) { run_rank(c, comm, report); });
  return report;
}

}  // namespace dynasoar::example::wator
