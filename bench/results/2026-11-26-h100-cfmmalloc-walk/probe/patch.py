import sys
p=sys.argv[1]+'/dynasoar/allocator/cmalloc/circular_malloc.h'
s=open(p).read()
def rep(a,b,cnt=1):
    global s
    assert s.count(a)==cnt, (s.count(a), a[:70])
    s=s.replace(a,b)
rep('namespace dynasoar::cmalloc {\n\n/// Largest pool','''namespace dynasoar::cmalloc {
#ifdef __CUDACC__
__device__ unsigned long long cf_fail[256][8];
__device__ unsigned cf_nfail;
#endif

/// Largest pool''')
rep('''    for (std::uint64_t walked = 0;''','''    unsigned long long pr_it = 0, pr_inv = 0, pr_back = 0, pr_busy = 0, pr_busyg = 0, pr_small = 0;
    std::uint64_t walked = 0;
    for (walked = 0;''')
rep('''      DYNASOAR_CMALLOC_COUNT(kHops);
''','''      DYNASOAR_CMALLOC_COUNT(kHops);
      ++pr_it;
''')
rep('''        DYNASOAR_CMALLOC_COUNT(kInvalid);
        std::uint32_t expected = g;''','''        DYNASOAR_CMALLOC_COUNT(kInvalid);
        ++pr_inv;
        std::uint32_t expected = g;''')
rep('''        if (prev != kNoChunk) {
          g = prev;''','''        if (prev != kNoChunk) {
          ++pr_back;
          g = prev;''')
rep('''        DYNASOAR_CMALLOC_COUNT(kBusy);''','''        DYNASOAR_CMALLOC_COUNT(kBusy);
        ++pr_busy; pr_busyg += size;''')
rep('''    DYNASOAR_CMALLOC_COUNT(kFailedWalks);
    if (end == nullptr) fail();''','''    DYNASOAR_CMALLOC_COUNT(kFailedWalks);
#ifdef __CUDA_ARCH__
    if (end == nullptr) {
      const unsigned i = atomicAdd(&cf_nfail, 1u);
      if (i < 256) {
        cf_fail[i][0] = pr_it; cf_fail[i][1] = pr_inv; cf_fail[i][2] = pr_back; cf_fail[i][3] = restarts;
        cf_fail[i][4] = jumps; cf_fail[i][5] = pr_busy; cf_fail[i][6] = pr_busyg; cf_fail[i][7] = walked;
      }
    }
#endif
    (void)pr_small;
    if (end == nullptr) fail();''')
open(p,'w').write(s)
