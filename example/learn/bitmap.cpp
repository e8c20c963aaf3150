// The hierarchical bitmap on its own: BitmapHandle owns the bits on the host,
// Bitmap (from device()) is what kernels use. Threads claim bits at the same
// time, first a given bit each (try_clear), then any bit (try_find_and_clear),
// as an allocator takes free slots; the host checks that no bit went twice.
// Read next: docs/design/bitmap.md; example/bitmap_demo is a larger run.
#include <dynasoar/dynasoar.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using dynasoar::bit_index;
using dynasoar::Bitmap;
using dynasoar::kNoBit;
using dynasoar::platform::atomic_fetch_add;
constexpr bit_index kBits = 1 << 15;  // 512 containers of 64 bits, 3 levels

// Threads t and t + kBits race for bit t: try_clear succeeds for one only.
struct RaceForBit {
  Bitmap bits;     // trivially copyable: kernels get it by value
  unsigned* wins;  // per bit: how many threads claimed it
  DYNASOAR_HD void operator()(std::size_t t) const {
    const auto pos = static_cast<bit_index>(t % kBits);
    if (bits.try_clear(pos)) atomic_fetch_add(wins + pos, 1u);
  }
};

struct GiveBackEveryThird {  // as a free would: set the bit again
  Bitmap bits;
  DYNASOAR_HD void operator()(std::size_t t) const {
    if (t % 3 == 0) (void)bits.try_set(static_cast<bit_index>(t));
  }
};

// Any set bit will do. The search starts where the seed says, so threads
// spread out; it may miss while others change the upper levels (paper Sec.
// 4.1.3), so retry with new seeds, then read level 0 in full to be sure.
struct TakeAny {
  Bitmap bits;
  unsigned* wins;
  DYNASOAR_HD void operator()(std::size_t t) const {
    bit_index pos = kNoBit;
    for (std::uint64_t attempt = 0; attempt < 4 && pos == kNoBit; ++attempt)
      pos = bits.try_find_and_clear(t * 4 + attempt);
    if (pos == kNoBit) pos = bits.scan_and_clear(t);
    if (pos != kNoBit) atomic_fetch_add(wins + pos, 1u);  // kNoBit: none left for this thread
  }
};

int main() {
  namespace platform = dynasoar::platform;
  dynasoar::BitmapHandle owner(kBits, dynasoar::BitmapHandle::Init::kAllSet);  // all free
  const Bitmap bits = owner.device();
  platform::Buffer<unsigned> wins(kBits);
  wins.zero();
  std::printf("%u bits in %d levels, %zu bytes\n", kBits, owner.levels(), owner.memory_bytes());

  // Round 1: two threads per bit. Afterwards no bit is left.
  platform::parallel_for(2 * std::size_t{kBits}, RaceForBit{bits, wins.data()});
  const std::uint64_t left = owner.count();  // waits for the kernel

  // Every third bit comes back; indices() lists the set bits in order
  // (enumerate() is the same into device memory, without waiting).
  platform::parallel_for(kBits, GiveBackEveryThird{bits});
  const std::vector<bit_index> back = owner.indices();  // waits for the kernel
  bool every_third = back.size() == (kBits + 2) / 3;
  for (std::size_t i = 0; i < back.size() && every_third; ++i) every_third = back[i] == 3 * i;

  // Round 2: more threads than free bits, as when a pool runs dry.
  platform::parallel_for(kBits, TakeAny{bits, wins.data()});
  const std::uint64_t left_at_end = owner.count();  // waits for the kernel
  const std::string consistency = owner.check_consistency();

  // Each bit must have been claimed once per round it was free in.
  const std::vector<unsigned> got = wins.to_vector();
  std::uint64_t wrong = 0;
  for (bit_index b = 0; b < kBits; ++b) wrong += got[b] != (b % 3 == 0 ? 2u : 1u);
  const bool ok = left == 0 && every_third && left_at_end == 0 && wrong == 0 && consistency.empty();
  std::printf("round 1 left %llu, %zu given back, round 2 left %llu, %llu bits claimed wrongly\n",
              static_cast<unsigned long long>(left), back.size(),
              static_cast<unsigned long long>(left_at_end), static_cast<unsigned long long>(wrong));
  std::printf("checked: every bit claimed exactly once per round, levels consistent: %s\n",
              ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
