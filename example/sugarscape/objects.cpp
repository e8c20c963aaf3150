// Sugarscape as an SMMO program with inheritance: cells and agents are
// objects, Agent is an abstract class with the subclasses Male and Female,
// and every phase is one parallel_do over a class (a do-all over Agent
// visits males and females). Agents die and are born inside the do-alls.
// The same source is built for every back end that can free
// (sugarscape_<back end>); the rules are in rules.h.
#include <dynasoar/dynasoar.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "dynasoar/support/phase_timer.h"
#include "example/common/checkpoint.h"
#include "example/common/device_info.h"
#include "example/common/make_heap.h"
#include "example/common/run_loop.h"
#include "example/sugarscape/rules.h"
#include "example/sugarscape/sugarscape.h"

namespace dynasoar::example::sugarscape {
namespace {

class Cell;
class Agent;
class Male;
class Female;
using AllocatorT = dynasoar::Allocator<Cell, Agent, Male, Female>;

/// What every method needs: the grid and step, the cells by index, the allocator.
struct World {
  Grid grid;
  dynasoar::ObjectIndex<AllocatorT, Cell> cells;  // cells[i]: the cell of index i
  AllocatorT alloc;
};

class Cell : public AllocatorT::Base {
 public:
  declare_field_types(Cell, Agent*, int, int, int, int)
  Field<Cell, 0> agent;   // the agent on this cell, or null
  Field<Cell, 1> sugar;
  Field<Cell, 2> given;   // sugar given away this step (grow), an eighth of it to each cell within kMaxVision
  Field<Cell, 3> growth;  // sugar grown per step
  Field<Cell, 4> id;      // index in the grid

  DYNASOAR_HD Cell(int i, Grid g) : agent(nullptr), sugar(0), given(0), growth(grow_rate(g, i)), id(i) {}

  /// Grows sugar and sets aside what diffuses to the neighbours.
  DYNASOAR_HD void grow() {
    const int s = grown(sugar, growth);
    const int d = diffusion(s);
    given = d;
    sugar = s - d;
  }

  /// Receives an eighth of what each cell within kMaxVision gave away.
  DYNASOAR_HD void diffuse(World w) {
    int received = 0;
    w.grid.for_each_near(id, kMaxVision, [&](int n) { received += w.cells[n]->given / 8; });
    sugar += received;
  }

  DYNASOAR_HD bool is_free() const { return static_cast<Agent*>(agent) == nullptr; }

  DYNASOAR_HD void populate(World w);
  DYNASOAR_HD void decide(World w, Purpose purpose);
  DYNASOAR_HD void add_checksum(unsigned long long* sum);
  DYNASOAR_HD void write_frame(std::uint8_t* out);
};

class Agent : public AllocatorT::Base {
 public:
  declare_abstract_field_types(Agent, Cell*, Cell*, int, int, int, int, int, int, int)
  Field<Agent, 0> cell;        // where it is
  Field<Agent, 1> request;     // the cell it asks for (to move to, or for a child), or null
  Field<Agent, 2> vision;      // how far it sees
  Field<Agent, 3> age;
  Field<Agent, 4> max_age;
  Field<Agent, 5> sugar;
  Field<Agent, 6> endowment;   // sugar it was born with
  Field<Agent, 7> metabolism;  // sugar it burns per step
  Field<Agent, 8> permission;  // 1: the requested cell chose it (Cell::decide)

  DYNASOAR_HD Agent(Cell* c, const Traits& t)
      : cell(c), request(nullptr), vision(t.vision), age(0), max_age(t.max_age), sugar(t.endowment),
        endowment(t.endowment), metabolism(t.metabolism), permission(0) {}

  DYNASOAR_HD Traits traits() const { return Traits{vision, max_age, endowment, metabolism, 0}; }

  DYNASOAR_HD void age_and_metabolize(World w) {
    age += 1;
    sugar -= metabolism;
    if (age > max_age || sugar <= 0) {
      static_cast<Cell*>(cell)->agent = nullptr;
      dynasoar::destroy(w.alloc, this);
    }
  }

  /// Asks for the free cell in sight with the most sugar.
  DYNASOAR_HD void prepare_move(World w) {
    const int here = static_cast<Cell*>(cell)->id;
    Best best(w.grid.random(here, kMove));
    w.grid.for_each_near(here, vision, [&](int n) {
      const Cell* there = w.cells[n];
      if (there->is_free()) best.offer(n, there->sugar);
    });
    request = best.best >= 0 ? w.cells[best.best] : nullptr;
  }

  /// Moves if the requested cell chose it, then harvests all sugar where it is.
  DYNASOAR_HD void update_move(World /*w*/) {
    Cell* here = cell;
    if (permission != 0) {
      Cell* to = request;
      here->agent = nullptr;
      to->agent = this;
      cell = to;
      here = to;
    }
    sugar += here->sugar;
    here->sugar = 0;
    request = nullptr;
    permission = 0;
  }
};

class Female : public Agent {
 public:
  declare_field_types(Female, int, int)
  Field<Female, 0> children;
  Field<Female, 1> max_children;

  DYNASOAR_HD Female(Cell* c, const Traits& t) : Agent(c, t), children(0), max_children(t.max_children) {}

  DYNASOAR_HD Traits traits() const {
    Traits t = Agent::traits();
    t.max_children = max_children;
    return t;
  }

  DYNASOAR_HD void decide_proposal(World w);
};

class Male : public Agent {
 public:
  declare_field_types(Male, Female*, int)
  Field<Male, 0> female_request;  // the female it proposed to, or null
  Field<Male, 1> accepted;        // 1: she accepted

  DYNASOAR_HD Male(Cell* c, const Traits& t) : Agent(c, t), female_request(nullptr), accepted(0) {}

  /// If ready, proposes to the richest ready female in sight.
  DYNASOAR_HD void propose(World w) {
    if (!ready_to_mate(age, sugar, endowment)) return;
    const int here = static_cast<Cell*>(cell)->id;
    Best best(w.grid.random(here, kPropose));
    w.grid.for_each_near(here, vision, [&](int n) {
      const Female* f = dynasoar::cast<Female>(static_cast<Agent*>(w.cells[n]->agent));
      if (f != nullptr && ready_to_mate(f->age, f->sugar, f->endowment)) best.offer(n, f->sugar);
    });
    if (best.best >= 0) female_request = dynasoar::cast<Female>(static_cast<Agent*>(w.cells[best.best]->agent));
  }

  /// If accepted, asks for a free cell in sight for the child.
  DYNASOAR_HD void propose_offspring_target(World w) {
    if (accepted == 0) return;
    const int here = static_cast<Cell*>(cell)->id;
    Best best(w.grid.random(here, kBirthplace));
    w.grid.for_each_near(here, vision, [&](int n) {
      if (w.cells[n]->is_free()) best.offer(n, 0);
    });
    request = best.best >= 0 ? w.cells[best.best] : nullptr;
  }

  /// If the cell for the child chose it: the child is born there, and each
  /// parent gives it half its own endowment.
  DYNASOAR_HD void mate(World w) {
    if (accepted != 0 && permission != 0) {
      Female* mother = female_request;
      Cell* place = request;
      mother->children += 1;
      const Traits t = child_traits(traits(), mother->traits());
      sugar -= endowment / 2;
      mother->sugar -= mother->endowment / 2;
      Agent* child = nullptr;
      if (child_kind(w.grid, place->id) == Kind::kMale)
        child = new (w.alloc) Male(place, t);
      else
        child = new (w.alloc) Female(place, t);
      place->agent = child;  // null if the heap is full (the error flag is raised)
    }
    permission = 0;
    accepted = 0;
    female_request = nullptr;
    request = nullptr;
  }
};

/// If the female may have more children, accepts the richest of the males that proposed to her.
DYNASOAR_HD void Female::decide_proposal(World w) {
  if (children >= max_children) return;
  const int here = static_cast<Cell*>(cell)->id;
  Best best(w.grid.random(here, kAccept));
  w.grid.for_each_near(here, kMaxVision, [&](int n) {
    const Male* m = dynasoar::cast<Male>(static_cast<Agent*>(w.cells[n]->agent));
    if (m != nullptr && static_cast<Female*>(m->female_request) == this) best.offer(n, m->sugar);
  });
  if (best.best >= 0) dynasoar::cast<Male>(static_cast<Agent*>(w.cells[best.best]->agent))->accepted = 1;
}

DYNASOAR_HD void Cell::populate(World w) {
  const Kind k = initial_kind(w.grid, id);
  if (k == Kind::kNone) return;
  const Traits t = initial_traits(w.grid, id);
  if (k == Kind::kMale)
    agent = new (w.alloc) Male(this, t);
  else
    agent = new (w.alloc) Female(this, t);
}

/// Grants the cell to one of the agents within kMaxVision that asked for it.
DYNASOAR_HD void Cell::decide(World w, Purpose purpose) {
  Best best(w.grid.random(id, purpose));
  w.grid.for_each_near(id, kMaxVision, [&](int n) {
    const Agent* a = w.cells[n]->agent;
    if (a != nullptr && static_cast<Cell*>(a->request) == this) best.offer(n, 0);
  });
  if (best.best >= 0) static_cast<Agent*>(w.cells[best.best]->agent)->permission = 1;
}

DYNASOAR_HD void Cell::add_checksum(unsigned long long* sum) {
  const Agent* a = agent;
  Kind k = Kind::kNone;
  int age = 0, sugar_held = 0, children = 0;
  if (a != nullptr) {
    age = a->age;
    sugar_held = a->sugar;
    if (const Female* f = a->cast<Female>()) {
      k = Kind::kFemale;
      children = f->children;
    } else {
      k = Kind::kMale;
    }
  }
  platform::atomic_fetch_add(sum, static_cast<unsigned long long>(checksum_term(id, sugar, k, age, sugar_held, children)));
}

DYNASOAR_HD void Cell::write_frame(std::uint8_t* out) {
  const Agent* a = agent;
  out[id] = frame_byte(sugar, a == nullptr ? Kind::kNone : a->is_a<Female>() ? Kind::kFemale : Kind::kMale);
}

}  // namespace

RunReport run(const Config& c) {
  if (c.width < 2 || c.height < 2) throw std::invalid_argument("sugarscape: the grid needs at least 2x2 cells");
  const std::uint64_t heap_bytes = c.heap_bytes != 0 ? c.heap_bytes : default_heap_bytes(c.width, c.height);
  using Handle = dynasoar::AllocatorHandle<AllocatorT>;
  check_checkpoints<AllocatorT>(c.checkpoint, "sugarscape");
  Handle heap = make_heap<Handle>(heap_bytes, static_cast<std::uint64_t>(c.width) * static_cast<std::uint64_t>(c.height));
  Grid grid{c.width, c.height, c.seed, 0};
  // --resume: the heap as it was after step `resumed`, and the cells' table from it.
  const std::string identity = run_identity(make_report(c, "", "", 0, {}));
  const int resumed = resume(heap, c.checkpoint, identity, c.steps);
  dynasoar::ObjectTable<AllocatorT, Cell> cells;
  if (resumed != 0) {
    cells = table_from_checkpoint<Cell>(heap);
  } else {
    cells = heap.parallel_new_indexed<Cell>(static_cast<std::size_t>(grid.cells()), grid);
    heap.parallel_do<Cell, &Cell::populate>(World{grid, cells.index(), heap.device()});
  }

  // The viewer's copy of the grid, only where a frame is due.
  const auto send_frame = [&](int step) {
    platform::Buffer<std::uint8_t> bytes(static_cast<std::size_t>(grid.cells()));
    heap.parallel_do<Cell, &Cell::write_frame>(bytes.data());
    c.on_frame(Frame{step, c.width, c.height, bytes.to_vector(heap.stream())});
  };
  support::PhaseTimer timer(heap.stream());
  const double enumeration_before = enumeration_seconds(heap);
  run_steps(c, timer, [&](int step) {
    grid.step = step;
    const World w{grid, cells.index(), heap.device()};
    heap.parallel_do_async<Cell, &Cell::grow>();
    heap.parallel_do_async<Cell, &Cell::diffuse>(w);
    timer.mark("sugar");
    heap.parallel_do_async<Agent, &Agent::age_and_metabolize>(w);
    timer.mark("age");
    heap.parallel_do_async<Agent, &Agent::prepare_move>(w);
    heap.parallel_do_async<Cell, &Cell::decide>(w, kMovePermit);
    heap.parallel_do_async<Agent, &Agent::update_move>(w);
    timer.mark("move");
    heap.parallel_do_async<Male, &Male::propose>(w);
    heap.parallel_do_async<Female, &Female::decide_proposal>(w);
    heap.parallel_do_async<Male, &Male::propose_offspring_target>(w);
    heap.parallel_do_async<Cell, &Cell::decide>(w, kBirthPermit);
    heap.parallel_do_async<Male, &Male::mate>(w);
    timer.mark("mate");
    check_heap_now_and_then(heap, step, c.steps);
    end_of_step(heap, timer);  // --defrag
    checkpoint_if_due(heap, c.checkpoint, identity, step, timer);
  }, send_frame, resumed + 1);

  RunReport r = make_report(c, backend::Selected::kName, device_description(), timer.total_ms(), timer.phases_ms());
  if constexpr (HasRegistry<Handle>)
    r.extra_ms.emplace_back("registry enumeration (host clock)", (enumeration_seconds(heap) - enumeration_before) * 1e3);

  platform::Buffer<unsigned long long> sum(1);
  sum.zero();
  heap.parallel_do<Cell, &Cell::add_checksum>(sum.data());
  r.checksum = sum.to_vector()[0];
  r.live = {{"Cell", heap.count<Cell>()}, {"Male", heap.count<Male>()}, {"Female", heap.count<Female>()}};
  r.heap.emplace_back("heap", std::to_string(heap.heap_bytes() >> 20) + " MiB");
  report_compaction(heap, r);
  const char* names[] = {"Cell", "Agent", "Male", "Female"};  // the allocator's type list, in order
  report_statistics<Cell, Agent>(heap, r, names);
  return r;
}

}  // namespace dynasoar::example::sugarscape
