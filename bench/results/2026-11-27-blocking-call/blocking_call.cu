// Where the blocking parallel_do's host time goes after its two launches:
// the copy of the error word into page-locked memory, or the wait itself.
// Two kernels as a parallel_do queues them (a one-block list kernel, then a
// device-sized do-all grid launched early with programmatic dependent
// launch), then one of three endings; host wall time per call, median.
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void list_kernel(unsigned* count) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (threadIdx.x == 0) *count = 0;  // an empty heap: no blocks
}

// publish: the last thread block to finish writes the error word into the
// page-locked mirror (one writer per launch: no atomics on host memory).
__global__ void do_all_kernel(const unsigned* count, const unsigned* error, unsigned* done,
                              volatile unsigned* mirror, bool publish) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const unsigned n = *count;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {}
  if (!publish) return;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    const unsigned ticket = atomicAdd(done, 1u);
    if (ticket == gridDim.x - 1) {
      __threadfence();
      *mirror = *(volatile const unsigned*)error;
      __threadfence_system();
      *done = 0;
    }
  }
}

int main() {
  int dev = 0, sms = 0, per_sm = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  const unsigned blocks = static_cast<unsigned>(sms) * per_sm / 128;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned *count, *error, *done, *pinned, *mapped_host, *mapped_dev;
  CK(cudaMalloc(&count, 4)); CK(cudaMalloc(&error, 4)); CK(cudaMalloc(&done, 4));
  CK(cudaMemset(error, 0, 4)); CK(cudaMemset(done, 0, 4));
  CK(cudaMallocHost(&pinned, 4));
  CK(cudaHostAlloc(&mapped_host, 4, cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer(&mapped_dev, mapped_host, 0));
  *mapped_host = 7;

  auto launch = [&](bool publish) -> cudaError_t {
    list_kernel<<<1, 128, 0, s>>>(count);
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(blocks); cfg.blockDim = dim3(128); cfg.stream = s;
    cudaLaunchAttribute a[1];
    a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = a; cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, do_all_kernel, (const unsigned*)count, (const unsigned*)error, done,
                              (volatile unsigned*)mapped_dev, publish);
  };
  const char* names[] = {"copy_then_wait (now)", "last_block_writes_mapped", "wait_only (floor)",
                         "async_enqueue_only"};
  std::vector<double> t[4];
  unsigned sink = 0;
  for (int rep = 0; rep < 4000; ++rep) {
    for (int v = 0; v < 4; ++v) {
      const auto t0 = std::chrono::steady_clock::now();
      CK(launch(v == 1));
      if (v == 0) { CK(cudaMemcpyAsync(pinned, error, 4, cudaMemcpyDeviceToHost, s)); CK(cudaStreamSynchronize(s)); sink += *pinned; }
      if (v == 1) { CK(cudaStreamSynchronize(s)); sink += *(volatile unsigned*)mapped_host; }
      if (v == 2) { CK(cudaStreamSynchronize(s)); }
      const auto t1 = std::chrono::steady_clock::now();
      if (v == 3) CK(cudaStreamSynchronize(s));
      if (rep >= 200) t[v].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
  }
  std::printf("grid %u blocks of 128; sink %u (mapped word reads the error word: 0 expected)\n", blocks, sink);
  std::printf("variant,median_us,p10_us,p90_us\n");
  for (int v = 0; v < 4; ++v) {
    auto& x = t[v]; std::sort(x.begin(), x.end());
    std::printf("%s,%.2f,%.2f,%.2f\n", names[v], x[x.size() / 2], x[x.size() / 10], x[x.size() * 9 / 10]);
  }
  return 0;
}
