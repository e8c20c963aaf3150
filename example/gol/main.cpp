// Game of life from the command line: options, pattern files, progress,
// report. The simulation itself is linked in: objects.cpp for a back end,
// baseline.cpp for the hand-written version.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "example/common/cli.h"
#include "example/gol/gol.h"
#include "example/gol/pattern.h"
#include "example/viewer/render.h"
#include "example/viewer/session.h"

int main(int argc, char** argv) {
  using namespace dynasoar::example;
  return guarded_main([&]() -> int {
    CLI::App app{"game of life: alive cells and candidates as objects (DynaSOAr paper Sec. 6)"};
    gol::Config c;
    CommonOptions o;
    o.steps = c.steps;
    std::string pattern;
    app.add_option("--width", c.width, "grid width")->capture_default_str()->check(CLI::Range(3, 1 << 16));
    app.add_option("--height", c.height, "grid height")->capture_default_str()->check(CLI::Range(3, 1 << 16));
    app.add_option("--density", c.density, "random soup: share of cells alive at the start")
        ->capture_default_str()
        ->check(finite_number())
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--pattern", pattern,
                   "start from a pattern file (.rle or .cells), centred in the grid, instead of a soup")
        ->check(CLI::ExistingFile);
    add_common_options(app, o);
    add_ranks_option(app, o);
    add_checkpoint_options(app, o);
    app.add_flag("--show-candidates", o.view.show_candidates,
                 "with --render or --snapshot: draw candidates (dead cells next to alive ones) faintly");
    CLI11_PARSE(app, argc, argv);
    if (static_cast<std::uint64_t>(c.width) * static_cast<std::uint64_t>(c.height) >= (1u << 31))
      throw std::invalid_argument("--width * --height: at most 2^31 - 1 cells");
    if (!pattern.empty()) {
      const gol::Pattern p = gol::load_pattern(pattern);
      if (p.width > c.width || p.height > c.height)
        throw std::invalid_argument(pattern + ": the pattern (" + std::to_string(p.width) + "x" +
                                    std::to_string(p.height) + ") does not fit the " + std::to_string(c.width) +
                                    "x" + std::to_string(c.height) + " grid; give --width and --height");
      const int x0 = (c.width - p.width) / 2, y0 = (c.height - p.height) / 2;
      c.pattern_name = pattern.substr(pattern.find_last_of('/') == std::string::npos ? 0 : pattern.find_last_of('/') + 1);
      c.pattern_cells.reserve(p.alive.size());
      for (const auto& [x, y] : p.alive) c.pattern_cells.push_back((y0 + y) * c.width + x0 + x);
    }
    take_common_options(c, o, "game of life");
    viewer::Session view(o.view, "gol", "game of life", c.steps);
    if (view.active()) {
      c.frame_every = view.every();
      const viewer::GolStyle style{o.view.show_candidates};
      c.on_frame = [&view, style](const gol::Frame& f) {
        const auto [w, h] = viewer::grid_canvas_size(f.width, f.height);
        view.show(f.step, w, h, [&](viewer::Canvas& out) { viewer::render(f, out, style); }, viewer::population(f));
      };
    }
    const int code = finish(gol::run(c), o);
    view.hold();
    return code;
  });
}
