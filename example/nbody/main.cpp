// n-body from the command line: options, progress, report. The simulation
// itself is linked in: objects.cpp for a back end, baseline.cpp for the
// hand-written version.
#include "example/common/cli.h"
#include "example/nbody/nbody.h"
#include "example/viewer/render.h"
#include "example/viewer/session.h"

int main(int argc, char** argv) {
  using namespace dynasoar::example;
  return guarded_main([&]() -> int {
    CLI::App app{"n-body: gravity between bodies in a box, optionally merging on collision "
                 "(DynaSOAr paper Sec. 6)"};
    nbody::Config c;
    CommonOptions o;
    o.steps = c.steps;
    app.add_option("--bodies", c.bodies, "number of bodies")->capture_default_str()->check(CLI::Range(1, 1 << 24));
    app.add_flag("--collisions", c.collisions, "bodies closer than the merge distance merge");
    app.add_option("--merge-distance", c.physics.merge_distance,
                   "collision variant: merge distance")
        ->capture_default_str()
        ->check(finite_number())
        ->check(CLI::Range(0.0f, 1.0f));
    app.add_option("--dt", c.physics.dt, "time step")
        ->capture_default_str()
        ->check(finite_number())
        ->check(CLI::Range(1e-6f, 1.0f));
    add_common_options(app, o);
    add_ranks_option(app, o);
    add_checkpoint_options(app, o);
    CLI11_PARSE(app, argc, argv);
    take_common_options(c, o, "n-body");
    viewer::Session view(o.view, "nbody", c.collisions ? "n-body (collisions)" : "n-body", c.steps);
    if (view.active()) {
      c.frame_every = view.every();
      c.on_frame = [&view](const nbody::Frame& f) {
        view.show(f.step, viewer::kNbodyCanvasSize, viewer::kNbodyCanvasSize,
                  [&f](viewer::Canvas& out) { viewer::render(f, out); }, viewer::population(f));
      };
    }
    const int code = finish(nbody::run(c), o);
    view.hold();
    return code;
  });
}
