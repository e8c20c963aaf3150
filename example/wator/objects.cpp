// wa-tor as an SMMO program (DynaSOAr paper Sec. 6): cells, fish and sharks
// are objects; every phase is one parallel_do; fish and sharks are created
// and destroyed inside the do-alls. The same source is built for every back
// end that can free (wator_<back end>); the rules are in rules.h.
#include <dynasoar/dynasoar.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "dynasoar/support/phase_timer.h"
#include "example/common/checkpoint.h"
#include "example/common/device_info.h"
#include "example/common/make_heap.h"
#include "example/common/run_loop.h"
#include "example/wator/rules.h"
#include "example/wator/wator.h"

namespace dynasoar::example::wator {
namespace {

// snippet-begin: allocator
class Cell;
class Agent;
class Fish;
class Shark;
using AllocatorT = dynasoar::Allocator<Cell, Agent, Fish, Shark>;
// snippet-end: allocator

// snippet-begin: world
/// What every method needs: the grid and step, the cells by index, the allocator.
struct World {
  Grid grid;
  dynasoar::ObjectIndex<AllocatorT, Cell> cells;  // cells[i]: the cell of index i
  AllocatorT alloc;
};
// snippet-end: world

// snippet-begin: cell
class Cell : public AllocatorT::Base {
 public:
  declare_field_types(Cell, Agent*, unsigned, int)
  Field<Cell, 0> agent;     // the fish or shark here, or null
  Field<Cell, 1> requests;  // bit d: the agent in direction d wants to move here (decide clears)
  Field<Cell, 2> id;        // index in the grid

  DYNASOAR_HD explicit Cell(int i) : agent(nullptr), requests(0u), id(i) {}

  DYNASOAR_HD void populate(World w);
  DYNASOAR_HD void decide(World w, Purpose purpose);
  DYNASOAR_HD void add_checksum(unsigned long long* sum);
  DYNASOAR_HD void count_agent(unsigned long long* counts);  // --trace: [0] fish, [1] sharks
  DYNASOAR_HD void write_frame(std::uint8_t* out);
};
// snippet-end: cell

class Agent : public AllocatorT::Base {
 public:
  declare_abstract_field_types(Agent, int, int)
  Field<Agent, 0> position;      // cell index
  Field<Agent, 1> new_position;  // set by the cell that chose this agent

  DYNASOAR_HD explicit Agent(int cell) : position(cell), new_position(cell) {}

 protected:
  // The agent's position `p` is passed in, read once before any store: the
  // compiler cannot move a field load past a store that may alias it, so a
  // load after a store waits for that store's address.

  /// Sets a request bit in the neighbour of cell p chosen among `mask` (bit d: direction d).
  DYNASOAR_HD void request_move(const World& w, int p, unsigned mask, Purpose purpose) {
    new_position = p;
    const int d = pick_direction(mask, w.grid.random(p, purpose));
    if (d >= 0)
      platform::atomic_fetch_or(&w.cells[w.grid.neighbor(p, d)]->requests, 1u << opposite(d));
  }
  /// Neighbours of cell p for which `accept(agent there)` holds, as a direction mask.
  template <class Accept>
  DYNASOAR_HD static unsigned neighbors(const World& w, int p, Accept accept) {
    unsigned mask = 0;
    for (int d = 0; d < 4; ++d)
      if (accept(static_cast<Agent*>(w.cells[w.grid.neighbor(p, d)]->agent)))
        mask |= 1u << d;
    return mask;
  }
};

// snippet-begin: fish
class Fish : public Agent {
 public:
  declare_field_types(Fish, int)
  Field<Fish, 0> age;  // steps since birth or the last offspring

  DYNASOAR_HD Fish(int cell, int a) : Agent(cell), age(a) {}

  DYNASOAR_HD void prepare(World w) {
    const int p = position;
    age += 1;
    request_move(w, p, neighbors(w, p, [](Agent* a) { return a == nullptr; }), kFishMove);
  }

  DYNASOAR_HD void update(World w) {
    const int from = position, to = new_position;
    if (to == from) return;
    w.cells[to]->agent = this;
    Agent* left = nullptr;
    if (age >= kFishBreedTime) {
      left = new (w.alloc) Fish(from, 0);
      age = 0;
    }
    w.cells[from]->agent = left;
    position = to;
  }
};
// snippet-end: fish

class Shark : public Agent {
 public:
  declare_field_types(Shark, int, int)
  Field<Shark, 0> age;
  Field<Shark, 1> energy;  // steps left without food

  DYNASOAR_HD Shark(int cell, int a) : Agent(cell), age(a), energy(kSharkStartEnergy) {}

  DYNASOAR_HD void prepare(World w) {
    const int p = position, e = energy - 1;
    age += 1;
    energy = e;
    if (e <= 0) {  // dies in update; asks for nothing
      new_position = p;
      return;
    }
    const unsigned fish =
        neighbors(w, p, [](Agent* a) { return a != nullptr && a->is_a<Fish>(); });
    request_move(w, p, fish != 0 ? fish : neighbors(w, p, [](Agent* a) { return a == nullptr; }),
                 kSharkMove);
  }

  // snippet-begin: shark-update
  DYNASOAR_HD void update(World w) {
    const int from = position, to = new_position;
    if (energy <= 0) {
      w.cells[from]->agent = nullptr;
      dynasoar::destroy(w.alloc, this);
      return;
    }
    if (to == from) return;
    Cell* target = w.cells[to];
    if (Agent* prey = target->agent; prey != nullptr) {  // a fish: nothing else asks for sharks' cells
      dynasoar::destroy(w.alloc, prey->cast<Fish>());
      energy += kSharkFishEnergy;
    }
    target->agent = this;
    Agent* left = nullptr;
    if (age >= kSharkBreedTime) {
      left = new (w.alloc) Shark(from, 0);
      age = 0;
    }
    w.cells[from]->agent = left;
    position = to;
  }
  // snippet-end: shark-update
};

DYNASOAR_HD void Cell::populate(World w) {
  const Kind k = initial_kind(w.grid, id);
  if (k == Kind::kFish)
    agent = new (w.alloc) Fish(id, initial_age(w.grid, id, k));
  else if (k == Kind::kShark)
    agent = new (w.alloc) Shark(id, initial_age(w.grid, id, k));
}

DYNASOAR_HD void Cell::decide(World w, Purpose purpose) {
  const unsigned r = requests;
  if (r == 0) return;
  requests = 0u;  // ready for the next prepare: no clearing pass over all cells
  const int d = pick_direction(r, w.grid.random(id, purpose));
  static_cast<Agent*>(w.cells[w.grid.neighbor(id, d)]->agent)->new_position = static_cast<int>(id);
}

// snippet-begin: is-a-cast
DYNASOAR_HD void Cell::count_agent(unsigned long long* counts) {
  const Agent* a = agent;
  if (a != nullptr) platform::atomic_fetch_add(&counts[a->is_a<Shark>() ? 1 : 0], 1ull);
}

DYNASOAR_HD void Cell::add_checksum(unsigned long long* sum) {
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
// snippet-end: is-a-cast

DYNASOAR_HD void Cell::write_frame(std::uint8_t* out) {
  const Agent* a = agent;
  out[id] = static_cast<std::uint8_t>(a == nullptr ? Kind::kEmpty : a->is_a<Shark>() ? Kind::kShark : Kind::kFish);
}

/// --trace's record of a step: agents and the fill of their blocks. The
/// agents are counted through the cells: statistics<Agent>() would compact
/// a byte allocator's Fish and Shark registries here, doing the next step's
/// compaction outside the timing. Fragmentation is the heap's only.
template <class H>
StepTrace trace_step(H& heap, int step, double ms, double registry_s) {
  StepTrace t;
  t.step = step;
  t.ms = ms;
  t.registry_ms = registry_s * 1e3;
  platform::Buffer<unsigned long long> counts(2);
  counts.zero(heap.stream());
  heap.template parallel_do<Cell, &Cell::count_agent>(counts.data());
  const std::vector<unsigned long long> n = counts.to_vector(heap.stream());
  t.fish = n[0];
  t.sharks = n[1];
  if constexpr (!HasRegistry<H>) {
    std::uint64_t slots = 0;
    for (const TypeStatistics& st : heap.template statistics<Agent>()) slots += st.blocks * st.capacity;
    if (slots != 0) t.fragmentation = 1.0 - static_cast<double>(n[0] + n[1]) / static_cast<double>(slots);
  }
  return t;
}

/// A new grid: the cells, by index, each of which makes its fish or shark.
dynasoar::ObjectTable<AllocatorT, Cell> new_grid(dynasoar::AllocatorHandle<AllocatorT>& heap, const Grid& grid) {
  // snippet-begin: setup
  auto cells = heap.parallel_new_indexed<Cell>(static_cast<std::size_t>(grid.cells()));
  heap.parallel_do<Cell, &Cell::populate>(World{grid, cells.index(), heap.device()});
  // snippet-end: setup
  return cells;
}

}  // namespace

RunReport run(const Config& c) {
  check_one_rank(c.ranks, "this program");
  if (c.width < 2 || c.height < 2) throw std::invalid_argument("wa-tor: the grid needs at least 2x2 cells");
  const std::uint64_t heap_bytes =
      c.heap_bytes != 0 ? c.heap_bytes
                        : default_pool_bytes<AllocatorT>(default_heap_bytes(c.width, c.height));
  check_checkpoints<AllocatorT>(c.checkpoint, "wator");
  using Handle = dynasoar::AllocatorHandle<AllocatorT>;
  Handle heap(heap_bytes);  // --heap-mib, or the default for the grid and back end
  Grid grid{c.width, c.height, c.seed, 0};
  // --resume: the heap as it was after step `resumed`, and the cells' table from it.
  const std::string identity = run_identity(make_report(c, "", "", 0, {}));
  const int resumed = resume(heap, c.checkpoint, identity, c.steps);
  const auto cells = resumed != 0 ? table_from_checkpoint<Cell>(heap) : new_grid(heap, grid);

  // The viewer's copy of the grid, only where a frame is due.
  const auto send_frame = [&](int step) {
    platform::Buffer<std::uint8_t> kinds(static_cast<std::size_t>(grid.cells()));
    heap.parallel_do<Cell, &Cell::write_frame>(kinds.data());
    c.on_frame(Frame{step, c.width, c.height, kinds.to_vector(heap.stream())});
  };
  support::PhaseTimer timer(heap.stream());
  const double enumeration_before = enumeration_seconds(heap);
  double traced_ms = 0, traced_registry_s = enumeration_before;  // --trace: totals up to the last step
  run_steps(c, timer, [&](int step) {
    grid.step = step;
    // snippet-begin: step
    const World w{grid, cells.index(), heap.device()};
    heap.parallel_do_async<Fish, &Fish::prepare>(w);
    timer.mark("fish prepare");
    heap.parallel_do_async<Cell, &Cell::decide>(w, kFishDecide);
    timer.mark("decide");
    heap.parallel_do_async<Fish, &Fish::update>(w);
    timer.mark("fish update");
    heap.parallel_do_async<Shark, &Shark::prepare>(w);
    timer.mark("shark prepare");
    heap.parallel_do_async<Cell, &Cell::decide>(w, kSharkDecide);
    timer.mark("decide");
    heap.parallel_do_async<Shark, &Shark::update>(w);
    timer.mark("shark update");
    check_heap_now_and_then(heap, step, c.steps);
    // snippet-end: step
    if (c.on_trace) {
      const double total = timer.total_ms();  // waits for the step
      timer.pause();
      c.on_trace(trace_step(heap, step, total - traced_ms, enumeration_seconds(heap) - traced_registry_s));
      traced_ms = total;
      traced_registry_s = enumeration_seconds(heap);
      timer.resume();
    }
    end_of_step(heap, timer);  // --defrag
    checkpoint_if_due(heap, c.checkpoint, identity, step, timer);
  }, send_frame, resumed + 1);

  RunReport r = make_report(c, backend::Selected::kName, device_description(), timer.total_ms(),
                            timer.phases_ms());
  if constexpr (HasRegistry<Handle>)
    r.extra_ms.emplace_back("registry enumeration (host clock)",
                            (enumeration_seconds(heap) - enumeration_before) * 1e3);

  platform::Buffer<unsigned long long> sum(1);
  sum.zero();
  heap.parallel_do<Cell, &Cell::add_checksum>(sum.data());
  r.checksum = sum.to_vector()[0];
  r.live = {{"Cell", heap.count<Cell>()}, {"Fish", heap.count<Fish>()}, {"Shark", heap.count<Shark>()}};
  r.heap.emplace_back("heap", std::to_string(heap.heap_bytes() >> 20) + " MiB");
  report_compaction(heap, r);
  const char* names[] = {"Cell", "Agent", "Fish", "Shark"};  // the allocator's type list, in order
  report_statistics<Cell, Agent>(heap, r, names);
  return r;
}

}  // namespace dynasoar::example::wator
