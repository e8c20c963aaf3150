#include <dynasoar/allocator/cmalloc/circular_malloc.h>  // kernels of malloc + free, one per variant
using namespace dynasoar::cmalloc;
template <class A>
__global__ void mf(A a, void** out) {
  void* p = a.malloc(48);
  out[threadIdx.x] = p;
  a.free(p);
}
template __global__ void mf<CMalloc>(CMalloc, void**);
template __global__ void mf<CFMMalloc>(CFMMalloc, void**);
template __global__ void mf<CMMalloc>(CMMalloc, void**);
template __global__ void mf<CFMalloc>(CFMalloc, void**);
