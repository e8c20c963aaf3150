// The viewer without a window: the canvas's shapes, each example's renderer
// on a small known state (exact colours at chosen pixels), the snapshot
// names and files, and the message of a build without SDL2. The PNG writer
// itself is the library's (test/support_layer/png_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "dynasoar/support/png.h"
#include "example/generation/rules.h"
#include "example/traffic/rules.h"
#include "example/viewer/canvas.h"
#include "example/viewer/render.h"
#include "example/viewer/session.h"
#include "example/viewer/window.h"
#include "test/support/temp_dir.h"

namespace dynasoar::example::viewer {
namespace {

constexpr Rgba kRed{255, 0, 0, 255};

using dynasoar::test::TempDir;

TEST(Canvas, SetsAndClipsPixels) {
  Canvas c(4, 3);
  EXPECT_EQ(c.at(3, 2), (Rgba{0, 0, 0, 255}));
  c.fill(palette::kWater);
  c.set(1, 2, kRed);
  c.set(-1, 0, kRed);  // outside: ignored
  c.set(4, 0, kRed);
  EXPECT_EQ(c.at(1, 2), kRed);
  EXPECT_EQ(c.at(0, 0), palette::kWater);
  EXPECT_THROW(c.at(4, 0), std::out_of_range);
  c.fill_rect(-5, -5, 2, 1, kRed);
  EXPECT_EQ(c.at(0, 0), kRed);
  EXPECT_EQ(c.at(1, 0), kRed);
  EXPECT_EQ(c.at(2, 0), palette::kWater);
  EXPECT_EQ(c.at(0, 1), palette::kWater);
}

TEST(Canvas, DiscCoversThePixelCentresWithinTheRadius) {
  Canvas c(20, 20);
  c.disc(10.0f, 10.0f, 3.0f, kRed);
  int count = 0;
  for (int y = 0; y < 20; ++y)
    for (int x = 0; x < 20; ++x) count += c.at(x, y) == kRed;
  EXPECT_EQ(count, 32);           // centres (x + 0.5, y + 0.5) within 3 of (10, 10)
  EXPECT_EQ(c.at(12, 10), kRed);  // centre 2.5 away
  EXPECT_NE(c.at(13, 10), kRed);  // 3.5 away
  Canvas small(5, 5);
  small.disc(2.3f, 2.9f, 0.1f, kRed);  // smaller than a pixel: the pixel under it
  EXPECT_EQ(small.at(2, 2), kRed);
  small.disc(-1.0f, -1.0f, 2.2f,
             kRed);  // crossing the corner: clipped (centre of (0, 0) 2.12 away)
  EXPECT_EQ(small.at(0, 0), kRed);
}

TEST(Canvas, LineIncludesBothEnds) {
  Canvas c(8, 8);
  c.line(1, 1, 6, 6, kRed);
  for (int i = 1; i <= 6; ++i) EXPECT_EQ(c.at(i, i), kRed);
  EXPECT_NE(c.at(0, 0), kRed);
  EXPECT_NE(c.at(7, 7), kRed);
  c.line(7, 0, 7, 0, kRed);
  EXPECT_EQ(c.at(7, 0), kRed);
}

TEST(Canvas, ChecksumSeesEveryPixelAndTheSize) {
  Canvas a(3, 2), b(3, 2), c(2, 3);
  EXPECT_EQ(a.checksum(), b.checksum());
  EXPECT_NE(a.checksum(), c.checksum());
  b.set(2, 1, Rgba{0, 0, 1, 255});
  EXPECT_NE(a.checksum(), b.checksum());
}

TEST(Render, CanvasSizeOfGrids) {
  EXPECT_EQ(grid_canvas_size(96, 64), (std::pair<int, int>{768, 512}));
  EXPECT_EQ(grid_canvas_size(1000, 10), (std::pair<int, int>{1000, 10}));
  EXPECT_EQ(grid_canvas_size(2048, 2560), (std::pair<int, int>{819, 1024}));
}

TEST(Render, WatorCellsInTheirColours) {
  // 3x2 cells: water fish shark / shark fish water, 2x2 pixels per cell.
  const wator::Frame f{0, 3, 2, {0, 1, 2, 2, 1, 0}};
  Canvas c(6, 4);
  render(f, c);
  EXPECT_EQ(c.at(0, 0), palette::kWater);
  EXPECT_EQ(c.at(1, 1), palette::kWater);
  EXPECT_EQ(c.at(2, 0), palette::kFish);
  EXPECT_EQ(c.at(3, 3), palette::kFish);
  EXPECT_EQ(c.at(5, 1), palette::kShark);
  EXPECT_EQ(c.at(0, 2), palette::kShark);
  EXPECT_EQ(c.at(5, 3), palette::kWater);
  EXPECT_EQ(population(f), "Fish 2, Shark 2");
  // The whole picture, pinned: any change of colours or sampling shows.
  EXPECT_EQ(c.checksum(), 0x78c8d2a92fc6bacfull) << std::hex << c.checksum();
}

TEST(Render, SugarscapeAgentsOnTheirSugar) {
  // 4x1 cells: no sugar, full sugar (level 63), a male, a female (on sugar: the agent's colour wins).
  const sugarscape::Frame f{0, 4, 1, {0, 63 << 2, 1 | (20 << 2), 2}};
  Canvas c(4, 1);
  render(f, c);
  EXPECT_EQ(c.at(0, 0), palette::kBareSoil);
  EXPECT_EQ(c.at(1, 0), palette::kSugar);
  EXPECT_EQ(c.at(2, 0), palette::kMale);
  EXPECT_EQ(c.at(3, 0), palette::kFemale);
  EXPECT_EQ(population(f), "Male 1, Female 1");
  // Half the sugar is half way between the two colours.
  const sugarscape::Frame half{0, 1, 1, {static_cast<std::uint8_t>(31 << 2)}};
  Canvas h(1, 1);
  render(half, h);
  EXPECT_EQ(h.at(0, 0).r, palette::kBareSoil.r + (palette::kSugar.r - palette::kBareSoil.r) * 31 / 63);
  EXPECT_EQ(h.at(0, 0).b, palette::kBareSoil.b + (palette::kSugar.b - palette::kBareSoil.b) * 31 / 63);
}

TEST(Render, TrafficCellsWhereTheyAreAndCarsOnTop) {
  // Five cells on a 10x10 canvas: a street cell, a producer, a target and a
  // red light along the top row, and a car on a street cell in the middle.
  traffic::Network n;
  n.exit = {-1, -1, -1, 0, -1};
  n.flags = {0, traffic::kProducer, traffic::kTarget, traffic::kLight, 0};
  n.x = {0.05f, 0.25f, 0.45f, 0.65f, 0.45f};
  n.y = {0.95f, 0.95f, 0.95f, 0.95f, 0.45f};
  const traffic::Frame f{0, &n, {0, 0, 0, traffic::kFrameRed, traffic::kFrameCar}};
  Canvas c(10, 10);
  render(f, c);
  EXPECT_EQ(c.at(0, 0), palette::kStreet);
  EXPECT_EQ(c.at(2, 0), palette::kProducerCell);
  EXPECT_EQ(c.at(4, 0), palette::kTargetCell);
  EXPECT_EQ(c.at(6, 0), palette::kRedLight);
  EXPECT_EQ(c.at(4, 5), palette::kCar);
  EXPECT_EQ(c.at(9, 9), palette::kSpace);
  EXPECT_EQ(population(f), "Car 1, red lights 1");
  const traffic::Frame short_frame{0, &n, {0, 0}};
  EXPECT_THROW(render(short_frame, c), std::invalid_argument);
}

TEST(Render, StructureSpringsByLoadAnchorsAndPullNodes) {
  // A lattice of 3x2 on 30x20 pixels: lattice point (x, y) at pixel (10 x + 5, 15 - 10 y).
  structure::Frame f;
  f.columns = 3;
  f.rows = 2;
  f.nodes = {{0.0f, 0.0f, 1}, {2.0f, 1.0f, 2}, {1.0f, 0.0f, 3}, {2.0f, 0.0f, 0}};  // anchor, pull, node, removed
  f.springs = {{0.0f, 0.0f, 2.0f, 0.0f, 0, 1},      // slack, along the bottom row
               {0.0f, 1.0f, 2.0f, 1.0f, 255, 1},    // at its maximum force, along the top row
               {0.0f, 0.0f, 0.0f, 1.0f, 255, 0},    // broken: not drawn
               {0.0f, 0.0f, 1e9f, 0.0f, 255, 1}};   // an end far off the canvas: not drawn
  Canvas c(30, 20);
  render(f, c);
  EXPECT_EQ(c.at(15, 15), palette::kSlackSpring);
  EXPECT_EQ(c.at(15, 5), palette::kTautSpring);
  EXPECT_EQ(c.at(5, 10), palette::kSpace);
  EXPECT_EQ(c.at(5, 15), palette::kAnchor);
  EXPECT_EQ(c.at(25, 5), palette::kPullNode);
  EXPECT_EQ(c.at(28, 15), palette::kSpace);  // right of the slack spring's end: the far one is not drawn
  EXPECT_EQ(population(f), "AnchorNode 1, AnchorPullNode 1, Node 1, Spring 3");
}

TEST(Render, GridsScaledDownSampleThePixelCentres) {
  // 4x4 cells onto 2x2 pixels: pixel (i, j) shows cell (2i + 1, 2j + 1).
  wator::Frame f{0, 4, 4, std::vector<std::uint8_t>(16, 0)};
  f.cells[1 * 4 + 1] = 1;
  f.cells[3 * 4 + 3] = 2;
  f.cells[0] = 2;  // between centres: not shown
  Canvas c(2, 2);
  render(f, c);
  EXPECT_EQ(c.at(0, 0), palette::kFish);
  EXPECT_EQ(c.at(1, 1), palette::kShark);
  EXPECT_EQ(c.at(1, 0), palette::kWater);
}

TEST(Render, RejectsAFrameOfTheWrongSize) {
  const wator::Frame f{0, 3, 3, {0, 1}};
  Canvas c(3, 3);
  EXPECT_THROW(render(f, c), std::invalid_argument);
}

TEST(Render, GolCandidatesOnlyWhenAsked) {
  const gol::Frame f{5, 3, 1, {1, 2, 0}};
  Canvas c(3, 1);
  render(f, c);
  EXPECT_EQ(c.at(0, 0), palette::kAlive);
  EXPECT_EQ(c.at(1, 0), palette::kDead);
  EXPECT_EQ(c.at(2, 0), palette::kDead);
  render(f, c, GolStyle{true});
  EXPECT_EQ(c.at(1, 0), palette::kCandidate);
  EXPECT_EQ(c.at(2, 0), palette::kDead);
  EXPECT_EQ(population(f), "Alive 1, Candidate 1");
}

TEST(Render, GenerationDyingCellsFadeAndCandidatesOnlyWhenAsked) {
  // 5x1 cells: dead, candidate, alive, just started dying, last dying step.
  const generation::Frame f{0, 5, 1, {generation::kFrameDead, generation::kFrameCandidate, generation::kFrameAlive,
                                      generation::kFrameDying, 254}};
  Canvas c(5, 1);
  render(f, c);
  EXPECT_EQ(c.at(0, 0), palette::kDead);
  EXPECT_EQ(c.at(1, 0), palette::kDead);
  EXPECT_EQ(c.at(2, 0), palette::kAlive);
  EXPECT_EQ(c.at(3, 0), palette::kDying);
  EXPECT_EQ(c.at(4, 0), palette::kDyingLast);
  render(f, c, GolStyle{true});
  EXPECT_EQ(c.at(1, 0), palette::kCandidate);
  EXPECT_EQ(population(f), "Alive 1 (and 2 dying), Candidate 1");
  // The frame bytes of rules.h: alive, the first and the last of 10 dying steps.
  EXPECT_EQ(generation::frame_byte(0, 10), generation::kFrameAlive);
  EXPECT_EQ(generation::frame_byte(1, 10), generation::kFrameDying);
  EXPECT_EQ(generation::frame_byte(10, 10), 254);
  EXPECT_EQ(generation::frame_byte(1, 1), generation::kFrameDying);
}

TEST(Render, GenerationBaselineCandidatesAreTheDeadNeighboursOfAliveCells) {
  // An alive cell and a dying one in a 4x4 torus: the alive cell's 8
  // neighbours but the dying one become candidates.
  generation::Frame f{0, 4, 4, std::vector<std::uint8_t>(16, generation::kFrameDead)};
  f.cells[1 * 4 + 1] = generation::kFrameAlive;
  f.cells[2 * 4 + 2] = generation::kFrameDying;
  generation::mark_candidates(f);
  EXPECT_EQ(population(f), "Alive 1 (and 1 dying), Candidate 7");
  EXPECT_EQ(f.cells[3 * 4 + 3], generation::kFrameDead);
}

TEST(Render, GolBaselineCandidatesAreTheDeadNeighboursOfAliveCells) {
  // A blinker in a 5x5 torus: its 3 cells and their 12 dead neighbours.
  gol::Frame f{0, 5, 5, std::vector<std::uint8_t>(25, 0)};
  f.cells[2 * 5 + 1] = f.cells[2 * 5 + 2] = f.cells[2 * 5 + 3] = 1;
  gol::mark_candidates(f);
  EXPECT_EQ(population(f), "Alive 3, Candidate 12");
  EXPECT_EQ(f.cells[1 * 5 + 0], 2);
  EXPECT_EQ(f.cells[0], 0);
}

TEST(Render, NbodyDiscsGrowWithMassAndMergedOnesStandOut) {
  nbody::Frame f;
  f.collisions = true;
  f.bodies.push_back({0.0f, 0.0f, 1.0f, 1, 0});      // the centre: radius 1.5
  f.bodies.push_back({0.5f, 0.5f, 16.0f, 1, 1});     // merged: radius 0.6 * 2.5 * 4 = 6
  f.bodies.push_back({-0.5f, -0.5f, 100.0f, 0, 0});  // absorbed: not drawn
  Canvas c(kNbodyCanvasSize, kNbodyCanvasSize);
  render(f, c);
  EXPECT_EQ(c.at(320, 320), palette::kBody);
  EXPECT_EQ(c.at(321, 320), palette::kSpace);
  EXPECT_EQ(c.at(480, 160), palette::kMerged);  // x 0.5 -> 480, y 0.5 -> 160 (y upwards)
  EXPECT_EQ(c.at(485, 160), palette::kMerged);
  EXPECT_EQ(c.at(480, 154), palette::kMerged);
  EXPECT_EQ(c.at(487, 160), palette::kSpace);
  EXPECT_EQ(c.at(160, 480), palette::kSpace);
  EXPECT_EQ(population(f), "Body 2 (1 merged)");
}

TEST(Render, KdtreeSplitPlanesInTheViewsThatSeeThemEdgeOn) {
  // The unit cube in two 560-pixel panels: x 0.5 is pixel column 10 + 280
  // on the left (x-y) and 580 + 280 on the right (x-z); v upwards.
  const std::vector<kdtree::Triangle> tris = {
      {{{0.1f, 0.1f, 0.1f}, {0.3f, 0.1f, 0.1f}, {0.1f, 0.3f, 0.3f}}}};
  kdtree::TreePicture p;
  p.scene = {{0, 0, 0}, {1, 1, 1}};
  p.triangles = &tris;
  p.levels = 2;
  p.planes.push_back({0, 0.5f, 0, {{0, 0, 0}, {1, 1, 1}}});      // root: x = 0.5
  p.planes.push_back({2, 0.25f, 1, {{0.5f, 0, 0}, {1, 1, 1}}});  // its right child: z = 0.25
  Canvas c(kKdtreeWidth, kKdtreeHeight);
  render(p, c);
  EXPECT_EQ(c.at(290, 300), palette::kSplit[0]);  // x split, left view
  EXPECT_EQ(c.at(860, 300), palette::kSplit[0]);  // x split, right view
  // z = 0.25 -> row 10 + 560 - 140 = 430 on the right, from x 0.5 to 1.
  EXPECT_EQ(c.at(1000, 430), palette::kSplit[1]);
  EXPECT_EQ(c.at(700, 430), palette::kSpace);  // left of its cell
  EXPECT_EQ(c.at(430, 430), palette::kSpace);  // the left view sees it face-on: not drawn
  // The triangle's bottom edge y = 0.1 from x 0.1 to 0.3: row 514, columns 66..178 on the left.
  EXPECT_EQ(c.at(100, 514), palette::kTriangle);
  EXPECT_EQ(c.at(200, 514), palette::kSpace);
  EXPECT_EQ(population(p), "Triangle 1, split planes 2 of the first 2 levels");
}

TEST(Session, SnapshotsSortByStep) {
  const TempDir dir("viewer_test_session");
  Options o;
  o.snapshot_dir = (dir / "frames").string();  // created by the session
  Session s(o, "wator", "wa-tor", 500);
  EXPECT_TRUE(s.active());
  EXPECT_EQ(s.snapshot_path(100), (dir / "frames" / "wator_000100.png").string());
  Session longer(o, "gol", "game of life", 12345678);
  EXPECT_EQ(longer.snapshot_path(7), (dir / "frames" / "gol_00000007.png").string());

  const wator::Frame f{40, 3, 2, {0, 1, 2, 2, 1, 0}};
  s.show(
      40, 6, 4, [&](Canvas& out) { render(f, out); }, population(f));
  const support::Image back = support::read_png(s.snapshot_path(40));
  EXPECT_EQ(back.width(), 6);
  EXPECT_EQ(back.height(), 4);
  EXPECT_EQ(back.at(5, 1), palette::kShark);
}

TEST(Session, NothingWantedNothingDone) {
  const Session s(Options{}, "wator", "wa-tor", 10);
  EXPECT_FALSE(s.active());
  Options bad;
  bad.every = 0;
  EXPECT_THROW(Session(bad, "wator", "wa-tor", 10), std::invalid_argument);
}

// A window that hands out scripted events and records what it was shown.
struct ScriptedWindow final : Window {
  struct Record {
    std::vector<Event> events;  // handed out front first; then kNone
    std::vector<std::string> titles;
    int presents = 0;
  };
  explicit ScriptedWindow(std::shared_ptr<Record> r) : record(std::move(r)) {}
  void present(const Canvas&) override { ++record->presents; }
  void set_title(const std::string& t) override { record->titles.push_back(t); }
  Event next_event(int) override {
    if (record->events.empty()) return Event::kNone;
    const Event e = record->events.front();
    record->events.erase(record->events.begin());
    return e;
  }
  std::shared_ptr<Record> record;
};

TEST(Session, KeysPauseStepAndQuit) {
  auto record = std::make_shared<ScriptedWindow::Record>();
  Options o;
  o.render = true;
  Session s(o, "wator", "wa-tor", 100, std::make_unique<ScriptedWindow>(record));
  const wator::Frame f{0, 3, 2, {0, 1, 2, 2, 1, 0}};
  const auto draw = [&](Canvas& out) { render(f, out); };

  s.show(0, 6, 4, draw, population(f));  // no keys: shows and returns
  EXPECT_EQ(record->presents, 1);
  EXPECT_NE(record->titles.back().find("wa-tor | step 0 | Fish 2, Shark 2 | "), std::string::npos)
      << record->titles.back();

  // Space pauses: show() waits (presenting again) until n, and stays paused.
  record->events = {Event::kPause, Event::kNone, Event::kRedraw, Event::kStep};
  s.show(1, 6, 4, draw, population(f));
  EXPECT_TRUE(record->events.empty());
  EXPECT_NE(record->titles.back().find("step 1"), std::string::npos);
  EXPECT_NE(record->titles.back().find("paused"), std::string::npos) << record->titles.back();
  record->events = {Event::kStep};
  s.show(2, 6, 4, draw, population(f));  // still paused: the next n lets it go on
  EXPECT_TRUE(record->events.empty());
  record->events = {Event::kPause};
  s.show(3, 6, 4, draw, population(f));  // space again: running
  EXPECT_EQ(record->titles.back().find("paused"), std::string::npos) << record->titles.back();

  record->events = {Event::kQuit};
  try {
    s.show(4, 6, 4, draw, population(f));
    FAIL() << "q did not stop the run";
  } catch (const Quit& q) {
    EXPECT_EQ(q.step, 4);
  }
}

TEST(Window, WithoutSdl2RenderSaysHowToGetIt) {
  const std::string m = no_window_message();
  EXPECT_NE(m.find("apt-get install libsdl2-dev"), std::string::npos) << m;
  EXPECT_NE(m.find("--snapshot"), std::string::npos) << m;
  if (has_window())
    GTEST_SKIP() << "this build has SDL2; example.viewer.render_needs_sdl2 runs in one without";
  try {
    open_window("test");
    FAIL() << "open_window succeeded without SDL2";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), m);
  }
}

}  // namespace
}  // namespace dynasoar::example::viewer
