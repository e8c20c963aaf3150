// CMalloc without objects: a pool of raw memory that device code uses like
// malloc/free. One parallel_for allocates and fills, a second one checks and
// frees; the host reads the pool's error flag and its fragmentation.
// Read next: docs/guide/backends.md, section "The raw CMalloc API", then
// docs/design/cmalloc.md.
#include <dynasoar/allocator/cmalloc/circular_malloc.h>
#include <dynasoar/allocator/raw/pool_handle.h>
#include <dynasoar/dynasoar.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace platform = dynasoar::platform;
using platform::atomic_fetch_add;
using ull = unsigned long long;
using Raw = dynasoar::cmalloc::CMalloc;  // or CFMalloc, CMMalloc, CFMMalloc (circular ones)
constexpr std::size_t kThreads = std::size_t{1} << 15;  // host: 2^14 a thread, so two threads
constexpr unsigned kPerThread = 3;

// Request k of thread t: 2 to 12 words; word j > 0 holds pattern(t, j). Word
// 0 holds the size, so that fragmentation() learns what each chunk was asked for.
DYNASOAR_HD unsigned words_of(unsigned t, unsigned k) { return 2 + (t * 3 + k) % 11; }
DYNASOAR_HD unsigned pattern(unsigned t, unsigned j) { return t * 31 + j; }

// Kernel bodies as functors: device code in the CUDA build, plain calls on
// host threads in the host build.
struct Fill {
  Raw alloc;         // trivially copyable: kernels get it by value
  unsigned** slots;  // per request: where its memory is
  DYNASOAR_HD void operator()(std::size_t i) const {
    const auto t = static_cast<unsigned>(i);
    for (unsigned k = 0; k < kPerThread; ++k) {
      const unsigned n = words_of(t, k);
      auto* p = static_cast<unsigned*>(alloc.malloc(n * sizeof(unsigned)));
      slots[i * kPerThread + k] = p;
      if (p == nullptr) continue;  // the pool raised its flag; check_errors() reports it
      p[0] = n;                    // fill: word 0 the size, then the pattern
      for (unsigned j = 1; j < n; ++j) p[j] = pattern(t, j);
    }
  }
};

struct CheckAndFree {
  Raw alloc;
  unsigned** slots;
  ull* out;  // 0: requests lost, not 16-byte aligned or overwritten; 1: sum of all words
  DYNASOAR_HD void operator()(std::size_t i) const {
    const auto t = static_cast<unsigned>(i);
    for (unsigned k = 0; k < kPerThread; ++k) {
      unsigned* p = slots[i * kPerThread + k];
      const unsigned n = words_of(t, k);
      if (p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 16 != 0 || p[0] != n) {
        atomic_fetch_add(&out[0], 1ull);
        continue;
      }
      ull sum = n;
      for (unsigned j = 1; j < n; ++j) {
        if (p[j] != pattern(t, j)) atomic_fetch_add(&out[0], 1ull);
        sum += p[j];
      }
      atomic_fetch_add(&out[1], sum);
      alloc.free(p);  // any thread may free what another allocated
    }
  }
};

int main() {
  // 16 MiB, pre-split into chunks (Eq. 1); the handle owns them, device() hands them out.
  dynasoar::raw::PoolHandle<Raw> pool(std::uint64_t{16} << 20);
  platform::Buffer<unsigned*> slots(kThreads * kPerThread);
  platform::Buffer<ull> out(2);
  out.zero();

  platform::parallel_for(kThreads, Fill{pool.device(), slots.data()});
  platform::synchronize();  // the host walks the chunk list only while no kernel runs
  // Eq. 2 (internal fragmentation) needs the bytes each chunk was asked for.
  const auto asked = [](const unsigned char* data) {
    unsigned n = 0;
    std::memcpy(&n, data, sizeof n);
    return std::uint64_t{n} * sizeof(unsigned);
  };
  const dynasoar::cmalloc::PoolFragmentation full = pool.fragmentation(asked);  // Eq. 2, 3
  std::printf("%llu chunks in use, internal fragmentation %.2f, external %.2f\n",
              static_cast<ull>(full.used_chunks), full.internal, full.external);

  platform::parallel_for(kThreads, CheckAndFree{pool.device(), slots.data(), out.data()});
  const ull used_after = pool.fragmentation(asked).used_chunks;  // waits for the kernel

  // A lambda works as well (nvcc needs --extended-lambda, as the project's
  // CMake passes). One request larger than the pool: nullptr and the flag.
  const Raw alloc = pool.device();
  const std::uint64_t too_much = 2 * pool.bytes();
  platform::parallel_for(
      1, [alloc, too_much] DYNASOAR_HD(std::size_t) { (void)alloc.malloc(too_much); });
  bool threw = false;
  try {
    pool.check_errors();  // throws OutOfMemory once, and clears the flag
  } catch (const dynasoar::OutOfMemory& e) {
    threw = true;
    std::printf("as intended: %s\n", e.what());
  }

  ull want = 0;
  for (unsigned t = 0; t < kThreads; ++t)
    for (unsigned k = 0; k < kPerThread; ++k)
      for (unsigned j = 0, n = words_of(t, k); j < n; ++j) want += j == 0 ? n : pattern(t, j);
  const std::vector<ull> got = out.to_vector();
  const bool ok = got == std::vector<ull>{0, want} && used_after == 0 &&
                  full.used_chunks == kThreads * kPerThread && threw && !pool.out_of_memory();
  std::printf("checked %zu allocations (aligned, intact, sum %llu of %llu), all freed, flag: %s\n",
              kThreads * kPerThread, got[1], want, ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
