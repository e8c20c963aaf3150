// expect: a registered class has members other than its Field<Class, N> proxies
//
// Objects are stored as structure of arrays: every value lives in a declared
// field. An ordinary data member would have no storage in the heap.
#include <dynasoar/dynasoar.h>

class Particle;
using AllocatorT = dynasoar::SoaAllocator<Particle>;

class Particle : public AllocatorT::Base {
 public:
  declare_field_types(Particle, float)
  Field<Particle, 0> x;
  float velocity = 0;  // not a field
  DYNASOAR_HD Particle(int, float x0) : x(x0) {}
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(1 << 20);
  heap.parallel_new<Particle>(1, 1.0f);
  return 0;
}
