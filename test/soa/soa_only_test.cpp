// A program of the SOA heap alone compiles no raw allocator: the SOA heap's
// headers (soa_allocator.h, soa_allocator_handle.h) include none of
// allocator/cmalloc, cuda_malloc, scatter or xmalloc. Checked when this file
// compiles: each name below is looked up in the namespace of the raw
// allocator that declares it, and must find only this file's stand-in, which
// a using-directive offers where that namespace has no such name. The test
// then runs the heap, to show that these headers are enough for it.
#include "dynasoar/soa_allocator.h"
#include "dynasoar/soa_allocator_handle.h"

#include <gtest/gtest.h>

#include <type_traits>

namespace soa_only {
struct Absent {};  // what a name below means while its header is not included
}  // namespace soa_only

// Fails to compile if dynasoar::ns::name is declared.
#define DYNASOAR_EXPECT_ABSENT(ns, name)                                                    \
  namespace soa_only {                                                                      \
  using name = Absent;                                                                      \
  }                                                                                         \
  namespace dynasoar::ns {                                                                  \
  using namespace ::soa_only;                                                               \
  static_assert(std::is_same_v<name, ::soa_only::Absent>,                                   \
                "the SOA heap's headers include dynasoar::" #ns "::" #name                  \
                ": a program of the SOA heap alone compiles a raw allocator");              \
  }

DYNASOAR_EXPECT_ABSENT(cmalloc, AtomicMalloc)
DYNASOAR_EXPECT_ABSENT(cmalloc, AWMalloc)
DYNASOAR_EXPECT_ABSENT(cmalloc, CMalloc)
DYNASOAR_EXPECT_ABSENT(cmalloc, CFMMalloc)
DYNASOAR_EXPECT_ABSENT(cmalloc, PreSplit)
DYNASOAR_EXPECT_ABSENT(cuda_malloc, CudaMalloc)
DYNASOAR_EXPECT_ABSENT(scatter, ScatterAlloc)
DYNASOAR_EXPECT_ABSENT(xmalloc, XMalloc)
DYNASOAR_EXPECT_ABSENT(xmalloc, XMallocOnCudaMalloc)
DYNASOAR_EXPECT_ABSENT(raw, PoolMemory)
#undef DYNASOAR_EXPECT_ABSENT

#ifdef DYNASOAR_CMALLOC_COUNT
#error "the SOA heap's headers include dynasoar/allocator/cmalloc/circular_malloc.h"
#endif

namespace {

class Cell;
using AllocatorT = dynasoar::SoaAllocator<Cell>;

class Cell : public AllocatorT::Base {
 public:
  declare_field_types(Cell, int)
  dynasoar::Field<Cell, 0> value;
  DYNASOAR_HD explicit Cell(int i) : value(i) {}
};

TEST(SoaOnly, TheHeapRunsOnItsOwnHeaders) {
  AllocatorT::Handle heap(std::uint64_t{1} << 20);
  heap.parallel_new<Cell>(100);
  EXPECT_EQ(heap.count<Cell>(), 100u);
  EXPECT_NO_THROW(heap.check_errors());
}

}  // namespace
