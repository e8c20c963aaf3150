// expect: is no raw allocator
//
// A byte back end needs a raw allocator (dynasoar/allocator/raw/raw_allocator.h):
// one whose malloc has no free to go with it cannot be a back end, and the
// back end says so rather than failing deep inside the object registry.
#include <dynasoar/dynasoar.h>

#include <cstdint>

struct MallocOnly;

// Its pool: everything a raw allocator's Pool needs, so that only the
// missing free() keeps MallocOnly from being a raw allocator.
struct MallocOnlyPool {
  MallocOnlyPool(std::uint64_t, const dynasoar::raw::PoolOptions&, dynasoar::platform::Stream,
                 MallocOnly&) {}
  std::uint64_t bytes() const { return 0; }
};

struct MallocOnly {
  static constexpr const char* kName = "MallocOnly";
  static constexpr const char* kBackend = "malloc_only";
  static constexpr bool kCanFree = false;
  using Pool = MallocOnlyPool;
  unsigned* error;
  DYNASOAR_HD void* malloc(std::uint64_t) const { return nullptr; }
};

int main() { return dynasoar::backend::Bytes<MallocOnly>::kFrees ? 1 : 0; }
