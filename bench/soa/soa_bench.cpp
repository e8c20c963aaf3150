// Benchmarks of the SOA object heap on the GPU (not tests); DynaSOAr paper
// Sec. 6.4 and Fig. 12c, Fig. 14a.
//
// 1. scalability: the Linux-scalability microbenchmark. One kernel in which
//    every thread allocates k 64-byte objects, a second one that frees them
//    all; memory is never touched. 16,384 threads with k = 1 .. 512 (the
//    paper's setting, 1 GiB heap), and 2^20 threads with k = 1. Baseline in
//    the same run: a bump pointer (one atomicAdd per object, cannot free),
//    the floor of any allocator.
// 2. utilisation: threads allocate 64-byte objects until `new` returns
//    nullptr. Utilisation = bytes of the objects allocated / heap bytes
//    requested (the paper's measure: the heap could hold exactly that many
//    objects), and / all device memory the handle took (blocks and bitmaps).
// 3. ablation: the scalability kernels with warp-level coalescing and
//    bitmap rotation switched off (HeapOptions), alone and together.
// 4. do_all: parallel_do over N objects with two float fields (read and
//    written) against the same computation over plain SOA arrays (the
//    bandwidth floor), N = 2^10 .. 2^26. The parallel_do time includes its
//    whole pipeline: block enumeration, snapshot of the allocation bitmaps
//    and the do-all kernel. A second baseline offsets both arrays by 64
//    bytes, the heap's alignment, to show what that alignment costs.
// 4b. layout: the same do-all on the heap's two block layouts, SOA
//    (dynasoar) and AOS (bitmap_alloc, paper Sec. 6), N = 2^10 .. 2^26: a
//    class of two floats (both read and written: AOS touches no extra
//    bytes) and one of eight floats whose do-all uses the first two (AOS
//    reads whole 32-byte objects for 8 useful bytes). Ratio: AOS time / SOA
//    time; the sums must agree between the layouts.
// 5. empty_parallel_do: the fixed cost of a parallel_do over a class with no
//    objects, as GPU time (CUDA events around the queued steps) and as the
//    host's wall-clock time of the blocking call.
// 6. registers: registers and local memory of the kernels above (the
//    bitmap's enumeration kernels are in bitmap_bench's domain).
//
// Usage: soa_bench [--quick] [--csv FILE] [--only NAME]...
//   NAME: scalability utilisation ablation do_all layout empty registers
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <dynasoar/dynasoar.h>
#include <dynasoar/debug.h>

#include "bench/support/gpu_bench.h"

namespace {

using dynasoar::bench::fmt;

// --- the classes --------------------------------------------------------------------------

class Obj64;
using ScaleAlloc = dynasoar::SoaAllocator<Obj64>;
class Obj64 : public ScaleAlloc::Base {  // 64 bytes, the paper's object
 public:
  declare_field_types(Obj64, double[8])
  Field<Obj64, 0> payload;
};
using ScaleHandle = dynasoar::AllocatorHandle<ScaleAlloc>;

class Particle;
using DoAllAlloc = dynasoar::SoaAllocator<Particle>;
class Particle : public DoAllAlloc::Base {
 public:
  declare_field_types(Particle, float, float)
  Field<Particle, 0> pos;
  Field<Particle, 1> vel;
  DYNASOAR_HD explicit Particle(int i) : pos(static_cast<float>(i % 1024)), vel(1.0f) {}
  DYNASOAR_HD void step(float dt) {
    pos += vel * dt;
    vel *= 0.999f;
  }
  DYNASOAR_HD void add_to(double* sums) {
    dynasoar::platform::atomic_fetch_add(&sums[0], static_cast<double>(pos));
    dynasoar::platform::atomic_fetch_add(&sums[1], static_cast<double>(vel));
  }
};
using DoAllHandle = dynasoar::AllocatorHandle<DoAllAlloc>;

// The classes of the layout benchmark, on a heap of layout L (in a class
// template, Field is not found through the dependent base class).
using dynasoar::Field;
template <dynasoar::soa::Layout L>
struct LayoutWorld {
  class Pair;
  class Wide;
  using Alloc = dynasoar::HeapAllocator<L, Pair, Wide>;
  using Handle = dynasoar::AllocatorHandle<Alloc>;

  class Pair : public Alloc::Base {  // 8 bytes, all of them used
   public:
    declare_field_types(Pair, float, float)
    Field<Pair, 0> pos;
    Field<Pair, 1> vel;
    DYNASOAR_HD explicit Pair(int i) : pos(static_cast<float>(i % 1024)), vel(1.0f) {}
    DYNASOAR_HD void step(float dt) {
      pos += vel * dt;
      vel *= 0.999f;
    }
    DYNASOAR_HD void add_to(double* sums) {
      dynasoar::platform::atomic_fetch_add(&sums[0], static_cast<double>(pos));
      dynasoar::platform::atomic_fetch_add(&sums[1], static_cast<double>(vel));
    }
  };

  class Wide : public Alloc::Base {  // 32 bytes, 8 of them used by step
   public:
    declare_field_types(Wide, float, float, float, float, float, float, float, float)
    Field<Wide, 0> pos;
    Field<Wide, 1> vel;
    Field<Wide, 2> a;
    Field<Wide, 3> b;
    Field<Wide, 4> c;
    Field<Wide, 5> d;
    Field<Wide, 6> e;
    Field<Wide, 7> f;
    DYNASOAR_HD explicit Wide(int i)
        : pos(static_cast<float>(i % 1024)),
          vel(1.0f),
          a(0.0f),
          b(0.0f),
          c(0.0f),
          d(0.0f),
          e(0.0f),
          f(0.0f) {}
    DYNASOAR_HD void step(float dt) {
      pos += vel * dt;
      vel *= 0.999f;
    }
    DYNASOAR_HD void add_to(double* sums) {
      dynasoar::platform::atomic_fetch_add(&sums[0], static_cast<double>(pos));
      dynasoar::platform::atomic_fetch_add(&sums[1], static_cast<double>(vel));
    }
  };
};

// --- kernels ----------------------------------------------------------------------------

constexpr unsigned kThreadsPerBlock = 256;
constexpr std::size_t kObjectBytes = 64;

// Thread t's i-th object goes to out[i * threads + t] (coalesced stores).
__global__ void heap_alloc(ScaleAlloc alloc, Obj64** out, int k) {
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int i = 0; i < k; ++i) out[static_cast<std::size_t>(i) * threads + t] = alloc.allocate<Obj64>();
}

__global__ void heap_free(ScaleAlloc alloc, Obj64** objects, int k) {
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int i = 0; i < k; ++i) alloc.free(objects[static_cast<std::size_t>(i) * threads + t]);
}

// The counter is never reset; `mask` (objects - 1, a power of two minus
// one) keeps repeated runs inside the arena.
__global__ void bump_alloc(unsigned long long* next, unsigned long long mask, char* base, void** out, int k) {
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int i = 0; i < k; ++i)
    out[static_cast<std::size_t>(i) * threads + t] = base + kObjectBytes * (atomicAdd(next, 1ull) & mask);
}

// Allocates until the heap is full (or `limit` objects per thread).
__global__ void heap_fill(ScaleAlloc alloc, unsigned long long* total, int limit) {
  unsigned long long mine = 0;
  for (int i = 0; i < limit && alloc.allocate<Obj64>() != nullptr; ++i) ++mine;
  atomicAdd(total, mine);
}

__global__ void count_null(Obj64* const* p, std::size_t n, unsigned long long* nulls) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n && p[i] == nullptr) atomicAdd(nulls, 1ull);
}

// The same computation as Particle::step over plain SOA arrays.
__global__ void soa_step(float* pos, float* vel, std::size_t n, float dt) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = vel[i];
    pos[i] += v * dt;
    vel[i] = v * 0.999f;
  }
}

__global__ void soa_init(float* pos, float* vel, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    pos[i] = static_cast<float>(static_cast<int>(i) % 1024);
    vel[i] = 1.0f;
  }
}

__global__ void soa_sum(const float* pos, const float* vel, std::size_t n, double* sums) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(&sums[0], static_cast<double>(pos[i]));
    atomicAdd(&sums[1], static_cast<double>(vel[i]));
  }
}

unsigned grid_for(std::size_t n) { return static_cast<unsigned>((n + kThreadsPerBlock - 1) / kThreadsPerBlock); }

// --- helpers -----------------------------------------------------------------------------

struct Options {
  bool quick = false;
};

using dynasoar::bench::median;

// Times two launches that follow each other (allocate, then free) with CUDA
// events: `warmup` untimed rounds, then `reps` timed ones. `check` runs
// after the first warm-up round's first launch and after its second.
struct PairTiming {
  dynasoar::bench::Timing first, second;
};
PairTiming time_pair(const std::function<void()>& first, const std::function<void()>& second,
                     const std::function<void()>& after_first, const std::function<void()>& after_second,
                     int warmup, int reps) {
  std::vector<double> a, b;
  cudaEvent_t e0, e1, e2;
  DYNASOAR_CUDA_CHECK(cudaEventCreate(&e0));
  DYNASOAR_CUDA_CHECK(cudaEventCreate(&e1));
  DYNASOAR_CUDA_CHECK(cudaEventCreate(&e2));
  for (int r = 0; r < warmup + reps; ++r) {
    DYNASOAR_CUDA_CHECK(cudaEventRecord(e0));
    first();
    DYNASOAR_CUDA_CHECK(cudaEventRecord(e1));
    if (r == 0) {
      DYNASOAR_CUDA_CHECK(cudaDeviceSynchronize());
      after_first();
      DYNASOAR_CUDA_CHECK(cudaEventRecord(e1));
    }
    second();
    DYNASOAR_CUDA_CHECK(cudaEventRecord(e2));
    DYNASOAR_CUDA_CHECK(cudaEventSynchronize(e2));
    if (r == 0) after_second();
    if (r < warmup) continue;
    float ms1 = 0, ms2 = 0;
    DYNASOAR_CUDA_CHECK(cudaEventElapsedTime(&ms1, e0, e1));
    DYNASOAR_CUDA_CHECK(cudaEventElapsedTime(&ms2, e1, e2));
    a.push_back(ms1);
    b.push_back(ms2);
  }
  DYNASOAR_CUDA_CHECK(cudaEventDestroy(e0));
  DYNASOAR_CUDA_CHECK(cudaEventDestroy(e1));
  DYNASOAR_CUDA_CHECK(cudaEventDestroy(e2));
  return {{median(a), *std::min_element(a.begin(), a.end()), reps},
          {median(b), *std::min_element(b.begin(), b.end()), reps}};
}

std::string row(const std::string& bench, const std::string& impl, std::uint64_t n, std::uint64_t per_thread,
                const dynasoar::bench::Timing& t, double value, const std::string& unit, double ratio,
                const std::string& notes) {
  return bench + "," + impl + "," + std::to_string(n) + "," + std::to_string(per_thread) + "," +
         fmt(t.median_ms, "%.5f") + "," + fmt(t.min_ms, "%.5f") + "," + std::to_string(t.reps) + "," +
         fmt(value) + "," + unit + "," + (ratio > 0 ? fmt(ratio, "%.3f") : std::string()) + "," + notes;
}

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

// --- 1 + 3. scalability and ablation ------------------------------------------------------

struct AllocFreeResult {
  PairTiming timing;
  std::uint64_t objects;
};

// One heap, `threads` x k allocations then frees, checked: no nullptr, the
// count right, every block free afterwards.
AllocFreeResult run_alloc_free(std::uint64_t heap_bytes, dynasoar::soa::HeapOptions options, std::size_t threads,
                               int k, int reps) {
  ScaleHandle heap(heap_bytes, options);
  const std::size_t n = threads * static_cast<std::size_t>(k);
  dynasoar::platform::Buffer<Obj64*> ptrs(n);
  dynasoar::platform::Buffer<unsigned long long> nulls(1);
  const unsigned grid = grid_for(threads);
  auto first = [&] { heap_alloc<<<grid, kThreadsPerBlock>>>(heap.device(), ptrs.data(), k); };
  auto second = [&] { heap_free<<<grid, kThreadsPerBlock>>>(heap.device(), ptrs.data(), k); };
  auto check_alloc = [&] {
    nulls.zero();
    count_null<<<grid_for(n), kThreadsPerBlock>>>(ptrs.data(), n, nulls.data());
    const unsigned long long z = nulls.to_vector()[0];
    if (z != 0 || heap.out_of_memory()) fail("scalability: " + std::to_string(z) + " allocations failed");
    if (heap.count<Obj64>() != n) fail("scalability: object count differs from allocations");
  };
  auto check_free = [&] {
    if (heap.allocated_blocks() != 0) fail("scalability: blocks left allocated after every object was freed");
  };
  return {time_pair(first, second, check_alloc, check_free, 2, reps), n};
}

void bench_scalability(dynasoar::bench::Csv& csv, const Options& o) {
  const std::uint64_t heap_bytes = std::uint64_t{1} << 30;
  struct Config {
    std::size_t threads;
    int k;
  };
  std::vector<Config> configs;
  for (int k = 1; k <= (o.quick ? 16 : 512); k *= 4) configs.push_back({16384, k});
  configs.push_back({16384, o.quick ? 32 : 512});
  configs.push_back({std::size_t{1} << 20, 1});
  std::sort(configs.begin(), configs.end(), [](auto a, auto b) { return a.threads * a.k < b.threads * b.k; });
  configs.erase(std::unique(configs.begin(), configs.end(),
                            [](auto a, auto b) { return a.threads == b.threads && a.k == b.k; }),
                configs.end());
  const int reps = o.quick ? 5 : 15;
  for (const Config& c : configs) {
    const std::size_t n = c.threads * static_cast<std::size_t>(c.k);
    // Baseline: bump pointer into a buffer of the same size.
    dynasoar::platform::Buffer<char> arena(n * kObjectBytes);
    dynasoar::platform::Buffer<void*> out(n);
    dynasoar::platform::Buffer<unsigned long long> next(1);
    next.zero();
    const unsigned grid = grid_for(c.threads);
    if ((n & (n - 1)) != 0) fail("scalability: object counts must be powers of two");
    const dynasoar::bench::Timing bump = dynasoar::bench::time_gpu(
        [&] { bump_alloc<<<grid, kThreadsPerBlock>>>(next.data(), n - 1, arena.data(), out.data(), c.k); }, 2,
        reps);
    const AllocFreeResult r = run_alloc_free(heap_bytes, {}, c.threads, c.k, reps);
    const std::string note = "threads=" + std::to_string(c.threads) + " baseline=bump";
    csv.line(row("alloc", "bump", n, c.k, bump, n / bump.median_ms / 1e3, "Mallocs_per_s", 1.0,
                 "threads=" + std::to_string(c.threads)));
    csv.line(row("alloc", "dynasoar", n, c.k, r.timing.first, n / r.timing.first.median_ms / 1e3, "Mallocs_per_s",
                 r.timing.first.median_ms / bump.median_ms, note));
    csv.line(row("free", "dynasoar", n, c.k, r.timing.second, n / r.timing.second.median_ms / 1e3, "Mfrees_per_s",
                 0, "threads=" + std::to_string(c.threads) + " (a bump pointer cannot free: no baseline)"));
  }
}

void bench_utilisation(dynasoar::bench::Csv& csv) {
  const std::uint64_t heap_bytes = std::uint64_t{1} << 30;
  for (std::size_t threads : {std::size_t{16384}, std::size_t{1} << 20}) {
    std::size_t free_before = 0, free_after = 0, total = 0;
    DYNASOAR_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
    ScaleHandle heap(heap_bytes);
    DYNASOAR_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
    const std::uint64_t device_bytes = free_before - free_after;
    dynasoar::platform::Buffer<unsigned long long> made(1);
    made.zero();
    cudaFuncAttributes loaded{};  // load the kernel before the timed run (lazy module loading)
    DYNASOAR_CUDA_CHECK(cudaFuncGetAttributes(&loaded, heap_fill));
    const int limit = static_cast<int>(heap_bytes / kObjectBytes / threads + 64);
    const dynasoar::bench::Timing t = dynasoar::bench::time_gpu(
        [&] { heap_fill<<<grid_for(threads), kThreadsPerBlock>>>(heap.device(), made.data(), limit); }, 0, 1);
    const unsigned long long n = made.to_vector()[0];
    if (!heap.out_of_memory()) fail("utilisation: the fill stopped before the heap was full");
    try {
      heap.check_errors();
    } catch (const dynasoar::OutOfMemory&) {
    }
    if (heap.count<Obj64>() != n) fail("utilisation: live objects differ from successful allocations");
    const std::string err = dynasoar::debug::check_consistency(heap);
    if (!err.empty()) fail("utilisation: " + err);
    const double of_heap = 100.0 * static_cast<double>(n * kObjectBytes) / static_cast<double>(heap_bytes);
    const double of_device = 100.0 * static_cast<double>(n * kObjectBytes) / static_cast<double>(device_bytes);
    const double of_blocks = 100.0 * static_cast<double>(n) / (static_cast<double>(heap.num_blocks()) * 64.0);
    csv.line(row("utilisation", "dynasoar", n, threads, t, of_heap, "percent_of_heap_bytes", 0,
                 "threads=" + std::to_string(threads) + " percent_of_device_bytes=" + fmt(of_device, "%.2f") +
                     " percent_of_block_slots=" + fmt(of_blocks, "%.3f") + " heap_bytes=" +
                     std::to_string(heap_bytes) + " device_bytes=" + std::to_string(device_bytes) +
                     " time=one fill of an empty heap"));
  }
}

void bench_ablation(dynasoar::bench::Csv& csv, const Options& o) {
  struct Variant {
    const char* name;
    bool coalesce, rotate;
  };
  const Variant variants[] = {{"coalesce+rotate", true, true},
                              {"coalesce_only", true, false},
                              {"rotate_only", false, true},
                              {"neither", false, false}};
  struct Config {
    std::size_t threads;
    int k;
  };
  const Config configs[] = {{std::size_t{1} << 20, 1}, {16384, o.quick ? 8 : 64}};
  const int reps = o.quick ? 3 : 7;
  for (const Config& c : configs) {
    const std::size_t n = c.threads * static_cast<std::size_t>(c.k);
    // Without coalescing, every thread that finds no active block opens one;
    // each block opened holds at least its opener's object, so n blocks
    // always suffice (1024 spare blocks for safety).
    const std::uint64_t heap_bytes = (n + 1024) * ScaleHandle::kBlockBytes;
    std::vector<AllocFreeResult> results;
    for (const Variant& v : variants) {
      dynasoar::soa::HeapOptions opt;
      opt.coalesce = v.coalesce;
      opt.rotate = v.rotate;
      results.push_back(run_alloc_free(heap_bytes, opt, c.threads, c.k, reps));
      std::fprintf(stderr, "ablation: %zu threads x %d, %s done\n", c.threads, c.k, v.name);
    }
    for (std::size_t i = 0; i < results.size(); ++i) {
      const std::string note = "threads=" + std::to_string(c.threads) + " baseline=coalesce+rotate";
      csv.line(row("ablation_alloc", variants[i].name, n, c.k, results[i].timing.first,
                   n / results[i].timing.first.median_ms / 1e3, "Mallocs_per_s",
                   results[i].timing.first.median_ms / results[0].timing.first.median_ms, note));
      csv.line(row("ablation_free", variants[i].name, n, c.k, results[i].timing.second,
                   n / results[i].timing.second.median_ms / 1e3, "Mfrees_per_s",
                   results[i].timing.second.median_ms / results[0].timing.second.median_ms, note));
    }
  }
}

// --- 4. do-all against plain SOA arrays ---------------------------------------------------

void bench_do_all(dynasoar::bench::Csv& csv, const Options& o) {
  const float dt = 0.01f;
  for (int lg = 10; lg <= (o.quick ? 20 : 26); lg += 2) {
    const std::size_t n = std::size_t{1} << lg;
    const int warmup = 3, reps = lg <= 20 ? 50 : 20;
    // Twice the blocks the objects need (parallel_new fills whole blocks,
    // so most stay free; the fragmentation is reported).
    DoAllHandle heap(2 * DoAllHandle::bytes_for<Particle>(n) + 64 * DoAllHandle::kBlockBytes);
    heap.parallel_new<Particle>(n);
    const dynasoar::TypeStatistics st = heap.statistics<Particle>()[0];
    const dynasoar::bench::Timing ours = dynasoar::bench::time_gpu(
        [&] { heap.parallel_do_async<Particle, &Particle::step>(dt); }, warmup, reps, heap.stream().handle);

    // Plain arrays: 256-byte aligned (cudaMalloc), and offset by 64 bytes.
    dynasoar::platform::Buffer<float> raw(2 * n + 64);
    std::vector<dynasoar::bench::Timing> base;
    std::vector<double> base_sums;
    for (std::size_t offset : {std::size_t{0}, std::size_t{16}}) {  // floats: 0 or 64 bytes
      float* pos = raw.data() + offset;
      float* vel = raw.data() + n + 32 + offset;  // n floats later, again 64-byte aligned + offset
      soa_init<<<grid_for(n), kThreadsPerBlock>>>(pos, vel, n);
      base.push_back(dynasoar::bench::time_gpu(
          [&] { soa_step<<<grid_for(n), kThreadsPerBlock>>>(pos, vel, n, dt); }, warmup, reps));
      if (offset == 0) {
        dynasoar::platform::Buffer<double> sums(2);
        sums.zero();
        soa_sum<<<grid_for(n), kThreadsPerBlock>>>(pos, vel, n, sums.data());
        base_sums = sums.to_vector();
      }
    }
    // Same number of steps on both sides. Every velocity is 0.999^steps, the
    // same float on both sides, and n of them sum exactly in a double: one
    // object stepped once too often or too rarely changes the sum. The
    // positions agree only within a tolerance (the compiler may contract
    // pos + vel * dt into an FMA on one side).
    dynasoar::platform::Buffer<double> sums(2);
    sums.zero();
    heap.parallel_do<Particle, &Particle::add_to>(sums.data());
    const std::vector<double> ours_sums = sums.to_vector();
    if (heap.count<Particle>() != n) fail("do_all: objects were lost");
    if (ours_sums[1] != base_sums[1])
      fail("do_all: velocity sum " + fmt(ours_sums[1], "%.17g") + " differs from the arrays' " +
           fmt(base_sums[1], "%.17g") + ": some objects were stepped a different number of times");
    if (std::fabs(ours_sums[0] - base_sums[0]) > 1e-4 * std::fabs(base_sums[0]))
      fail("do_all: position sum " + fmt(ours_sums[0], "%.17g") + " differs from the arrays' " +
           fmt(base_sums[0], "%.17g"));

    const double bytes = 16.0 * static_cast<double>(n);  // two floats read and written
    auto gbps = [&](const dynasoar::bench::Timing& t) { return bytes / (t.median_ms * 1e6); };
    csv.line(row("do_all", "soa_arrays", n, 0, base[0], gbps(base[0]), "GB_per_s", 1.0, "baseline"));
    csv.line(row("do_all", "soa_arrays_offset64", n, 0, base[1], gbps(base[1]), "GB_per_s",
                 base[1].median_ms / base[0].median_ms, "baseline=soa_arrays"));
    csv.line(row("do_all", "dynasoar", n, 0, ours, gbps(ours), "GB_per_s", ours.median_ms / base[0].median_ms,
                 "baseline=soa_arrays blocks=" + std::to_string(st.blocks) +
                     " fragmentation=" + fmt(st.fragmentation(), "%.4f") + " checksum_ok"));
  }
}

// --- 4b. the heap's two block layouts ------------------------------------------------------

struct LayoutRun {
  dynasoar::bench::Timing timing;
  std::vector<double> sums;
};

// n objects of class C of World's heap, stepped by timed do-alls, then summed.
template <class World, class C>
LayoutRun run_layout(std::size_t n, int warmup, int reps, float dt) {
  using Handle = typename World::Handle;
  Handle heap(2 * Handle::template bytes_for<C>(n) + 64 * Handle::kBlockBytes);
  heap.template parallel_new<C>(n);
  LayoutRun r;
  r.timing = dynasoar::bench::time_gpu([&] { heap.template parallel_do_async<C, &C::step>(dt); },
                                       warmup, reps, heap.stream().handle);
  dynasoar::platform::Buffer<double> sums(2);
  sums.zero();
  heap.template parallel_do<C, &C::add_to>(sums.data());
  r.sums = sums.to_vector();
  if (heap.template count<C>() != n) fail("layout: objects were lost");
  return r;
}

template <template <class> class Pick>
void layout_rows(dynasoar::bench::Csv& csv, const char* name, std::size_t n, int warmup, int reps) {
  using Soa = LayoutWorld<dynasoar::soa::Layout::kSoa>;
  using Aos = LayoutWorld<dynasoar::soa::Layout::kAos>;
  const float dt = 0.01f;
  const LayoutRun soa = run_layout<Soa, typename Pick<Soa>::type>(n, warmup, reps, dt);
  const LayoutRun aos = run_layout<Aos, typename Pick<Aos>::type>(n, warmup, reps, dt);
  // The same steps on both: equal velocities exactly, positions within a
  // tolerance (FMA contraction may differ between the two kernels).
  if (aos.sums[1] != soa.sums[1] ||
      std::fabs(aos.sums[0] - soa.sums[0]) > 1e-4 * std::fabs(soa.sums[0]))
    fail(std::string("layout: ") + name + ": the layouts' sums differ");
  const double bytes = 16.0 * static_cast<double>(n);  // two floats read and written
  auto gbps = [&](const dynasoar::bench::Timing& t) { return bytes / (t.median_ms * 1e6); };
  const std::string note = std::string("class=") + name;
  csv.line(row("layout", "dynasoar", n, 0, soa.timing, gbps(soa.timing), "useful_GB_per_s", 1.0,
               note + " baseline"));
  csv.line(row("layout", "bitmap_alloc", n, 0, aos.timing, gbps(aos.timing), "useful_GB_per_s",
               aos.timing.median_ms / soa.timing.median_ms,
               note + " baseline=dynasoar checksum_ok"));
}

template <class W>
struct PickPair {
  using type = typename W::Pair;
};
template <class W>
struct PickWide {
  using type = typename W::Wide;
};

void bench_layout(dynasoar::bench::Csv& csv, const Options& o) {
  for (int lg = 10; lg <= (o.quick ? 20 : 26); lg += 2) {
    const std::size_t n = std::size_t{1} << lg;
    const int warmup = 3, reps = lg <= 20 ? 50 : 20;
    layout_rows<PickPair>(csv, "two_floats_both_used", n, warmup, reps);
    layout_rows<PickWide>(csv, "eight_floats_two_used", n, warmup, reps);
  }
}

// --- 5. fixed cost -----------------------------------------------------------------------

void bench_empty_do_all(dynasoar::bench::Csv& csv, const Options& o) {
  const int reps = o.quick ? 50 : 500;
  for (std::uint64_t heap_bytes : {std::uint64_t{1} << 20, std::uint64_t{1} << 30, std::uint64_t{16} << 30}) {
    DoAllHandle heap(heap_bytes);
    const float dt = 0.01f;
    const dynasoar::bench::Timing gpu = dynasoar::bench::time_gpu(
        [&] { heap.parallel_do_async<Particle, &Particle::step>(dt); }, 20, reps, heap.stream().handle);
    const dynasoar::bench::Timing host = dynasoar::bench::time_host(
        [&] { heap.parallel_do<Particle, &Particle::step>(dt); }, [] {}, 20, reps);
    // Diagnostics of the two figures above (not targets): the host's time to
    // queue the steps alone (the GPU waits for them between the events when
    // it is idle), and the GPU time per parallel_do when ten are queued
    // back to back (the GPU's own cost once the host runs ahead of it).
    const dynasoar::bench::Timing queue = dynasoar::bench::time_host(
        [&] { heap.parallel_do_async<Particle, &Particle::step>(dt); },
        [&] { dynasoar::platform::synchronize(heap.stream()); }, 20, reps);
    constexpr int kBackToBack = 10;
    dynasoar::bench::Timing ten = dynasoar::bench::time_gpu(
        [&] {
          for (int i = 0; i < kBackToBack; ++i) heap.parallel_do_async<Particle, &Particle::step>(dt);
        },
        2, reps / 5, heap.stream().handle);
    ten.median_ms /= kBackToBack;
    ten.min_ms /= kBackToBack;
    const std::string note = "heap_bytes=" + std::to_string(heap_bytes);
    csv.line(row("empty_parallel_do", "gpu_events", heap.num_blocks(), 0, gpu, gpu.median_ms * 1e3, "us", 0,
                 note + " parallel_do_async between CUDA events"));
    csv.line(row("empty_parallel_do", "host_wall", heap.num_blocks(), 0, host, host.median_ms * 1e3, "us", 0,
                 note + " blocking parallel_do incl. sync and error check"));
    csv.line(row("empty_parallel_do", "host_enqueue", heap.num_blocks(), 0, queue, queue.median_ms * 1e3, "us", 0,
                 note + " parallel_do_async alone (diagnostic)"));
    csv.line(row("empty_parallel_do", "gpu_events_10_queued", heap.num_blocks(), 0, ten, ten.median_ms * 1e3, "us",
                 0, note + " ten parallel_do_async between CUDA events, per call (diagnostic)"));
  }
}

// --- 6. registers -----------------------------------------------------------------------

template <class Kernel>
void registers(dynasoar::bench::Csv& csv, const std::string& name, Kernel* kernel) {
  cudaFuncAttributes a{};
  DYNASOAR_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  csv.line("registers," + name + ",,,,,," + std::to_string(a.numRegs) + ",registers,," +
           "local_bytes=" + std::to_string(a.localSizeBytes) + " max_threads_per_block=" +
           std::to_string(a.maxThreadsPerBlock));
}

void bench_registers(dynasoar::bench::Csv& csv) {
  namespace soa = dynasoar::soa;
  namespace detail = dynasoar::platform::detail;
  using NoArgs = decltype(dynasoar::platform::pack_args());
  using FloatArg = decltype(dynasoar::platform::pack_args(0.0f));
  registers(csv, "heap_alloc", heap_alloc);
  registers(csv, "heap_fill", heap_fill);
  registers(csv, "heap_free", heap_free);
  registers(csv, "bump_alloc", bump_alloc);
  registers(csv, "parallel_new<Particle>: claim blocks",
            detail::parallel_for_kernel<dynasoar::platform::kBlockThreads, dynasoar::soa::detail::ClaimFullBlocks>);
  registers(csv, "parallel_new<Particle>: construct",
            detail::parallel_for_kernel<dynasoar::platform::kBlockThreads,
                                        dynasoar::soa::detail::ConstructInBlocks<DoAllAlloc, Particle, NoArgs,
                                                                         DoAllAlloc::type_id<Particle>(),
                                                                         DoAllAlloc::Registry::kCapacity<Particle>>>);
  registers(csv, "enumerate", detail::parallel_workers_kernel<dynasoar::detail::EnumerateLevel>);
  registers(csv, "snapshot", detail::parallel_for_early_kernel<dynasoar::platform::kBlockThreads, soa::detail::SnapshotBlocks>);
  registers(csv, "list_and_snapshot",
            detail::parallel_for_early_kernel<soa::detail::kListThreads, soa::detail::ListAndSnapshotBlocks>);
  registers(csv, "do_all<Particle::step>",
            detail::parallel_for_early_kernel<soa::kDoAllBlockThreads, soa::detail::DoAll<Particle, &Particle::step, FloatArg, 0, 64>>);
  registers(csv, "soa_step(baseline)", soa_step);
}

}  // namespace

int main(int argc, char** argv) {
  dynasoar::bench::Args args;
  dynasoar::bench::Selection only{
      "--only",
      {"scalability", "utilisation", "ablation", "do_all", "layout", "empty", "registers"},
      {}};
  if (!dynasoar::bench::parse_args(argc, argv, args, {&only})) return 2;
  Options o;
  o.quick = args.quick;
  const std::string csv_path = args.csv;
  auto want = [&](const char* name) { return only.wants(name); };
  try {
    dynasoar::bench::Csv csv(
        csv_path,
        {"benchmark: soa heap", "date: " + dynasoar::bench::utc_now(),
         "device: " + dynasoar::bench::device_description(),
         "command: " + dynasoar::bench::command_line(argc, argv),
         "timing: CUDA events, warm-up runs untimed, median of reps (host_wall: steady_clock)",
         "columns: n = objects (blocks of the heap for empty_parallel_do); per_thread = allocations per "
         "thread (threads for utilisation); value in unit; ratio = median time / the baseline's median "
         "time (baseline in notes; > 1 means slower)"},
        "bench,impl,n,per_thread,median_ms,min_ms,reps,value,unit,ratio,notes");
    if (want("registers")) bench_registers(csv);
    if (want("empty")) bench_empty_do_all(csv, o);
    if (want("do_all")) bench_do_all(csv, o);
    if (want("layout")) bench_layout(csv, o);
    if (want("scalability")) bench_scalability(csv, o);
    if (want("utilisation")) bench_utilisation(csv);
    if (want("ablation")) bench_ablation(csv, o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soa_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
