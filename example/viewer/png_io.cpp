#include "example/viewer/png_io.h"

#include <png.h>

#include <cstring>
#include <stdexcept>

namespace dynasoar::example::viewer {

void write_png(const std::string& path, const Canvas& c) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(c.width());
  image.height = static_cast<png_uint_32>(c.height());
  image.format = PNG_FORMAT_RGBA;
  if (!png_image_write_to_file(&image, path.c_str(), 0, c.data(), 0, nullptr))
    throw std::runtime_error(path + ": cannot write PNG: " + image.message);
}

Canvas read_png(const std::string& path) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str()))
    throw std::runtime_error(path + ": not a PNG: " + image.message);
  image.format = PNG_FORMAT_RGBA;
  Canvas c(static_cast<int>(image.width), static_cast<int>(image.height));
  if (!png_image_finish_read(&image, nullptr, c.data(), 0, nullptr)) {
    const std::string message = image.message;
    png_image_free(&image);
    throw std::runtime_error(path + ": broken PNG: " + message);
  }
  return c;
}

}  // namespace dynasoar::example::viewer
