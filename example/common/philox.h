// The examples' random numbers: the library's counter-based generator
// (dynasoar/random.h), under the short names the examples use.
#pragma once

#include <cstdint>

#include "dynasoar/random.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::example {

using ::dynasoar::Philox4x32;
using ::dynasoar::philox4x32;
using ::dynasoar::random_u32;

/// Maps a uniform 32-bit value to [0, n).
DYNASOAR_HD inline std::uint32_t below(std::uint32_t r, std::uint32_t n) { return random_below(r, n); }

}  // namespace dynasoar::example
