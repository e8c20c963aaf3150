// Benchmarks of the raw allocators of the CMalloc family and of CUDA's device
// malloc on the GPU (not tests); Vinkler & Havran 2014 Sec. 6-7.
//
// 1. survey: one million allocations per launch, freed by a second launch
//    (where the allocator can free): 16-byte requests one per thread,
//    16-byte requests one per warp (lane 0 of 2^25 threads), 1 KiB
//    requests one per thread and one per warp (the survey of the field's
//    allocators has these four cases). Pool of 4 GiB for every allocator.
// 2. generic: the tests of Sec. 6 with the settings of Table 2, the block
//    count scaled to the GPU (one block of 256 threads per multiprocessor;
//    lane 0 of each warp allocates): [AD] allocate then free, payload 16 B to
//    128 KiB; [ACD] ten allocations per thread, then ten frees; [P] ten
//    launches that allocate with probability 0.75 when holding nothing and
//    free with probability 0.75 when holding something. Pool of 2 GiB.
// 3. registers: registers of a kernel with one allocation and one free per
//    thread (the paper's Table 1, uncoalesced column).
// 4. fill: 1 024 threads request 72 bytes (backend_bench's 64-byte object
//    and its header) until malloc returns nullptr, in a fresh 64 MiB pool
//    (--fill-mib: other sizes, to show how the time grows with the pool):
//    one timed fill to exhaustion (it cannot be repeated on a full pool),
//    with the utilisation reached. Not for CUDA malloc, whose heap is sized
//    once for the survey (backend_bench fills it), nor AWMalloc, which wraps.
// 5. magnify: Huang et al. 2013's Fig. 2 microbenchmark, for the throughput
//    magnification of XMalloc over the allocator under it. 2^20 worker
//    threads each allocate an int, write it and free it, in one launch; 1,
//    2, 4, ..., 32 workers per warp (the other lanes idle). A fresh pool
//    for each count: the first launch meets empty queues, as the paper's
//    heap was initially empty (cold_ms in the notes); the median is of the
//    launches after it. XMallocOnCudaMalloc is XMalloc in front of CUDA's
//    malloc, the paper's set-up.
//
// Every launch that gets nullptr is reported in the notes column (failed=N);
// a row with failures does not meet any target.
//
// Built with DYNASOAR_CMALLOC_STATS (the target cmalloc_probe), the survey
// rows of the circular allocators also say what the walks of the last timed
// launch cost, per request: walks, chunks visited (hops), chunks passed
// used or too small (busy), jumps to the offset, stale headers met (invalid), group walks that
// fell back to one walk per lane, and merges of the frees. The counters are
// atomics and slow the launches down: time with cmalloc_bench.
//
// Usage: cmalloc_bench [--quick] [--csv FILE] [--only survey|generic|registers|fill|magnify]...
//                      [--allocator NAME]... [--case NAME]... (survey cases)
//                      [--heaps-per-sm N]... (multi-offset survey pools; default 1)
//                      [--fill-mib 4|8|16|32|64|256|1024]... (pools of the fill; default 64)
//                      [--super-block-mib 8|32|64|128|512]... (ScatterAlloc and XMalloc
//                      survey and fill pools with super blocks of that size, besides the
//                      default)
//                      [--active-window 1|4|8|16|32|64]... (ScatterAlloc's survey and fill
//                      pools with that many active super blocks)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "dynasoar/allocator/raw/pool_handle.h"
#include "dynasoar/allocator/xmalloc/xmalloc.h"
#include "dynasoar/backend.h"
#include "bench/support/gpu_bench.h"

namespace {

using namespace dynasoar::cmalloc;
using dynasoar::raw::PoolHandle;
using dynasoar::raw::PoolOptions;
using dynasoar::bench::fmt;
using dynasoar::bench::Timing;

constexpr unsigned kThreadsPerBlock = 256;

// --- kernels ----------------------------------------------------------------------------

// Thread t (or lane 0 of warp t with per_warp) allocates `bytes` k times.
template <class Alloc>
__global__ void alloc_kernel(Alloc a, void** out, std::uint64_t bytes, bool per_warp, int k,
                             unsigned long long* failed) {
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (per_warp && t % 32 != 0) return;
  const std::size_t slot = per_warp ? t / 32 : t;
  const std::size_t stride = per_warp ? static_cast<std::size_t>(gridDim.x) * blockDim.x / 32
                                      : static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (int i = 0; i < k; ++i) {
    void* p = a.malloc(bytes);
    if (p == nullptr) atomicAdd(failed, 1ull);
    out[static_cast<std::size_t>(i) * stride + slot] = p;
  }
}

template <class Alloc>
__global__ void free_kernel(Alloc a, void* const* ptrs, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n && ptrs[i] != nullptr) a.free(ptrs[i]);
}

// [AD] and [ACD]: lane 0 of each warp allocates k times, then frees.
template <class Alloc>
__global__ void cycle_kernel(Alloc a, std::uint64_t bytes, int k, unsigned long long* failed) {
  if (threadIdx.x % 32 != 0) return;
  void* held[100];
  for (int i = 0; i < k; ++i) {
    held[i] = a.malloc(bytes);
    if (held[i] == nullptr) atomicAdd(failed, 1ull);
  }
  for (int i = 0; i < k; ++i)
    if (held[i] != nullptr) a.free(held[i]);
}

// [P]: one launch of the probability test; `slot` keeps each warp's memory
// between launches.
template <class Alloc>
__global__ void probability_kernel(Alloc a, void** slot, std::uint64_t bytes, unsigned launch,
                                   unsigned long long* counts /* allocs, frees, failed */) {
  if (threadIdx.x % 32 != 0) return;
  const std::size_t w = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::uint64_t r = dynasoar::platform::mix64(w * 0x9E3779B97F4A7C15ull + launch);
  const bool coin = (r >> 40) % 4 != 0;  // probability 0.75
  if (slot[w] == nullptr) {
    if (coin) {
      slot[w] = a.malloc(bytes);
      atomicAdd(&counts[slot[w] != nullptr ? 0 : 2], 1ull);
    }
  } else if (coin) {
    a.free(slot[w]);
    slot[w] = nullptr;
    atomicAdd(&counts[1], 1ull);
  }
}

// One malloc and one free per thread (Table 1); kPaper: the uncoalesced
// malloc of Vinkler & Havran 2014 (circular allocators).
template <class Alloc, bool kPaper>
__global__ void one_alloc_free(Alloc a, std::uint64_t bytes, int* sink) {
  void* p = nullptr;
  if constexpr (kPaper)
    p = a.malloc_uncoalesced(bytes);
  else
    p = a.malloc(bytes);
  if (p != nullptr) {
    *static_cast<int*>(p) = 1;
    a.free(p);
  } else {
    *sink = 1;
  }
}

// Paper 002's Fig. 2: the first `per_warp` lanes of each warp are workers
// (of `workers` in all); each allocates an int, writes it and frees it.
template <class Alloc>
__global__ void worker_kernel(Alloc a, unsigned per_warp, std::size_t workers,
                              unsigned long long* failed) {
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const auto lane = static_cast<unsigned>(t % 32);
  const std::size_t worker = t / 32 * per_warp + lane;
  if (lane >= per_warp || worker >= workers) return;
  auto* p = static_cast<volatile int*>(a.malloc(sizeof(int)));
  if (p == nullptr) {
    atomicAdd(failed, 1ull);
    return;
  }
  *p = static_cast<int>(worker);
  a.free(const_cast<int*>(p));
}

// Allocates `bytes` until malloc returns nullptr (or `limit` times).
template <class Alloc>
__global__ void fill_kernel(Alloc a, std::uint64_t bytes, int limit, unsigned long long* made) {
  unsigned long long mine = 0;
  for (int i = 0; i < limit && a.malloc(bytes) != nullptr; ++i) ++mine;
  atomicAdd(made, mine);
}

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>((n + kThreadsPerBlock - 1) / kThreadsPerBlock);
}

using dynasoar::bench::median;

#ifdef DYNASOAR_CMALLOC_STATS
void reset_stats() {
  unsigned long long zero[stats::kCount] = {};
  DYNASOAR_CUDA_CHECK(cudaMemcpyToSymbol(stats::counters, zero, sizeof zero));
}
// The counters per request of the last launch, for the notes column.
std::string stats_notes(std::uint64_t requests) {
  unsigned long long c[stats::kCount] = {};
  DYNASOAR_CUDA_CHECK(cudaMemcpyFromSymbol(c, stats::counters, sizeof c));
  const char* names[stats::kCount] = {"walks",     "hops",   "busy",       "jumps",       "invalid",
                                      "fallbacks", "merges", "run_merges", "failed_walks", "walk_merges"};
  std::string s;
  for (int i = 0; i < stats::kCount; ++i)
    s += std::string(" ") + names[i] +
         "/req=" + fmt(static_cast<double>(c[i]) / static_cast<double>(requests), "%.4g");
  return s;
}
#else
void reset_stats() {}
std::string stats_notes(std::uint64_t) { return ""; }
#endif

// Times `launch` once untimed (its time in *first, if given); then reps
// times (3 if the first run took over 100 ms, 1 if it took over 2 s, so a
// collapsing allocator does not stall the whole benchmark).
Timing time_adaptive(const std::function<void()>& launch, const std::function<void()>& between,
                     int reps, double* first = nullptr) {
  cudaEvent_t a, b;
  DYNASOAR_CUDA_CHECK(cudaEventCreate(&a));
  DYNASOAR_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> ms;
  for (int r = 0; r <= reps; ++r) {
    between();
    DYNASOAR_CUDA_CHECK(cudaEventRecord(a));
    launch();
    DYNASOAR_CUDA_CHECK(cudaEventRecord(b));
    DYNASOAR_CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0;
    DYNASOAR_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    if (r == 0) {
      if (first != nullptr) *first = t;
      if (t > 100.0f) reps = std::min(reps, 3);
      if (t > 2000.0f) reps = 1;
      continue;
    }
    ms.push_back(t);
  }
  DYNASOAR_CUDA_CHECK(cudaEventDestroy(a));
  DYNASOAR_CUDA_CHECK(cudaEventDestroy(b));
  return {median(ms), *std::min_element(ms.begin(), ms.end()), static_cast<int>(ms.size())};
}

std::string row(const std::string& bench, const std::string& impl, const std::string& config,
                std::uint64_t n, const Timing& t, const std::string& notes) {
  return bench + "," + impl + "," + config + "," + std::to_string(n) + "," +
         fmt(t.median_ms, "%.5f") + "," + fmt(t.min_ms, "%.5f") + "," + std::to_string(t.reps) +
         "," + fmt(t.median_ms * 1e6 / static_cast<double>(n)) + "," + notes;
}

struct Options {
  bool quick = false;
  dynasoar::bench::Selection cases;               // survey cases (--case)
  std::vector<unsigned> heaps_per_processor{1};  // survey of the multi-offset variants
  std::vector<unsigned> fill_mib{64};             // pool sizes of the fill
  std::vector<unsigned> super_block_mib;          // extra ScatterAlloc pools (survey, fill)
  std::vector<unsigned> active_window;            // the same, by active super blocks
};

// --- 1. survey ---------------------------------------------------------------------------

// Pool settings of the survey: the circular allocators run with the paper's
// settings (no coalescing, Eq. 1 chunks down to 64 bytes) and with warp coalescing
// and a pre-split whose smallest chunk (64 KiB) holds a whole warp's
// coalesced request of the largest size (32 x 1 KiB plus headers).
struct PoolVariant {
  std::string suffix;
  PoolOptions options;
};
// The default pool and, for ScatterAlloc and XMalloc (whose pages come from
// ScatterAlloc), pools with super blocks of each size in --super-block-mib
// and (ScatterAlloc) with each number of active super blocks in --active-window.
template <class Alloc>
std::vector<PoolVariant> super_block_variants(const Options& opt) {
  std::vector<PoolVariant> v{{"", PoolOptions{}}};
  if constexpr (std::is_same_v<Alloc, dynasoar::scatter::ScatterAlloc> ||
                std::is_same_v<Alloc, dynasoar::xmalloc::XMalloc>) {
    for (const unsigned mib : opt.super_block_mib) {
      PoolOptions o;
      o.scatter.super_block_pages = mib * ((1u << 20) / dynasoar::scatter::kPageBytes);
      v.push_back({"+super_block_" + std::to_string(mib) + "MiB", o});
    }
    // XMalloc runs its ScatterAlloc with one active super block (xmalloc.h).
    for (const unsigned w : std::is_same_v<Alloc, dynasoar::scatter::ScatterAlloc>
                                ? opt.active_window
                                : std::vector<unsigned>{}) {
      PoolOptions o;
      o.scatter.active_window = w;
      v.push_back({"+active_window_" + std::to_string(w), o});
    }
  }
  return v;
}

template <class Alloc>
std::vector<PoolVariant> survey_variants(const Options& opt) {
  if constexpr (std::is_same_v<Alloc, dynasoar::scatter::ScatterAlloc>) {
    // Its search as we run it, and as the paper describes it (Eq. 3 only,
    // regions one after the other): what scatter.md's deviation buys. And
    // without warp coalescing: the allocator under XMalloc as XMalloc runs
    // it (xmalloc.h), the baseline of XMalloc's throughput magnification
    // (Huang et al. 2013, Sec. 5).
    PoolOptions paper, uncoalesced;
    paper.scatter.spread = false;
    uncoalesced.scatter.coalesce = false;
    std::vector<PoolVariant> v = super_block_variants<Alloc>(opt);
    v.insert(v.begin() + 1, {{"+paper_search", paper}, {"+uncoalesced", uncoalesced}});
    return v;
  } else if constexpr (!kIsCircular<Alloc>) {
    return super_block_variants<Alloc>(opt);
  } else {
    std::vector<PoolVariant> v;
    for (const unsigned hpp : Alloc::kMultiOffset ? opt.heaps_per_processor : std::vector<unsigned>{1}) {
      PoolOptions coalesced, paper;
      coalesced.min_chunk_bytes = 64 << 10;
      paper.coalesce = false;
      coalesced.heaps_per_processor = paper.heaps_per_processor = hpp;
      std::string heaps;  // appended, not concatenated: GCC 12 -Wrestrict false positive
      if (hpp != 1) {
        heaps += " ";
        heaps += std::to_string(hpp);
        heaps += "_heaps_per_sm";
      }
      v.push_back({"+coalesced" + heaps, coalesced});
      v.push_back({"+uncoalesced" + heaps, paper});
    }
    return v;
  }
}

template <class Alloc>
void survey_with(dynasoar::bench::Csv& csv, const Options& o, const PoolVariant& v);

template <class Alloc>
void survey(dynasoar::bench::Csv& csv, const Options& o) {
  for (const PoolVariant& v : survey_variants<Alloc>(o))
    survey_with<Alloc>(csv, o, v);
}

// Each case gets a fresh pool, as each test of the survey starts its
// allocator anew (the 16-byte cases would otherwise leave the pool cut into
// 32-byte chunks for the 1 KiB case); within a case the launches reuse it.
template <class Alloc>
void survey_with(dynasoar::bench::Csv& csv, const Options& o, const PoolVariant& v) {
  constexpr std::uint64_t kPool = std::uint64_t{4} << 30;
  const std::string name = std::string(Alloc::kName) + v.suffix;
  const std::size_t n = std::size_t{1} << 20;
  dynasoar::platform::Buffer<void*> ptrs(n);
  dynasoar::platform::Buffer<unsigned long long> failed(1);
  struct Case {
    const char* name;
    std::uint64_t bytes;
    bool per_warp;
  };
  for (const Case c : {Case{"16B_per_thread", 16, false}, Case{"16B_per_warp", 16, true},
                       Case{"1KiB_per_thread", 1024, false}, Case{"1KiB_per_warp", 1024, true}}) {
    if (!o.cases.wants(c.name)) continue;
    PoolHandle<Alloc> pool(kPool, v.options);
    const std::size_t threads = c.per_warp ? n * 32 : n;
    failed.zero();
    auto release = [&] {
      if constexpr (Alloc::kCanFree) {
        free_kernel<<<grid_for(n), kThreadsPerBlock>>>(pool.device(), ptrs.data(), n);
      } else {
        pool.reset();
      }
    };
    bool have = false;  // ptrs hold live allocations
    double first_ms = 0;
    const Timing alloc = time_adaptive(
        [&] {
          alloc_kernel<<<grid_for(threads), kThreadsPerBlock>>>(pool.device(), ptrs.data(), c.bytes,
                                                                c.per_warp, 1, failed.data());
        },
        [&] {
          if (have) release();
          DYNASOAR_CUDA_CHECK(cudaDeviceSynchronize());
          reset_stats();
          have = true;
        },
        o.quick ? 3 : 10, &first_ms);
    const unsigned long long f = failed.to_vector()[0];
    std::string notes = "failed=" + std::to_string(f) + " pool=" + std::to_string(pool.bytes());
    csv.line(row("survey_malloc", name, c.name, n, alloc,
                 notes + " first_ms=" + fmt(first_ms, "%.5f") + stats_notes(n)));
    if constexpr (Alloc::kCanFree) {
      // ptrs hold the last timed launch's allocations: time freeing them,
      // then allocate again untimed for the next round.
      const Timing fr =
          time_adaptive([&] { release(); },
                        [&] {
                          if (!have) {
                            alloc_kernel<<<grid_for(threads), kThreadsPerBlock>>>(
                                pool.device(), ptrs.data(), c.bytes, c.per_warp, 1, failed.data());
                            DYNASOAR_CUDA_CHECK(cudaDeviceSynchronize());
                          }
                          have = false;
                          reset_stats();
                        },
                        o.quick ? 3 : 10);
      csv.line(row("survey_free", name, c.name, n, fr, notes + stats_notes(n)));
    } else {
      release();
      have = false;
    }
    pool.clear_errors();  // failures are counted per row
  }
}

// --- 2. the tests of Sec. 6 --------------------------------------------------------------

template <class Alloc>
void generic(dynasoar::bench::Csv& csv, const Options& o) {
  constexpr std::uint64_t kPool = std::uint64_t{2} << 30;
  PoolHandle<Alloc> pool(kPool);
  const unsigned blocks = dynasoar::platform::processors();  // one block per multiprocessor
  const std::size_t warps = static_cast<std::size_t>(blocks) * kThreadsPerBlock / 32;
  dynasoar::platform::Buffer<unsigned long long> failed(3);
  auto reset = [&] {
    if constexpr (!Alloc::kCanFree) pool.reset();
  };
  std::vector<std::uint64_t> payloads = {16, 1024, 16384, 131072};
  if (o.quick) payloads = {16, 1024};
  for (std::uint64_t bytes : payloads) {
    for (int k : {1, 10}) {
      failed.zero();
      const Timing t = time_adaptive(
          [&] {
            cycle_kernel<<<blocks, kThreadsPerBlock>>>(pool.device(), bytes, k, failed.data());
          },
          reset, o.quick ? 3 : 5);
      csv.line(row(
          k == 1 ? "AD" : "ACD", Alloc::kName, std::to_string(bytes) + "B", warps * k, t,
          "failed=" + std::to_string(failed.to_vector()[0]) + " blocks=" + std::to_string(blocks)));
    }
  }
  // [P]: ten launches, 16-byte payload, 1 .. all blocks.
  for (unsigned b : {1u, blocks / 4, blocks}) {
    if (b == 0) continue;
    const std::size_t w = static_cast<std::size_t>(b) * kThreadsPerBlock / 32;
    dynasoar::platform::Buffer<void*> slot(w);
    slot.zero();  // the first `between` frees what the slots hold: nothing yet
    std::vector<unsigned long long> c;
    const Timing t = time_adaptive(
        [&] {
          for (unsigned launch = 0; launch < 10; ++launch)
            probability_kernel<<<b, kThreadsPerBlock>>>(pool.device(), slot.data(), 16, launch,
                                                        failed.data());
        },
        [&] {
          // Free what the previous run left, then start empty.
          if constexpr (Alloc::kCanFree)
            free_kernel<<<grid_for(w), kThreadsPerBlock>>>(pool.device(), slot.data(), w);
          reset();
          slot.zero();
          failed.zero();
        },
        o.quick ? 3 : 5);
    c = failed.to_vector();
    csv.line(row("P", Alloc::kName, std::to_string(b) + "_blocks", c[0] + c[1], t,
                 "allocs=" + std::to_string(c[0]) + " frees=" + std::to_string(c[1]) +
                     " failed=" + std::to_string(c[2])));
    if constexpr (Alloc::kCanFree)
      free_kernel<<<grid_for(w), kThreadsPerBlock>>>(pool.device(), slot.data(), w);
    reset();
  }
  pool.clear_errors();  // failures are counted per row
}

// --- 3. registers --------------------------------------------------------------------------

template <class Alloc>
void registers(dynasoar::bench::Csv& csv) {
  cudaFuncAttributes a{};
  DYNASOAR_CUDA_CHECK(cudaFuncGetAttributes(&a, one_alloc_free<Alloc, false>));
  csv.line(std::string("registers,") + Alloc::kName + ",one_alloc_free,,,,," +
           std::to_string(a.numRegs) + ",local_bytes=" + std::to_string(a.localSizeBytes) +
           (kIsCircular<Alloc> ? " with warp coalescing" : ""));
  if constexpr (kIsCircular<Alloc>) {
    DYNASOAR_CUDA_CHECK(cudaFuncGetAttributes(&a, one_alloc_free<Alloc, true>));
    csv.line(std::string("registers,") + Alloc::kName + ",one_alloc_free_uncoalesced,,,,," +
             std::to_string(a.numRegs) + ",local_bytes=" + std::to_string(a.localSizeBytes) +
             " paper's malloc");
  }
}

// --- 5. Huang et al. 2013's magnification ------------------------------------------------------------

template <class Alloc>
void magnify(dynasoar::bench::Csv& csv, const Options& o) {
  if constexpr (Alloc::kCanFree) {
    constexpr std::uint64_t kPool = std::uint64_t{4} << 30;  // the survey's (CUDA's heap is sized once)
    const std::size_t workers = std::size_t{1} << 20;
    dynasoar::platform::Buffer<unsigned long long> failed(1);
    for (const unsigned per_warp : {1u, 2u, 4u, 8u, 16u, 32u}) {
      if (o.quick && per_warp != 1 && per_warp != 32) continue;
      PoolHandle<Alloc> pool(kPool);  // fresh: empty queues
      failed.zero();
      const std::size_t threads = (workers + per_warp - 1) / per_warp * 32;
      double cold = 0;
      const Timing t = time_adaptive(
          [&] {
            worker_kernel<<<grid_for(threads), kThreadsPerBlock>>>(pool.device(), per_warp, workers,
                                                                   failed.data());
          },
          [] {}, o.quick ? 3 : 5, &cold);
      csv.line(row("magnify", Alloc::kName, std::to_string(per_warp) + "_per_warp", workers, t,
                   "cold_ms=" + fmt(cold, "%.5f") +
                       " failed=" + std::to_string(failed.to_vector()[0])));
      pool.clear_errors();  // failures are counted per row
    }
  }
}

// --- 4. fill to exhaustion ------------------------------------------------------------------

template <class Alloc>
void fill(dynasoar::bench::Csv& csv, unsigned mib, const PoolVariant& v) {
  if (std::string(Alloc::kName) == "AWMalloc") return;  // wraps instead of running out (Sec. 5.1)
  if constexpr (!PoolHandle<Alloc>::kHeapOutlivesPool) {
    const std::uint64_t kPool = std::uint64_t{mib} << 20;
    constexpr std::uint64_t kBytes = 72;
    constexpr unsigned kThreads = 1024;
    PoolHandle<Alloc> pool(kPool, v.options);
    dynasoar::platform::Buffer<unsigned long long> made(1);
    made.zero();
    DYNASOAR_CUDA_CHECK(cudaDeviceSynchronize());
    reset_stats();
    const int limit = static_cast<int>(kPool / kBytes / kThreads + 64);
    const Timing t = dynasoar::bench::time_gpu(
        [&] {
          fill_kernel<<<kThreads / kThreadsPerBlock, kThreadsPerBlock>>>(pool.device(), kBytes,
                                                                          limit, made.data());
        },
        0, 1);
    const unsigned long long n = made.to_vector()[0];
    const bool full = pool.out_of_memory();
    pool.clear_errors();
    const double pct = 100.0 * static_cast<double>(n * kBytes) / static_cast<double>(pool.bytes());
    const std::string config = "72B_1024_threads" + (mib == 64 ? std::string() : "_" + std::to_string(mib) + "MiB");
    csv.line(row("fill", std::string(Alloc::kName) + v.suffix, config, std::max<std::uint64_t>(n, 1), t,
                 "utilisation_percent=" + fmt(pct, "%.2f") +
                     (full ? " stopped_by_nullptr" : " NOT_FULL") + stats_notes(std::max<std::uint64_t>(n, 1))));
  }
}

template <class Alloc>
void run_all(dynasoar::bench::Csv& csv, const Options& o, const dynasoar::bench::Selection& only,
             const dynasoar::bench::Selection& allocators) {
  if (!allocators.wants(Alloc::kName)) return;
  std::fprintf(stderr, "cmalloc_bench: %s\n", Alloc::kName);
  if (only.wants("registers")) registers<Alloc>(csv);
  if (only.wants("survey")) survey<Alloc>(csv, o);
  if (only.wants("magnify")) magnify<Alloc>(csv, o);
  if (only.wants("generic")) generic<Alloc>(csv, o);
  if (only.wants("fill"))
    for (const unsigned mib : o.fill_mib)
      for (const PoolVariant& v : super_block_variants<Alloc>(o)) fill<Alloc>(csv, mib, v);
}

// Every raw allocator of dynasoar/backend_list.h, and XMalloc in front of
// CUDA's malloc (Huang et al. 2013's set-up, no back end of its own).
using Benched = dynasoar::model::Concat<dynasoar::backend::RawAllocators,
                                        dynasoar::model::TypeList<dynasoar::xmalloc::XMallocOnCudaMalloc>>;

// Their kNames.
std::vector<std::string> raw_allocator_names() {
  std::vector<std::string> names;
  dynasoar::model::for_each_type(Benched{},
                                 [&](auto a) { names.push_back(decltype(a)::type::kName); });
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  dynasoar::bench::Args args;
  dynasoar::bench::Selection only{"--only", {"survey", "generic", "registers", "fill", "magnify"}, {}};
  dynasoar::bench::Selection allocators{
      "--allocator",
      raw_allocator_names(),
      {}};
  dynasoar::bench::Selection heaps{"--heaps-per-sm", {"1", "2", "4", "8"}, {}};
  dynasoar::bench::Selection fill_mib{"--fill-mib", {"4", "8", "16", "32", "64", "256", "1024"}, {}};
  dynasoar::bench::Selection super_mib{"--super-block-mib", {"8", "32", "64", "128", "512"}, {}};
  dynasoar::bench::Selection window{"--active-window", {"1", "4", "8", "16", "32", "64"}, {}};
  Options o;
  o.cases = {"--case", {"16B_per_thread", "16B_per_warp", "1KiB_per_thread", "1KiB_per_warp"}, {}};
  if (!dynasoar::bench::parse_args(argc, argv, args, {&only, &allocators, &o.cases, &heaps, &fill_mib, &super_mib, &window}))
    return 2;
  o.quick = args.quick;
  if (!heaps.chosen.empty()) {
    o.heaps_per_processor.clear();
    for (const std::string& h : heaps.chosen)
      o.heaps_per_processor.push_back(static_cast<unsigned>(std::stoul(h)));
  }
  if (!fill_mib.chosen.empty()) {
    o.fill_mib.clear();
    for (const std::string& m : fill_mib.chosen) o.fill_mib.push_back(static_cast<unsigned>(std::stoul(m)));
  }
  for (const std::string& m : super_mib.chosen) o.super_block_mib.push_back(static_cast<unsigned>(std::stoul(m)));
  for (const std::string& w : window.chosen) o.active_window.push_back(static_cast<unsigned>(std::stoul(w)));
  const std::string csv_path = args.csv;
  try {
    dynasoar::bench::Csv csv(csv_path,
                             {"benchmark: cmalloc family", "date: " + dynasoar::bench::utc_now(),
                              "device: " + dynasoar::bench::device_description(),
                              "command: " + dynasoar::bench::command_line(argc, argv),
                              "timing: CUDA events, one untimed run, median of reps (3 reps when a "
                              "run takes over 100 ms); fill rows: one timed fill, no warm-up",
                              "columns: n = allocations (P: allocations + frees); ns_per_op = "
                              "median / n; registers rows: "
                              "the register count in ns_per_op's place"},
                             "bench,allocator,config,n,median_ms,min_ms,reps,ns_per_op,notes");
    // CUDA's device heap is sized once, before its first allocating kernel:
    // it goes first, with the largest pool, and XMalloc in front of it next.
    dynasoar::model::for_each_type(Benched{}, [&](auto a) {
      using Alloc = typename decltype(a)::type;
      if constexpr (PoolHandle<Alloc>::kHeapOutlivesPool) run_all<Alloc>(csv, o, only, allocators);
    });
    dynasoar::model::for_each_type(Benched{}, [&](auto a) {
      using Alloc = typename decltype(a)::type;
      if constexpr (!PoolHandle<Alloc>::kHeapOutlivesPool) run_all<Alloc>(csv, o, only, allocators);
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cmalloc_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
