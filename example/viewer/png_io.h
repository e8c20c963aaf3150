// PNG files of a canvas through libpng's simplified API (png_image): the
// snapshots, and reading them back in tests.
#pragma once

#include <string>

#include "example/viewer/canvas.h"

namespace dynasoar::example::viewer {

/// Writes the canvas as an 8-bit RGBA PNG; throws std::runtime_error with
/// libpng's message if it cannot.
void write_png(const std::string& path, const Canvas& c);

/// Reads any PNG libpng understands, converted to RGBA; throws
/// std::runtime_error if the file is not a valid PNG.
Canvas read_png(const std::string& path);

}  // namespace dynasoar::example::viewer
