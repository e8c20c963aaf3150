// Image, the PNG writer and the snapshot folder: a small picture written and
// read back with libpng pixel for pixel, errors for what is not a PNG and a
// folder that cannot be made, and snapshot names that sort by step.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

#include "dynasoar/support/image.h"
#include "dynasoar/support/png.h"
#include "dynasoar/support/snapshots.h"
#include "support/temp_dir.h"

namespace dynasoar::support {
namespace {

using dynasoar::test::TempDir;

TEST(Image, StartsOpaqueBlackAndClipsWrites) {
  Image image(4, 3);
  EXPECT_EQ(image.at(3, 2), (Rgba{0, 0, 0, 255}));
  image.set(1, 2, Rgba{10, 20, 30});
  image.set(-1, 0, Rgba{255, 0, 0});  // outside: left out
  image.set(4, 0, Rgba{255, 0, 0});
  EXPECT_EQ(image.at(1, 2), (Rgba{10, 20, 30, 255}));
  EXPECT_EQ(image.data()[(2 * 4 + 1) * 4 + 1], 20);  // rows top to bottom, RGBA
  EXPECT_THROW(image.at(4, 0), std::out_of_range);
  EXPECT_THROW(Image(-1, 2), std::invalid_argument);
}

TEST(Png, WritesAndReadsBackEveryPixel) {
  const TempDir dir("png_test_roundtrip");
  Image image(7, 5);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x)
      image.set(x, y, Rgba{static_cast<std::uint8_t>(30 * x), static_cast<std::uint8_t>(50 * y),
                           static_cast<std::uint8_t>(x + y), static_cast<std::uint8_t>(x == 6 ? 128 : 255)});
  const std::string path = (dir / "frame.png").string();
  write_png(path, image);
  const Image back = read_png(path);
  ASSERT_EQ(back.width(), 7);
  ASSERT_EQ(back.height(), 5);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) EXPECT_EQ(back.at(x, y), image.at(x, y)) << "pixel " << x << ", " << y;
}

TEST(Png, RejectsWhatIsNotAPng) {
  const TempDir dir("png_test_notpng");
  const std::string path = (dir / "frame.png").string();
  std::ofstream(path) << "not a picture";
  EXPECT_THROW(read_png(path), std::runtime_error);
  EXPECT_THROW(write_png((dir / "missing" / "x.png").string(), Image(2, 2)), std::runtime_error);
}

TEST(Snapshots, NamesSortByStepAndFilesReadBack) {
  const TempDir dir("png_test_snapshots");
  const Snapshots snapshots((dir / "frames").string(), "walkers", 500);  // creates the folder
  EXPECT_TRUE(std::filesystem::is_directory(dir / "frames"));
  EXPECT_EQ(snapshots.path(100), (dir / "frames" / "walkers_000100.png").string());
  const Snapshots longer((dir / "frames").string(), "gol", 12345678);
  EXPECT_EQ(longer.path(7), (dir / "frames" / "gol_00000007.png").string());

  Image image(3, 2);
  image.set(2, 1, Rgba{0, 200, 0});
  snapshots.write(40, image);
  EXPECT_EQ(read_png(snapshots.path(40)).at(2, 1), (Rgba{0, 200, 0, 255}));
}

TEST(Snapshots, SaysWhenTheFolderCannotBeMade) {
  const TempDir dir("png_test_blocked");
  std::ofstream(dir / "file") << "a file, not a folder";
  try {
    Snapshots((dir / "file" / "frames").string(), "x");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create the folder"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dynasoar::support
