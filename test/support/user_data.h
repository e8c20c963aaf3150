// A memory pattern for allocator tests: what a test writes into the memory
// an allocator gave it, and checks later, so that memory handed out twice
// (or overwritten by the allocator's own bookkeeping) shows as a broken
// pattern. Device and host.
#pragma once

#include <cstdint>

#include "dynasoar/platform/config.h"

namespace dynasoar::test {

/// One allocation a test holds: its address (0: none), size and pattern seed.
struct Held {
  std::uint64_t address;
  std::uint64_t bytes;
  std::uint64_t sig;
};

/// Writes the pattern of `sig` into the whole 8-byte words of `bytes` at `address`.
DYNASOAR_HD inline void fill_user_data(std::uint64_t address, std::uint64_t bytes, std::uint64_t sig) {
  auto* w = reinterpret_cast<std::uint64_t*>(address);
  for (std::uint64_t k = 0; k < bytes / 8; ++k) w[k] = sig + k;
}

/// Whether the pattern of `sig` is still there.
DYNASOAR_HD inline bool user_data_intact(std::uint64_t address, std::uint64_t bytes, std::uint64_t sig) {
  const auto* w = reinterpret_cast<const std::uint64_t*>(address);
  for (std::uint64_t k = 0; k < bytes / 8; ++k)
    if (w[k] != sig + k) return false;
  return true;
}

}  // namespace dynasoar::test
