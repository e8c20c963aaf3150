// Scratch probe: CFMMalloc under the [ACD] 16 KiB pattern of Sec. 6 (the test that failed once),
// repeated; prints allocation failures and what each failed walk did.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "dynasoar/allocator/cmalloc/pool_handle.h"
#include "dynasoar/platform/executor.h"
using namespace dynasoar;
using A = cmalloc::CFMMalloc;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s line %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)
struct Pattern {
  A alloc; int k; std::uint64_t bytes; unsigned long long* counters;
  __device__ void operator()(std::size_t w, std::size_t) const {
    void* held[10] = {};
    for (int i = 0; i < k; ++i) {
      held[i] = alloc.malloc(bytes);
      if (held[i] == nullptr) { atomicAdd(&counters[0], 1ull); continue; }
      auto* p = static_cast<std::uint64_t*>(held[i]);
      p[0] = w * 131 + i; p[bytes / 8 - 1] = ~(w * 131 + i);
    }
    for (int i = 0; i < k; ++i) {
      if (held[i] == nullptr) continue;
      auto* p = static_cast<std::uint64_t*>(held[i]);
      if (p[0] != w * 131 + i || p[bytes / 8 - 1] != ~(w * 131 + i)) atomicAdd(&counters[1], 1ull);
      alloc.free(held[i]);
    }
  }
};
int main(int argc, char** argv) {
  const std::uint64_t base = 4ull * 1024 * 10 * (16384 + 32) + (1u << 20);
  unsigned long long* counters; CK(cudaMalloc(&counters, 16));
  for (int a = 1; a + 2 < argc + 1 && a + 1 < argc; a += 2) {
    const double frac = atof(argv[a]); const int reps = atoi(argv[a + 1]);
    const std::uint64_t bytes = static_cast<std::uint64_t>(base * frac) / 16 * 16;
    int failing_reps = 0; unsigned long long failed_total = 0, broken = 0;
    float t_total = 0;
    for (int r = 0; r < reps; ++r) {
      cmalloc::PoolHandle<A> pool(bytes);
      CK(cudaMemset(counters, 0, 16));
      unsigned zero = 0; CK(cudaMemcpyToSymbol(cmalloc::cf_nfail, &zero, 4));
      unsigned long long z[cmalloc::stats::kCount] = {};
      CK(cudaMemcpyToSymbol(cmalloc::stats::counters, z, sizeof z));
      cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
      CK(cudaEventRecord(e0));
      platform::parallel_workers(1024, Pattern{pool.device(), 10, 16384, counters});
      CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaGetLastError());
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t_total += ms;
      unsigned long long c[2]; CK(cudaMemcpy(c, counters, 16, cudaMemcpyDeviceToHost));
      failed_total += c[0]; broken += c[1];
      unsigned long long st[cmalloc::stats::kCount];
      CK(cudaMemcpyFromSymbol(st, cmalloc::stats::counters, sizeof st));
      if (c[0] > 0 || r == 0) {
        if (c[0] > 0) ++failing_reps;
        unsigned nf; CK(cudaMemcpyFromSymbol(&nf, cmalloc::cf_nfail, 4));
        printf("pool %.2f x (%llu B) rep %d: %.1f ms, failed %llu, broken %llu; walks %llu hops %llu busy %llu jumps %llu invalid %llu fallbacks %llu failed_walks %llu walk_merges %llu\n",
               frac, (unsigned long long)bytes, r, ms, c[0], c[1], st[0], st[1], st[2], st[3], st[4], st[5], st[8], st[9]);
        unsigned long long f[256][8]; CK(cudaMemcpyFromSymbol(f, cmalloc::cf_fail, sizeof f));
        for (unsigned i = 0; i < nf && i < 6; ++i)
          printf("   failed walk: iterations %llu invalid %llu stepbacks %llu restarts %llu jumps %llu busy %llu busy_granules %llu walked %llu (pool granules %llu)\n",
                 f[i][0], f[i][1], f[i][2], f[i][3], f[i][4], f[i][5], f[i][6], f[i][7], (unsigned long long)(bytes / 16));
      }
    }
    printf("== pool %.2f x: %d of %d reps failed, %llu requests failed, %llu broken, mean %.1f ms\n", frac, failing_reps, reps, failed_total, broken, t_total / reps);
    fflush(stdout);
  }
}
