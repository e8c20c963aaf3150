// The window of a build without SDL2: none, and a message that says how to get one.
#include <stdexcept>

#include "example/viewer/window.h"

namespace dynasoar::example::viewer {

bool has_window() { return false; }

std::unique_ptr<Window> open_window(const std::string&) {
  throw std::runtime_error(no_window_message());
}

}  // namespace dynasoar::example::viewer
