// The viewer as an example's main() uses it: takes frames between steps
// (the simulation's on_frame), draws them into a canvas, writes a PNG per
// frame (--snapshot, with dynasoar/support/snapshots.h) and shows them in a
// window (--render), with the step, the population and the frames per
// second in the window's title.
//
// Keys: space pauses and goes on, n or the right arrow shows the next frame
// while paused, q or Esc quits (throws Quit out of show()). The simulation
// waits while show() runs; the examples leave that time out of what they
// report (support::PhaseTimer::pause).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "example/viewer/canvas.h"
#include "example/viewer/options.h"
#include "example/viewer/window.h"

namespace dynasoar::support {
class Snapshots;
}

namespace dynasoar::example::viewer {

class Session {
 public:
  /// `name` starts the snapshots' file names (wator_000100.png), `title`
  /// the window's. Opens the window now and creates the snapshot folder,
  /// so that a wrong option stops the run before it starts. `window`:
  /// with --render, this one instead of open_window's (tests).
  Session(const Options& o, std::string name, std::string title, int steps,
          std::unique_ptr<Window> window = nullptr);
  ~Session();

  /// Whether frames are wanted (--render or --snapshot).
  bool active() const { return window_ != nullptr || snapshots_ != nullptr; }
  int every() const { return options_.every; }

  /// One frame: `draw` paints the canvas, sized width x height first.
  void show(int step, int width, int height, const std::function<void(Canvas&)>& draw,
            const std::string& population);
  /// After the run, with --render --hold: waits until the user quits.
  void hold();

  /// The snapshot of `step`: DIR/name_000100.png, zero-padded so that the
  /// names sort by step (at least 6 digits, more for longer runs).
  std::string snapshot_path(int step) const;

 private:
  void update_title();
  void handle(Event e);

  Options options_;
  std::string title_;
  std::unique_ptr<support::Snapshots> snapshots_;  // with --snapshot (libpng stays out of this header)
  bool single_ = false;  // one picture (steps 0): no step or rate in the title
  std::unique_ptr<Window> window_;
  Canvas canvas_;
  int step_ = 0;
  std::string population_;
  bool paused_ = false, step_once_ = false, finished_ = false;
  // Frames per second, over the frames of the last half second or more.
  std::chrono::steady_clock::time_point fps_since_ = std::chrono::steady_clock::now();
  int fps_frames_ = 0;
  double fps_ = 0;
};

}  // namespace dynasoar::example::viewer
