// Checkpoints: a run of walkers, each with its random state in a field,
// saves its heap after step 20, and a second heap (of another size) loads
// it and goes on to step 40. Its walkers end where those of a run that
// went straight to step 40 end. The program's own state (the step) goes
// into the checkpoint as bytes beside the objects. The DynaSOAr heap and
// BitmapAlloc have checkpoints; on other back ends this program says so.
// Next: docs/guide/moving-objects.md ("Checkpoints").
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include <dynasoar/dynasoar.h>

class Walker;
using AllocatorT = dynasoar::Allocator<Walker>;
using Handle = dynasoar::AllocatorHandle<AllocatorT>;

constexpr int kWalkers = 5000;
constexpr int kSteps = 40;

class Walker : public AllocatorT::Base {
 public:
  declare_field_types(Walker, int, std::uint64_t)
  Field<Walker, 0> position;
  Field<Walker, 1> random;  // the walker's own random state: saved with it

  DYNASOAR_HD explicit Walker(int i) : position(0), random(dynasoar::platform::mix64(i + 1)) {}

  DYNASOAR_HD void step() {
    random = dynasoar::platform::mix64(random);
    position += (random & 1u) != 0 ? 1 : -1;
  }
  DYNASOAR_HD void add_to(unsigned long long* sum) {
    const int p = position;
    dynasoar::platform::atomic_fetch_add(sum, static_cast<unsigned long long>(p * p));
  }
};

template <class Heap>
void walk(Heap& heap, int from, int to) {
  for (int s = from; s <= to; ++s) heap.template parallel_do<Walker, &Walker::step>();
}

template <class Heap>
unsigned long long spread(Heap& heap) {  // sum of squared positions: order does not matter
  dynasoar::platform::Buffer<unsigned long long> sum(1);
  sum.zero();
  heap.template parallel_do<Walker, &Walker::add_to>(sum.data());
  return sum.to_vector()[0];
}

// A template, so that on a back end without checkpoints the second branch
// is not compiled at all.
template <class Heap>
int run() {
  if constexpr (!dynasoar::kCanMoveObjects<typename Heap::Allocator>) {
    std::printf("%s has no checkpoints; build this program for dynasoar or bitmap_alloc\n",
                dynasoar::backend::Selected::kName);
    return 0;
  } else {
    Heap straight = Heap::template for_objects<Walker>(kWalkers);
    straight.template parallel_new<Walker>(kWalkers);
    walk(straight, 1, kSteps);

    const std::filesystem::path file = std::filesystem::temp_directory_path() / "learn_checkpoint.ckpt";
    {
      Heap first = Heap::template for_objects<Walker>(kWalkers);
      first.template parallel_new<Walker>(kWalkers);
      walk(first, 1, 20);
      const int step = 20;
      std::string user(sizeof step, '\0');
      std::memcpy(user.data(), &step, sizeof step);
      first.save_checkpoint(file, user);
    }  // the first run ends here
    Heap second(std::uint64_t{8} << 20);  // another size: any that holds the walkers
    const std::string user = second.load_checkpoint(file);
    int step = 0;
    std::memcpy(&step, user.data(), sizeof step);
    walk(second, step + 1, kSteps);
    std::filesystem::remove(file);

    const unsigned long long want = spread(straight), got = spread(second);
    std::printf("%s: resumed after step %d, spread %llu, straight run %llu\n", want == got ? "ok" : "FAILED", step,
                got, want);
    return want == got && second.template count<Walker>() == kWalkers ? 0 : 1;
  }
}

int main() { return run<Handle>(); }
