// Game of life as an SMMO program in the O(alive cells) form of the
// DynaSOAr benchmark (paper Sec. 6): every grid cell is a Cell object; alive
// cells and candidates (dead cells next to an alive one, the only dead cells
// that can come alive) are Agent objects, created and deleted every step.
// Only agents are visited, so a step costs time in proportion to the alive
// cells and their neighbourhood, not to the grid. A step:
//   1. Alive::prepare, Candidate::prepare: count alive neighbours, decide.
//   2. Candidate::update: a candidate with 3 alive neighbours becomes an
//      Alive; one with none is no longer needed and goes.
//   3. Alive::update: an alive cell that dies becomes a Candidate.
//   4. Alive::create_candidates: every empty neighbour of an alive cell
//      gets a Candidate (a compare-and-swap on the cell decides who makes it).
// The same source is built for every back end that can free (gol_<back end>).
#include <dynasoar/dynasoar.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "dynasoar/support/phase_timer.h"
#include "example/common/checkpoint.h"
#include "example/common/device_info.h"
#include "example/common/make_heap.h"
#include "example/common/run_loop.h"
#include "example/gol/gol.h"
#include "example/gol/initial.h"
#include "example/gol/rules.h"

namespace dynasoar::example::gol {
namespace {

class Cell;
class Agent;
class Alive;
class Candidate;
using AllocatorT = dynasoar::Allocator<Cell, Agent, Alive, Candidate>;

struct World {
  Grid grid;
  dynasoar::ObjectIndex<AllocatorT, Cell> cells;  // cells[i]: the cell of index i
  AllocatorT alloc;
};

class Cell : public AllocatorT::Base {
 public:
  declare_field_types(Cell, Agent*, int)
  Field<Cell, 0> agent;  // the Alive or Candidate here, or null
  Field<Cell, 1> id;     // index in the grid

  DYNASOAR_HD explicit Cell(int i) : agent(nullptr), id(i) {}

  DYNASOAR_HD void populate(World w, const unsigned char* initial);
  DYNASOAR_HD void add_checksum(unsigned long long* sum);
  DYNASOAR_HD void write_frame(std::uint8_t* out);
};

class Agent : public AllocatorT::Base {
 public:
  declare_abstract_field_types(Agent, int)
  Field<Agent, 0> cell;  // index in the grid

  DYNASOAR_HD explicit Agent(int c) : cell(c) {}

 protected:
  DYNASOAR_HD int alive_neighbors(const World& w) const;
};

class Alive : public Agent {
 public:
  declare_field_types(Alive, bool)
  Field<Alive, 0> will_die;

  DYNASOAR_HD explicit Alive(int c) : Agent(c), will_die(false) {}

  DYNASOAR_HD void prepare(World w) {
    const int n = alive_neighbors(w);
    will_die = !next_alive(true, n);
  }
  DYNASOAR_HD void update(World w);
  DYNASOAR_HD void create_candidates(World w);
};

class Candidate : public Agent {
 public:
  enum Action : unsigned char { kStay = 0, kBorn = 1, kLonely = 2 };
  declare_field_types(Candidate, unsigned char)
  Field<Candidate, 0> action;

  DYNASOAR_HD explicit Candidate(int c) : Agent(c), action(static_cast<unsigned char>(kStay)) {}

  DYNASOAR_HD void prepare(World w) {
    const int n = alive_neighbors(w);
    action = static_cast<unsigned char>(next_alive(false, n) ? kBorn : n == 0 ? kLonely : kStay);
  }
  DYNASOAR_HD void update(World w) {
    const unsigned char a = action;
    if (a == kStay) return;
    Cell* here = w.cells[cell];
    here->agent = a == kBorn ? static_cast<Agent*>(new (w.alloc) Alive(cell)) : nullptr;
    dynasoar::destroy(w.alloc, this);
  }
};

/// Marks an empty cell while one of its alive neighbours makes its
/// candidate (Alive::create_candidates); never dereferenced.
constexpr std::uintptr_t kClaimed = 1;

DYNASOAR_HD int Agent::alive_neighbors(const World& w) const {
  int n = 0;
  for (int k = 0; k < 8; ++k) {
    const Agent* a = w.cells[w.grid.neighbor(cell, k)]->agent;
    n += a != nullptr && a->is_a<Alive>() ? 1 : 0;
  }
  return n;
}

DYNASOAR_HD void Alive::update(World w) {
  if (!will_die) return;
  w.cells[cell]->agent = new (w.alloc) Candidate(cell);
  dynasoar::destroy(w.alloc, this);
}

DYNASOAR_HD void Alive::create_candidates(World w) {
  // Claim first, make afterwards. The first alive neighbour to claim an
  // empty cell makes its candidate; the others see the claim and move on.
  // (Making a candidate first and destroying it when another neighbour was
  // first cost a `new` and a `destroy` per losing neighbour.) The `new`s
  // come after the claims, not inside their loop: there, the lanes of a
  // warp that allocated in one round were those that claimed the same
  // neighbour k, one or two, and a warp made a request per k; here every
  // lane with a claim asks in the first round, and a warp's requests are
  // served together (Sec. 4.2). Nothing in this phase dereferences a claim;
  // the candidate (or null, when the heap is full) replaces it before the
  // phase ends.
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
    // Null when the heap is full: the claim is released and check_errors
    // reports the error.
    platform::atomic_store(&w.cells[c]->agent, static_cast<Agent*>(new (w.alloc) Candidate(c)));
  }
}

DYNASOAR_HD void Cell::populate(World w, const unsigned char* initial) {
  if (initial[id] != 0) agent = new (w.alloc) Alive(id);
}

DYNASOAR_HD void Cell::add_checksum(unsigned long long* sum) {
  const Agent* a = agent;
  if (a != nullptr && a->is_a<Alive>()) platform::atomic_fetch_add(sum, static_cast<unsigned long long>(checksum_term(id)));
}

DYNASOAR_HD void Cell::write_frame(std::uint8_t* out) {
  const Agent* a = agent;
  out[id] = a == nullptr ? 0 : a->is_a<Alive>() ? 1 : 2;
}

}  // namespace

RunReport run(const Config& c) {
  check_one_rank(c.ranks, "this program");
  if (c.width < 3 || c.height < 3) throw std::invalid_argument("game of life: the grid needs at least 3x3 cells");
  using Handle = dynasoar::AllocatorHandle<AllocatorT>;
  const Grid grid{c.width, c.height};
  const auto n = static_cast<std::size_t>(grid.cells());
  // A class never has more objects than cells, nor more new ones in a step.
  const std::uint64_t default_bytes =
      default_pool_bytes<AllocatorT>(default_heap_bytes(c.width, c.height));
  check_checkpoints<AllocatorT>(c.checkpoint, "gol");
  Handle heap = make_heap<Handle>(c.heap_bytes != 0 ? c.heap_bytes : default_bytes, 2 * n);
  // --resume: the heap as it was after step `resumed`, and the cells' table from it.
  const std::string identity = run_identity(make_report(c, "", "", 0, {}));
  const int resumed = resume(heap, c.checkpoint, identity, c.steps);
  dynasoar::ObjectTable<AllocatorT, Cell> cells;
  if (resumed != 0) {
    cells = table_from_checkpoint<Cell>(heap);
  } else {
    platform::Buffer<unsigned char> initial(n);
    initial_state(c, initial, heap.stream());
    platform::synchronize(heap.stream());
    cells = heap.parallel_new_indexed<Cell>(n);
    const World w{grid, cells.index(), heap.device()};
    heap.parallel_do<Cell, &Cell::populate>(w, static_cast<const unsigned char*>(initial.data()));
    heap.parallel_do<Alive, &Alive::create_candidates>(w);
    heap.check_errors();
  }

  // The viewer's copy of the grid, only where a frame is due.
  const auto send_frame = [&](int step) {
    platform::Buffer<std::uint8_t> states(n);
    heap.parallel_do<Cell, &Cell::write_frame>(states.data());
    c.on_frame(Frame{step, c.width, c.height, states.to_vector(heap.stream())});
  };
  support::PhaseTimer timer(heap.stream());
  run_steps(c, timer, [&](int step) {
    const World w{grid, cells.index(), heap.device()};
    heap.parallel_do_async<Alive, &Alive::prepare>(w);
    heap.parallel_do_async<Candidate, &Candidate::prepare>(w);
    timer.mark("prepare");
    heap.parallel_do_async<Candidate, &Candidate::update>(w);
    heap.parallel_do_async<Alive, &Alive::update>(w);
    timer.mark("update");
    heap.parallel_do_async<Alive, &Alive::create_candidates>(w);
    timer.mark("new candidates");
    check_heap_now_and_then(heap, step, c.steps);
    end_of_step(heap, timer);  // --defrag
    checkpoint_if_due(heap, c.checkpoint, identity, step, timer);
  }, send_frame, resumed + 1);

  RunReport r = make_report(c, backend::Selected::kName, device_description(), timer.total_ms(),
                            timer.phases_ms());
  platform::Buffer<unsigned long long> sum(1);
  sum.zero();
  heap.parallel_do<Cell, &Cell::add_checksum>(sum.data());
  r.checksum = sum.to_vector()[0];
  r.live = {{"Alive", heap.count<Alive>()}, {"Candidate", heap.count<Candidate>()}};
  r.heap.emplace_back("heap", std::to_string(heap.heap_bytes() >> 20) + " MiB");
  report_compaction(heap, r);
  return r;
}

}  // namespace dynasoar::example::gol
