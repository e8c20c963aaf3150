// expect: the method cannot be called on a T with these arguments
// reject: kernels\.h
//
// The arguments of parallel_do are passed to the method of every object; a
// mismatch is reported at the call, not inside the do-all's kernel.
#include <dynasoar/dynasoar.h>

class Particle;
using AllocatorT = dynasoar::SoaAllocator<Particle>;

class Particle : public AllocatorT::Base {
 public:
  declare_field_types(Particle, float)
  Field<Particle, 0> x;
  DYNASOAR_HD Particle(int, float x0) : x(x0) {}
  DYNASOAR_HD void move(float dt) { x = x + dt; }
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(1 << 20);
  heap.parallel_new<Particle>(1, 1.0f);
  heap.parallel_do<Particle, &Particle::move>("0.5");  // a string where a float is expected
  return 0;
}
