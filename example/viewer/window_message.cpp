#include "example/viewer/window.h"

namespace dynasoar::example::viewer {

std::string no_window_message() {
  return "--render: this build has no window, it was configured without SDL2. Install it "
         "(Debian: apt-get install libsdl2-dev) and configure the build again (cmake -S . -B "
         "<build "
         "folder>; the status line \"viewer: window with SDL2\" says it was found). --snapshot DIR "
         "writes the frames as PNG files without a window.";
}

}  // namespace dynasoar::example::viewer
