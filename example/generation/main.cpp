// The generation example from the command line: options, progress, report.
// The simulation itself is linked in: objects.cpp for a back end,
// baseline.cpp for the hand-written version.
#include <cstdint>
#include <stdexcept>

#include "example/common/cli.h"
#include "example/generation/generation.h"
#include "example/viewer/render.h"
#include "example/viewer/session.h"

int main(int argc, char** argv) {
  using namespace dynasoar::example;
  return guarded_main([&]() -> int {
    CLI::App app{"generation: a game of life whose cells take several steps to die, alive, dying cells and "
                 "candidates as objects (the original DynaSOAr's generation example)"};
    generation::Config c;
    CommonOptions o;
    o.steps = c.steps;
    app.add_option("--width", c.width, "grid width")->capture_default_str()->check(CLI::Range(3, 1 << 16));
    app.add_option("--height", c.height, "grid height")->capture_default_str()->check(CLI::Range(3, 1 << 16));
    app.add_option("--states", c.states, "steps a cell takes to die")
        ->capture_default_str()
        ->check(CLI::Range(1, 65534));
    app.add_option("--density", c.density, "random soup: share of cells alive at the start")
        ->capture_default_str()
        ->check(finite_number())
        ->check(CLI::Range(0.0, 1.0));
    add_common_options(app, o);
    add_checkpoint_options(app, o);
    app.add_flag("--show-candidates", o.view.show_candidates,
                 "with --render or --snapshot: draw candidates (dead cells next to alive ones) faintly");
    CLI11_PARSE(app, argc, argv);
    if (static_cast<std::uint64_t>(c.width) * static_cast<std::uint64_t>(c.height) >= (1u << 31))
      throw std::invalid_argument("--width * --height: at most 2^31 - 1 cells");
    take_common_options(c, o, "generation");
    viewer::Session view(o.view, "generation", "generation", c.steps);
    if (view.active()) {
      c.frame_every = view.every();
      const viewer::GolStyle style{o.view.show_candidates};
      c.on_frame = [&view, style](const generation::Frame& f) {
        const auto [w, h] = viewer::grid_canvas_size(f.width, f.height);
        view.show(f.step, w, h, [&](viewer::Canvas& out) { viewer::render(f, out, style); }, viewer::population(f));
      };
    }
    const int code = finish(generation::run(c), o);
    view.hold();
    return code;
  });
}
