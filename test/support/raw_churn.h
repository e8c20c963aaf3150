// What the raw allocators' tests do with memory: allocate and fill it with a
// pattern, keep it in slots, and churn the slots (free what one holds,
// else fill it anew), counting nullptrs and broken patterns. Shared by the
// raw conformance suite and the families' own tests. Device and host.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"
#include "support/rng.h"
#include "support/user_data.h"

namespace dynasoar::test {

// Allocates `bytes` bytes and fills them with the pattern of `sig`; the
// address is 0 if malloc returned nullptr.
template <class Alloc>
DYNASOAR_HD Held allocate_filled(const Alloc& alloc, std::uint64_t bytes, std::uint64_t sig) {
  const auto address = reinterpret_cast<std::uint64_t>(alloc.malloc(bytes));
  if (address != 0) fill_user_data(address, bytes, sig);
  return {address, bytes, sig};
}
// A random size of 8..max_bytes bytes (a multiple of 8).
DYNASOAR_HD inline std::uint64_t random_size(test::Rng& rng, std::uint64_t max_bytes) {
  return 8 * (1 + rng.below(max_bytes / 8));
}
// allocate_filled for a random size of 8..max_bytes bytes.
template <class Alloc>
DYNASOAR_HD Held allocate_filled(const Alloc& alloc, test::Rng& rng, std::uint64_t max_bytes,
                                 std::uint64_t sig) {
  return allocate_filled(alloc, random_size(rng, max_bytes), sig);
}

// Frees held[i] (a kernel over the held allocations).
template <class Alloc>
struct FreeKept {
  Alloc alloc;
  const Held* held;
  DYNASOAR_HD void operator()(std::size_t i) const {
    alloc.free(reinterpret_cast<void*>(held[i].address));
  }
};

// One worker's churn: `rounds` times, a random one of its kSlots slots is
// freed if it holds memory (its pattern checked first), else filled with
// next_bytes(rng) bytes. Counts the nullptrs and the broken patterns.
constexpr int kSlots = 4;
template <class Alloc, class NextBytes>
DYNASOAR_HD void churn_slots(const Alloc& alloc, test::Rng& rng, Held (&mine)[kSlots],
                             std::size_t w, int rounds, NextBytes next_bytes,
                             unsigned long long& nulls, unsigned long long& broken) {
  for (int r = 0; r < rounds; ++r) {
    Held& h = mine[rng.below(kSlots)];
    if (h.address != 0) {
      if (!user_data_intact(h.address, h.bytes, h.sig)) ++broken;
      alloc.free(reinterpret_cast<void*>(h.address));
      h.address = 0;
      continue;
    }
    h = allocate_filled(alloc, next_bytes(rng),
                        platform::mix64(w * 7919ull + static_cast<std::uint64_t>(r)));
    if (h.address == 0) ++nulls;
  }
}

}  // namespace dynasoar::test
