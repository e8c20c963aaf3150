// expect: save_checkpoint: this back end cannot save its objects
// expect: kCanMoveObjects
//
// A byte allocator's objects lie where its allocator put them; a checkpoint
// cannot recreate them in another heap. The call is refused where it is
// written, not deep inside the heap's code.
#include <dynasoar/dynasoar.h>

#include <sstream>

class Body;
using AllocatorT = dynasoar::backend::CMalloc::Allocator<Body>;

class Body : public AllocatorT::Base {
 public:
  declare_field_types(Body, float)
  Field<Body, 0> mass;
  DYNASOAR_HD explicit Body(int i) : mass(static_cast<float>(i)) {}
};

int main() {
  dynasoar::AllocatorHandle<AllocatorT> heap(1 << 20);
  std::ostringstream out;
  heap.save_checkpoint(out, "step 1");
  return 0;
}
