// Random walkers on a torus, with the support layer's three tools: progress
// lines (steps per second, time left, walkers alive), a phase timer around
// the two do-alls of a step, and a PNG picture of where the walkers are
// every 50 steps. Walkers split and die at random, so their number drifts.
//
//   support_walkers [STEPS [FOLDER]]   (default: 200 steps, pictures in walkers_png/)
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <dynasoar/dynasoar.h>
#include <dynasoar/support/image.h>
#include <dynasoar/support/phase_timer.h>
#include <dynasoar/support/progress.h>
#include <dynasoar/support/snapshots.h>

class Walker;
using AllocatorT = dynasoar::Allocator<Walker>;

constexpr int kWidth = 160, kHeight = 120, kWalkers = 2000;
constexpr std::uint64_t kSeed = 7;

class Walker : public AllocatorT::Base {
 public:
  declare_field_types(Walker, int, int, std::uint32_t)
  Field<Walker, 0> x;
  Field<Walker, 1> y;
  Field<Walker, 2> key;  // names the walker's random numbers

  DYNASOAR_HD explicit Walker(int i) : x(kWidth / 2), y(kHeight / 2), key(static_cast<std::uint32_t>(i)) {}
  DYNASOAR_HD Walker(int x0, int y0, std::uint32_t k) : x(x0), y(y0), key(k) {}

  // One cell left, right, up or down.
  DYNASOAR_HD void move(int step) {
    const std::uint32_t r = dynasoar::random_u32(kSeed, key, static_cast<std::uint32_t>(step), 0);
    const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
    x = (x + dx[r & 3] + kWidth) % kWidth;
    y = (y + dy[r & 3] + kHeight) % kHeight;
  }
  // One walker in 50 splits in two, one in 50 dies.
  DYNASOAR_HD void split_or_die(AllocatorT alloc, int step) {
    const auto s = static_cast<std::uint32_t>(step);
    const std::uint32_t roll = dynasoar::random_below(dynasoar::random_u32(kSeed, key, s, 1), 50);
    if (roll == 0) {
      new (alloc) Walker(x, y, dynasoar::random_u32(kSeed, key, s, 2));
    } else if (roll == 1) {
      dynasoar::destroy(alloc, this);
    }
  }
  DYNASOAR_HD void count_into(unsigned* cells) {
    dynasoar::platform::atomic_fetch_add(&cells[y * kWidth + x], 1u);
  }
};

// Where the walkers are: a pixel per cell, brighter where more of them are.
dynasoar::support::Image picture(dynasoar::AllocatorHandle<AllocatorT>& heap) {
  dynasoar::platform::Buffer<unsigned> cells(kWidth * kHeight);
  cells.zero(heap.stream());
  heap.parallel_do<Walker, &Walker::count_into>(cells.data());
  const std::vector<unsigned> n = cells.to_vector(heap.stream());
  dynasoar::support::Image image(kWidth, kHeight);
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x) {
      const unsigned c = n[static_cast<std::size_t>(y) * kWidth + x];
      const auto level = static_cast<std::uint8_t>(c >= 4 ? 255 : c * 60);
      image.set(x, y, {level, level, static_cast<std::uint8_t>(c == 0 ? 60 : level)});
    }
  return image;
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  const std::string folder = argc > 2 ? argv[2] : "walkers_png";
  dynasoar::AllocatorHandle<AllocatorT> heap(64 << 20);
  heap.parallel_new<Walker>(kWalkers);

  // snippet-begin: loop
  dynasoar::support::ProgressOptions options;
  options.name = "walkers";
  options.total_steps = steps;
  options.every_steps = 50;                        // and once a second (every_seconds)
  dynasoar::support::Progress progress(options);   // lines on std::cerr
  progress.add_value("alive", [&] { return heap.count<Walker>(); });  // read for a line only

  dynasoar::support::Snapshots pictures(folder, "walkers", steps);   // walkers_000050.png, ...
  dynasoar::support::PhaseTimer timer(heap.stream());  // CUDA events, or the host's clock
  timer.start();
  for (int step = 1; step <= steps; ++step) {
    heap.parallel_do<Walker, &Walker::move>(step);
    timer.mark("move");
    heap.parallel_do<Walker, &Walker::split_or_die>(heap.device(), step);
    timer.mark("split or die");
    timer.pause();  // the progress line and the picture count towards no phase
    progress.step(step);
    if (step % 50 == 0) pictures.write(step, picture(heap));
    timer.resume();
  }
  timer.print(std::cout);  // per phase: total, median of a step, marks
  // snippet-end: loop
  std::cout << "walkers: " << heap.count<Walker>() << " alive after " << steps << " steps; pictures in "
            << folder << "\n";
  return 0;
}
