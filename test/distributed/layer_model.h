// The classes the distributed layer's tests move between ranks and keep
// halos of: walkers (an abstract base with two concrete subclasses, so that
// migrate<Walker> moves both), cells that point at walkers (the pointer
// check), and two grid classes for object tables with halos.
//
// Every walker has a unique 64-bit tag, and each of its other value fields
// is a function of the tag: a walker that arrived with one field changed,
// lost or taken from another object shows it. Its owner rank at step s is a
// hash of tag and step (its creating rank at step 0).
//
// Included once per block layout: DIST_TEST_ALLOCATOR names the allocator
// template and DIST_TEST_NAMESPACE the namespace (no #pragma once).
#include <dynasoar/distributed/halo.h>
#include <dynasoar/distributed/migrate.h>
#include <dynasoar/dynasoar.h>

#include <cstdint>

namespace DIST_TEST_NAMESPACE {

class Walker;
class Runner;
class Jumper;
class Cell;
class GridCell;
class StencilCell;
using Alloc = DIST_TEST_ALLOCATOR<Walker, Runner, Jumper, Cell, GridCell, StencilCell>;
using Handle = dynasoar::AllocatorHandle<Alloc>;
using ull = unsigned long long;
using dynasoar::platform::atomic_fetch_add;
using dynasoar::platform::mix64;

/// The tag of the walker with global number g (mix64 is a bijection: tags are distinct).
DYNASOAR_HD inline std::uint64_t tag_of(std::uint64_t g) { return mix64(g + 0x5eed); }

/// The owner of `tag` at step s >= 1 of `ranks`.
DYNASOAR_HD inline int owner_at(std::uint64_t tag, std::uint64_t step, int ranks) {
  return static_cast<int>(mix64(tag ^ (step * 0x9E3779B97F4A7C15ull)) %
                          static_cast<std::uint64_t>(ranks));
}

/// Where a walker belongs after step `step`: its home at step 0, then owner_at.
struct Owner {
  std::uint64_t step;
  int ranks;
  DYNASOAR_HD int operator()(const Walker* w) const;
};

/// Sends the walkers made on rank `from` to rank `to`; the others go home.
struct FromTo {
  int from, to;
  DYNASOAR_HD int operator()(const Walker* w) const;
};

/// Sends every walker to rank 0.
struct ToZero {
  DYNASOAR_HD int operator()(const Walker*) const { return 0; }
};

/// What Walker::verify fills: every tag seen, and counts of what is wrong.
struct Check {
  Owner owner;
  int rank;
  std::uint64_t* tags;  ///< room for every walker of the model
  ull capacity;         ///< of tags
  ull* found;           ///< walkers seen
  ull* wrong_owner;     ///< walkers on a rank that is not their owner's
  ull* bad_fields;      ///< walkers whose fields do not follow from their tag
};

class Walker : public Alloc::Base {
 public:
  declare_abstract_field_types(Walker, std::uint64_t, std::uint64_t, std::int32_t, Walker*,
                               std::uint32_t)
  Field<Walker, 0> tag;
  Field<Walker, 1> payload;  // mix64(tag ^ kSalt)
  Field<Walker, 2> home;     // the rank that made it
  Field<Walker, 3> buddy;    // itself on the rank that holds it; null on arrival
  Field<Walker, 4> hops;     // arrivals so far
  static constexpr std::uint64_t kSalt = 0xA5A5F00D;

  DYNASOAR_HD Walker(std::uint64_t t, int h)
      : tag(t), payload(mix64(t ^ kSalt)), home(h), buddy(nullptr), hops(0) {}

  DYNASOAR_HD void link_self() { buddy = this; }

  /// migrate's Arrive: counts the arrival, and a pointer that did not arrive null.
  DYNASOAR_HD void arrived(ull* arrivals, ull* errors) {
    atomic_fetch_add(arrivals, 1ull);
    if (static_cast<Walker*>(buddy) != nullptr) atomic_fetch_add(errors, 1ull);
    buddy = this;
    hops = hops + 1u;
  }

  /// Makes a Cell that points at this walker.
  DYNASOAR_HD void make_cell(Alloc alloc);

  DYNASOAR_HD void verify(Check c);
  /// Lists this walker in `out` if `owner` names another rank than `rank`
  /// (the input of migrate_departures).
  DYNASOAR_HD void list_if_leaving(Owner owner, int rank,
                                   dynasoar::distributed::Departures<Walker>::Device out) {
    const int to = owner(this);
    if (to != rank) out.leave(this, to);
  }
  DYNASOAR_HD bool fields_follow_from_tag();
};

class Runner : public Walker {
 public:
  declare_field_types(Runner, float, std::uint16_t)
  Field<Runner, 0> speed;
  Field<Runner, 1> lane;
  DYNASOAR_HD static float speed_of(std::uint64_t t) {
    return static_cast<float>(t % 4096) * 0.125f;
  }
  DYNASOAR_HD static std::uint16_t lane_of(std::uint64_t t) {
    return static_cast<std::uint16_t>(t >> 48);
  }
  /// Walker number 2 * (first + i), made on rank `made_on`.
  DYNASOAR_HD Runner(int i, std::uint64_t first, int made_on)
      : Walker(tag_of(2 * (first + static_cast<std::uint64_t>(i))), made_on),
        speed(speed_of(tag_of(2 * (first + static_cast<std::uint64_t>(i))))),
        lane(lane_of(tag_of(2 * (first + static_cast<std::uint64_t>(i))))) {}
};

class Jumper : public Walker {
 public:
  declare_field_types(Jumper, std::uint8_t, double, std::uint32_t[3])
  Field<Jumper, 0> mood;
  Field<Jumper, 1> height;
  Field<Jumper, 2> marks;
  DYNASOAR_HD static double height_of(std::uint64_t t) {
    return static_cast<double>(t % 100003) * 0.5;
  }
  DYNASOAR_HD static std::uint32_t mark_of(std::uint64_t t, int k) {
    return static_cast<std::uint32_t>(t >> (8 * k)) ^ static_cast<std::uint32_t>(k);
  }
  /// Walker number 2 * (first + i) + 1, made on rank `made_on`.
  DYNASOAR_HD Jumper(int i, std::uint64_t first, int made_on)
      : Walker(tag_of(2 * (first + static_cast<std::uint64_t>(i)) + 1), made_on),
        mood(static_cast<std::uint8_t>(tag_of(2 * (first + static_cast<std::uint64_t>(i)) + 1) >>
                                       56)),
        height(height_of(tag_of(2 * (first + static_cast<std::uint64_t>(i)) + 1))) {
    for (int k = 0; k < 3; ++k) marks[k] = mark_of(tag, k);
  }
};

/// Points at a walker of its own rank (or nowhere).
class Cell : public Alloc::Base {
 public:
  declare_field_types(Cell, Walker*, std::uint64_t)
  Field<Cell, 0> target;
  Field<Cell, 1> target_tag;
  DYNASOAR_HD explicit Cell(Walker* w) : target(w), target_tag(w->tag) {}
  /// Clears the pointer to a walker that `owner` sends elsewhere (before the move).
  DYNASOAR_HD void let_go(FromTo owner, int rank) {
    Walker* w = target;
    if (w != nullptr && owner(w) != rank) target = nullptr;
  }
  /// Counts the cells that point at a walker.
  DYNASOAR_HD void count_linked(ull* n) {
    if (static_cast<Walker*>(target) != nullptr) atomic_fetch_add(n, 1ull);
  }
  /// Clears the pointer whatever it names (after a move that left it stale).
  DYNASOAR_HD void forget() { target = nullptr; }
};

DYNASOAR_HD inline int Owner::operator()(const Walker* w) const {
  return step == 0 ? static_cast<int>(w->home) : owner_at(w->tag, step, ranks);
}

DYNASOAR_HD inline int FromTo::operator()(const Walker* w) const {
  return w->home == from ? to : static_cast<int>(w->home);
}

DYNASOAR_HD inline void Walker::make_cell(Alloc alloc) { new (alloc) Cell(this); }

DYNASOAR_HD inline bool Walker::fields_follow_from_tag() {
  const std::uint64_t t = tag;
  if (static_cast<std::uint64_t>(payload) != mix64(t ^ kSalt)) return false;
  if (Runner* r = dynasoar::cast<Runner>(this))
    return static_cast<float>(r->speed) == Runner::speed_of(t) &&
           static_cast<std::uint16_t>(r->lane) == Runner::lane_of(t);
  if (Jumper* j = dynasoar::cast<Jumper>(this)) {
    if (static_cast<std::uint8_t>(j->mood) != static_cast<std::uint8_t>(t >> 56) ||
        static_cast<double>(j->height) != Jumper::height_of(t))
      return false;
    for (int k = 0; k < 3; ++k)
      if (j->marks[k] != Jumper::mark_of(t, k)) return false;
    return true;
  }
  return false;
}

DYNASOAR_HD inline void Walker::verify(Check c) {
  const ull k = atomic_fetch_add(c.found, 1ull);
  if (k < c.capacity) c.tags[k] = tag;
  if (c.owner(this) != c.rank) atomic_fetch_add(c.wrong_owner, 1ull);
  // It moved exactly at the steps where its owner changed, and arrived once each time.
  std::uint32_t moves = 0;
  for (std::uint64_t s = 1; s <= c.owner.step; ++s)
    moves += Owner{s - 1, c.owner.ranks}(this) != Owner{s, c.owner.ranks}(this) ? 1u : 0u;
  if (!fields_follow_from_tag() || static_cast<Walker*>(buddy) != this || hops != moves)
    atomic_fetch_add(c.bad_fields, 1ull);
}

/// A cell of a grid split into stripes (distributed::Stripes): table entry
/// i of a rank is the cell of local row i / width, column i % width. Every
/// field but `link` is a value field that a halo refresh copies.
class GridCell : public Alloc::Base {
 public:
  declare_field_types(GridCell, std::uint32_t, std::uint64_t, std::uint32_t, std::int64_t,
                      std::int32_t, std::int32_t, GridCell*, std::uint8_t)
  Field<GridCell, 0> gid;  // global row * width + column: the same in owner and ghost
  Field<GridCell, 1> value;
  Field<GridCell, 2> bits;
  Field<GridCell, 3> sum;
  Field<GridCell, 4> max;
  Field<GridCell, 5> x;
  Field<GridCell, 6> link;  // an object pointer: a halo never copies it
  Field<GridCell, 7> marked;

  static constexpr std::uint64_t kValue = 7919;
  DYNASOAR_HD GridCell(int i, dynasoar::distributed::Stripes s, int width)
      : gid(static_cast<std::uint32_t>(s.global_row(i / width) * width + i % width)),
        value(0),
        bits(0),
        sum(0),
        max(0),
        x(0),
        link(nullptr),
        marked(0) {}

  DYNASOAR_HD bool owned(dynasoar::distributed::Stripes s, int width) {
    return s.owns(static_cast<int>(gid / width));
  }
  DYNASOAR_HD void link_self() { link = this; }

  /// Owners hold their values; ghosts hold what this rank wrote into them
  /// (combine's input: distinct bits, sums and maxima of each rank).
  DYNASOAR_HD void setup(dynasoar::distributed::Stripes s, int width) {
    const std::uint64_t g = gid;
    if (owned(s, width)) {
      value = g * kValue;
      x = static_cast<std::int32_t>(g + 1);
      bits = 1u;
      sum = static_cast<std::int64_t>(g);
      max = 50;
    } else {
      value = 0;
      x = 0;
      bits = 1u << (1 + s.rank);
      sum = 1000000ll * (s.rank + 1);
      max = s.rank * 100 + static_cast<std::int32_t>(g % 7);
    }
    marked = 0;
  }
  /// Owners change value and x; ghosts keep theirs.
  DYNASOAR_HD void bump(dynasoar::distributed::Stripes s, int width) {
    if (!owned(s, width)) return;
    value = gid * kValue + 3;
    x = static_cast<std::int32_t>(gid + 2);
  }
  DYNASOAR_HD void mark(ull* calls) {
    atomic_fetch_add(calls, 1ull);
    marked = marked + 1u;
  }
};

/// A cell of the stencil test: 10 steps of an integer blur on a torus.
class StencilCell : public Alloc::Base {
 public:
  declare_field_types(StencilCell, std::uint32_t, std::uint64_t, std::uint64_t)
  Field<StencilCell, 0> gid;
  Field<StencilCell, 1> value;
  Field<StencilCell, 2> next;
  static constexpr std::uint64_t kModulus = 1000003;

  DYNASOAR_HD static std::uint64_t initial(std::uint64_t g) { return mix64(g) % kModulus; }
  /// Owners start from initial(); ghosts from 0, so that a missing refresh shows.
  DYNASOAR_HD StencilCell(int i, dynasoar::distributed::Stripes s, int width)
      : gid(static_cast<std::uint32_t>(s.global_row(i / width) * width + i % width)),
        value(s.owns(s.global_row(i / width))
                  ? initial(static_cast<std::uint64_t>(s.global_row(i / width) * width + i % width))
                  : 0),
        next(0) {}

  /// The value of the cell at (row, column) of the torus, from this rank's table.
  DYNASOAR_HD static std::uint64_t at(dynasoar::ObjectIndex<Alloc, StencilCell> cells,
                                      dynasoar::distributed::Stripes s, int width, int row,
                                      int column) {
    row = (row + s.rows) % s.rows;
    column = (column + width) % width;
    return cells[static_cast<std::size_t>(s.local_row(row) * width + column)]->value;
  }
  /// The blur: next = 4 * own + the four neighbours, modulo kModulus (owners only).
  DYNASOAR_HD void compute(dynasoar::ObjectIndex<Alloc, StencilCell> cells,
                           dynasoar::distributed::Stripes s, int width) {
    const int row = static_cast<int>(gid / width), column = static_cast<int>(gid % width);
    if (!s.owns(row)) return;
    next = (4 * static_cast<std::uint64_t>(value) + at(cells, s, width, row - 1, column) +
            at(cells, s, width, row + 1, column) + at(cells, s, width, row, column - 1) +
            at(cells, s, width, row, column + 1) + 2 * at(cells, s, width, row - 1, column + 1)) %
           kModulus;
  }
  DYNASOAR_HD void commit(dynasoar::distributed::Stripes s, int width) {
    if (s.owns(static_cast<int>(gid / width))) value = static_cast<std::uint64_t>(next);
  }
};

}  // namespace DIST_TEST_NAMESPACE
