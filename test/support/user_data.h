// A memory pattern for allocator tests: what a test writes into the memory
// an allocator gave it, and checks later, so that memory handed out twice
// (or overwritten by the allocator's own bookkeeping) shows as a broken
// pattern. Device and host.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"

// Under ThreadSanitizer the two pattern functions stay functions of their
// own, so that they are the first frame of a race report on user data,
// which test/cmalloc/tsan.supp names; inlined into a caller without debug
// information they would leave no frame, and the suppression would miss.
#if defined(__SANITIZE_THREAD__)
#define DYNASOAR_TEST_PATTERN_FRAME __attribute__((noinline))
#else
#define DYNASOAR_TEST_PATTERN_FRAME
#endif

namespace dynasoar::test {

/// One allocation a test holds: its address (0: none), size and pattern seed.
struct Held {
  std::uint64_t address;
  std::uint64_t bytes;
  std::uint64_t sig;
};

/// Writes the pattern of `sig` into the whole 8-byte words of `bytes` at `address`.
DYNASOAR_HD DYNASOAR_TEST_PATTERN_FRAME inline void fill_user_data(std::uint64_t address, std::uint64_t bytes, std::uint64_t sig) {
  auto* w = reinterpret_cast<std::uint64_t*>(address);
  for (std::uint64_t k = 0; k < bytes / 8; ++k) w[k] = sig + k;
}

/// Whether the pattern of `sig` is still there.
DYNASOAR_HD DYNASOAR_TEST_PATTERN_FRAME inline bool user_data_intact(std::uint64_t address, std::uint64_t bytes, std::uint64_t sig) {
  const auto* w = reinterpret_cast<const std::uint64_t*>(address);
  for (std::uint64_t k = 0; k < bytes / 8; ++k)
    if (w[k] != sig + k) return false;
  return true;
}

/// A churn that keeps half of what it allocates: every worker allocates
/// `bytes` each round, writes and checks its pattern, frees it again in
/// even rounds and keeps it in odd rounds (held: rounds / 2 per worker), so
/// that what a warp frees together it asks for again in the next round.
/// Afterwards the kept patterns are checked again. counters: [0] broken
/// patterns, [1] nullptrs. For any allocator with malloc(bytes) and free.
template <class Alloc>
struct FreeEveryOtherRound {
  Alloc a;
  Held* held;
  unsigned long long* counters;
  std::size_t workers_wanted;
  int rounds;
  std::uint64_t bytes;
  DYNASOAR_HD void operator()(std::size_t w, std::size_t) const {
    if (w >= workers_wanted) return;
    unsigned long long broken = 0, nulls = 0;
    const auto mine = static_cast<std::size_t>(rounds / 2);
    for (int r = 0; r < rounds; ++r) {
      const std::uint64_t sig = platform::mix64(w * 7919ull + static_cast<std::uint64_t>(r));
      const auto address = reinterpret_cast<std::uint64_t>(a.malloc(bytes));
      if (address == 0) {
        ++nulls;
        continue;
      }
      fill_user_data(address, bytes, sig);
      if (!user_data_intact(address, bytes, sig)) ++broken;
      if (r % 2 == 0)
        a.free(reinterpret_cast<void*>(address));
      else
        held[w * mine + static_cast<std::size_t>(r / 2)] = {address, bytes, sig};
    }
    for (std::size_t i = 0; i < mine; ++i) {
      const Held& h = held[w * mine + i];
      if (h.address != 0 && !user_data_intact(h.address, h.bytes, h.sig)) ++broken;
    }
    platform::atomic_fetch_add(&counters[0], broken);
    platform::atomic_fetch_add(&counters[1], nulls);
  }
};

}  // namespace dynasoar::test
