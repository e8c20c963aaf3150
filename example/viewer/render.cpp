#include "example/viewer/render.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <stdexcept>

#include "example/traffic/rules.h"

namespace dynasoar::example::viewer {
namespace {

// Paints every pixel with the colour of the cell under its centre.
template <class Colour>
void render_grid(int width, int height, const std::vector<std::uint8_t>& cells, Canvas& out,
                 Colour colour) {
  if (cells.size() != static_cast<std::size_t>(width) * static_cast<std::size_t>(height))
    throw std::invalid_argument("viewer: frame has " + std::to_string(cells.size()) +
                                " cells, not " + std::to_string(width) + "x" +
                                std::to_string(height));
  const int cw = out.width(), ch = out.height();
  std::vector<int> column(static_cast<std::size_t>(cw));
  for (int px = 0; px < cw; ++px)
    column[px] = static_cast<int>((static_cast<std::int64_t>(px) * 2 + 1) * width / (2 * cw));
  for (int py = 0; py < ch; ++py) {
    const auto row =
        static_cast<std::size_t>((static_cast<std::int64_t>(py) * 2 + 1) * height / (2 * ch)) *
        width;
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

void render(const generation::Frame& f, Canvas& out, GolStyle style) {
  const Rgba candidate = style.show_candidates ? palette::kCandidate : palette::kDead;
  render_grid(f.width, f.height, f.cells, out, [&](std::uint8_t b) {
    if (b == generation::kFrameDead) return palette::kDead;
    if (b == generation::kFrameCandidate) return candidate;
    if (b == generation::kFrameAlive) return palette::kAlive;
    const int level = b - generation::kFrameDying, last = 254 - generation::kFrameDying;  // rules.h, frame_byte
    const auto mix = [&](std::uint8_t from, std::uint8_t to) {
      return static_cast<std::uint8_t>(from + (to - from) * level / last);
    };
    return Rgba{mix(palette::kDying.r, palette::kDyingLast.r), mix(palette::kDying.g, palette::kDyingLast.g),
                mix(palette::kDying.b, palette::kDyingLast.b), 255};
  });
}

void render(const sugarscape::Frame& f, Canvas& out) {
  render_grid(f.width, f.height, f.cells, out, [](std::uint8_t b) {
    const int kind = b & 3, level = b >> 2;  // sugarscape/rules.h, frame_byte
    if (kind == 1) return palette::kMale;
    if (kind == 2) return palette::kFemale;
    const auto mix = [level](std::uint8_t from, std::uint8_t to) {
      return static_cast<std::uint8_t>(from + (to - from) * level / 63);
    };
    return Rgba{mix(palette::kBareSoil.r, palette::kSugar.r), mix(palette::kBareSoil.g, palette::kSugar.g),
                mix(palette::kBareSoil.b, palette::kSugar.b), 255};
  });
}

void render(const traffic::Frame& f, Canvas& out) {
  const traffic::Network& net = *f.network;
  if (f.cells.size() != static_cast<std::size_t>(net.cells()))
    throw std::invalid_argument("viewer: frame has " + std::to_string(f.cells.size()) + " cells, not the network's " +
                                std::to_string(net.cells()));
  out.fill(palette::kSpace);
  const float w = static_cast<float>(out.width()), h = static_cast<float>(out.height());
  const auto px = [&](std::size_t c) { return net.x[c] * w; };
  const auto py = [&](std::size_t c) { return (1.0f - net.y[c]) * h; };
  for (std::size_t c = 0; c < f.cells.size(); ++c) {
    const std::uint8_t flags = net.flags[c];
    Rgba colour = (flags & traffic::kProducer) != 0 ? palette::kProducerCell
                  : (flags & traffic::kTarget) != 0 ? palette::kTargetCell
                                                     : palette::kStreet;
    if ((f.cells[c] & traffic::kFrameRed) != 0) colour = palette::kRedLight;
    out.set(static_cast<int>(px(c)), static_cast<int>(py(c)), colour);
  }
  for (std::size_t c = 0; c < f.cells.size(); ++c)
    if ((f.cells[c] & traffic::kFrameCar) != 0) out.disc(px(c), py(c), 1.0f, palette::kCar);
}

void render(const structure::Frame& f, Canvas& out) {
  out.fill(palette::kSpace);
  const float w = static_cast<float>(out.width()), h = static_cast<float>(out.height());
  const float sx = w / static_cast<float>(std::max(f.columns, 1)), sy = h / static_cast<float>(std::max(f.rows, 1));
  const auto px = [&](float x) { return (x + 0.5f) * sx; };
  const auto py = [&](float y) { return (static_cast<float>(f.rows) - 0.5f - y) * sy; };
  const auto near = [&](float x, float y) {  // within a canvas's size of it: a line of bounded length
    return px(x) > -w && px(x) < 2 * w && py(y) > -h && py(y) < 2 * h;
  };
  for (const structure::FrameSpring& s : f.springs) {
    if (s.present == 0 || !near(s.x1, s.y1) || !near(s.x2, s.y2)) continue;
    const auto mix = [&s](std::uint8_t from, std::uint8_t to) {
      return static_cast<std::uint8_t>(from + (to - from) * s.load / 255);
    };
    const Rgba c{mix(palette::kSlackSpring.r, palette::kTautSpring.r),
                 mix(palette::kSlackSpring.g, palette::kTautSpring.g),
                 mix(palette::kSlackSpring.b, palette::kTautSpring.b), 255};
    out.line(static_cast<int>(std::floor(px(s.x1))), static_cast<int>(std::floor(py(s.y1))),
             static_cast<int>(std::floor(px(s.x2))), static_cast<int>(std::floor(py(s.y2))), c);
  }
  const float radius = std::min(sx, sy) / 3.0f;
  for (const structure::FrameNode& n : f.nodes)
    if ((n.kind == 1 || n.kind == 2) && near(n.x, n.y))  // rules.h, Kind: anchors and pull nodes
      out.disc(px(n.x), py(n.y), radius, n.kind == 1 ? palette::kAnchor : palette::kPullNode);
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
  const float unit =
      std::min(w, h) / static_cast<float>(kNbodyCanvasSize) * 0.6f * std::clamp(crowd, 1.0f, 2.5f);
  // Merged bodies last, so that the few heavy ones stay on top.
  for (int pass = 0; pass < 2; ++pass)
    for (const nbody::FrameBody& b : f.bodies) {
      if (!b.present || (b.merged != 0) != (pass == 1)) continue;
      const float px = (b.x + 1.0f) * 0.5f * w, py = (1.0f - b.y) * 0.5f * h;
      out.disc(px, py, unit * std::sqrt(std::max(b.mass, 0.0f)),
               b.merged ? palette::kMerged : palette::kBody);
    }
}

void render(const barnes_hut::Frame& f, Canvas& out) {
  out.fill(palette::kSpace);
  const float w = static_cast<float>(out.width()), h = static_cast<float>(out.height());
  const auto px = [w](float x) { return (x + 1.0f) * 0.5f * w; };
  const auto py = [h](float y) { return (1.0f - y) * 0.5f * h; };
  for (const barnes_hut::FrameCell& c : f.cells) {
    const float s = 2.0f / static_cast<float>(1u << std::clamp(c.depth, 0, 30));
    const float x0 = -1.0f + static_cast<float>(c.ix) * s, y0 = -1.0f + static_cast<float>(c.iy) * s;
    const int l = static_cast<int>(std::floor(px(x0))), r = static_cast<int>(std::floor(px(x0 + s)));
    const int t = static_cast<int>(std::floor(py(y0 + s))), b = static_cast<int>(std::floor(py(y0)));
    out.line(l, t, r, t, palette::kCell);
    out.line(l, b, r, b, palette::kCell);
    out.line(l, t, l, b, palette::kCell);
    out.line(r, t, r, b, palette::kCell);
  }
  float heaviest = 0.0f;
  for (const barnes_hut::FrameBody& b : f.bodies) heaviest = std::max(heaviest, b.mass);
  const float unit = std::min(w, h) / static_cast<float>(kBarnesHutCanvasSize);
  for (const barnes_hut::FrameBody& b : f.bodies)
    out.disc(px(b.x), py(b.y), unit * (0.5f + (heaviest > 0.0f ? b.mass / heaviest : 0.0f)), palette::kBody);
}

std::string population(const barnes_hut::Frame& f) {
  const auto leaves = std::count_if(f.cells.begin(), f.cells.end(),
                                    [](const barnes_hut::FrameCell& c) { return c.leaf != 0; });
  return "Body " + std::to_string(f.bodies.size()) + ", TreeNode " + std::to_string(f.cells.size()) + " (" +
         std::to_string(leaves) + " leaves)";
}

namespace {

// A view of the k-d tree's scene: axes u (to the right) and v (upwards) of
// the box, scaled uniformly into the square panel at (x0, y0).
struct View {
  int u, v;
  float x0, y0, scale;
  float lo_u, lo_v;
  float x(float a) const { return x0 + (a - lo_u) * scale; }
  float y(float b) const { return y0 + static_cast<float>(kKdtreePanel) - (b - lo_v) * scale; }
  static float coordinate(const kdtree::Vec3& p, int axis) {
    return axis == 0 ? p.x : axis == 1 ? p.y : p.z;
  }
  void line(Canvas& out, float a0, float b0, float a1, float b1, Rgba c) const {
    out.line(static_cast<int>(std::floor(x(a0))), static_cast<int>(std::floor(y(b0))),
             static_cast<int>(std::floor(x(a1))), static_cast<int>(std::floor(y(b1))), c);
  }
};

}  // namespace

void render(const kdtree::TreePicture& p, Canvas& out) {
  out.fill(palette::kSpace);
  const kdtree::Box& box = p.scene;
  for (int panel = 0; panel < 2; ++panel) {
    const int u = 0, v = panel == 0 ? 1 : 2;
    const float extent = std::max({box.hi[u] - box.lo[u], box.hi[v] - box.lo[v], 1e-30f});
    const View view{u,
                    v,
                    static_cast<float>(kKdtreeMargin + panel * (kKdtreePanel + kKdtreeMargin)),
                    static_cast<float>(kKdtreeMargin),
                    static_cast<float>(kKdtreePanel) / extent,
                    box.lo[u],
                    box.lo[v]};
    if (p.triangles != nullptr)
      for (const kdtree::Triangle& t : *p.triangles)
        for (int k = 0; k < 3; ++k) {
          const kdtree::Vec3 &a = t.v[k], &b = t.v[(k + 1) % 3];
          view.line(out, View::coordinate(a, u), View::coordinate(a, v), View::coordinate(b, u),
                    View::coordinate(b, v), palette::kTriangle);
        }
    // Deepest first, so that the root's plane ends on top.
    for (auto it = p.planes.rbegin(); it != p.planes.rend(); ++it) {
      const kdtree::SplitPlane& s = *it;
      const Rgba c = palette::kSplit[std::min<std::size_t>(
          static_cast<std::size_t>(std::max(s.depth, 0)), std::size(palette::kSplit) - 1)];
      if (s.axis == u)
        view.line(out, s.position, s.cell.lo[v], s.position, s.cell.hi[v], c);
      else if (s.axis == v)
        view.line(out, s.cell.lo[u], s.position, s.cell.hi[u], s.position, c);
      // The third axis's planes face this view: not drawn here.
    }
  }
}

std::string population(const kdtree::TreePicture& p) {
  return "Triangle " + std::to_string(p.triangles != nullptr ? p.triangles->size() : 0) +
         ", split planes " + std::to_string(p.planes.size()) + " of the first " +
         std::to_string(p.levels) + " levels";
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

std::string population(const generation::Frame& f) {
  std::size_t alive = 0, dying = 0, candidates = 0;
  for (const std::uint8_t b : f.cells) {
    alive += b == generation::kFrameAlive;
    dying += b >= generation::kFrameDying;
    candidates += b == generation::kFrameCandidate;
  }
  return "Alive " + std::to_string(alive) + " (and " + std::to_string(dying) + " dying), Candidate " +
         std::to_string(candidates);
}

std::string population(const sugarscape::Frame& f) {
  std::size_t males = 0, females = 0;
  for (const std::uint8_t b : f.cells) {
    males += (b & 3) == 1;
    females += (b & 3) == 2;
  }
  return "Male " + std::to_string(males) + ", Female " + std::to_string(females);
}

std::string population(const traffic::Frame& f) {
  std::size_t cars = 0, red = 0;
  for (const std::uint8_t b : f.cells) {
    cars += (b & traffic::kFrameCar) != 0;
    red += (b & traffic::kFrameRed) != 0;
  }
  return "Car " + std::to_string(cars) + ", red lights " + std::to_string(red);
}

std::string population(const structure::Frame& f) {
  std::size_t kinds[4] = {};
  for (const structure::FrameNode& n : f.nodes) ++kinds[n.kind & 3];
  const auto springs = std::count_if(f.springs.begin(), f.springs.end(),
                                     [](const structure::FrameSpring& s) { return s.present != 0; });
  return "AnchorNode " + std::to_string(kinds[1]) + ", AnchorPullNode " + std::to_string(kinds[2]) + ", Node " +
         std::to_string(kinds[3]) + ", Spring " + std::to_string(springs);
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
