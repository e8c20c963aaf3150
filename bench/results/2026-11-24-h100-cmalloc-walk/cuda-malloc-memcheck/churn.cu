// Minimal CUDA device malloc churn: each thread holds up to 4 allocations,
// picks a slot at random, frees it if full (after checking its pattern),
// else allocates 8..512 bytes and fills it. No other allocator involved.
// The same pattern as cmalloc_test's free-and-reuse churn on CudaMalloc,
// whose memcheck finding it reproduces (result.txt):
//   nvcc -O2 -arch=sm_90 -o churn churn.cu
//   ./churn 8192 640 && compute-sanitizer --tool memcheck --leak-check no ./churn 8192 640
// (s ^ t | 1: the xor first, then the low bit set, so that the seed is never 0)
#include <cstdio>
#include <cstdint>
__device__ unsigned long long g_nulls, g_broken;
__device__ uint64_t next(uint64_t& s) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }
__global__ void churn(int threads, int rounds) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= threads) return;
  uint64_t s = 0x9E3779B97F4A7C15ull ^ (uint64_t(w) * 0xBF58476D1CE4E5B9ull) | 1;
  uint64_t* p[4] = {}; uint64_t n[4] = {}, sig[4] = {};
  unsigned long long nulls = 0, broken = 0;
  for (int r = 0; r < rounds; ++r) {
    int k = next(s) % 4;
    if (p[k]) {
      for (uint64_t i = 0; i < n[k]; ++i) if (p[k][i] != sig[k] + i) { ++broken; break; }
      free(p[k]); p[k] = nullptr; continue;
    }
    n[k] = 1 + next(s) % 64; sig[k] = next(s);
    p[k] = static_cast<uint64_t*>(malloc(n[k] * 8));
    if (!p[k]) { ++nulls; continue; }
    for (uint64_t i = 0; i < n[k]; ++i) p[k][i] = sig[k] + i;
  }
  for (int k = 0; k < 4; ++k) if (p[k]) free(p[k]);
  atomicAdd(&g_nulls, nulls); atomicAdd(&g_broken, broken);
}
int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 8192, rounds = argc > 2 ? atoi(argv[2]) : 640;
  size_t heap = size_t(8) * threads * 4 * 544;
  cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap);
  for (int rep = 0; rep < 2; ++rep) {
    churn<<<(threads + 255) / 256, 256>>>(threads, rounds);
    cudaError_t e = cudaDeviceSynchronize();
    unsigned long long nulls = 0, broken = 0;
    cudaMemcpyFromSymbol(&nulls, g_nulls, 8); cudaMemcpyFromSymbol(&broken, g_broken, 8);
    printf("threads=%d rounds=%d heap=%zu rep=%d: %s nulls=%llu broken=%llu\n", threads, rounds, heap, rep,
           cudaGetErrorString(e), nulls, broken);
    if (e != cudaSuccess) return 1;
  }
  return 0;
}
