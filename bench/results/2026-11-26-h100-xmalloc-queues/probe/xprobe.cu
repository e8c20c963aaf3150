// Scratch probe: what XMallocOnCudaMalloc's queues do in the survey's 16 B cases.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "dynasoar/allocator/cmalloc/pool_handle.h"
#include "dynasoar/allocator/xmalloc/xmalloc.h"
using namespace dynasoar;
using X = xmalloc::XMallocOnCudaMalloc;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s line %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)
template <class A>
__global__ void alloc_kernel(A a, void** out, bool per_warp, unsigned long long* failed) {
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (per_warp && t % 32 != 0) return;
  const std::size_t slot = per_warp ? t / 32 : t;
  void* p = a.malloc(16);
  if (p == nullptr) atomicAdd(failed, 1ull);
  out[slot] = p;
}
template <class A>
__global__ void worker_kernel(A a, unsigned per_warp, std::size_t workers, unsigned long long* failed) {
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const auto lane = static_cast<unsigned>(t % 32);
  const std::size_t worker = t / 32 * per_warp + lane;
  if (lane >= per_warp || worker >= workers) return;
  auto* p = static_cast<volatile int*>(a.malloc(sizeof(int)));
  if (p == nullptr) { atomicAdd(failed, 1ull); return; }
  *p = static_cast<int>(worker);
  a.free(const_cast<int*>(p));
}
template <class A>
__global__ void free_kernel(A a, void* const* ptrs, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n && ptrs[i] != nullptr) a.free(ptrs[i]);
}
const char* names[14] = {"new_block","hit0","hit1-3","probe_empty","probe_cont","under_malloc","recycle","enq0","enq1-3","enq_full","enq_cont","under_free","deq_ops","enq_ops"};
void show(const char* what, float ms) {
  unsigned long long c[16];
  CK(cudaMemcpyFromSymbol(c, xmalloc::xm_stats, sizeof c));
  printf("  %-5s %9.3f ms", what, ms);
  for (int i = 0; i < 14; ++i) if (c[i]) printf(" %s=%llu", names[i], c[i]);
  printf("\n");
  unsigned long long z[16] = {};
  CK(cudaMemcpyToSymbol(xmalloc::xm_stats, z, sizeof z));
}
int main(int argc, char** argv) {
  { cmalloc::PoolHandle<cmalloc::CudaMalloc> size_heap(std::uint64_t{4} << 30); }
  const std::size_t n = std::size_t{1} << 20;
  void** ptrs; unsigned long long* failed;
  CK(cudaMalloc(&ptrs, n * sizeof(void*)));
  CK(cudaMalloc(&failed, 8));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int i = 1; i + 2 < argc + 0 || i < argc; i += 3) {
    if (i + 2 >= argc) break;
    X::Options o; o.queues = atoi(argv[i]); o.queue_slots = atoi(argv[i + 1]);
    const int mode = atoi(argv[i + 2]);
    const bool per_warp = mode < 0;
    cmalloc::PoolHandle<X> pool(std::uint64_t{4} << 30, o);
    printf("queues %u slots %u per_warp %d (geometry %u x %u)\n", o.queues, o.queue_slots, per_warp,
           pool.device().queues, pool.device().slots);
    show("reset", 0);
    const std::size_t threads = per_warp ? n * 32 : n;
    if (mode >= 1) {  // paper 002's Fig. 2: `mode` workers per warp, malloc + write + free in one launch
      const std::size_t th = (n + mode - 1) / mode * 32;
      for (int rep = 0; rep < 6; ++rep) {
        CK(cudaEventRecord(a));
        worker_kernel<<<(th + 255) / 256, 256>>>(pool.device(), static_cast<unsigned>(mode), n, failed);
        CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); CK(cudaGetLastError());
        float ms; CK(cudaEventElapsedTime(&ms, a, b)); show("fig2", ms);
      }
      pool.check_errors();
      continue;
    }
    for (int rep = 0; rep < 6; ++rep) {
      CK(cudaMemset(failed, 0, 8));
      CK(cudaEventRecord(a));
      alloc_kernel<<<(threads + 255) / 256, 256>>>(pool.device(), ptrs, per_warp, failed);
      CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); CK(cudaGetLastError());
      float ms; CK(cudaEventElapsedTime(&ms, a, b)); show("alloc", ms);
      CK(cudaEventRecord(a));
      free_kernel<<<(n + 255) / 256, 256>>>(pool.device(), ptrs, n);
      CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); CK(cudaGetLastError());
      CK(cudaEventElapsedTime(&ms, a, b)); show("free", ms);
    }
    unsigned long long f; CK(cudaMemcpy(&f, failed, 8, cudaMemcpyDeviceToHost));
    printf("  failed %llu\n", f);
    pool.check_errors();
  }
}
