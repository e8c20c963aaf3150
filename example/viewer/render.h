// What the viewer draws for each example: pure functions from a frame (the
// host copy of a simulation's state, see the examples' headers) to a canvas,
// testable without a window. Grids are sampled at the pixel centres, so a
// canvas may be larger (a block of pixels per cell) or smaller than the grid.
#pragma once

#include <string>
#include <utility>

#include "example/barnes_hut/barnes_hut.h"
#include "example/generation/generation.h"
#include "example/gol/gol.h"
#include "example/kdtree/kdtree.h"
#include "example/nbody/nbody.h"
#include "example/structure/structure.h"
#include "example/sugarscape/sugarscape.h"
#include "example/traffic/traffic.h"
#include "example/viewer/canvas.h"
#include "example/wator/wator.h"

namespace dynasoar::example::viewer {

// The colours, public so that tests and the README can name them.
namespace palette {
inline constexpr Rgba kWater{16, 42, 92, 255};
inline constexpr Rgba kFish{64, 200, 96, 255};
inline constexpr Rgba kShark{236, 84, 44, 255};
inline constexpr Rgba kDead{12, 12, 18, 255};
inline constexpr Rgba kAlive{240, 240, 232, 255};
inline constexpr Rgba kCandidate{44, 56, 104, 255};  // faint: only with --show-candidates
inline constexpr Rgba kDying{240, 150, 50, 255};      // generation: a cell that just started dying ...
inline constexpr Rgba kDyingLast{70, 20, 24, 255};    // ... and one at its last dying step
inline constexpr Rgba kSpace{6, 6, 16, 255};
inline constexpr Rgba kBody{255, 226, 150, 255};
inline constexpr Rgba kMerged{255, 96, 64, 255};  // a body that took in another
inline constexpr Rgba kTriangle{70, 90, 120, 255};
inline constexpr Rgba kCell{48, 72, 116, 255};  // Barnes-Hut: the quadtree's cell outlines
inline constexpr Rgba kBareSoil{24, 20, 14, 255};  // sugarscape: a cell without sugar ...
inline constexpr Rgba kSugar{236, 200, 64, 255};   // ... and one with 630 or more
inline constexpr Rgba kMale{72, 150, 255, 255};
inline constexpr Rgba kFemale{255, 96, 176, 255};
inline constexpr Rgba kStreet{52, 56, 68, 255};  // traffic: a free cell ...
inline constexpr Rgba kProducerCell{40, 110, 70, 255};  // ... one that makes cars ...
inline constexpr Rgba kTargetCell{120, 70, 150, 255};   // ... one that removes them ...
inline constexpr Rgba kRedLight{230, 40, 40, 255};      // ... a red light
inline constexpr Rgba kCar{255, 214, 90, 255};
inline constexpr Rgba kSlackSpring{56, 120, 200, 255};  // structure: a spring without load ...
inline constexpr Rgba kTautSpring{255, 72, 40, 255};    // ... and one at its maximum force
inline constexpr Rgba kAnchor{240, 240, 232, 255};
inline constexpr Rgba kPullNode{255, 200, 40, 255};
/// Split planes by depth (root first); deeper ones take the last colour.
inline constexpr Rgba kSplit[] = {{255, 224, 80, 255}, {255, 160, 48, 255}, {240, 96, 80, 255},
                                  {208, 80, 160, 255}, {150, 90, 230, 255}, {90, 120, 240, 255},
                                  {70, 170, 220, 255}, {80, 200, 160, 255}};
}  // namespace palette

/// The canvas size for a grid: whole pixels per cell up to about 800 pixels
/// on the longer side; a grid longer than 1024 cells is scaled down to 1024.
std::pair<int, int> grid_canvas_size(int width, int height);
/// n-body's square [-1, 1]^2.
inline constexpr int kNbodyCanvasSize = 640;

struct GolStyle {
  bool show_candidates = false;
};

void render(const wator::Frame& f, Canvas& out);
void render(const gol::Frame& f, Canvas& out, GolStyle style = {});
/// As the game of life, and dying cells from kDying to kDyingLast with
/// their progress.
void render(const generation::Frame& f, Canvas& out, GolStyle style = {});
/// Agents in kMale and kFemale; free cells from kBareSoil to kSugar with
/// their sugar level.
void render(const sugarscape::Frame& f, Canvas& out);
/// Traffic's unit square, y upwards: every cell a pixel (free cells in
/// kStreet, kProducerCell or kTargetCell, red lights in kRedLight), then
/// every car as a disc of radius 1 pixel in kCar.
inline constexpr int kTrafficCanvasSize = 800;
void render(const traffic::Frame& f, Canvas& out);
/// Structure: the lattice's columns x rows onto the canvas (node i's
/// lattice point in the middle of the i-th grid cell, y upwards), springs as
/// lines from kSlackSpring to kTautSpring with their load, then anchors in
/// kAnchor and pull nodes in kPullNode as discs of a third of a lattice step
/// (at least a pixel). Springs with an end far off the canvas are left out.
void render(const structure::Frame& f, Canvas& out);
/// Bodies as discs whose area grows with the mass (radius 0.6 sqrt(mass)
/// pixels on the 640-pixel canvas, up to 2.5 times that for fewer than 4096
/// bodies), y upwards; merged bodies in kMerged, drawn last.
void render(const nbody::Frame& f, Canvas& out);

/// Barnes-Hut's square [-1, 1]^2: the outline of every cell of the quadtree
/// in kCell, then the bodies as discs in kBody (radius 0.5 to 1.5 pixels
/// with the mass, on the 640-pixel canvas), y upwards.
inline constexpr int kBarnesHutCanvasSize = 640;
void render(const barnes_hut::Frame& f, Canvas& out);

/// k-d tree: two orthographic views of the scene side by side, x-y (left)
/// and x-z (right), each a kKdtreePanel-pixel square with kKdtreeMargin
/// around, the scene's box scaled to fit (second axis upwards). Triangles as
/// wire frames in kTriangle; every split plane that a view sees edge-on
/// (x splits in both, y splits on the left, z splits on the right) as a line
/// across its node's cell, coloured by depth, the root's on top.
inline constexpr int kKdtreePanel = 560;
inline constexpr int kKdtreeMargin = 10;
inline constexpr int kKdtreeWidth = 2 * kKdtreePanel + 3 * kKdtreeMargin;
inline constexpr int kKdtreeHeight = kKdtreePanel + 2 * kKdtreeMargin;
void render(const kdtree::TreePicture& p, Canvas& out);

/// Live objects per type in a frame, for the window title: "Fish 812, Shark 95".
std::string population(const wator::Frame& f);
std::string population(const gol::Frame& f);
std::string population(const generation::Frame& f);
std::string population(const sugarscape::Frame& f);
std::string population(const traffic::Frame& f);
std::string population(const structure::Frame& f);
std::string population(const nbody::Frame& f);
std::string population(const kdtree::TreePicture& p);
std::string population(const barnes_hut::Frame& f);

}  // namespace dynasoar::example::viewer
