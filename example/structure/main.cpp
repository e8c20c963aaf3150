// The structure example from the command line: options, progress, report.
// The simulation itself is linked in: objects.cpp for a back end,
// baseline.cpp for the hand-written version.
#include "example/common/cli.h"
#include "example/structure/structure.h"
#include "example/viewer/render.h"
#include "example/viewer/session.h"

int main(int argc, char** argv) {
  using namespace dynasoar::example;
  return guarded_main([&]() -> int {
    CLI::App app{"structure: a net of nodes and springs that pull nodes tear apart; broken springs and the parts "
                 "no anchor holds are removed (the original DynaSOAr's structure example)"};
    structure::Config c;
    CommonOptions o;
    o.steps = c.steps;
    app.add_option("--nodes", c.nodes, "number of nodes")->capture_default_str()->check(CLI::Range(2, 1 << 25));
    app.add_option("--iterations", c.iterations, "force and move rounds per step")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    add_common_options(app, o);
    add_checkpoint_options(app, o);
    CLI11_PARSE(app, argc, argv);
    take_common_options(c, o, "structure");
    viewer::Session view(o.view, "structure", "structure", c.steps);
    if (view.active()) {
      c.frame_every = view.every();
      c.on_frame = [&view](const structure::Frame& f) {
        const auto [w, h] = viewer::grid_canvas_size(f.columns, f.rows);
        view.show(f.step, w, h, [&f](viewer::Canvas& out) { viewer::render(f, out); }, viewer::population(f));
      };
    }
    const int code = finish(structure::run(c), o);
    view.hold();
    return code;
  });
}
