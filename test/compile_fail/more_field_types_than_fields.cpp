// expect: lists more types in declare_field_types than it has Field<Class, N> members
// expect: C ?= ?Particle[],;]
// reject: members other than its Field
//
// declare_field_types lists the type of each Field member; a listed type
// without its Field member is reported with the class's name.
#include <dynasoar/dynasoar.h>

class Particle;
class Wall;
using AllocatorT = dynasoar::SoaAllocator<Wall, Particle>;

class Wall : public AllocatorT::Base {
 public:
  declare_field_types(Wall, float)
  Field<Wall, 0> x;
  DYNASOAR_HD Wall(int, float x0) : x(x0) {}
};

class Particle : public AllocatorT::Base {
 public:
  declare_field_types(Particle, float, float)  // two types, one Field member
  Field<Particle, 0> x;
  DYNASOAR_HD Particle(int, float x0) : x(x0) {}
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(1 << 20);
  heap.parallel_new<Particle>(1, 1.0f);
  return 0;
}
