// n-body as an SMMO program (DynaSOAr paper Sec. 6, "N-Body" and
// "Collision"): every body is an object; every phase is one parallel_do;
// the force phase visits all bodies from each body with device_do_staged
// (on the DynaSOAr heap on the GPU, each warp reads the bodies from a copy
// in shared memory). In the collision variant absorbed bodies delete
// themselves. The same source is built for every back end that can free
// (nbody_<back end>); the physics is in rules.h.
#include <dynasoar/dynasoar.h>

#include <stdexcept>
#include <string>

#include "dynasoar/support/phase_timer.h"
#include "example/common/checkpoint.h"
#include "example/common/device_info.h"
#include "example/common/make_heap.h"
#include "example/common/run_loop.h"
#include "example/nbody/nbody.h"
#include "example/nbody/rules.h"

namespace dynasoar::example::nbody {
namespace {

class Body;
using AllocatorT = dynasoar::Allocator<Body>;

struct World {
  Physics p;
  AllocatorT alloc;
};

class Body : public AllocatorT::Base {
 public:
  declare_field_types(Body, float, float, float, float, float, float, float, int, Body*, float, float,
                      float, float, float, bool)
  Field<Body, 0> x;
  Field<Body, 1> y;
  Field<Body, 2> vx;
  Field<Body, 3> vy;
  Field<Body, 4> ax;  // acceleration of this step (set by compute_force)
  Field<Body, 5> ay;
  Field<Body, 6> mass;
  Field<Body, 7> id;  // index at creation: breaks ties between equal masses
  // Collision variant.
  Field<Body, 8> merge_target;  // the body this one merges into, or null
  Field<Body, 9> in_mass;       // received from bodies merging into this one
  Field<Body, 10> in_mx;        //   mass-weighted positions
  Field<Body, 11> in_my;
  Field<Body, 12> in_px;        //   momenta
  Field<Body, 13> in_py;
  Field<Body, 14> absorbed;     // merged into its target: deletes itself

  DYNASOAR_HD Body(int i, Physics p, std::uint64_t seed)
      : id(i), merge_target(nullptr), in_mass(0.0f), in_mx(0.0f), in_my(0.0f), in_px(0.0f),
        in_py(0.0f), absorbed(false) {
    const InitialBody b = initial_body(p, seed, i);
    x = b.x;
    y = b.y;
    vx = b.vx;
    vy = b.vy;
    mass = b.mass;
    ax = 0.0f;
    ay = 0.0f;
  }

  DYNASOAR_HD void compute_force(World w) {
    const float px = x, py = y;
    float sx = 0.0f, sy = 0.0f;
    w.alloc.device_do_staged<Body>([&](const Body* o, Body*) {
      add_acceleration(w.p, px, py, o->x, o->y, o->mass, sx, sy);
    });
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

  // Collision phase 1: the heaviest body within reach that is heavier.
  DYNASOAR_HD void find_partner(World w) {
    const float px = x, py = y, m = mass;
    const int me = id;
    Body* best = nullptr;
    float best_mass = 0.0f;
    int best_id = -1;
    w.alloc.device_do_staged<Body>([&](const Body* o, Body* object) {
      const float dx = o->x - px, dy = o->y - py, om = o->mass;
      const int oid = o->id;
      if (may_merge_into(w.p, dx * dx + dy * dy, m, me, om, oid) && better_partner(om, oid, best_mass, best_id)) {
        best = object;
        best_mass = om;
        best_id = oid;
      }
    });
    merge_target = best;
  }

  // Collision phase 2: hand everything to a partner that stays.
  DYNASOAR_HD void give_to_partner(World) {
    Body* t = merge_target;
    if (t == nullptr || static_cast<Body*>(t->merge_target) != nullptr) return;  // none, or it merges itself
    const float m = mass;
    platform::atomic_fetch_add(&t->in_mass, m);
    platform::atomic_fetch_add(&t->in_mx, m * x);
    platform::atomic_fetch_add(&t->in_my, m * y);
    platform::atomic_fetch_add(&t->in_px, m * vx);
    platform::atomic_fetch_add(&t->in_py, m * vy);
    absorbed = true;
  }

  // Collision phase 3: absorbed bodies delete themselves, partners take in.
  DYNASOAR_HD void take_in(World w) {
    if (absorbed) {
      dynasoar::destroy(w.alloc, this);
      return;
    }
    const float im = in_mass;
    if (im == 0.0f) return;
    const float m = mass, total = m + im;
    x = (m * x + in_mx) / total;
    y = (m * y + in_my) / total;
    vx = (m * vx + in_px) / total;
    vy = (m * vy + in_py) / total;
    mass = total;
    in_mass = 0.0f;
    in_mx = 0.0f;
    in_my = 0.0f;
    in_px = 0.0f;
    in_py = 0.0f;
  }

  DYNASOAR_HD void add_checksum(double* sum) {
    platform::atomic_fetch_add(sum, checksum_term(x, y, vx, vy, mass));
  }

  // The viewer's copy, at the index of creation; merged: it took in another.
  DYNASOAR_HD void write_frame(FrameBody* out, Physics p, std::uint64_t seed) {
    const float m = mass;
    out[id] = FrameBody{x, y, m, 1, m != initial_body(p, seed, id).mass};
  }
};

}  // namespace

RunReport run(const Config& c) {
  check_one_rank(c.ranks, "this program");
  if (c.bodies < 1) throw std::invalid_argument("n-body: needs at least one body");
  using Handle = dynasoar::AllocatorHandle<AllocatorT>;
  check_checkpoints<AllocatorT>(c.checkpoint, "nbody");
  Handle heap(c.heap_bytes != 0 ? c.heap_bytes : default_heap_bytes(c.bodies));
  // --resume: the bodies as they were after step `resumed`.
  const std::string identity = run_identity(make_report(c, "", "", 0, {}));
  const int resumed = resume(heap, c.checkpoint, identity, c.steps);
  if (resumed == 0) heap.parallel_new<Body>(static_cast<std::size_t>(c.bodies), c.physics, c.seed);
  heap.check_errors();

  // The viewer's copy of the bodies, only where a frame is due.
  const auto send_frame = [&](int step) {
    platform::Buffer<FrameBody> bodies(static_cast<std::size_t>(c.bodies));
    bodies.zero(heap.stream());
    heap.parallel_do<Body, &Body::write_frame>(bodies.data(), c.physics, c.seed);
    c.on_frame(Frame{step, c.collisions, bodies.to_vector(heap.stream())});
  };
  support::PhaseTimer timer(heap.stream());
  run_steps(c, timer, [&](int step) {
    const World w{c.physics, heap.device()};
    heap.parallel_do_async<Body, &Body::compute_force>(w);
    timer.mark("forces");
    heap.parallel_do_async<Body, &Body::update>(w);
    timer.mark("move");
    if (c.collisions) {
      heap.parallel_do_async<Body, &Body::find_partner>(w);
      timer.mark("merge partners");
      heap.parallel_do_async<Body, &Body::give_to_partner>(w);
      heap.parallel_do_async<Body, &Body::take_in>(w);
      timer.mark("merge");
    }
    end_of_step(heap, timer);  // --defrag
    checkpoint_if_due(heap, c.checkpoint, identity, step, timer);
  }, send_frame, resumed + 1);

  RunReport r = make_report(c, backend::Selected::kName, device_description(), timer.total_ms(),
                            timer.phases_ms());
  platform::Buffer<double> sum(1);
  sum.zero();
  heap.parallel_do<Body, &Body::add_checksum>(sum.data());
  const std::uint64_t bodies = heap.count<Body>();
  r.float_checksum = sum.to_vector()[0] + static_cast<double>(bodies);
  r.live = {{"Body", bodies}};
  r.heap.emplace_back("heap", std::to_string(heap.heap_bytes() >> 20) + " MiB");
  report_compaction(heap, r);
  return r;
}

}  // namespace dynasoar::example::nbody
