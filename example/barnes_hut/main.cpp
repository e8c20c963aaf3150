// Barnes-Hut from the command line: options, progress, report, --check. The
// simulation itself is linked in: objects.cpp for a back end, baseline.cpp
// for the hand-written version.
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>

#include "example/barnes_hut/barnes_hut.h"
#include "example/common/cli.h"
#include "example/viewer/render.h"
#include "example/viewer/session.h"

int main(int argc, char** argv) {
  using namespace dynasoar::example;
  return guarded_main([&]() -> int {
    CLI::App app{
        "barnes-hut: gravity between bodies in a box, forces from a quadtree that is updated "
        "every step (the DynaSOAr barnes-hut example)"};
    barnes_hut::Config c;
    barnes_hut::Physics& p = c.physics;
    CommonOptions o;
    o.steps = c.steps;
    bool check = false;
    int samples = 256;
    app.add_option("--bodies", c.bodies, "number of bodies")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 24));
    app.add_option(
           "--theta", p.theta,
           "opening criterion: a cell of side s at distance d acts as one mass if s < theta d "
           "(0: every cell is opened, exact forces)")
        ->capture_default_str()
        ->check(finite_number())
        ->check(CLI::Range(0.0f, 2.0f));
    app.add_option("--dt", p.dt, "time step")
        ->capture_default_str()
        ->check(finite_number())
        ->check(CLI::Range(1e-6f, 1.0f));
    app.add_option("--leaf-size", p.leaf_capacity, "bodies a leaf holds before it is split")
        ->capture_default_str()
        ->check(CLI::Range(1, 64));
    app.add_option("--clusters", p.clusters,
                   "0: bodies uniform in the box; N: around N random centres")
        ->capture_default_str()
        ->check(CLI::Range(0, 1 << 20));
    app.add_option(
           "--spread", p.spread,
           "with --clusters: half-width of a cluster (0: all bodies of a cluster at one point)")
        ->capture_default_str()
        ->check(finite_number())
        ->check(CLI::Range(0.0f, 1.0f));
    app.add_flag("--check", check,
                 "after the run: the tree's invariants, and its forces against a direct sum "
                 "(exit code 4 if the error exceeds theta^2 / 4 + 1e-4)");
    app.add_option("--check-samples", samples, "with --check: bodies compared with the direct sum")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 20));
    add_common_options(app, o);
    add_checkpoint_options(app, o);
    CLI11_PARSE(app, argc, argv);
    take_common_options(c, o, "barnes-hut");
    viewer::Session view(o.view, "barneshut", "barnes-hut", c.steps);  // files barneshut_000100.png
    if (view.active()) {
      c.frame_every = view.every();
      c.on_frame = [&view](const barnes_hut::Frame& f) {
        view.show(
            f.step, viewer::kBarnesHutCanvasSize, viewer::kBarnesHutCanvasSize,
            [&f](viewer::Canvas& out) { viewer::render(f, out); }, viewer::population(f));
      };
    }
    std::string tree_problem;
    barnes_hut::ForceCheck forces;
    if (check)
      c.on_check = [&](const barnes_hut::Frame& f) {
        tree_problem = barnes_hut::check_tree(f, c.physics);
        forces = barnes_hut::check_forces(f, c.physics, samples);
      };
    int code = finish(barnes_hut::run(c), o);
    if (check) {
      std::ostream& out = o.json ? std::cerr : std::cout;  // JSON on stdout stays one object
      if (!tree_problem.empty())
        throw std::runtime_error("--check: the tree is wrong: " + tree_problem);
      char line[256];
      std::snprintf(line, sizeof line,
                    "check: tree ok; forces of %d bodies against the direct sum: max error %.3g of "
                    "the summed "
                    "pulls (tolerance %.3g), max relative error %.3g: %s\n",
                    forces.sampled, forces.max_error, forces.tolerance, forces.max_relative,
                    forces.ok() ? "ok" : "FAILED");
      out << line;
      if (!forces.ok() && code == 0) code = 4;
    }
    view.hold();
    return code;
  });
}
