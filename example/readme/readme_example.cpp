// The example of the README, verbatim (CI builds and runs it): a class with
// two fields, objects created with parallel_new, moved with parallel_do, and
// replaced inside a do-all by objects they create.
// snippet-begin: readme
#include <dynasoar/dynasoar.h>

class Body;
using AllocatorT = dynasoar::Allocator<Body>;      // every class that is allocated

class Body : public AllocatorT::Base {
 public:
  declare_field_types(Body, float, float)          // field types, in order
  Field<Body, 0> pos;
  Field<Body, 1> vel;

  DYNASOAR_HD explicit Body(int i) : pos(static_cast<float>(i)), vel(1.0f) {}
  DYNASOAR_HD void move(float dt) { pos += vel * dt; }
  DYNASOAR_HD void split(AllocatorT alloc) {       // objects may create and destroy objects
    if (pos > 100.0f) { new (alloc) Body(0); dynasoar::destroy(alloc, this); }
  }
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(64 << 20);   // 64 MiB heap, chosen at run time
  heap.parallel_new<Body>(1000);                         // Body(i) for i < 1000
  heap.parallel_do<Body, &Body::move>(0.5f);             // every Body, one thread per object
  heap.parallel_do<Body, &Body::split>(heap.device());
  return heap.count<Body>() == 1000 ? 0 : 1;
}
// snippet-end: readme
