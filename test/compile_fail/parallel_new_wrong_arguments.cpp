// expect: T has no constructor T\(int index, args\.\.\.\) for these arguments
// reject: kernels\.h
//
// parallel_new<T>(n, args...) makes object i as T(i, args...): the class
// needs a constructor whose first parameter takes the index.
#include <dynasoar/dynasoar.h>

class Particle;
using AllocatorT = dynasoar::SoaAllocator<Particle>;

class Particle : public AllocatorT::Base {
 public:
  declare_field_types(Particle, float)
  Field<Particle, 0> x;
  DYNASOAR_HD explicit Particle(float x0) : x(x0) {}  // no index parameter
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(1 << 20);
  heap.parallel_new<Particle>(1, 1.0f);
  return 0;
}
