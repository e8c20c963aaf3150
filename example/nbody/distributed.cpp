// n-body over several ranks (nbody_distributed): the model of objects.cpp,
// its bodies split by global id over the ranks of run_ranks, one DynaSOAr
// heap each. Rank r owns a contiguous share of the ids. Bodies never move
// between ranks; what moves is a copy of every body's place and mass: each
// step every rank writes its bodies' (x, y, mass) into an array by id and
// all-gathers it, so that every rank holds all bodies in global id order.
// Each body then sums its acceleration over that array in id order, as a
// body of objects.cpp sums over its heap on one rank (parallel_new puts
// body i in slot i % capacity of the i / capacity-th block, and the walk
// visits blocks and slots in ascending order): the sums are the same sums.
//
// --collisions: two more all-gathers a step, each rank deciding for its own
// bodies from the gathered arrays: the places after the move (every body
// picks its partner among all bodies), then every body's partner, place,
// velocity and mass (a body whose partner stays deletes itself; a body that
// stays takes in the bodies that chose it, summed in id order).
#include <dynasoar/dynasoar.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dynasoar/distributed/run.h"
#include "dynasoar/support/phase_timer.h"
#include "example/common/device_info.h"
#include "example/common/make_heap.h"
#include "example/common/run_loop.h"
#include "example/nbody/nbody.h"
#include "example/nbody/rules.h"

namespace dynasoar::example::nbody {
namespace {

/// The ranks' shares of the global ids: rank r owns [first(r), first(r) +
/// count(r)); the first bodies % ranks ranks one more than the others.
/// Gathered arrays give every rank `slots()` places (the largest share), so
/// rank r's bodies lie at r * slots() + (id - first(r)).
struct Shares {
  int bodies = 0, ranks = 1;
  DYNASOAR_HD int slots() const { return (bodies + ranks - 1) / ranks; }
  DYNASOAR_HD int count(int r) const { return bodies / ranks + (r < bodies % ranks ? 1 : 0); }
  DYNASOAR_HD int first(int r) const { return r * (bodies / ranks) + (r < bodies % ranks ? r : bodies % ranks); }
};

/// What every rank sees of every body for the forces and the choice of
/// partners. A slot without a body (a share smaller than slots(), a body
/// absorbed) has mass 0: it adds exactly nothing to a sum of accelerations
/// and is never heavier than a body, so no body chooses it.
struct Source {
  float x, y, mass;
};

/// Collision variant: what every rank sees of every body to merge them.
struct Merge {
  int target;  // global id of the partner, -1: none (or no body in this slot)
  float x, y, vx, vy, mass;
};

class Body;
using AllocatorT = dynasoar::Allocator<Body>;

struct World {
  Physics p;
  AllocatorT alloc;
  Shares shares;
  int first;               // this rank's first global id
  Source* sources;         // this rank's bodies, by id - first (sent)
  const Source* all;       // every rank's sources (gathered)
  Merge* merges;           // collision variant: this rank's, by id - first (sent)
  const Merge* all_merges; //   every rank's (gathered)

  /// The gathered slot of global id g.
  DYNASOAR_HD int slot(int g) const {
    // first(r) <= r * slots(): g / slots() is g's rank or one below it.
    int r = g / shares.slots();
    while (r + 1 < shares.ranks && g >= shares.first(r + 1)) ++r;
    return r * shares.slots() + (g - shares.first(r));
  }
};

class Body : public AllocatorT::Base {
 public:
  declare_field_types(Body, float, float, float, float, float, float, float, int, int)
  Field<Body, 0> x;
  Field<Body, 1> y;
  Field<Body, 2> vx;
  Field<Body, 3> vy;
  Field<Body, 4> ax;  // acceleration of this step (set by compute_force)
  Field<Body, 5> ay;
  Field<Body, 6> mass;
  Field<Body, 7> id;      // global id: index at creation over all ranks
  Field<Body, 8> target;  // collision variant: global id of the partner, -1: none

  // Local index i of the rank whose first global id is `first`.
  DYNASOAR_HD Body(int i, Physics p, std::uint64_t seed, int first) : id(first + i), target(-1) {
    const InitialBody b = initial_body(p, seed, first + i);
    x = b.x;
    y = b.y;
    vx = b.vx;
    vy = b.vy;
    mass = b.mass;
    ax = 0.0f;
    ay = 0.0f;
  }

  DYNASOAR_HD void publish(World w) { w.sources[id - w.first] = Source{x, y, mass}; }

  // Over every rank's bodies in global id order (objects.cpp's order on one rank).
  DYNASOAR_HD void compute_force(World w) {
    const float px = x, py = y;
    float sx = 0.0f, sy = 0.0f;
    for (int r = 0; r < w.shares.ranks; ++r) {
      const Source* o = w.all + static_cast<std::size_t>(r) * w.shares.slots();
      const int n = w.shares.count(r);
      for (int k = 0; k < n; ++k) add_acceleration(w.p, px, py, o[k].x, o[k].y, o[k].mass, sx, sy);
    }
    ax = sx;
    ay = sy;
  }

  DYNASOAR_HD void update(World w) {
    float px = x, pvx = vx, py = y, pvy = vy;
    move(w.p, px, pvx, ax);
    move(w.p, py, pvy, ay);
    x = px;
    vx = pvx;
    y = py;
    vy = pvy;
  }

  // Collision phase 1 (objects.cpp's find_partner over the gathered places).
  DYNASOAR_HD void find_partner(World w) {
    const float px = x, py = y, m = mass;
    const int me = id;
    int best = -1;
    float best_mass = 0.0f;
    for (int r = 0; r < w.shares.ranks; ++r) {
      const Source* o = w.all + static_cast<std::size_t>(r) * w.shares.slots();
      const int n = w.shares.count(r), g0 = w.shares.first(r);
      for (int k = 0; k < n; ++k) {
        const float dx = o[k].x - px, dy = o[k].y - py, om = o[k].mass;
        const int oid = g0 + k;
        if (om != 0.0f && may_merge_into(w.p, dx * dx + dy * dy, m, me, om, oid) &&
            better_partner(om, oid, best_mass, best)) {
          best = oid;
          best_mass = om;
        }
      }
    }
    target = best;
  }

  DYNASOAR_HD void publish_merge(World w) { w.merges[id - w.first] = Merge{target, x, y, vx, vy, mass}; }

  // Collision phases 2 and 3 for this body: it deletes itself where its
  // partner stays; where it has no partner it takes in every body that
  // chose it (those whose partner stays: this one), summed in id order.
  DYNASOAR_HD void merge(World w) {
    const int t = target;
    if (t >= 0) {
      if (w.all_merges[w.slot(t)].target < 0) dynasoar::destroy(w.alloc, this);
      return;
    }
    const int me = id;
    float im = 0.0f, imx = 0.0f, imy = 0.0f, ipx = 0.0f, ipy = 0.0f;
    for (int r = 0; r < w.shares.ranks; ++r) {
      const Merge* o = w.all_merges + static_cast<std::size_t>(r) * w.shares.slots();
      const int n = w.shares.count(r);
      for (int k = 0; k < n; ++k) {
        if (o[k].target != me || o[k].mass == 0.0f) continue;  // mass 0: an empty slot
        const float om = o[k].mass;
        im += om;
        imx += om * o[k].x;
        imy += om * o[k].y;
        ipx += om * o[k].vx;
        ipy += om * o[k].vy;
      }
    }
    if (im == 0.0f) return;
    const float m = mass, total = m + im;
    x = (m * x + imx) / total;
    y = (m * y + imy) / total;
    vx = (m * vx + ipx) / total;
    vy = (m * vy + ipy) / total;
    mass = total;
  }

  DYNASOAR_HD void add_checksum(double* sum) {
    platform::atomic_fetch_add(sum, checksum_term(x, y, vx, vy, mass));
  }

  // The viewer's copy, by id - first; merged: it took in another.
  DYNASOAR_HD void write_frame(FrameBody* out, Physics p, std::uint64_t seed, int first) {
    const float m = mass;
    out[id - first] = FrameBody{x, y, m, 1, m != initial_body(p, seed, id).mass};
  }
};

/// Refuses what the distributed program does not do.
void check_distributed(const Config& c) {
  if (c.bodies < 1) throw std::invalid_argument("n-body: needs at least one body");
  if (c.ranks < 1) throw std::invalid_argument("--ranks: at least one rank, not " + std::to_string(c.ranks));
  if (c.checkpoint.active())
    throw std::invalid_argument(
        "--checkpoint-every and --resume: the distributed n-body saves no checkpoints (a heap per rank); "
        "run nbody_dynasoar for them");
}

}  // namespace

RunReport run(const Config& c) {
  check_distributed(c);
  using Handle = dynasoar::AllocatorHandle<AllocatorT>;
  RunReport report;  // rank 0's (in a process the launcher started as one rank: that rank's)

  distributed::run_ranks(c.ranks, [&](distributed::Communicator& comm) {
    // comm.size(), not c.ranks: a process started by the launcher is one of its ranks.
    const Shares shares{c.bodies, comm.size()};
    const auto slots = static_cast<std::size_t>(shares.slots());
    const auto ranks = static_cast<std::size_t>(comm.size());
    const int rank = comm.rank();
    const int first = shares.first(rank), mine = shares.count(rank);
    // --heap-mib: each rank's heap.
    Handle heap(c.heap_bytes != 0 ? c.heap_bytes : default_heap_bytes(mine));
    if (mine > 0) heap.parallel_new<Body>(static_cast<std::size_t>(mine), c.physics, c.seed, first);

    // Slots past a share's bodies, and those of absorbed bodies, stay zero: mass 0.
    platform::Buffer<Source> sources(slots), all(slots * ranks);
    platform::Buffer<Merge> merges, all_merges;
    if (c.collisions) {
      merges = platform::Buffer<Merge>(slots);
      all_merges = platform::Buffer<Merge>(slots * ranks);
    }
    sources.zero(heap.stream());

    // Progress only from rank 0; every rank takes part in a frame's gather,
    // rank 0 hands it to the viewer.
    Config rc = c;
    if (rank != 0) rc.on_step = nullptr;
    const auto send_frame = [&](int step) {
      platform::Buffer<FrameBody> part(slots), gathered(slots * ranks);
      part.zero(heap.stream());
      heap.parallel_do<Body, &Body::write_frame>(part.data(), c.physics, c.seed, first);
      comm.all_gather(part.data(), gathered.data(), slots);
      if (rank != 0) return;
      const std::vector<FrameBody> by_slot = gathered.to_vector(heap.stream());
      std::vector<FrameBody> bodies;
      bodies.reserve(static_cast<std::size_t>(c.bodies));
      for (int r = 0; r < shares.ranks; ++r)
        for (int k = 0; k < shares.count(r); ++k) bodies.push_back(by_slot[r * slots + static_cast<std::size_t>(k)]);
      c.on_frame(Frame{step, c.collisions, std::move(bodies)});
    };

    support::PhaseTimer timer(heap.stream());
    run_steps(rc, timer, [&](int) {
      const World w{c.physics, heap.device(), shares, first, sources.data(), all.data(),
                    merges.data(), all_merges.data()};
      heap.parallel_do_async<Body, &Body::publish>(w);
      comm.all_gather(sources.data(), all.data(), slots);
      timer.mark("all-gather");
      heap.parallel_do_async<Body, &Body::compute_force>(w);
      timer.mark("forces");
      heap.parallel_do_async<Body, &Body::update>(w);
      timer.mark("move");
      if (c.collisions) {
        heap.parallel_do_async<Body, &Body::publish>(w);
        comm.all_gather(sources.data(), all.data(), slots);
        heap.parallel_do_async<Body, &Body::find_partner>(w);
        timer.mark("merge partners");
        merges.zero(heap.stream());  // an empty slot: mass 0, which merge() skips
        heap.parallel_do_async<Body, &Body::publish_merge>(w);
        comm.all_gather(merges.data(), all_merges.data(), slots);
        heap.parallel_do_async<Body, &Body::merge>(w);
        sources.zero(heap.stream());  // the absorbed bodies' slots of the next step's gather
        timer.mark("merge");
      }
      end_of_step(heap, timer);  // --defrag
    }, send_frame);

    // The slowest rank's time: every step's all-gather waits for all ranks,
    // so the ranks end together, up to the last step's own work.
    const double total_ms = comm.all_reduce(timer.total_ms(), distributed::ReduceOp::kMax);
    platform::Buffer<double> sum(1);
    sum.zero(heap.stream());
    heap.parallel_do<Body, &Body::add_checksum>(sum.data());
    const double checksum = comm.all_reduce(sum.to_vector(heap.stream())[0]);
    const std::uint64_t bodies = comm.all_reduce(static_cast<std::uint64_t>(heap.count<Body>()));
    RunReport r = make_report(c, backend::Selected::kName, device_description(), total_ms, timer.phases_ms());
    r.config.emplace_back("ranks", std::to_string(shares.ranks));
    r.float_checksum = checksum + static_cast<double>(bodies);
    r.live = {{"Body", bodies}};
    r.heap.emplace_back("heap", std::to_string(heap.heap_bytes() >> 20) + " MiB a rank");
    report_compaction(heap, r);
    if (rank == 0 || distributed::launched_as_rank()) report = std::move(r);
  });
  return report;
}

}  // namespace dynasoar::example::nbody
