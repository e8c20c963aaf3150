// The viewer's window: shows a canvas, scaled to the window with its aspect
// kept, and reports keys. Implemented with SDL2 (window_sdl.cpp) where the
// build found it; otherwise window_none.cpp, whose open_window says how to
// get one.
#pragma once

#include <memory>
#include <string>

#include "example/viewer/canvas.h"

namespace dynasoar::example::viewer {

enum class Event {
  kNone,    // nothing (more) happened
  kQuit,    // q, Esc or the window closed
  kPause,   // space: pause or go on
  kStep,    // n or the right arrow: the next frame while paused
  kRedraw,  // resized or uncovered: present the canvas again
};

class Window {
 public:
  virtual ~Window() = default;
  /// Shows the canvas (streamed to a texture of its size).
  virtual void present(const Canvas& c) = 0;
  virtual void set_title(const std::string& title) = 0;
  /// The next event, waiting up to `timeout_ms` for one (0: only look).
  virtual Event next_event(int timeout_ms) = 0;
};

/// Whether this build can open a window (it found SDL2).
bool has_window();

/// What --render says in a build without SDL2.
std::string no_window_message();

/// Opens a resizable window; throws std::runtime_error with
/// no_window_message() in a build without SDL2, or with SDL's reason (no
/// display, ...) where opening fails.
std::unique_ptr<Window> open_window(const std::string& title);

}  // namespace dynasoar::example::viewer
