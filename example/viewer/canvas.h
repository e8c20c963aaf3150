// A software RGBA canvas: what every renderer draws into, what the PNG
// writer encodes and what the SDL window streams to a texture. Plain host
// code without SDL, so that renderers can be tested pixel by pixel.
#pragma once

#include <cstdint>
#include <vector>

namespace dynasoar::example::viewer {

struct Rgba {
  std::uint8_t r = 0, g = 0, b = 0, a = 255;
  friend bool operator==(const Rgba&, const Rgba&) = default;
};

class Canvas {
 public:
  Canvas() = default;
  Canvas(int width, int height) { resize(width, height); }

  /// Sets the size; the pixels are black afterwards.
  void resize(int width, int height);
  int width() const { return width_; }
  int height() const { return height_; }
  /// Rows top to bottom, 4 bytes (R, G, B, A) per pixel, no padding.
  const std::uint8_t* data() const { return pixels_.data(); }
  std::uint8_t* data() { return pixels_.data(); }

  void fill(Rgba c);
  /// Pixels outside the canvas are left out, so shapes may cross its edges.
  void set(int x, int y, Rgba c);
  Rgba at(int x, int y) const;
  /// The rectangle [x0, x1) x [y0, y1), clipped.
  void fill_rect(int x0, int y0, int x1, int y1, Rgba c);
  /// Every pixel whose centre lies within `radius` of (cx, cy) (pixel
  /// coordinates: pixel (x, y) covers [x, x+1) x [y, y+1)); at least the
  /// pixel under the centre, so that small bodies stay visible.
  void disc(float cx, float cy, float radius, Rgba c);
  /// Bresenham line, both ends included.
  void line(int x0, int y0, int x1, int y1, Rgba c);

  /// FNV-1a over size and pixels: tests pin a whole picture with it.
  std::uint64_t checksum() const;

 private:
  int width_ = 0;
  int height_ = 0;
  std::vector<std::uint8_t> pixels_;
};

}  // namespace dynasoar::example::viewer
