// XMalloc's coalesced malloc on the GPU: the shipped code against exact
// copies of it with candidate fixes, on the churn of the test
// CMallocXMalloc.WarpsThatFreeWholeBlocksTakeThemBack (8192 threads, 16
// rounds; the pieces of even rounds are freed at once). Counts the nullptrs
// returned without an out-of-memory flag. Build (repository root):
//   nvcc -std=c++20 -O3 -arch=sm_90 -Iinclude --expt-relaxed-constexpr \
//     --extended-lambda -o xmfix bench/results/2026-11-25-h100-xmalloc-handover/xmfix.cu
// F bits: 1 __syncwarp(present) after activemask; 2 the group of a free leaves
// it together; 4 per-lane notes (did not work: they read all zero); 8 ready
// bit in the handed-over word and a loop that shuffles until it is set.
#include <cstdio>
#include <vector>
#define private public
#include "dynasoar/allocator/xmalloc/xmalloc.h"
#undef private
#include "dynasoar/allocator/cmalloc/pool_handle.h"
using namespace dynasoar;
using xmalloc::XMalloc;
namespace warp = platform::warp;

constexpr int kWorkers = 8192, kRounds = 16;
struct Note { unsigned present, group, got; };
__device__ Note g_note[kWorkers * kRounds];
__device__ unsigned long long g_nulls, g_retries; __device__ unsigned g_max_attempts;


template <int F>
__device__ void* vmalloc(const XMalloc& a, std::uint64_t n, unsigned w, int r) {
  if (n > xmalloc::kLargestClass - xmalloc::kHeaderBytes) return a.malloc_large(n);
  const auto piece = static_cast<std::uint32_t>(cmalloc::aligned_size(n)) + xmalloc::kHeaderBytes;
  if (!a.coalesce) {
    const std::uint64_t block = a.new_block(piece, 1);
    return block == 0 ? nullptr : a.piece_at(block, piece, 0);
  }
  const warp::lane_mask present = warp::present_lanes();
  if (F & 1) warp::sync(present);
  const warp::lane_mask group = warp::match_any(present, piece) & warp::match_any(present, a.mem);
  const XMalloc::Share s = XMalloc::share_of(group, warp::lane_id() % 32u, piece);
  std::uint64_t block = 0;
  if (F & 8) {
    std::uint64_t value = 0;  // bit 0: the leader has written it
    if (s.index == 0) value = a.new_block(piece, s.pieces) | 1u;
    unsigned attempts = 0;
    do {
      warp::sync(group);
      block = warp::shfl(group, value, s.leader);
      ++attempts;
    } while ((block & 1u) == 0 && attempts < 1000);
    if (attempts > 1) { atomicAdd(&g_retries, attempts - 1); atomicMax(&g_max_attempts, attempts); }
    block &= ~std::uint64_t{1};
  } else {
    if (s.index == 0) block = a.new_block(piece, s.pieces);
    warp::sync(group);
    block = warp::shfl(group, block, s.leader);
  }
  void* data = block == 0 ? nullptr : a.piece_at(block, piece, s.index);
  warp::sync(group);
  if (F & 4) g_note[w * kRounds + r] = Note{present, group, (unsigned)(block != 0) | (s.index == 0 ? 2u : 0u)};
  return data;
}

template <int F>
__device__ void vfree(const XMalloc& a, void* p) {
  if (p == nullptr) return;
  const auto address = reinterpret_cast<std::uint64_t>(p);
  const std::uint64_t piece = address - xmalloc::kHeaderBytes;
  auto* word = reinterpret_cast<std::uint64_t*>(piece);
  const std::uint64_t w = platform::atomic_load(word);
  const auto offset = static_cast<std::uint32_t>(w);
  const std::uint64_t block = piece - offset;
  const std::uint32_t k = XMalloc::class_word(block) & 0xFFFFu;
  std::uint64_t expected = w;
  if (!platform::atomic_compare_exchange(word, expected, (std::uint64_t{xmalloc::kFreedTag} << 32) | offset))
    return a.bad_free();
  const warp::lane_mask present = warp::present_lanes();
  const warp::lane_mask group = warp::match_any(present, block);
  warp::sync(group);
  if (warp::lane_id() % 32u == static_cast<unsigned>(platform::ctz(group))) {
    const std::uint32_t n = static_cast<std::uint32_t>(platform::popc(group));
    const std::uint32_t old = platform::atomic_fetch_sub(XMalloc::count_word(block), n, platform::acq_rel);
    if (old < n) a.bad_free();
    else if (old == n) a.recycle(block, k);
  }
  if (F & 2) warp::sync(group);
}

template <int F>
__global__ void churn(XMalloc a, std::uint64_t bytes) {
  const unsigned w = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long nulls = 0;
  for (int r = 0; r < kRounds; ++r) {
    void* p = F < 0 ? a.malloc(bytes) : vmalloc<(F < 0 ? 0 : F)>(a, bytes, w, r);
    if (p == nullptr) { ++nulls; continue; }
    if (r % 2 == 0) { if (F < 0) a.free(p); else vfree<(F < 0 ? 0 : F)>(a, p); }
  }
  atomicAdd(&g_nulls, nulls);
}

template <int F>
void run(const char* name) {
  for (std::uint64_t bytes : {48ull, 16ull, 2000ull}) {
    unsigned long long total = 0, retries = 0; unsigned max_attempts = 0; int bad_reps = 0; bool err = false;
    for (int rep = 0; rep < 8; ++rep) {
      cmalloc::PoolHandle<XMalloc> pool((kWorkers * 8 + 2 * kWorkers) * 2048ull + (4ull << 20));
      unsigned long long z = 0;
      cudaMemcpyToSymbol(g_nulls, &z, 8); cudaMemcpyToSymbol(g_retries, &z, 8); unsigned zu = 0; cudaMemcpyToSymbol(g_max_attempts, &zu, 4);
      cudaMemset(nullptr, 0, 0);
      churn<F><<<kWorkers / 256, 256>>>(pool.device(), bytes);
      if (cudaDeviceSynchronize() != cudaSuccess) { std::printf("cuda error\n"); return; }
      unsigned long long nulls; cudaMemcpyFromSymbol(&nulls, g_nulls, 8);
      total += nulls; bad_reps += nulls > 0;
      unsigned long long rt; unsigned ma; cudaMemcpyFromSymbol(&rt, g_retries, 8); cudaMemcpyFromSymbol(&ma, g_max_attempts, 4);
      retries += rt; max_attempts = ma > max_attempts ? ma : max_attempts;
      try { pool.check_errors(); } catch (...) { err = true; }
      if ((F & 4) && nulls > 0 && total == nulls) {
        std::vector<Note> N(kWorkers * kRounds);
        cudaMemcpyFromSymbol(N.data(), g_note, N.size() * sizeof(Note));
        int shown = 0;
        for (int wi = 0; wi < kWorkers && shown < 3; ++wi)
          for (int r = 0; r < kRounds && shown < 3; ++r) {
            const Note& x = N[wi * kRounds + r];
            if ((x.got & 1) || (x.got & 2)) continue;
            ++shown;
            std::printf("  follower w %d (lane %d) r %d: present %08x group %08x; the warp's lanes this round:\n", wi, wi % 32, r, x.present, x.group);
            for (int l = 0; l < 32; ++l) {
              const Note& y = N[(wi / 32 * 32 + l) * kRounds + r];
              std::printf("    lane %2d present %08x group %08x got %u leader %u\n", l, y.present, y.group, y.got & 1, (y.got >> 1) & 1);
            }
          }
      }
    }
    std::printf("%-28s %5llu B: nulls %6llu in %d of 8 runs, pool error %s, retries %llu, most attempts %u\n", name, (unsigned long long)bytes, total, bad_reps, err ? "raised" : "none", retries, max_attempts);
  }
}

int main() {
  // The run at 8d9d4bc called -1, 0, 4, 1, 2, 3; the run at b094e0d -1, 0, 8, 10.
  run<-1>("shipped");
  run<0>("copy");
  run<1>("sync(present)");
  run<2>("free leaves together");
  run<3>("both");
  run<8>("ready bit, retried");
  run<10>("ready bit + free together");
}
