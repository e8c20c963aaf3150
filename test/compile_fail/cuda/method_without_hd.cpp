// expect: calling a __host__ function.*from a __host__ __device__ function is not allowed
//
// In a CUDA build every method that runs on the GPU, and every function it
// calls, is marked DYNASOAR_HD. nvcc only warns about a call to an unmarked
// one and links a program that fails when it runs there; dynasoar::dynasoar
// makes that warning an error (cmake/dynasoarLanguage.cmake).
#include <dynasoar/dynasoar.h>

class Particle;
using AllocatorT = dynasoar::SoaAllocator<Particle>;

class Particle : public AllocatorT::Base {
 public:
  declare_field_types(Particle, float)
  Field<Particle, 0> x;
  DYNASOAR_HD Particle(int, float x0) : x(x0) {}
  float doubled() const { return 2 * x; }  // DYNASOAR_HD forgotten
  DYNASOAR_HD void grow() { x = doubled(); }
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(1 << 20);
  heap.parallel_new<Particle>(1, 1.0f);
  heap.parallel_do<Particle, &Particle::grow>();
  return 0;
}
