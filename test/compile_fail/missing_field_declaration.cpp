// expect: every registered class must declare its own fields
//
// A subclass that declares no fields of its own would be taken for its base
// class by the layout; even a class without fields says so.
#include <dynasoar/dynasoar.h>

class Base;
class Derived;
using AllocatorT = dynasoar::SoaAllocator<Base, Derived>;

class Base : public AllocatorT::Base {
 public:
  declare_field_types(Base, int)
  Field<Base, 0> id;
  DYNASOAR_HD Base(int, int i) : id(i) {}
};

class Derived : public Base {  // no declare_field_types(Derived, ...)
 public:
  DYNASOAR_HD Derived(int index, int i) : Base(index, i) {}
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(1 << 20);
  heap.parallel_new<Derived>(1, 3);
  return 0;
}
