// A software RGBA canvas: what every renderer draws into, what the PNG
// snapshots encode and what the SDL window streams to a texture. The pixels
// are the library's support::Image; the canvas adds the shapes the
// renderers draw. Plain host code without SDL, so that renderers can be
// tested pixel by pixel.
#pragma once

#include <cstdint>

#include "dynasoar/support/image.h"

namespace dynasoar::example::viewer {

using support::Rgba;

class Canvas : public support::Image {
 public:
  using support::Image::Image;

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
};

}  // namespace dynasoar::example::viewer
