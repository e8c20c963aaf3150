#include "example/viewer/canvas.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>

namespace dynasoar::example::viewer {

void Canvas::fill_rect(int x0, int y0, int x1, int y1, Rgba c) {
  x0 = std::max(x0, 0);
  y0 = std::max(y0, 0);
  x1 = std::min(x1, width());
  y1 = std::min(y1, height());
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) set(x, y, c);
}

void Canvas::disc(float cx, float cy, float radius, Rgba c) {
  set(static_cast<int>(std::floor(cx)), static_cast<int>(std::floor(cy)), c);
  const int x0 = static_cast<int>(std::floor(cx - radius)),
            x1 = static_cast<int>(std::ceil(cx + radius));
  const int y0 = static_cast<int>(std::floor(cy - radius)),
            y1 = static_cast<int>(std::ceil(cy + radius));
  const float r2 = radius * radius;
  for (int y = std::max(y0, 0); y <= std::min(y1, height() - 1); ++y)
    for (int x = std::max(x0, 0); x <= std::min(x1, width() - 1); ++x) {
      const float dx = static_cast<float>(x) + 0.5f - cx, dy = static_cast<float>(y) + 0.5f - cy;
      if (dx * dx + dy * dy <= r2) set(x, y, c);
    }
}

void Canvas::line(int x0, int y0, int x1, int y1, Rgba c) {
  const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
  const int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
  int err = dx + dy;
  for (;;) {
    set(x0, y0, c);
    if (x0 == x1 && y0 == y1) return;
    const int e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      x0 += sx;
    }
    if (e2 <= dx) {
      err += dx;
      y0 += sy;
    }
  }
}

std::uint64_t Canvas::checksum() const {
  std::uint64_t h = 0xcbf29ce484222325ull;
  const auto add = [&h](std::uint8_t byte) {
    h ^= byte;
    h *= 0x100000001b3ull;
  };
  for (int shift = 0; shift < 32; shift += 8) {
    add(static_cast<std::uint8_t>(static_cast<unsigned>(width()) >> shift));
    add(static_cast<std::uint8_t>(static_cast<unsigned>(height()) >> shift));
  }
  const std::size_t bytes = static_cast<std::size_t>(width()) * static_cast<std::size_t>(height()) * 4;
  for (std::size_t i = 0; i < bytes; ++i) add(data()[i]);
  return h;
}

}  // namespace dynasoar::example::viewer
