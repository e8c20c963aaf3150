// Objects that create and destroy objects: in a method run by parallel_do,
// `new (alloc) Cell(...)` makes a child and `dynasoar::destroy(alloc, this)`
// deletes the cell itself. Then a kernel of our own (platform::parallel_for)
// gets heap.device() and fills the heap: `new` returns nullptr once it is
// full, and check_errors() throws dynasoar::OutOfMemory.
// Next: docs/guide/operations.md ("Creating and destroying objects", "Errors").
#include <cstdio>
#include <utility>
#include <vector>

#include <dynasoar/dynasoar.h>

class Cell;
using AllocatorT = dynasoar::Allocator<Cell>;

constexpr int kCells = 1000;
constexpr int kSteps = 8;
constexpr int kRoom = 64 * 128;  // whole blocks of 64 cells: the heap holds exactly this many

DYNASOAR_HD inline int gain(int id) { return id % 3 - 1; }  // energy per step: -1, 0 or +1

class Cell : public AllocatorT::Base {
 public:
  declare_field_types(Cell, int, int)
  Field<Cell, 0> id;  // children keep their parent's id; -1 marks the filler cells
  Field<Cell, 1> energy;

  DYNASOAR_HD explicit Cell(int i) : id(i), energy(i % 4) {}  // parallel_new
  DYNASOAR_HD Cell(int i, int e) : id(i), energy(e) {}        // new

  // Children made here are not visited by this parallel_do, only by the next.
  DYNASOAR_HD void step(AllocatorT alloc) {
    energy += gain(id);
    if (energy < 0) {  // starved: a cell may destroy itself
      dynasoar::destroy(alloc, this);
      return;
    }
    if (energy >= 4) {  // rich: split in two
      const int half = energy / 2;
      energy -= half;
      new (alloc) Cell(id, half);  // nullptr if the heap were full; parallel_do would then throw
    }
  }
  DYNASOAR_HD void add_energy(unsigned long long* sum) {
    const int e = energy;
    dynasoar::platform::atomic_fetch_add(sum, static_cast<unsigned long long>(e));
  }
  DYNASOAR_HD void remove_filler(AllocatorT alloc) {
    if (id < 0) dynasoar::destroy(alloc, this);
  }
};

int main() {
  auto heap = dynasoar::AllocatorHandle<AllocatorT>::for_objects<Cell>(kRoom);
  heap.parallel_new<Cell>(kCells);
  for (int s = 0; s < kSteps; ++s) heap.parallel_do<Cell, &Cell::step>(heap.device());
  dynasoar::platform::Buffer<unsigned long long> energy(1);
  energy.zero();
  heap.parallel_do<Cell, &Cell::add_energy>(energy.data());
  const unsigned long long live = heap.count<Cell>(), got_energy = energy.to_vector()[0];

  // The same rules on the host, with a vector of (id, energy) pairs.
  std::vector<std::pair<int, int>> cells;
  for (int i = 0; i < kCells; ++i) cells.emplace_back(i, i % 4);
  for (int s = 0; s < kSteps; ++s) {
    std::vector<std::pair<int, int>> next;
    for (auto [id, e] : cells) {
      e += gain(id);
      if (e < 0) continue;
      if (e >= 4) { next.emplace_back(id, e / 2); e -= e / 2; }
      next.emplace_back(id, e);
    }
    cells = std::move(next);
  }
  unsigned long long want_energy = 0;
  for (const auto& c : cells) want_energy += static_cast<unsigned long long>(c.second);

  // A kernel of our own tries to make kRoom more cells: more than fit.
  const AllocatorT alloc = heap.device();
  dynasoar::platform::Buffer<unsigned long long> tally(2);  // [0] made, [1] got nullptr
  tally.zero();
  unsigned long long* t = tally.data();
  const auto fill = [alloc, t] DYNASOAR_HD(std::size_t) {  // DYNASOAR_HD: it runs on the GPU
    Cell* c = new (alloc) Cell(-1, 0);
    dynasoar::platform::atomic_fetch_add(&t[c != nullptr ? 0 : 1], 1ull);
  };
  dynasoar::platform::parallel_for(kRoom, fill, heap.stream());  // after the heap's own work
  bool threw = false;
  try {
    heap.check_errors();  // a kernel of our own: nothing else reports the failed `new`s
  } catch (const dynasoar::OutOfMemory& e) {
    threw = true;
    std::printf("caught OutOfMemory: %s\n", e.what());
  }
  const std::vector<unsigned long long> made = tally.to_vector();
  const unsigned long long full = heap.count<Cell>();
  heap.parallel_do<Cell, &Cell::remove_filler>(heap.device());  // frees their slots again

  const bool ok = live == cells.size() && got_energy == want_energy && threw &&
                  made[0] + made[1] == kRoom && full == kRoom && made[0] == kRoom - live &&
                  !heap.out_of_memory() && heap.count<Cell>() == live;
  std::printf("new_and_destroy: %llu cells (host %zu), energy %llu (host %llu); "
              "filled with %llu more, %llu got nullptr: %s\n",
              live, cells.size(), got_energy, want_energy, made[0], made[1], ok ? "OK" : "WRONG");
  return ok ? 0 : 1;
}
