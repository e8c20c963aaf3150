// Finding objects by index: heap.parallel_new_indexed<T>(n) makes T(i) for
// i < n and returns a table whose index() finds object i in device code.
// A grid model looks its cells up by position; here 64x48 cells on a torus
// each hold some heat, and in every step each cell moves towards the mean
// of its four neighbours, which it finds through the index. The result is
// compared with a plain host loop. Next: docs/guide/operations.md
// ("Finding object i: parallel_new_indexed"), then example/wator/objects.cpp,
// where the same index serves a full simulation.
#include <cstdio>
#include <vector>

#include <dynasoar/dynasoar.h>

class Cell;
using AllocatorT = dynasoar::Allocator<Cell>;

constexpr int kWidth = 64, kHeight = 48, kCells = kWidth * kHeight, kSteps = 25;

// Shared by the objects and the host check. Integers only, so that the
// result does not depend on the order in which the threads run.
DYNASOAR_HD inline int initial_heat(int i) { return (i * 7919) % 1000; }
DYNASOAR_HD inline int neighbour(int i, int dx, int dy) {
  const int x = (i % kWidth + dx + kWidth) % kWidth, y = (i / kWidth + dy + kHeight) % kHeight;
  return y * kWidth + x;
}
DYNASOAR_HD inline int relax(int own, int sum_of_four) { return (4 * own + sum_of_four) / 8; }

/// What the methods get: the cells by index (trivially copyable).
struct Grid {
  dynasoar::ObjectIndex<AllocatorT, Cell> cells;
};

class Cell : public AllocatorT::Base {
 public:
  declare_field_types(Cell, int, int, int)
  Field<Cell, 0> id;    // position in the grid: y * kWidth + x
  Field<Cell, 1> heat;
  Field<Cell, 2> next;  // this step's result, taken over in a phase of its own

  DYNASOAR_HD explicit Cell(int i) : id(i), heat(initial_heat(i)), next(0) {}

  DYNASOAR_HD void diffuse(Grid g) {
    const int i = id;
    int sum = 0;
    sum += g.cells[neighbour(i, 1, 0)]->heat;  // object number neighbour(...), found by the index
    sum += g.cells[neighbour(i, -1, 0)]->heat;
    sum += g.cells[neighbour(i, 0, 1)]->heat;
    sum += g.cells[neighbour(i, 0, -1)]->heat;
    next = relax(heat, sum);
  }
  // A phase of its own: every cell has read its neighbours before any changes.
  DYNASOAR_HD void take_over() { heat = static_cast<int>(next); }
  DYNASOAR_HD void write(int* out) { out[static_cast<int>(id)] = heat; }
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(16 << 20);
  // Cell(i) for i < kCells; table.index()[i] is the cell made with i.
  dynasoar::ObjectTable<AllocatorT, Cell> table = heap.parallel_new_indexed<Cell>(kCells);
  const Grid grid{table.index()};
  for (int s = 0; s < kSteps; ++s) {
    heap.parallel_do<Cell, &Cell::diffuse>(grid);
    heap.parallel_do<Cell, &Cell::take_over>();
  }
  dynasoar::platform::Buffer<int> heat(kCells);
  heap.parallel_do<Cell, &Cell::write>(heat.data());

  // The same on the host, with arrays.
  std::vector<int> want(kCells), next(kCells);
  for (int i = 0; i < kCells; ++i) want[i] = initial_heat(i);
  for (int s = 0; s < kSteps; ++s) {
    for (int i = 0; i < kCells; ++i)
      next[i] = relax(want[i], want[neighbour(i, 1, 0)] + want[neighbour(i, -1, 0)] +
                                   want[neighbour(i, 0, 1)] + want[neighbour(i, 0, -1)]);
    want.swap(next);
  }

  const std::vector<int> got = heat.to_vector();
  long long total = 0;
  for (int h : got) total += h;
  const bool ok = got == want;
  std::printf("grid_index: %dx%d cells, %d steps, total heat %lld; every cell %s the host's\n", kWidth,
              kHeight, kSteps, total, ok ? "matches" : "DIFFERS from");
  return ok ? 0 : 1;
}
