// What every raw allocator hands out: 16-byte aligned memory, in requests
// rounded up to 16 bytes.
#pragma once

#include <cstdint>

#include "dynasoar/platform/config.h"

namespace dynasoar::raw {

/// Every raw allocator returns 16-byte aligned memory.
inline constexpr std::uint64_t kAlignment = 16;

/// `bytes` rounded up to a multiple of kAlignment; a request of 0 bytes takes 16.
DYNASOAR_HD DYNASOAR_FORCEINLINE constexpr std::uint64_t aligned_size(std::uint64_t bytes) {
  return bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

}  // namespace dynasoar::raw
