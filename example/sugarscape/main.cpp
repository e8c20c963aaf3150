// Sugarscape from the command line: options, progress, report. The
// simulation itself is linked in: objects.cpp for a back end, baseline.cpp
// for the hand-written version.
#include <cstdint>
#include <stdexcept>

#include "example/common/cli.h"
#include "example/sugarscape/sugarscape.h"
#include "example/viewer/render.h"
#include "example/viewer/session.h"

int main(int argc, char** argv) {
  using namespace dynasoar::example;
  return guarded_main([&]() -> int {
    CLI::App app{"sugarscape: agents that harvest, move and mate on a grid of sugar (the original DynaSOAr's "
                 "sugarscape example)"};
    sugarscape::Config c;
    CommonOptions o;
    o.steps = c.steps;
    app.add_option("--width", c.width, "grid width")->capture_default_str()->check(CLI::Range(2, 1 << 16));
    app.add_option("--height", c.height, "grid height")->capture_default_str()->check(CLI::Range(2, 1 << 16));
    add_common_options(app, o);
    add_checkpoint_options(app, o);
    CLI11_PARSE(app, argc, argv);
    if (static_cast<std::uint64_t>(c.width) * static_cast<std::uint64_t>(c.height) >= (1u << 31))
      throw std::invalid_argument("--width * --height: at most 2^31 - 1 cells");
    take_common_options(c, o, "sugarscape");
    viewer::Session view(o.view, "sugarscape", "sugarscape", c.steps);
    if (view.active()) {
      c.frame_every = view.every();
      c.on_frame = [&view](const sugarscape::Frame& f) {
        const auto [w, h] = viewer::grid_canvas_size(f.width, f.height);
        view.show(f.step, w, h, [&f](viewer::Canvas& out) { viewer::render(f, out); }, viewer::population(f));
      };
    }
    const int code = finish(sugarscape::run(c), o);
    view.hold();
    return code;
  });
}
