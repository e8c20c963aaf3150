// expect: this class is not registered with the allocator
//
// A class that derives from the allocator's Base but is missing from its type
// list cannot be allocated: the allocator has no type id and no blocks for it.
#include <dynasoar/dynasoar.h>

class Listed;
class Forgotten;
using AllocatorT = dynasoar::SoaAllocator<Listed>;

class Listed : public AllocatorT::Base {
 public:
  declare_field_types(Listed, int)
  Field<Listed, 0> value;
  DYNASOAR_HD Listed(int, int v) : value(v) {}
};

class Forgotten : public AllocatorT::Base {
 public:
  declare_field_types(Forgotten, int)
  Field<Forgotten, 0> value;
  DYNASOAR_HD Forgotten(int, int v) : value(v) {}
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(1 << 20);
  heap.parallel_new<Forgotten>(1, 7);
  return 0;
}
