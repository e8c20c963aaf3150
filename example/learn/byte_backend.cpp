// One set of classes on two back ends in one program: the DynaSOAr heap and
// CFMMalloc, a raw byte allocator of Vinkler & Havran. The classes are a
// template over the back end, so both copies live side by side; the program
// runs the same parallel_new/parallel_do on each and compares the results.
// Read next: docs/guide/backends.md (and docs/design/registry.md).
#include <dynasoar/dynasoar.h>

#include <cstdint>
#include <cstdio>
#include <vector>

using ull = unsigned long long;
constexpr int kCells = 3000;

// A real program writes `dynasoar::Allocator<Cell>` and picks the back end
// when it is built (CMake: -DDYNASOAR_BACKEND=cfmmalloc). Naming it through
// Backend::Allocator, e.g. dynasoar::backend::CFMMalloc::Allocator<Cell>,
// is only needed to hold two back ends in one program, as here.
template <class Backend>
struct World {
  class Cell;
  using Alloc = typename Backend::template Allocator<Cell>;
  using Handle = dynasoar::AllocatorHandle<Alloc>;

  class Cell : public Alloc::Base {
   public:
    declare_field_types(Cell, int, int)
    dynasoar::Field<Cell, 0> value;
    dynasoar::Field<Cell, 1> age;

    DYNASOAR_HD explicit Cell(int v) : value(v), age(0) {}
    DYNASOAR_HD void step() {
      value = (value * 7 + 3) % 1000;
      age += 1;
    }
    // Objects created here are not visited by this do-all (on every back end).
    DYNASOAR_HD void split(Alloc alloc) {
      if (value % 4 == 0) new (alloc) Cell(value + 1);
      if (value % 5 == 0) dynasoar::destroy(alloc, this);
    }
    DYNASOAR_HD void add_to(ull* sums) {  // integers: the same sums in every build
      dynasoar::platform::atomic_fetch_add(&sums[0], 1ull);
      dynasoar::platform::atomic_fetch_add(&sums[1], static_cast<ull>(static_cast<int>(value)));
      dynasoar::platform::atomic_fetch_add(&sums[2], static_cast<ull>(static_cast<int>(age)));
    }
  };

  // The same calls on any back end: only the handle's type differs.
  static std::vector<ull> run(Handle& heap) {
    heap.template parallel_new<Cell>(kCells);  // Cell(i) for i < kCells
    heap.template parallel_do<Cell, &Cell::step>();
    heap.template parallel_do<Cell, &Cell::split>(heap.device());
    dynasoar::platform::Buffer<ull> sums(3);
    sums.zero();
    heap.template parallel_do<Cell, &Cell::add_to>(sums.data());
    return sums.to_vector();
  }
};

// Allocators Dynasoar::Allocator<Cell> = SoaAllocator<Cell> (fields as arrays
// in blocks, found through bitmaps) and CFMMalloc::Allocator<Cell> =
// ByteAllocator<cmalloc::CFMMalloc, Cell> (one malloc per object, a plain struct).
using OnHeap = World<dynasoar::backend::Dynasoar>;
using OnBytes = World<dynasoar::backend::CFMMalloc>;

int main() {
  // What the program must compute, done once on the host.
  std::vector<ull> want{0, 0, 0};  // cells, value sum, age sum
  for (int i = 0; i < kCells; ++i) {
    const int v = (i * 7 + 3) % 1000;
    if (v % 4 == 0) want = {want[0] + 1, want[1] + static_cast<ull>(v + 1), want[2]};  // newborn
    if (v % 5 != 0) want = {want[0] + 1, want[1] + static_cast<ull>(v), want[2] + 1};  // survivor
  }

  OnHeap::Handle heap(std::uint64_t{16} << 20);
  OnBytes::Handle bytes(std::uint64_t{16} << 20);
  const std::vector<ull> got_heap = OnHeap::run(heap);
  const std::vector<ull> got_bytes = OnBytes::run(bytes);

  // The DynaSOAr heap keeps each class's fields as arrays (SOA) in blocks of
  // `capacity` slots; unused slots in allocated blocks are its fragmentation.
  for (const auto& s : heap.statistics<OnHeap::Cell>())
    std::printf("dynasoar : %llu objects in %llu blocks of %u slots, fragmentation %.2f\n",
                static_cast<ull>(s.objects), static_cast<ull>(s.blocks), s.capacity,
                s.fragmentation());
  // A byte allocator stores each object as one plain struct of object_bytes.
  // It cannot enumerate its objects, so an object registry lists them and is
  // compacted before every do-all, count and statistics: enumeration_seconds().
  for (const auto& s : bytes.statistics<OnBytes::Cell>())
    std::printf("cfmmalloc: %llu objects of %llu bytes each, registry compaction %.2f ms in all\n",
                static_cast<ull>(s.objects), static_cast<ull>(s.object_bytes),
                bytes.enumeration_seconds() * 1e3);

  std::printf("cells, value sum, age sum: dynasoar %llu %llu %llu, cfmmalloc %llu %llu %llu\n",
              got_heap[0], got_heap[1], got_heap[2], got_bytes[0], got_bytes[1], got_bytes[2]);
  const bool ok = got_heap == want && got_bytes == want && heap.count<OnHeap::Cell>() == want[0] &&
                  bytes.count<OnBytes::Cell>() == want[0];
  std::printf("checked: both equal the host's %llu %llu %llu and count(): %s\n", want[0], want[1],
              want[2], ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
