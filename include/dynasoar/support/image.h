// A picture in host memory that a program fills from its objects, pixel by
// pixel, before it writes it as a PNG file (dynasoar/support/png.h). Plain
// C++: no libpng and no CUDA, so any source file may include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace dynasoar::support {

/// One pixel: 8-bit red, green, blue and alpha (opaque unless set).
struct Rgba {
  std::uint8_t r = 0;    ///< Red.
  std::uint8_t g = 0;    ///< Green.
  std::uint8_t b = 0;    ///< Blue.
  std::uint8_t a = 255;  ///< Alpha: 255 is opaque.
  /// Whether all four channels are equal.
  friend bool operator==(const Rgba&, const Rgba&) = default;
};

/// A width x height picture of Rgba pixels in host memory, rows top to
/// bottom, 4 bytes a pixel (R, G, B, A), no padding: the layout libpng
/// writes. A new picture is opaque black.
class Image {
 public:
  /// An empty picture (0 x 0).
  Image() = default;
  /// An opaque black picture of `width` x `height` pixels; throws
  /// std::invalid_argument for a negative size.
  Image(int width, int height) { resize(width, height); }

  /// Sets the size; every pixel is opaque black afterwards. Throws
  /// std::invalid_argument for a negative size.
  void resize(int width, int height) {
    if (width < 0 || height < 0) throw std::invalid_argument("image: negative size");
    width_ = width;
    height_ = height;
    pixels_.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 4, 0);
    fill(Rgba{});
  }
  /// Pixels a row.
  int width() const { return width_; }
  /// Rows.
  int height() const { return height_; }
  /// The first byte of the top row: R, G, B, A of pixel (0, 0).
  const std::uint8_t* data() const { return pixels_.data(); }
  /// The first byte of the top row, to fill the picture in bulk (for
  /// instance with a copy from the GPU of a buffer in the same layout).
  std::uint8_t* data() { return pixels_.data(); }

  /// Sets every pixel to `c`.
  void fill(Rgba c) {
    for (std::size_t i = 0; i < pixels_.size(); i += 4) put(i, c);
  }
  /// Sets pixel (x, y), x from the left, y from the top. A pixel outside the
  /// picture is left out, so that shapes may cross its edges.
  void set(int x, int y, Rgba c) {
    if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
    put(offset(x, y), c);
  }
  /// Pixel (x, y); throws std::out_of_range outside the picture.
  Rgba at(int x, int y) const {
    if (x < 0 || y < 0 || x >= width_ || y >= height_) throw std::out_of_range("image: pixel outside");
    const std::uint8_t* p = &pixels_[offset(x, y)];
    return Rgba{p[0], p[1], p[2], p[3]};
  }

 private:
  std::size_t offset(int x, int y) const {
    return (static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(x)) * 4;
  }
  void put(std::size_t i, Rgba c) {
    pixels_[i] = c.r;
    pixels_[i + 1] = c.g;
    pixels_[i + 2] = c.b;
    pixels_[i + 3] = c.a;
  }

  int width_ = 0;
  int height_ = 0;
  std::vector<std::uint8_t> pixels_;
};

}  // namespace dynasoar::support
