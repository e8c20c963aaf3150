// expect: parallel_do_single_type: an abstract class has no objects of its own
//
// parallel_do_single_type visits the objects of exactly one class, so it
// needs a concrete one; parallel_do visits an abstract class's subclasses.
#include <dynasoar/dynasoar.h>

class Shape;
class Square;
using AllocatorT = dynasoar::SoaAllocator<Shape, Square>;

class Shape : public AllocatorT::Base {
 public:
  declare_abstract_field_types(Shape, float)
  Field<Shape, 0> area;
  DYNASOAR_HD explicit Shape(float a) : area(a) {}
  DYNASOAR_HD void grow() { area = area * 2.0f; }
};

class Square : public Shape {
 public:
  declare_field_types(Square, float)
  Field<Square, 0> side;
  DYNASOAR_HD explicit Square(float s) : Shape(s * s), side(s) {}
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(1 << 20);
  heap.parallel_do_single_type<Shape, &Shape::grow>();
  return 0;
}
