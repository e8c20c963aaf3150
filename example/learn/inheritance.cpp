// Inheritance: an abstract base class Shape (declare_abstract_field_types),
// subclasses Rect and Circle with fields of their own, and Square, a Rect
// that adds no fields. parallel_do over Shape visits every subclass;
// parallel_do_single_type<Rect> visits plain Rects but not Squares;
// dynasoar::is_a<T>(p) and dynasoar::cast<T>(p) tell the classes apart.
// Next: docs/guide/writing-classes.md ("Inheritance and abstract classes").
#include <cstdio>
#include <vector>

#include <dynasoar/dynasoar.h>

class Shape;
class Rect;
class Square;
class Circle;
using AllocatorT = dynasoar::Allocator<Shape, Rect, Square, Circle>;  // abstract ones too
using ull = unsigned long long;

class Shape : public AllocatorT::Base {
 public:
  declare_abstract_field_types(Shape, int)  // never allocated: it has no blocks
  Field<Shape, 0> area;                     // integers, so that every sum is exact
  DYNASOAR_HD void add_area(ull* sum) {
    const int a = area;
    dynasoar::platform::atomic_fetch_add(sum, static_cast<ull>(a));
  }
  DYNASOAR_HD void classify(ull* out);  // uses the subclasses: defined below them
};

class Rect : public Shape {
 public:
  declare_field_types(Rect, int, int)  // added after Shape's fields
  Field<Rect, 0> width;
  Field<Rect, 1> height;
  DYNASOAR_HD Rect(int w, int h) : width(w), height(h) { area = w * h; }
  DYNASOAR_HD explicit Rect(int i) : Rect(1 + i % 5, 2 + i % 3) {}
  DYNASOAR_HD void widen(int by) { width += by; area = width * height; }
};

class Square : public Rect {
 public:
  declare_field_types(Square)  // no fields of its own
  DYNASOAR_HD explicit Square(int i) : Rect(1 + i % 4, 1 + i % 4) {}
};

class Circle : public Shape {
 public:
  declare_field_types(Circle, int)
  Field<Circle, 0> radius;
  DYNASOAR_HD explicit Circle(int i) : radius(1 + i % 6) { area = 3 * radius * radius; }  // pi = 3
};

// No virtual functions: the class of an object comes from its pointer.
DYNASOAR_HD void Shape::classify(ull* out) {
  using dynasoar::platform::atomic_fetch_add;
  if (dynasoar::is_a<Rect>(this)) atomic_fetch_add(&out[0], 1ull);    // Rects and Squares
  if (dynasoar::is_a<Square>(this)) atomic_fetch_add(&out[1], 1ull);  // Squares only
  if (Circle* c = dynasoar::cast<Circle>(this)) {                     // nullptr if no Circle
    const int r = c->radius;
    atomic_fetch_add(&out[2], static_cast<ull>(r));
  }
}

int main() {
  constexpr int kRects = 300, kSquares = 200, kCircles = 100;
  dynasoar::AllocatorHandle<AllocatorT> heap(16 << 20);
  heap.parallel_new<Rect>(kRects);
  heap.parallel_new<Square>(kSquares);
  heap.parallel_new<Circle>(kCircles);

  dynasoar::platform::Buffer<ull> out(5);  // [0..2] classify, [3] area before, [4] area after
  out.zero();
  heap.parallel_do<Shape, &Shape::classify>(out.data());  // Rects, Squares and Circles
  heap.parallel_do<Shape, &Shape::add_area>(out.data() + 3);
  heap.parallel_do_single_type<Rect, &Rect::widen>(1);  // plain Rects only: Squares stay square
  heap.parallel_do<Shape, &Shape::add_area>(out.data() + 4);
  const std::vector<ull> got = out.to_vector();

  // The same numbers on the host.
  ull rect_area = 0, wide_area = 0, square_area = 0, circle_area = 0, radii = 0;
  for (int i = 0; i < kRects; ++i) {
    rect_area += static_cast<ull>((1 + i % 5) * (2 + i % 3));
    wide_area += static_cast<ull>((2 + i % 5) * (2 + i % 3));
  }
  for (int i = 0; i < kSquares; ++i) square_area += static_cast<ull>((1 + i % 4) * (1 + i % 4));
  for (int i = 0; i < kCircles; ++i) {
    radii += static_cast<ull>(1 + i % 6);
    circle_area += static_cast<ull>(3 * (1 + i % 6) * (1 + i % 6));
  }
  const std::vector<ull> want = {kRects + kSquares, kSquares, radii,
                                 rect_area + square_area + circle_area,
                                 wide_area + square_area + circle_area};

  const bool ok = got == want && heap.count<Shape>() == kRects + kSquares + kCircles &&
                  heap.count<Rect>() == kRects + kSquares && heap.count<Square>() == kSquares &&
                  !dynasoar::is_a<Rect>(static_cast<Shape*>(nullptr));  // false for nullptr
  std::printf("inheritance: %llu rects (%llu squares), radii %llu, area %llu then %llu "
              "(host %llu, %llu): %s\n",
              got[0], got[1], got[2], got[3], got[4], want[3], want[4], ok ? "OK" : "WRONG");
  return ok ? 0 : 1;
}
