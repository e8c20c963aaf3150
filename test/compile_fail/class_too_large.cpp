// expect: a registered class is more than 64 times larger than the smallest one
//
// On the DynaSOAr heap a block
// holds 64 objects of the smallest class and every block has the same size,
// so a class more than 64 times larger than the smallest one has no room for
// even one object in a block (docs/guide/errors.md).
#include <dynasoar/dynasoar.h>

class Grain;
class Boulder;
using AllocatorT = dynasoar::SoaAllocator<Grain, Boulder>;

class Grain : public AllocatorT::Base {
 public:
  declare_field_types(Grain, char)
  Field<Grain, 0> weight;
  DYNASOAR_HD explicit Grain(int) : weight(1) {}
};

class Boulder : public AllocatorT::Base {
 public:
  declare_field_types(Boulder, char[65])
  Field<Boulder, 0> weight;  // 65 Grains
  DYNASOAR_HD explicit Boulder(int) { weight[0] = 65; }
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(1 << 20);
  heap.parallel_new<Boulder>(1);
  return 0;
}
