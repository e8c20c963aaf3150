// Prints "<width> <height>" for each PNG file named on the command line, as
// libpng reads it; exit code 1 and a message for a file that is not a valid
// PNG. The snapshot tests check the files of a run with it.
#include <exception>
#include <iostream>

#include "dynasoar/support/png.h"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    try {
      const dynasoar::support::Image c = dynasoar::support::read_png(argv[i]);
      std::cout << c.width() << " " << c.height() << "\n";
    } catch (const std::exception& e) {
      std::cerr << e.what() << "\n";
      return 1;
    }
  }
  return 0;
}
