// Whether this test binary runs under a sanitizer: built with ThreadSanitizer
// or AddressSanitizer (GCC's macros; Clang's __has_feature), or run under
// compute-sanitizer by scripts/gpu-check.sh, which sets DYNASOAR_SANITIZER=1.
// Tests that are slow there run a smaller case, and tests of a pattern the
// tools report by design (a read of freed memory) skip it, and say so.
#pragma once

#include <cstdlib>
#include <cstring>

namespace dynasoar::test {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

inline bool under_sanitizer() {
  const char* env = std::getenv("DYNASOAR_SANITIZER");
  return kSanitized || (env != nullptr && std::strcmp(env, "1") == 0);
}

}  // namespace dynasoar::test
