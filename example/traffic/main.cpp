// Traffic from the command line: options, progress, report. The simulation
// itself is linked in: objects.cpp for a back end, baseline.cpp for the
// hand-written version.
#include "example/common/cli.h"
#include "example/traffic/traffic.h"
#include "example/viewer/render.h"
#include "example/viewer/session.h"

int main(int argc, char** argv) {
  using namespace dynasoar::example;
  return guarded_main([&]() -> int {
    CLI::App app{"traffic: cars on a street network with traffic lights (the original DynaSOAr's traffic example)"};
    traffic::Config c;
    CommonOptions o;
    o.steps = c.steps;
    app.add_option("--intersections", c.intersections, "intersections of the street network")
        ->capture_default_str()
        ->check(CLI::Range(2, 1 << 22));
    add_common_options(app, o);
    add_checkpoint_options(app, o);
    CLI11_PARSE(app, argc, argv);
    take_common_options(c, o, "traffic");
    viewer::Session view(o.view, "traffic", "traffic", c.steps);
    if (view.active()) {
      c.frame_every = view.every();
      c.on_frame = [&view](const traffic::Frame& f) {
        view.show(f.step, viewer::kTrafficCanvasSize, viewer::kTrafficCanvasSize,
                  [&f](viewer::Canvas& out) { viewer::render(f, out); }, viewer::population(f));
      };
    }
    const int code = finish(traffic::run(c), o);
    view.hold();
    return code;
  });
}
