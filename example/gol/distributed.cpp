// Game of life over several ranks (gol_distributed): the model of
// objects.cpp, its grid's rows split in bands (distributed::Stripes), one
// DynaSOAr heap per rank. A rank's cell table (parallel_new_indexed) holds
// its band and, with more than one rank, a ghost row on either side: copies
// of the neighbouring ranks' border rows. Cells keep their global index (the
// initial state, the rule's neighbours and the checksum use it, as on one
// rank) and are found through their local index (World::cell).
//
// Agents (Alive, Candidate) live only in a rank's own rows. What a
// neighbour needs of a cell is one value field, Cell::alive, kept in step
// with the agent by the methods that change it; the halo copies it into the
// ghosts once a step, after the updates. Methods count alive neighbours
// from Cell::alive, ghosts included. The new candidates come from two
// places: Alive::create_candidates, for the empty cells of this rank's rows
// next to an alive cell of its own, and Cell::candidates_from_ghost, run on
// the ghosts only, for those next to an alive ghost. A step:
//   1. Alive::prepare, Candidate::prepare (read own cells and ghosts).
//   2. Candidate::update, Alive::update (set Cell::alive of own cells).
//   3. The halo: Cell::alive of the border rows into the neighbours' ghosts.
//   4. Alive::create_candidates, then Cell::candidates_from_ghost.
// Every own cell thus sees the alive cells and candidates it would see on
// one rank: the checksum, and the live counts, are those of gol_dynasoar.
#include <dynasoar/dynasoar.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dynasoar/distributed/halo.h"
#include "dynasoar/distributed/run.h"
#include "dynasoar/support/phase_timer.h"
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

/// Where a rank's cells are: global cell g of its band or of a ghost row is
/// local cell g - offset (wrapped around the grid), local row 0 the ghost
/// above the band. With one rank, local cells are the grid's cells.
struct Band {
  int width = 0;
  int cells = 0;      // of the whole grid
  int offset = 0;     // global index of local cell 0, less `cells` where it wraps
  int first = 0;      // this rank's rows: [first, last)
  int last = 0;
  bool split = false;  // more than one rank: ghost rows above and below

  Band() = default;
  Band(const Grid& g, const distributed::Stripes& s)
      : width(g.width),
        cells(g.cells()),
        offset(s.ranks > 1 ? (s.first() - 1) * g.width : 0),
        first(s.first()),
        last(s.last()),
        split(s.ranks > 1) {}

  /// The local index of global cell g (a cell of the band or a ghost).
  DYNASOAR_HD int local(int g) const {
    int l = g - offset;
    if (l < 0) l += cells;
    if (l >= cells) l -= cells;
    return l;
  }
  /// The global index of local cell l.
  DYNASOAR_HD int global(int l) const {
    int g = l + offset;
    if (g < 0) g += cells;
    if (g >= cells) g -= cells;
    return g;
  }
  /// Whether this rank owns the row.
  DYNASOAR_HD bool owns_row(int row) const { return row >= first && row < last; }
};

struct World {
  Grid grid;
  Band band;
  dynasoar::ObjectIndex<AllocatorT, Cell> cells;  // cells[l]: the cell of local index l
  AllocatorT alloc;

  /// The cell of global index g (of this rank's rows or a ghost).
  DYNASOAR_HD Cell* cell(int g) const { return cells[band.local(g)]; }
};

class Cell : public AllocatorT::Base {
 public:
  declare_field_types(Cell, Agent*, int, bool)
  Field<Cell, 0> agent;  // the Alive or Candidate here, or null; always null in a ghost
  Field<Cell, 1> id;     // global index in the grid
  Field<Cell, 2> alive;  // whether the cell is alive: set with the agent, refreshed in ghosts

  DYNASOAR_HD Cell(int local, Band b) : agent(nullptr), id(b.global(local)), alive(false) {}

  DYNASOAR_HD void populate(World w, const unsigned char* initial);
  DYNASOAR_HD void candidates_from_ghost(World w);
  DYNASOAR_HD void add_checksum(World w, unsigned long long* sum);
  DYNASOAR_HD void write_frame(World w, std::uint8_t* out);
};

class Agent : public AllocatorT::Base {
 public:
  declare_abstract_field_types(Agent, int)
  Field<Agent, 0> cell;  // global index in the grid

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
    Cell* here = w.cell(cell);
    here->agent = a == kBorn ? static_cast<Agent*>(new (w.alloc) Alive(cell)) : nullptr;
    here->alive = a == kBorn;
    dynasoar::destroy(w.alloc, this);
  }
};

/// Marks an empty cell while an alive neighbour makes its candidate; never
/// dereferenced (as in objects.cpp).
constexpr std::uintptr_t kClaimed = 1;

/// Makes a Candidate in each empty cell around[k] for the bits k of
/// `wanted` (cells of this rank's rows): claims first, then makes those it
/// claimed, as objects.cpp's Alive::create_candidates.
DYNASOAR_HD void make_candidates(const World& w, const int (&around)[8], unsigned wanted) {
  unsigned claimed = 0;  // bit k: this thread claimed neighbour k
  for (int k = 0; k < 8; ++k) {
    if ((wanted >> k & 1u) == 0) continue;
    Cell* there = w.cell(around[k]);
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
    platform::atomic_store(&w.cell(c)->agent, static_cast<Agent*>(new (w.alloc) Candidate(c)));
  }
}

DYNASOAR_HD int Agent::alive_neighbors(const World& w) const {
  int around[8];
  w.grid.neighbors(cell, around);
  int n = 0;
  for (int k = 0; k < 8; ++k) n += w.cell(around[k])->alive ? 1 : 0;
  return n;
}

DYNASOAR_HD void Alive::update(World w) {
  if (!will_die) return;
  Cell* here = w.cell(cell);
  here->agent = new (w.alloc) Candidate(cell);
  here->alive = false;
  dynasoar::destroy(w.alloc, this);
}

DYNASOAR_HD void Alive::create_candidates(World w) {
  int around[8];
  w.grid.neighbors(cell, around);
  // Neighbours 0-2 lie in the row above, 5-7 in the row below: on the
  // band's first (last) row that row is a ghost, whose candidates its owner
  // makes (candidates_from_ghost there).
  unsigned wanted = 0xFFu;
  if (w.band.split) {
    const int row = cell / w.grid.width;
    if (row == w.band.first) wanted &= ~0x07u;
    if (row == w.band.last - 1) wanted &= ~0xE0u;
  }
  make_candidates(w, around, wanted);
}

// On a ghost: an alive ghost's empty neighbours in this rank's rows get a
// candidate, as the ghost's own Alive makes them on its rank.
DYNASOAR_HD void Cell::candidates_from_ghost(World w) {
  if (!alive) return;
  int around[8];
  w.grid.neighbors(id, around);
  unsigned wanted = 0;
  for (int k = 0; k < 8; ++k)
    if (w.band.owns_row(around[k] / w.grid.width)) wanted |= 1u << k;
  make_candidates(w, around, wanted);
}

DYNASOAR_HD void Cell::populate(World w, const unsigned char* initial) {
  // Ghosts take their state from the initial grid too, so that the first
  // step needs no halo exchange before it.
  const int g = id;
  alive = initial[g] != 0;
  if (initial[g] != 0 && w.band.owns_row(g / w.grid.width)) agent = new (w.alloc) Alive(g);
}

DYNASOAR_HD void Cell::add_checksum(World w, unsigned long long* sum) {
  const int g = id;
  if (alive && w.band.owns_row(g / w.grid.width))
    platform::atomic_fetch_add(sum, static_cast<unsigned long long>(checksum_term(g)));
}

// The viewer's copy of this rank's rows, from the band's first row on.
DYNASOAR_HD void Cell::write_frame(World w, std::uint8_t* out) {
  const int g = id;
  if (!w.band.owns_row(g / w.grid.width)) return;
  const Agent* a = agent;
  out[g - w.band.first * w.grid.width] = a == nullptr ? 0 : a->is_a<Alive>() ? 1 : 2;
}

/// Refuses what the distributed program does not do, before any rank starts.
void check_distributed(const Config& c) {
  if (c.width < 3 || c.height < 3) throw std::invalid_argument("game of life: the grid needs at least 3x3 cells");
  if (c.ranks < 1) throw std::invalid_argument("--ranks: at least one rank, not " + std::to_string(c.ranks));
  if (c.checkpoint.active())
    throw std::invalid_argument(
        "--checkpoint-every and --resume: the distributed game of life saves no checkpoints (a heap per rank); "
        "run gol_dynasoar for them");
  try {
    distributed::Stripes(c.height, c.ranks, 0);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("--ranks " + std::to_string(c.ranks) + " with --height " + std::to_string(c.height) +
                                ": " + e.what());
  }
}

}  // namespace

RunReport run(const Config& c) {
  check_distributed(c);
  using Handle = dynasoar::AllocatorHandle<AllocatorT>;
  const Grid grid{c.width, c.height};
  RunReport report;  // rank 0's (in a process the launcher started as one rank: that rank's)

  distributed::run_ranks(c.ranks, [&](distributed::Communicator& comm) {
    // comm.size(), not c.ranks: a process started by the launcher is one of its ranks.
    const distributed::Stripes stripes(c.height, comm.size(), comm.rank());
    const Band band(grid, stripes);
    const int rank = comm.rank();
    const auto local_cells = static_cast<std::size_t>(stripes.local_rows()) * static_cast<std::size_t>(c.width);
    // --heap-mib: each rank's heap. The estimate of objects.cpp for the rows this rank holds.
    const std::uint64_t default_bytes =
        default_pool_bytes<AllocatorT>(default_heap_bytes(c.width, stripes.local_rows()));
    Handle heap = make_heap<Handle>(c.heap_bytes != 0 ? c.heap_bytes : default_bytes, 2 * local_cells);

    dynasoar::ObjectTable<AllocatorT, Cell> cells = heap.parallel_new_indexed<Cell>(local_cells, band);
    distributed::TableHalo<Handle, Cell> halo(comm, cells, stripes.sends(c.width), stripes.receives(c.width));
    const World w{grid, band, cells.index(), heap.device()};
    {
      // Every rank makes the whole initial grid (by global index) and reads its rows and ghosts from it.
      platform::Buffer<unsigned char> initial(static_cast<std::size_t>(grid.cells()));
      initial_state(c, initial, heap.stream());
      platform::synchronize(heap.stream());
      heap.parallel_do<Cell, &Cell::populate>(w, static_cast<const unsigned char*>(initial.data()));
      heap.parallel_do<Alive, &Alive::create_candidates>(w);
      halo.parallel_do_received<&Cell::candidates_from_ghost>(w);
      heap.check_errors();
    }

    // Progress only from rank 0; every rank takes part in a frame's gather,
    // rank 0 hands it to the viewer. Each rank sends `slots` cells, its
    // band's and zeros up to the largest band.
    Config rc = c;
    if (rank != 0) rc.on_step = nullptr;
    int most_rows = 0;
    for (int r = 0; r < stripes.ranks; ++r) most_rows = std::max(most_rows, stripes.first_of(r + 1) - stripes.first_of(r));
    const std::size_t slots = static_cast<std::size_t>(most_rows) * static_cast<std::size_t>(c.width);
    const auto send_frame = [&](int step) {
      platform::Buffer<std::uint8_t> part(slots), gathered(slots * static_cast<std::size_t>(stripes.ranks));
      part.zero(heap.stream());
      heap.parallel_do<Cell, &Cell::write_frame>(w, part.data());
      comm.all_gather(part.data(), gathered.data(), slots);
      if (rank != 0) return;
      const std::vector<std::uint8_t> by_rank = gathered.to_vector(heap.stream());
      std::vector<std::uint8_t> states;
      states.reserve(static_cast<std::size_t>(grid.cells()));
      for (int r = 0; r < stripes.ranks; ++r) {
        const auto from = by_rank.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * slots);
        const int rows = stripes.first_of(r + 1) - stripes.first_of(r);
        states.insert(states.end(), from, from + static_cast<std::ptrdiff_t>(rows) * c.width);
      }
      c.on_frame(Frame{step, c.width, c.height, std::move(states)});
    };

    support::PhaseTimer timer(heap.stream());
    run_steps(rc, timer, [&](int step) {
      heap.parallel_do_async<Alive, &Alive::prepare>(w);
      heap.parallel_do_async<Candidate, &Candidate::prepare>(w);
      timer.mark("prepare");
      heap.parallel_do_async<Candidate, &Candidate::update>(w);
      heap.parallel_do_async<Alive, &Alive::update>(w);
      timer.mark("update");
      // One rank has no ghosts: nothing to exchange.
      if (halo.sent_objects() != 0) {
        halo.refresh_fields<&Cell::alive>();
        timer.mark("halo");
      }
      heap.parallel_do_async<Alive, &Alive::create_candidates>(w);
      halo.parallel_do_received<&Cell::candidates_from_ghost>(w);
      timer.mark("new candidates");
      // The halo's messages done within the time limit before any host wait
      // (a stopped peer is then an error, not a wait without end).
      comm.settle();
      check_heap_now_and_then(heap, step, c.steps);
      end_of_step(heap, timer);  // --defrag: cells never move (full blocks), agents do
    }, send_frame);

    platform::Buffer<unsigned long long> sum(1);
    sum.zero(heap.stream());
    heap.parallel_do<Cell, &Cell::add_checksum>(w, sum.data());
    const std::uint64_t checksum = comm.all_reduce(static_cast<std::uint64_t>(sum.to_vector(heap.stream())[0]));
    const std::uint64_t alive = comm.all_reduce(static_cast<std::uint64_t>(heap.count<Alive>()));
    const std::uint64_t candidates = comm.all_reduce(static_cast<std::uint64_t>(heap.count<Candidate>()));
    // The slowest rank's time, as wa-tor and n-body report it.
    const double total_ms = comm.all_reduce(timer.total_ms(), distributed::ReduceOp::kMax);
    RunReport r = make_report(c, backend::Selected::kName, device_description(), total_ms, timer.phases_ms());
    r.config.emplace_back("ranks", std::to_string(stripes.ranks));
    r.checksum = checksum;
    r.live = {{"Alive", alive}, {"Candidate", candidates}};
    r.heap.emplace_back("heap", std::to_string(heap.heap_bytes() >> 20) + " MiB a rank");
    report_compaction(heap, r);
    if (rank == 0 || distributed::launched_as_rank()) report = std::move(r);
  });
  return report;
}

}  // namespace dynasoar::example::gol
