// Whether this test binary is built with ThreadSanitizer or AddressSanitizer
// (GCC's macros; Clang's __has_feature): tests that are slow under them run
// a smaller case there, and say so. small_cases() is also true when the
// environment sets DYNASOAR_TEST_SMALL=1, as scripts/gpu-check.sh does for
// its compute-sanitizer runs (the tool slows kernels 10-100x).
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

inline bool small_cases() {
  const char* env = std::getenv("DYNASOAR_TEST_SMALL");
  return kSanitized || (env != nullptr && std::strcmp(env, "1") == 0);
}

}  // namespace dynasoar::test
