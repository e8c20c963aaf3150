p='inc/dynasoar/allocator/xmalloc/xmalloc.h'
s=open(p).read()
def rep(a,b):
    global s
    assert s.count(a)==1, a[:60]
    s=s.replace(a,b)
rep('namespace dynasoar::xmalloc {\n','namespace dynasoar::xmalloc {\n#ifdef __CUDACC__\n__device__ unsigned long long xm_stats[16];\n#endif\n#ifdef __CUDA_ARCH__\n#define XS(i) atomicAdd(&xm_stats[i], 1ull)\n#else\n#define XS(i) (void)0\n#endif\n')
rep('''      if (attempts([&] { return dequeue(qi, payload); }) == kDone) {
        block = block_at(payload);
        break;
      }''','''      const Outcome oc = attempts([&] { XS(12); return dequeue(qi, payload); });
      if (oc == kDone) {
        XS(i == 0 ? 1 : 2);
        block = block_at(payload);
        break;
      }
      XS(oc == kEmpty ? 3 : 4);''')
rep('''    if (block == 0) block = underlying_malloc(class_bytes(k));
    if (block == 0) return fail();''','''    XS(0);
    if (block == 0) { XS(5); block = underlying_malloc(class_bytes(k)); }
    if (block == 0) return fail();''')
rep('''        if (attempts([&] { return enqueue(qi, payload); }) == kDone) return;
      }
    }
    under.free(reinterpret_cast<void*>(block));''','''        const Outcome oc = attempts([&] { XS(13); return enqueue(qi, payload); });
        if (oc == kDone) { XS(i == 0 ? 7 : 8); return; }
        XS(oc == kFull ? 9 : 10);
      }
    }
    XS(11);
    under.free(reinterpret_cast<void*>(block));''')
rep('''    std::uint32_t payload = 0;
    if (k != kLargeClass && number_of(block, payload)) {''','''    std::uint32_t payload = 0;
    XS(6);
    if (k != kLargeClass && number_of(block, payload)) {''')
open(p,'w').write(s)
