// PNG files of an Image through libpng's simplified API (png_image). The one
// header of the library that needs a library: link the CMake target
// dynasoar::png (made where libpng is found), or libpng yourself (PNG::PNG).
// Host code; programs that do not include it need no libpng.
#pragma once

#if !__has_include(<png.h>)
#error "dynasoar/support/png.h needs libpng: install it (Debian: apt-get install libpng-dev) and link the CMake target dynasoar::png, or leave this header out."
#include "dynasoar: libpng is required by support/png.h (see the #error above)"
#endif

#include <png.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "dynasoar/support/image.h"

namespace dynasoar::support {

/// Writes `image` to `path` as an 8-bit RGBA PNG, replacing the file.
/// Throws std::runtime_error with libpng's message if it cannot (a folder
/// that does not exist, a full disk). Host code.
inline void write_png(const std::string& path, const Image& image) {
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width());
  png.height = static_cast<png_uint_32>(image.height());
  png.format = PNG_FORMAT_RGBA;
  if (!png_image_write_to_file(&png, path.c_str(), 0, image.data(), 0, nullptr))
    throw std::runtime_error(path + ": cannot write PNG: " + png.message);
}

/// Reads any PNG file libpng understands, converted to 8-bit RGBA. Throws
/// std::runtime_error if the file cannot be read or is not a valid PNG.
/// Host code.
inline Image read_png(const std::string& path) {
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&png, path.c_str()))
    throw std::runtime_error(path + ": not a PNG: " + png.message);
  png.format = PNG_FORMAT_RGBA;
  Image image(static_cast<int>(png.width), static_cast<int>(png.height));
  if (!png_image_finish_read(&png, nullptr, image.data(), 0, nullptr)) {
    const std::string message = png.message;
    png_image_free(&png);
    throw std::runtime_error(path + ": broken PNG: " + message);
  }
  return image;
}

}  // namespace dynasoar::support
