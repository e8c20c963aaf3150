// The viewer's command-line options (added to every example by
// add_common_options) and how a run ends when the viewer's user quits.
#pragma once

#include <string>

namespace dynasoar::example::viewer {

struct Options {
  bool render = false;           // --render: a window shows the run live
  std::string snapshot_dir;      // --snapshot DIR: a PNG per frame there ("" : none)
  int every = 1;                 // --every N: a frame every N steps (and at step 0)
  bool hold = false;             // --hold: with --render, keep the window open after the last step
  bool show_candidates = false;  // game of life: --show-candidates
};

/// Thrown out of a simulation's frame callback when the user closes the
/// window or presses q: the run stops there, without a report.
struct Quit {
  int step = 0;
};

}  // namespace dynasoar::example::viewer
