// wa-tor from the command line: options, progress, report. The simulation
// itself is linked in: objects.cpp for a back end, baseline.cpp for the
// hand-written version.
#include <fstream>
#include <stdexcept>
#include <string>

#include "example/common/cli.h"
#include "example/viewer/render.h"
#include "example/viewer/session.h"
#include "example/wator/wator.h"

int main(int argc, char** argv) {
  using namespace dynasoar::example;
  return guarded_main([&]() -> int {
    CLI::App app{"wa-tor: fish and sharks on a torus (DynaSOAr paper Sec. 6)"};
    wator::Config c;
    CommonOptions o;
    o.steps = c.steps;
    app.add_option("--width", c.width, "grid width")->capture_default_str()->check(CLI::Range(2, 1 << 16));
    app.add_option("--height", c.height, "grid height")->capture_default_str()->check(CLI::Range(2, 1 << 16));
    std::string trace_path;
    app.add_option("--trace", trace_path,
                   "write a CSV line per step to FILE: time, fish, sharks, fragmentation (waits for the GPU "
                   "after every step; the waits are not timed)");
    add_common_options(app, o);
    add_ranks_option(app, o);
    add_checkpoint_options(app, o);
    CLI11_PARSE(app, argc, argv);
    if (static_cast<std::uint64_t>(c.width) * static_cast<std::uint64_t>(c.height) >= (1u << 31))
      throw std::invalid_argument("--width * --height: at most 2^31 - 1 cells");
    take_common_options(c, o, "wa-tor");
    std::ofstream trace;
    if (!trace_path.empty()) {
      trace.open(trace_path);
      if (!trace) throw std::invalid_argument("--trace: cannot write " + trace_path);
      trace << "step,ms,registry_ms,fish,sharks,fragmentation\n";
      c.on_trace = [&trace](const wator::StepTrace& t) {
        trace << t.step << ',' << t.ms << ',' << t.registry_ms << ',' << t.fish << ',' << t.sharks << ',';
        if (t.fragmentation >= 0) trace << t.fragmentation;
        trace << std::endl;  // a run stopped at a time limit keeps its steps so far
      };
    }
    viewer::Session view(o.view, "wator", "wa-tor", c.steps);
    if (view.active()) {
      c.frame_every = view.every();
      c.on_frame = [&view](const wator::Frame& f) {
        const auto [w, h] = viewer::grid_canvas_size(f.width, f.height);
        view.show(f.step, w, h, [&f](viewer::Canvas& out) { viewer::render(f, out); }, viewer::population(f));
      };
    }
    const int code = finish(wator::run(c), o);
    view.hold();
    return code;
  });
}
