// expect: an abstract class cannot be allocated
//
// A class declared with declare_abstract_field_types has no blocks of its
// own; only its concrete subclasses can be made.
#include <dynasoar/dynasoar.h>

class Shape;
class Circle;
using AllocatorT = dynasoar::SoaAllocator<Shape, Circle>;

class Shape : public AllocatorT::Base {
 public:
  declare_abstract_field_types(Shape, float)
  Field<Shape, 0> area;
  DYNASOAR_HD Shape(int, float a) : area(a) {}
};

class Circle : public Shape {
 public:
  declare_field_types(Circle, float)
  Field<Circle, 0> radius;
  DYNASOAR_HD Circle(int i, float r) : Shape(i, 3.14159f * r * r), radius(r) {}
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(1 << 20);
  heap.parallel_new<Shape>(1, 1.0f);
  return 0;
}
