// Compaction: after most objects died, the survivors sit scattered over
// many blocks. heap.parallel_defrag<Person>() moves them into fewer blocks,
// frees the others and rewrites every pointer field that may point to a
// Person (here: `friend_`). Pointers kept outside the heap's fields (our
// own table below) are not rewritten: they go stale, so we drop the table
// before compacting. The DynaSOAr heap and BitmapAlloc compact; on other
// back ends this program skips the compaction.
// Next: docs/guide/moving-objects.md.
#include <cstdio>

#include <dynasoar/dynasoar.h>

class Person;
using AllocatorT = dynasoar::Allocator<Person>;

constexpr int kPeople = 64 * 200;  // 200 full blocks

class Person : public AllocatorT::Base {
 public:
  declare_field_types(Person, int, Person*)
  Field<Person, 0> id;
  Field<Person, 1> friend_;  // a pointer field: compaction rewrites it

  DYNASOAR_HD explicit Person(int i) : id(i), friend_(nullptr) {}

  DYNASOAR_HD void leave_if_unlucky(AllocatorT alloc) {
    if (id % 5 != 0) dynasoar::destroy(alloc, this);  // four in five leave
  }
  DYNASOAR_HD void check_friend(unsigned long long* wrong) {
    const Person* f = friend_;
    if (f == nullptr || f->id != (id + 5) % kPeople) dynasoar::platform::atomic_fetch_add(wrong, 1ull);
  }
};

// Makes the people with `new` and links each to the person five ids on
// (a survivor, since survivors' ids are multiples of five).
struct MakePeople {
  AllocatorT alloc;
  Person** table;
  DYNASOAR_HD void operator()(std::size_t i) const { table[i] = new (alloc) Person(static_cast<int>(i)); }
};
struct Link {
  Person** table;
  DYNASOAR_HD void operator()(std::size_t i) const { table[i]->friend_ = table[(i + 5) % kPeople]; }
};

std::uint64_t blocks(dynasoar::AllocatorHandle<AllocatorT>& heap) {
  std::uint64_t b = 0;
  for (const dynasoar::TypeStatistics& s : heap.statistics<Person>()) b += s.blocks;
  return b;
}

// snippet-begin: defrag
// A template, so that on a back end whose objects do not move the first
// branch is not compiled at all.
template <class Heap>
void compact(Heap& heap) {
  if constexpr (dynasoar::kCanMoveObjects<typename Heap::Allocator>) {
    // One pass empties a quarter of the blocks at most 75 % full into the
    // others (CompactGpu's F = 3); passes until one frees nothing pack tighter.
    for (int pass = 1;; ++pass) {
      const dynasoar::DefragResult r = heap.template parallel_defrag<Person>();
      if (r.blocks_freed == 0) break;
      std::printf("pass %d: %llu objects moved, %llu blocks freed; now %llu blocks\n", pass,
                  static_cast<unsigned long long>(r.objects_moved),
                  static_cast<unsigned long long>(r.blocks_freed), static_cast<unsigned long long>(blocks(heap)));
    }
  } else {
    std::printf("%s does not move objects: no compaction\n", dynasoar::backend::Selected::kName);
  }
}
// snippet-end: defrag

int main() {
  auto heap = dynasoar::AllocatorHandle<AllocatorT>::for_objects<Person>(kPeople);
  {
    dynasoar::platform::Buffer<Person*> table(kPeople);  // ours: compaction would not update it
    dynasoar::platform::parallel_for(kPeople, MakePeople{heap.device(), table.data()});
    dynasoar::platform::parallel_for(kPeople, Link{table.data()});
    dynasoar::platform::synchronize({});
    heap.check_errors();
  }
  heap.parallel_do<Person, &Person::leave_if_unlucky>(heap.device());
  std::printf("%llu people left in %llu blocks\n", static_cast<unsigned long long>(heap.count<Person>()),
              static_cast<unsigned long long>(blocks(heap)));

  compact(heap);

  dynasoar::platform::Buffer<unsigned long long> wrong(1);
  wrong.zero();
  heap.parallel_do<Person, &Person::check_friend>(wrong.data());
  const unsigned long long bad = wrong.to_vector()[0];
  std::printf("%s: %llu friends wrong\n", bad == 0 ? "ok" : "FAILED", bad);
  return bad == 0 && heap.count<Person>() == kPeople / 5 ? 0 : 1;
}
