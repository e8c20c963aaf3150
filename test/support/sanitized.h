// Whether this test binary is built with ThreadSanitizer or AddressSanitizer
// (GCC's macros; Clang's __has_feature): tests that are slow under them run
// a smaller case there, and say so.
#pragma once

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

}  // namespace dynasoar::test
