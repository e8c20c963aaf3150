// XMalloc with lanes on different paths (data-dependent detours and skips
// around malloc and free, three sizes), 65 536 threads, 200 rounds; then
// every piece freed and the queues drained: ScatterAlloc must hold no chunk.
// Mode 1: lanes that freed skip the next malloc half the time. Build as
// xmfix.cu (same flags).
#include <cstdio>
#include <vector>
#define private public
#include "dynasoar/allocator/xmalloc/xmalloc.h"
#undef private
#include "dynasoar/allocator/cmalloc/pool_handle.h"
using namespace dynasoar;
using xmalloc::XMalloc;

__device__ unsigned long long g_nulls, g_broken, g_used_chunks, g_runs;
constexpr int kKeep = 8;

template <int Mode>
__global__ void churn(XMalloc a, int rounds, unsigned seed) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint64_t rng = platform::mix64(t * 0x9E37ull + seed);
  void* held[kKeep] = {};
  std::uint32_t tag[kKeep] = {};
  unsigned long long nulls = 0, broken = 0;
  for (int r = 0; r < rounds; ++r) {
    rng = platform::mix64(rng);
    const int slot = static_cast<int>(rng % kKeep);
    // data-dependent paths: some lanes spin, some take another size, some free first
    if ((rng >> 8) % 4 == 0) { for (unsigned i = 0; i < (rng >> 16) % 64; ++i) rng = platform::mix64(rng); }
    if (held[slot] != nullptr) {
      if (*static_cast<std::uint32_t*>(held[slot]) != tag[slot]) ++broken;
      a.free(held[slot]);
      held[slot] = nullptr;
      if (Mode == 1 && (rng >> 20) % 2) continue;  // some lanes skip the malloc this round
    }
    const std::uint64_t bytes = (rng >> 24) % 3 == 0 ? 16 : (rng >> 24) % 3 == 1 ? 144 : 48 + (rng >> 32) % 200;
    void* p = a.malloc(bytes);
    if (p == nullptr) { ++nulls; continue; }
    tag[slot] = static_cast<std::uint32_t>(rng >> 40) | 1u;
    *static_cast<std::uint32_t*>(p) = tag[slot];
    held[slot] = p;
  }
  for (int i = 0; i < kKeep; ++i) {
    if (held[i] != nullptr) {
      if (*static_cast<std::uint32_t*>(held[i]) != tag[i]) ++broken;
      a.free(held[i]);
    }
  }
  atomicAdd(&g_nulls, nulls);
  atomicAdd(&g_broken, broken);
}

__global__ void drain_and_count(XMalloc a) {
  a.drain();
  unsigned long long used = 0, runs = 0;
  for (std::uint32_t q = 0; q < a.under.page_count; ++q) {
    const auto& pg = a.under.pages[q];
    if (pg.chunk >= scatter::ScatterAlloc::kRunHead) { runs += pg.chunk != scatter::ScatterAlloc::kRunTail; continue; }
    for (int w = 0; w < scatter::kPageWords; ++w) used += __popcll(pg.bits[w]);
  }
  g_used_chunks = used; g_runs = runs;
}

int main() {
  for (int mode : {0, 1}) for (unsigned seed : {1u, 2u, 3u}) {
    const int threads = 65536, rounds = 200;
    cmalloc::PoolHandle<XMalloc> pool(std::uint64_t{1} << 30);
    unsigned long long z = 0;
    cudaMemcpyToSymbol(g_nulls, &z, 8); cudaMemcpyToSymbol(g_broken, &z, 8);
    if (mode == 0) churn<0><<<threads / 256, 256>>>(pool.device(), rounds, seed);
    else churn<1><<<threads / 256, 256>>>(pool.device(), rounds, seed);
    cudaError_t e = cudaDeviceSynchronize();
    drain_and_count<<<1, 1>>>(pool.device());
    cudaError_t e2 = cudaDeviceSynchronize();
    unsigned long long nulls, broken, used, runs;
    cudaMemcpyFromSymbol(&nulls, g_nulls, 8); cudaMemcpyFromSymbol(&broken, g_broken, 8);
    cudaMemcpyFromSymbol(&used, g_used_chunks, 8); cudaMemcpyFromSymbol(&runs, g_runs, 8);
    bool err = false; try { pool.check_errors(); } catch (...) { err = true; }
    std::printf("mode %d seed %u: %s/%s, nulls %llu, broken %llu, pool error %s; after freeing all and draining: chunks in use %llu, runs %llu\n",
                mode, seed, cudaGetErrorString(e), cudaGetErrorString(e2), nulls, broken, err ? "raised" : "none", used, runs);
  }
}
