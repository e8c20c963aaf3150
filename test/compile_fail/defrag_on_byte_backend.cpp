// expect: parallel_defrag: this back end cannot move objects
// reject: no member named
//
// Compaction moves objects inside the block heap; a byte allocator's
// objects stay where malloc put them, so a program that compacts one is
// refused with a message that names the back ends that can.
#include <dynasoar/dynasoar.h>

class Cell;
using AllocatorT = dynasoar::backend::CMalloc::Allocator<Cell>;

class Cell : public AllocatorT::Base {
 public:
  declare_field_types(Cell, int)
  Field<Cell, 0> value;
  DYNASOAR_HD explicit Cell(int i) : value(i) {}
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(1 << 20);
  heap.parallel_defrag<Cell>();
  return 0;
}
