// The object API on every back end (not tests): the same class and the same
// operations through dynasoar::backend::*, as the examples will use them.
//
// 1. utilisation: 1 024 threads allocate 64-byte objects (8 doubles) until
//    `new` returns nullptr, in a pool of 64 MiB (for CudaMalloc its device
//    heap, sized once, first, to the same 64 MiB). Utilisation = object bytes / pool bytes.
//    On the byte allocators each object also carries an 8-byte header and
//    the allocator's chunk header, and the Eq. 1 pre-split of the circular
//    allocators leaves chunks too small for an object.
// 2. do_all: parallel_new of 2^18 objects, then a blocking parallel_do that
//    reads and writes one field of each (median of 10 calls, host wall time
//    of the whole call), and for the byte allocators the part of it spent in
//    the registry's compaction (enumeration_seconds, as the paper reports).
//
// 3. registers: registers of a kernel with one `new` and one `destroy`.
//
// Order per back end: registers, do_all (which destroys its objects at the
// end), utilisation (which leaves the pool full: CUDA's device heap outlives
// its handle, so a do_all after it found no room).
// Usage: backend_bench [--quick] [--csv FILE] [--only registers|utilisation|do_all] [--backend
// NAME]...
#include <cuda_runtime.h>
#include <dynasoar/dynasoar.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "bench/support/gpu_bench.h"

namespace {

using dynasoar::bench::fmt;

template <class Backend>
struct World {
  class Obj;
  using Alloc = typename Backend::template Allocator<Obj>;
  using Handle = dynasoar::AllocatorHandle<Alloc>;
  class Obj : public Alloc::Base {
   public:
    declare_field_types(Obj, double[8]) dynasoar::Field<Obj, 0> payload;
    DYNASOAR_HD explicit Obj(int i) {
      for (int k = 0; k < 8; ++k) payload[k] = i + k;
    }
    DYNASOAR_HD void touch(double by) { payload[0] += by; }
    DYNASOAR_HD void destroy_self(Alloc a) { dynasoar::destroy(a, this); }
  };
};
constexpr std::uint64_t kObjectBytes = 64;
constexpr std::uint64_t kPoolBytes = std::uint64_t{64} << 20;  // every pool, and CUDA's device heap

template <class W>
__global__ void fill(typename W::Alloc alloc, unsigned long long* made, int limit) {
  unsigned long long mine = 0;
  for (int i = 0; i < limit; ++i) {
    auto* p = new (alloc) typename W::Obj(i);
    if (p == nullptr) break;
    ++mine;
  }
  atomicAdd(made, mine);
}

// One `new` and one `destroy` per thread: the register cost of the object
// API's allocation on each back end (Vinkler & Havran 2014, Table 1's concern).
template <class W>
__global__ void one_new_destroy(typename W::Alloc alloc, int* sink) {
  auto* p = new (alloc) typename W::Obj(1);
  if (p == nullptr) {
    *sink = 1;
    return;
  }
  dynasoar::destroy(alloc, p);
}

template <class Backend>
void registers(dynasoar::bench::Csv& csv) {
  cudaFuncAttributes a{};
  DYNASOAR_CUDA_CHECK(cudaFuncGetAttributes(&a, one_new_destroy<World<Backend>>));
  csv.line(std::string("registers,") + Backend::kName + ",,," + std::to_string(a.numRegs) +
           ",registers,one_new_destroy local_bytes=" + std::to_string(a.localSizeBytes));
}

template <class Backend>
void utilisation(dynasoar::bench::Csv& csv, std::uint64_t pool_bytes) {
  using W = World<Backend>;
  typename W::Handle heap(pool_bytes);
  dynasoar::platform::Buffer<unsigned long long> made(1);
  made.zero();
  const int threads = 1024;
  const auto start = std::chrono::steady_clock::now();
  fill<W>
      <<<threads / 256, 256>>>(heap.device(), made.data(),
                               static_cast<int>(heap.heap_bytes() / kObjectBytes / threads + 64));
  DYNASOAR_CUDA_CHECK(cudaDeviceSynchronize());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const unsigned long long n = made.to_vector()[0];
  const bool full = heap.out_of_memory();
  try {
    heap.check_errors();
  } catch (const dynasoar::OutOfMemory&) {
  }
  const std::uint64_t counted = heap.template count<typename W::Obj>();
  const double pct =
      100.0 * static_cast<double>(n * kObjectBytes) / static_cast<double>(heap.heap_bytes());
  csv.line(std::string("utilisation,") + Backend::kName + "," + std::to_string(n) + "," +
           fmt(ms, "%.3f") + "," + fmt(pct, "%.2f") + ",percent_of_pool,pool_bytes=" +
           std::to_string(heap.heap_bytes()) + (full ? " stopped_by_nullptr" : " NOT_FULL") +
           (counted == n ? " count_ok" : " COUNT_MISMATCH"));
}

template <class Backend>
void do_all(dynasoar::bench::Csv& csv, bool quick) {
  using W = World<Backend>;
  // 2^18 objects: 256 bytes each in the 64 MiB pool, room for every back
  // end's headers (2^19 did not fit CUDA's device heap on the H100).
  const std::size_t n = quick ? (std::size_t{1} << 16) : (std::size_t{1} << 18);
  typename W::Handle heap(kPoolBytes);
  heap.template parallel_new<typename W::Obj>(n);
  double enumeration_before = 0;
  if constexpr (requires { heap.enumeration_seconds(); })
    enumeration_before = heap.enumeration_seconds();
  std::vector<double> ms;
  const int reps = 10;
  for (int r = 0; r <= reps; ++r) {  // the first call is a warm-up
    const auto start = std::chrono::steady_clock::now();
    heap.template parallel_do<typename W::Obj, &W::Obj::touch>(1.0);
    const double t =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (r > 0) ms.push_back(t);
  }
  std::string notes = "objects=" + std::to_string(heap.template count<typename W::Obj>());
  if constexpr (requires { heap.enumeration_seconds(); })
    notes += " enumeration_ms_per_call=" +
             fmt((heap.enumeration_seconds() - enumeration_before) * 1e3 / (reps + 2), "%.4f");
  csv.line(std::string("do_all,") + Backend::kName + "," + std::to_string(n) + "," +
           fmt(dynasoar::bench::median(ms), "%.4f") + ",,ms_host_wall_median," + notes);
  // CUDA's device heap outlives the handle: give its memory back for the
  // utilisation test that follows.
  heap.template parallel_do<typename W::Obj, &W::Obj::destroy_self>(heap.device());
}

template <class Backend>
void run(dynasoar::bench::Csv& csv, const dynasoar::bench::Selection& only,
         const dynasoar::bench::Selection& backends, bool quick, std::uint64_t pool_bytes) {
  if (!backends.wants(Backend::kName)) return;
  std::fprintf(stderr, "backend_bench: %s\n", Backend::kName);
  // A back end that fails a test gets a "failed" line; the others still run.
  const auto guarded = [&](const char* test, auto&& body) {
    try {
      body();
    } catch (const dynasoar::OutOfMemory& e) {
      csv.line(std::string(test) + "," + Backend::kName + ",,,,failed," + e.what());
    }
  };
  if (only.wants("registers")) registers<Backend>(csv);
  // The utilisation test fills the pool and leaves it full (CUDA's device
  // heap stays full after its handle is gone), so it comes last.
  if (only.wants("do_all")) guarded("do_all", [&] { do_all<Backend>(csv, quick); });
  if (only.wants("utilisation")) guarded("utilisation", [&] { utilisation<Backend>(csv, pool_bytes); });
}

}  // namespace

int main(int argc, char** argv) {
  namespace backend = dynasoar::backend;
  dynasoar::bench::Args args;
  dynasoar::bench::Selection only{"--only", {"registers", "utilisation", "do_all"}, {}};
  dynasoar::bench::Selection backends{"--backend", {}, {}};
  dynasoar::model::for_each_type(backend::All{}, [&](auto b) { backends.choices.push_back(decltype(b)::type::kName); });
  if (!dynasoar::bench::parse_args(argc, argv, args, {&only, &backends})) return 2;
  try {
    dynasoar::bench::Csv csv(
        args.csv,
        {"benchmark: object API per back end", "date: " + dynasoar::bench::utc_now(),
         "device: " + dynasoar::bench::device_description(),
         "command: " + dynasoar::bench::command_line(argc, argv),
         "utilisation: value = object bytes / pool bytes in percent, time = host wall ms of "
         "the fill; do_all: median host wall ms of a blocking parallel_do"},
        "bench,backend,n,ms,value,unit,notes");
    const std::uint64_t pool = kPoolBytes;
    // CUDA's device heap is sized once, before its first allocating kernel: it goes first.
    run<backend::CudaMalloc>(csv, only, backends, args.quick, pool);
    dynasoar::model::for_each_type(backend::All{}, [&](auto b) {
      using B = typename decltype(b)::type;
      if constexpr (!std::is_same_v<B, backend::CudaMalloc>) run<B>(csv, only, backends, args.quick, pool);
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "backend_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
