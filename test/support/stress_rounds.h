// Rounds per worker of a stress test; DYNASOAR_STRESS_ROUNDS overrides the
// default for slow instrumented runs (ThreadSanitizer, compute-sanitizer).
#pragma once

#include <cstdlib>

namespace dynasoar::test {

inline int stress_rounds(int default_rounds) {
  if (const char* env = std::getenv("DYNASOAR_STRESS_ROUNDS")) {
    const int r = std::atoi(env);
    if (r > 0) return r;
  }
  return default_rounds;
}

}  // namespace dynasoar::test
