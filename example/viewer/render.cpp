#include "example/viewer/render.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace dynasoar::example::viewer {
namespace {

// Paints every pixel with the colour of the cell under its centre.
template <class Colour>
void render_grid(int width, int height, const std::vector<std::uint8_t>& cells, Canvas& out,
                 Colour colour) {
  if (cells.size() != static_cast<std::size_t>(width) * static_cast<std::size_t>(height))
    throw std::invalid_argument("viewer: frame has " + std::to_string(cells.size()) + " cells, not " +
                                std::to_string(width) + "x" + std::to_string(height));
  const int cw = out.width(), ch = out.height();
  std::vector<int> column(static_cast<std::size_t>(cw));
  for (int px = 0; px < cw; ++px)
    column[px] = static_cast<int>((static_cast<std::int64_t>(px) * 2 + 1) * width / (2 * cw));
  for (int py = 0; py < ch; ++py) {
    const auto row = static_cast<std::size_t>((static_cast<std::int64_t>(py) * 2 + 1) * height / (2 * ch)) * width;
    for (int px = 0; px < cw; ++px) out.set(px, py, colour(cells[row + column[px]]));
  }
}

}  // namespace

std::pair<int, int> grid_canvas_size(int width, int height) {
  const int longer = std::max(width, height);
  if (longer > 1024)
    return {std::max(1, static_cast<int>(static_cast<std::int64_t>(width) * 1024 / longer)),
            std::max(1, static_cast<int>(static_cast<std::int64_t>(height) * 1024 / longer))};
  const int scale = std::max(1, 800 / longer);
  return {width * scale, height * scale};
}

void render(const wator::Frame& f, Canvas& out) {
  render_grid(f.width, f.height, f.cells, out, [](std::uint8_t k) {
    return k == 1 ? palette::kFish : k == 2 ? palette::kShark : palette::kWater;
  });
}

void render(const gol::Frame& f, Canvas& out, GolStyle style) {
  const Rgba candidate = style.show_candidates ? palette::kCandidate : palette::kDead;
  render_grid(f.width, f.height, f.cells, out, [&](std::uint8_t k) {
    return k == 1 ? palette::kAlive : k == 2 ? candidate : palette::kDead;
  });
}

void render(const nbody::Frame& f, Canvas& out) {
  out.fill(palette::kSpace);
  const float w = static_cast<float>(out.width()), h = static_cast<float>(out.height());
  // Radius in pixels: area proportional to mass; the fewer the bodies, the
  // larger (up to 2.5x), so that a few hundred are easy to see and 20000 do
  // not cover the square.
  std::size_t present = 0;
  for (const nbody::FrameBody& b : f.bodies) present += b.present != 0;
  const float crowd = std::sqrt(4096.0f / static_cast<float>(std::max<std::size_t>(present, 1)));
  const float unit = std::min(w, h) / static_cast<float>(kNbodyCanvasSize) * 0.6f * std::clamp(crowd, 1.0f, 2.5f);
  // Merged bodies last, so that the few heavy ones stay on top.
  for (int pass = 0; pass < 2; ++pass)
    for (const nbody::FrameBody& b : f.bodies) {
      if (!b.present || (b.merged != 0) != (pass == 1)) continue;
      const float px = (b.x + 1.0f) * 0.5f * w, py = (1.0f - b.y) * 0.5f * h;
      out.disc(px, py, unit * std::sqrt(std::max(b.mass, 0.0f)), b.merged ? palette::kMerged : palette::kBody);
    }
}

std::string population(const wator::Frame& f) {
  const auto fish = std::count(f.cells.begin(), f.cells.end(), std::uint8_t{1});
  const auto sharks = std::count(f.cells.begin(), f.cells.end(), std::uint8_t{2});
  return "Fish " + std::to_string(fish) + ", Shark " + std::to_string(sharks);
}

std::string population(const gol::Frame& f) {
  const auto alive = std::count(f.cells.begin(), f.cells.end(), std::uint8_t{1});
  const auto candidates = std::count(f.cells.begin(), f.cells.end(), std::uint8_t{2});
  return "Alive " + std::to_string(alive) + ", Candidate " + std::to_string(candidates);
}

std::string population(const nbody::Frame& f) {
  std::size_t bodies = 0, merged = 0;
  for (const nbody::FrameBody& b : f.bodies) {
    bodies += b.present != 0;
    merged += b.present != 0 && b.merged != 0;
  }
  std::string s = "Body " + std::to_string(bodies);
  if (f.collisions) s += " (" + std::to_string(merged) + " merged)";
  return s;
}

}  // namespace dynasoar::example::viewer
