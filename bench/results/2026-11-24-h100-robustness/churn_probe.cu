// Diagnostic: the conformance churn on the GPU, per allocator and repair setting.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <cstring>
#include <vector>
#include <thread>
#include <algorithm>

#include "allocator/cmalloc/pool_handle.h"
#include "support/rng.h"

using namespace dynasoar;
using namespace dynasoar::cmalloc;
namespace stats = dynasoar::cmalloc::stats;

struct Held {
  std::uint64_t address, bytes, sig;
};
__device__ void fill(std::uint64_t a, std::uint64_t b, std::uint64_t s) {
  auto* w = reinterpret_cast<std::uint64_t*>(a);
  for (std::uint64_t k = 0; k < b / 8; ++k) w[k] = s + k;
}
__device__ bool intact(std::uint64_t a, std::uint64_t b, std::uint64_t s) {
  auto* w = reinterpret_cast<const std::uint64_t*>(a);
  for (std::uint64_t k = 0; k < b / 8; ++k)
    if (w[k] != s + k) return false;
  return true;
}
constexpr int kSlots = 4;
__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
template <class A>
__global__ void churn(A alloc, unsigned long long* c, int rounds, std::uint64_t max_bytes, unsigned long long deadline, volatile int* progress) {
  const std::size_t w = blockIdx.x * blockDim.x + threadIdx.x;
  test::Rng rng(0x5EED, w);
  Held mine[kSlots] = {};
  unsigned long long nulls = 0, broken = 0;
  for (int r = 0; r < rounds; ++r) {
    if ((r & 15) == 0 && now_ns() > deadline) { atomicAdd(&c[3], 1ull); break; }
    Held& h = mine[rng.below(kSlots)];
    progress[w] = 2 * r + (h.address != 0);
    if (h.address != 0) {
      if (!intact(h.address, h.bytes, h.sig)) ++broken;
      alloc.free(reinterpret_cast<void*>(h.address));
      h.address = 0;
      continue;
    }
    const std::uint64_t bytes = 8 * (1 + rng.below(max_bytes / 8));
    const std::uint64_t sig = platform::mix64(w * 7919ull + r);
    h = {reinterpret_cast<std::uint64_t>(alloc.malloc(bytes)), bytes, sig};
    if (h.address == 0)
      ++nulls;
    else
      fill(h.address, bytes, sig);
  }
  for (Held& h : mine)
    if (h.address != 0) {
      if (!intact(h.address, h.bytes, h.sig)) ++broken;
      alloc.free(reinterpret_cast<void*>(h.address));
    }
  atomicAdd(&c[0], nulls);
  atomicAdd(&c[1], broken);
  progress[w] = -1;
}
template <class A>
__global__ void check_starts(A a, unsigned long long* bad) {
  for (std::uint32_t h = 0; h < a.heaps; ++h) {
    const std::uint32_t g = h * a.region;
    bool ok;
    if constexpr (A::kFusedHeader) ok = (*a.fused_word(g) >> 32) == A::tag(g);
    else ok = ((*a.flag_word(g)) | 1u) == (A::tag(g) | 1u);
    if (!ok) atomicAdd(bad, 1ull);
  }
}
__global__ void stamp(unsigned long long* t) { *t = now_ns(); }
template <class A>
__global__ void one_round(A alloc, unsigned long long* c, std::uint64_t max_bytes) {
  const std::size_t w = blockIdx.x * blockDim.x + threadIdx.x;
  test::Rng rng(0xC3A1, w);
  const std::uint64_t bytes = 8 * (1 + rng.below(max_bytes / 8));
  void* p = alloc.malloc(bytes);
  if (p == nullptr) atomicAdd(&c[2], 1ull);
}

template <class A>
void run(unsigned workers, int rounds, bool coalesce, std::uint32_t repair, double limit_s) {
  constexpr std::uint64_t max_bytes = 512;
  const std::uint64_t pool_bytes = 8ull * workers * kSlots * (max_bytes + 32);
  PoolOptions o;
  o.coalesce = coalesce;
  PoolHandle<A> pool(pool_bytes, o);
  A a = pool.device();
  a.merge_after_small = repair;
  platform::Buffer<unsigned long long> c(4);
  c.zero();
  unsigned long long zero[stats::kCount] = {};
  cudaMemcpyToSymbol(stats::counters, zero, sizeof zero);
  unsigned long long start = 0;
  {
    platform::Buffer<unsigned long long> t(1);
    stamp<<<1, 1>>>(t.data());
    start = t.to_vector()[0];
  }
  int* progress = nullptr;
  cudaHostAlloc(&progress, workers * sizeof(int), cudaHostAllocMapped);
  for (unsigned i = 0; i < workers; ++i) progress[i] = -2;
  int* dprogress = nullptr;
  cudaHostGetDevicePointer(&dprogress, progress, 0);
  const auto t0 = std::chrono::steady_clock::now();
  churn<<<workers / 256, 256>>>(a, c.data(), rounds, max_bytes, start + (unsigned long long)(limit_s * 1e9), dprogress);
  for (;;) {
    if (cudaStreamQuery(0) == cudaSuccess) break;
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (el > limit_s + 20) {
      int done = 0, notstarted = 0, inmalloc = 0, infree = 0, minr = 1 << 30, maxr = 0;
      for (unsigned i = 0; i < workers; ++i) {
        const int p = progress[i];
        if (p == -1) ++done; else if (p == -2) ++notstarted; else { if (p & 1) ++infree; else ++inmalloc; minr = std::min(minr, p / 2); maxr = std::max(maxr, p / 2); }
      }
      std::printf("%s HUNG after %.0f s: done=%d notstarted=%d in_malloc=%d in_free=%d rounds %d..%d\n", A::kName, el, done, notstarted, inmalloc, infree, minr, maxr);
      for (unsigned i = 0, shown = 0; i < workers && shown < 40; ++i) if (progress[i] >= 0) { std::printf(" w%u:%d%s", i, progress[i] / 2, progress[i] & 1 ? "F" : "M"); ++shown; }
      std::printf("\n");
      std::fflush(stdout);
      std::_Exit(3);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  cudaDeviceSynchronize();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  platform::Buffer<unsigned long long> bad(1);
  bad.zero();
  check_starts<<<1, 1>>>(a, bad.data());
  const auto fr = pool.fragmentation([](const unsigned char*) { return std::uint64_t{0}; });
  std::printf("  after churn: bad_heap_starts=%llu used_chunks=%llu free_chunks=%llu largest_free=%llu free=%llu\n",
              bad.to_vector()[0], (unsigned long long)fr.used_chunks, (unsigned long long)fr.free_chunks,
              (unsigned long long)fr.largest_free_bytes, (unsigned long long)fr.free_bytes);
  one_round<<<workers / 256, 256>>>(a, c.data(), max_bytes);
  cudaDeviceSynchronize();
  auto v = c.to_vector();
  unsigned long long s[stats::kCount];
  cudaMemcpyFromSymbol(s, stats::counters, sizeof s);
  const double req = double(s[stats::kWalks]);
  std::printf("%-9s coal=%d repair=%-10u workers=%u rounds=%d  %9.1f ms  nulls=%llu broken=%llu after_fail=%llu STOPPED=%llu"
              "  walks=%llu hops/walk=%.1f busy/w=%.1f jumps/w=%.3f inval/w=%.3f fallbacks=%llu merges=%llu walkmerges=%llu failed=%llu\n",
              A::kName, coalesce, repair, workers, rounds, ms, v[0], v[1], v[2], v[3], s[stats::kWalks],
              s[stats::kHops] / req, s[stats::kBusy] / req, s[stats::kJumps] / req, s[stats::kInvalid] / req,
              s[stats::kGroupFallbacks], s[stats::kMerges], s[stats::kWalkMerges], s[stats::kFailedWalks]);
  std::fflush(stdout);
}

template <class A>
void sweep(const char* only, double limit_s, std::vector<int> rounds_list, std::vector<unsigned> repairs) {
  if (only && std::string(only) != A::kName) return;
  for (bool coalesce : {true, false})
    for (std::uint32_t repair : repairs)
      for (int rounds : rounds_list) run<A>(8192, rounds, coalesce, repair, limit_s);
}

template <class A>
__global__ void fill_kernel(A a, unsigned long long* made, unsigned long long deadline) {
  unsigned long long mine = 0;
  for (;;) {
    if ((mine & 63) == 0 && now_ns() > deadline) { atomicAdd(&made[1], 1ull); break; }
    if (a.malloc(72) == nullptr) break;
    ++mine;
  }
  atomicAdd(made, mine);
}
template <class A>
void fill(std::uint32_t repair, bool coalesce, double limit_s) {
  PoolOptions o;
  o.coalesce = coalesce;
  PoolHandle<A> pool(64ull << 20, o);
  A a = pool.device();
  a.merge_after_small = repair;
  platform::Buffer<unsigned long long> made(2);
  made.zero();
  platform::Buffer<unsigned long long> t(1);
  stamp<<<1, 1>>>(t.data());
  const unsigned long long start = t.to_vector()[0];
  unsigned long long zero[stats::kCount] = {};
  cudaMemcpyToSymbol(stats::counters, zero, sizeof zero);
  const auto t0 = std::chrono::steady_clock::now();
  fill_kernel<<<4, 256>>>(a, made.data(), start + (unsigned long long)(limit_s * 1e9));
  cudaDeviceSynchronize();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto v = made.to_vector();
  unsigned long long s[stats::kCount];
  cudaMemcpyFromSymbol(s, stats::counters, sizeof s);
  const double req = double(v[0] + 1);
  std::printf("FILL %-9s coal=%d repair=%-10u %9.1f ms made=%llu stopped=%llu  per request: walks=%.3f hops=%.1f busy=%.1f jumps=%.3f inval=%.3f fallbacks=%.3f walkmerges=%.3f failed=%llu\n",
              A::kName, coalesce, repair, ms, v[0], v[1], s[stats::kWalks] / req, s[stats::kHops] / req, s[stats::kBusy] / req,
              s[stats::kJumps] / req, s[stats::kInvalid] / req, s[stats::kGroupFallbacks] / req, s[stats::kWalkMerges] / req, s[stats::kFailedWalks]);
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  if (std::string(argv[1]) == "fill") {
    const double limit = std::atof(argv[2]);
    for (std::uint32_t r : {~0u, 16u}) fill<CFMMalloc>(r, true, limit);
    for (std::uint32_t r : {~0u, 16u}) fill<CMMalloc>(r, true, limit);
    return 0;
  }
  const char* only = argv[1];
  const double limit_s = std::atof(argv[2]);
  std::vector<int> rounds;
  for (char* t = std::strtok(argv[3], ","); t; t = std::strtok(nullptr, ",")) rounds.push_back(std::atoi(t));
  std::vector<unsigned> repairs;
  for (char* t = std::strtok(argv[4], ","); t; t = std::strtok(nullptr, ",")) repairs.push_back(std::strtoul(t, nullptr, 10));
  sweep<CMMalloc>(only, limit_s, rounds, repairs);
  sweep<CFMMalloc>(only, limit_s, rounds, repairs);
  sweep<CMalloc>(only, limit_s, rounds, repairs);
  sweep<CFMalloc>(only, limit_s, rounds, repairs);
}
