// A tiny counter-based random generator for tests: the same stream on host
// and device for a given (seed, stream id), independent of scheduling.
#pragma once

#include <cstdint>

#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::test {

class Rng {
 public:
  DYNASOAR_HD Rng(std::uint64_t seed, std::uint64_t stream)
      : state_(platform::mix64(seed ^ platform::mix64(stream))) {}

  DYNASOAR_HD std::uint64_t next() { return platform::mix64(state_++); }

  /// Uniform in [0, n) (n > 0; slight modulo bias is irrelevant here).
  DYNASOAR_HD std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t state_;
};

}  // namespace dynasoar::test
