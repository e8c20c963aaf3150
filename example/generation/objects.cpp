// The generation example as an SMMO program, after the original DynaSOAr's:
// every grid cell is a Cell object; alive and dying cells (Alive, with the
// dying step in `state`) and candidates (dead cells next to an alive one,
// the only dead cells that can be born) are Agent objects, created and
// destroyed every step. A step is four do-alls, in the original's order:
//   1. Candidate::prepare, Alive::prepare: count the alive neighbours and
//      decide (a candidate is born or goes, an alive cell starts dying).
//   2. Candidate::update: a candidate that is born becomes an Alive (new),
//      one without alive neighbours goes.
//   3. Alive::update: a cell born in this step gives its empty neighbours a
//      candidate (a compare-and-swap on the cell decides who makes it); a
//      dying cell goes one step on, and after its last one a Candidate
//      takes its place.
// The same source is built for every back end that can free (generation_<back end>).
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
#include "example/generation/generation.h"
#include "example/generation/rules.h"
#include "example/gol/gol.h"
#include "example/gol/initial.h"

namespace dynasoar::example::generation {
namespace {

class Cell;
class Agent;
class Alive;
class Candidate;
using AllocatorT = dynasoar::Allocator<Cell, Agent, Alive, Candidate>;

struct World {
  Grid grid;
  int states;  // dying steps
  dynasoar::ObjectIndex<AllocatorT, Cell> cells;  // cells[i]: the cell of index i
  AllocatorT alloc;
  // [0] cells born, [1] cells that finished dying, [2] candidates made, [3] candidates gone.
  unsigned long long* counters;
};

class Cell : public AllocatorT::Base {
 public:
  declare_field_types(Cell, Agent*, int)
  Field<Cell, 0> agent;  // the Alive or Candidate here, or null
  Field<Cell, 1> id;     // index in the grid

  DYNASOAR_HD explicit Cell(int i) : agent(nullptr), id(i) {}

  DYNASOAR_HD void populate(World w, const unsigned char* initial);
  DYNASOAR_HD void add_checksum(unsigned long long* sums);
  DYNASOAR_HD void write_frame(World w, std::uint8_t* out);
};

class Agent : public AllocatorT::Base {
 public:
  enum Action : unsigned char { kNone = 0, kDie = 1, kBirth = 2 };
  declare_abstract_field_types(Agent, int, unsigned char)
  Field<Agent, 0> cell;    // index in the grid
  Field<Agent, 1> action;  // what the update does

  DYNASOAR_HD explicit Agent(int c) : cell(c), action(static_cast<unsigned char>(kNone)) {}

 protected:
  /// Neighbours that are alive (not dying).
  DYNASOAR_HD int alive_neighbors(const World& w) const;
};

class Alive : public Agent {
 public:
  declare_field_types(Alive, int, bool)
  Field<Alive, 0> state;   // 0: alive; 1 to w.states: dying
  Field<Alive, 1> is_new;  // born in this step (or made at the start): makes candidates

  DYNASOAR_HD explicit Alive(int c) : Agent(c), state(0), is_new(true) {}

  DYNASOAR_HD void prepare(World w) {
    if (state != 0) return;  // dying: nothing to decide
    is_new = false;
    if (!survives(alive_neighbors(w))) action = static_cast<unsigned char>(kDie);
  }
  DYNASOAR_HD void update(World w);

 private:
  DYNASOAR_HD void create_candidates(const World& w);
};

class Candidate : public Agent {
 public:
  declare_field_types(Candidate)  // no fields of its own

  DYNASOAR_HD explicit Candidate(int c) : Agent(c) {}

  DYNASOAR_HD void prepare(World w) {
    const int n = alive_neighbors(w);
    action = static_cast<unsigned char>(born(n) ? kBirth : n == 0 ? kDie : kNone);
  }
  DYNASOAR_HD void update(World w) {
    const unsigned char a = action;
    if (a == kNone) return;
    Cell* here = w.cells[cell];
    if (a == kBirth) {
      here->agent = new (w.alloc) Alive(cell);
      platform::atomic_fetch_add(&w.counters[0], 1ull);
    } else {
      here->agent = nullptr;
    }
    platform::atomic_fetch_add(&w.counters[3], 1ull);
    dynasoar::destroy(w.alloc, this);
  }
};

/// Marks an empty cell while one of its new alive neighbours makes its
/// candidate (Alive::create_candidates); never dereferenced.
constexpr std::uintptr_t kClaimed = 1;

DYNASOAR_HD int Agent::alive_neighbors(const World& w) const {
  int n = 0;
  for (int k = 0; k < 8; ++k) {
    const Agent* a = w.cells[w.grid.neighbor(cell, k)]->agent;
    const Alive* alive = a != nullptr ? a->cast<Alive>() : nullptr;
    n += alive != nullptr && alive->state == 0 ? 1 : 0;
  }
  return n;
}

DYNASOAR_HD void Alive::update(World w) {
  if (is_new) {
    create_candidates(w);
    return;
  }
  const int s = state;
  if (s == 0) {
    if (action == kDie) {
      state = 1;
      action = static_cast<unsigned char>(kNone);
    }
  } else if (s < w.states) {
    state = s + 1;
  } else {
    // Dead now: a candidate takes the place (it may be born again). Atomic,
    // because new neighbours compare-and-swap the same pointer in this do-all.
    platform::atomic_store(&w.cells[cell]->agent, static_cast<Agent*>(new (w.alloc) Candidate(cell)));
    platform::atomic_fetch_add(&w.counters[1], 1ull);
    platform::atomic_fetch_add(&w.counters[2], 1ull);
    dynasoar::destroy(w.alloc, this);
  }
}

DYNASOAR_HD void Alive::create_candidates(const World& w) {
  // Claim first, make afterwards (as the game of life does): the first new
  // neighbour to claim an empty cell makes its candidate, the others see
  // the claim and move on, and a warp's `new`s are requested together.
  int around[8];
  w.grid.neighbors(cell, around);
  unsigned claimed = 0;  // bit k: this thread claimed neighbour k
  for (int k = 0; k < 8; ++k) {
    Cell* there = w.cells[around[k]];
    if (platform::atomic_load(&there->agent) != nullptr) continue;
    Agent* expected = nullptr;
    if (platform::atomic_compare_exchange(&there->agent, expected, reinterpret_cast<Agent*>(kClaimed)))
      claimed |= 1u << k;
  }
  while (claimed != 0) {
    const int k = platform::ctz(claimed);
    claimed &= claimed - 1;
    const int c = around[k];
    // Null when the heap is full: the claim is released and check_errors reports the error.
    platform::atomic_store(&w.cells[c]->agent, static_cast<Agent*>(new (w.alloc) Candidate(c)));
    platform::atomic_fetch_add(&w.counters[2], 1ull);
  }
}

DYNASOAR_HD void Cell::populate(World w, const unsigned char* initial) {
  if (initial[id] != 0) agent = new (w.alloc) Alive(id);
}

DYNASOAR_HD void Cell::add_checksum(unsigned long long* sums) {
  const Agent* a = agent;
  const Alive* alive = a != nullptr ? a->cast<Alive>() : nullptr;
  if (alive == nullptr) return;
  platform::atomic_fetch_add(&sums[0], static_cast<unsigned long long>(checksum_term(id, alive->state)));
}

DYNASOAR_HD void Cell::write_frame(World w, std::uint8_t* out) {
  const Agent* a = agent;
  const Alive* alive = a != nullptr ? a->cast<Alive>() : nullptr;
  out[static_cast<int>(id)] = a == nullptr       ? std::uint8_t{kFrameDead}
                              : alive == nullptr ? std::uint8_t{kFrameCandidate}
                                                 : frame_byte(alive->state, w.states);
}

}  // namespace

RunReport run(const Config& c) {
  if (c.width < 3 || c.height < 3) throw std::invalid_argument("generation: the grid needs at least 3x3 cells");
  if (c.states < 1) throw std::invalid_argument("generation: a cell needs at least one dying step");
  using Handle = dynasoar::AllocatorHandle<AllocatorT>;
  const Grid grid{c.width, c.height};
  const auto n = static_cast<std::size_t>(grid.cells());
  // A class never has more objects than cells, nor more new ones in a step.
  const std::uint64_t default_bytes = default_pool_bytes<AllocatorT>(default_heap_bytes(c.width, c.height));
  check_checkpoints<AllocatorT>(c.checkpoint, "generation");
  Handle heap = make_heap<Handle>(c.heap_bytes != 0 ? c.heap_bytes : default_bytes, 2 * n);
  platform::Buffer<unsigned long long> counters(4);
  counters.zero(heap.stream());
  // --resume: the heap as it was after step `resumed`, the cells' table
  // from it, and the counters of the steps before (the report's lines).
  const std::string identity = run_identity(make_report(c, "", "", 0, {}));
  std::string state;
  const int resumed = resume(heap, c.checkpoint, identity, c.steps, &state);
  dynasoar::ObjectTable<AllocatorT, Cell> cells;
  if (resumed != 0) {
    cells = table_from_checkpoint<Cell>(heap);
    const std::vector<std::uint64_t> saved = saved_counts(state, 4, c.checkpoint.resume);
    const std::vector<unsigned long long> k(saved.begin(), saved.end());
    counters.copy_from_host(k.data(), k.size(), 0, heap.stream());
  } else {
    // The game of life's random soup; the cells alive in it are new, so
    // the first update gives their neighbours candidates.
    platform::Buffer<unsigned char> initial(n);
    platform::parallel_for(n, gol::FillSoup{initial.data(), c.seed, gol::soup_threshold(c.density)}, heap.stream());
    platform::synchronize(heap.stream());
    cells = heap.parallel_new_indexed<Cell>(n);
    const World w{grid, c.states, cells.index(), heap.device(), counters.data()};
    heap.parallel_do<Cell, &Cell::populate>(w, static_cast<const unsigned char*>(initial.data()));
    heap.parallel_do<Alive, &Alive::update>(w);
    heap.check_errors();
    counters.zero(heap.stream());  // the run's births and deaths, not the start's
  }
  const World w{grid, c.states, cells.index(), heap.device(), counters.data()};

  // The viewer's copy of the grid, only where a frame is due.
  const auto send_frame = [&](int step) {
    platform::Buffer<std::uint8_t> states(n);
    heap.parallel_do<Cell, &Cell::write_frame>(w, states.data());
    c.on_frame(Frame{step, c.width, c.height, states.to_vector(heap.stream())});
  };
  support::PhaseTimer timer(heap.stream());
  const double enumeration_before = enumeration_seconds(heap);
  run_steps(c, timer, [&](int step) {
    heap.parallel_do_async<Candidate, &Candidate::prepare>(w);
    heap.parallel_do_async<Alive, &Alive::prepare>(w);
    timer.mark("prepare");
    heap.parallel_do_async<Candidate, &Candidate::update>(w);
    heap.parallel_do_async<Alive, &Alive::update>(w);
    timer.mark("update");
    check_heap_now_and_then(heap, step, c.steps);
    end_of_step(heap, timer);  // --defrag
    checkpoint_if_due(heap, c.checkpoint, identity, step, timer, [&] {
      const std::vector<unsigned long long> k = counters.to_vector(heap.stream());
      return std::vector<std::uint64_t>(k.begin(), k.end());
    });
  }, send_frame, resumed + 1);

  RunReport r = make_report(c, backend::Selected::kName, device_description(), timer.total_ms(), timer.phases_ms());
  if constexpr (HasRegistry<Handle>)
    r.extra_ms.emplace_back("registry enumeration (host clock)", (enumeration_seconds(heap) - enumeration_before) * 1e3);
  platform::Buffer<unsigned long long> sum(1);
  sum.zero(heap.stream());
  heap.parallel_do<Cell, &Cell::add_checksum>(sum.data());
  r.checksum = sum.to_vector(heap.stream())[0];
  const std::vector<unsigned long long> k = counters.to_vector(heap.stream());
  r.live = {{"Alive", heap.count<Alive>()}, {"Candidate", heap.count<Candidate>()}};
  r.heap.emplace_back(churn_line(k[0], k[1]));
  r.heap.emplace_back("candidates", std::to_string(k[2]) + " made, " + std::to_string(k[3]) + " gone");
  r.heap.emplace_back("heap", std::to_string(heap.heap_bytes() >> 20) + " MiB");
  report_compaction(heap, r);
  const char* names[] = {"Cell", "Agent", "Alive", "Candidate"};  // the allocator's type list, in order
  report_statistics<Cell, Agent>(heap, r, names);
  return r;
}

}  // namespace dynasoar::example::generation
