// The arguments of a parallel operation, carried by value into its kernel.
// std::tuple is not trivially copyable, and a kernel's functor must be, so
// the arguments are stored in a recursive pack instead.
#pragma once

#include <type_traits>
#include <utility>

#include "dynasoar/platform/config.h"

namespace dynasoar::platform {

/// Arguments stored by value; apply(f) calls f(args...). Trivially copyable
/// when every argument is.
template <class... Args>
struct ArgPack;
/// The empty pack: apply(f) calls f().
template <>
struct ArgPack<> {
  /// Calls f with no arguments. Host and device.
  template <class F>
  DYNASOAR_HD void apply(F&& f) const {
    f();
  }
};
/// A pack of at least one argument: its first and the rest.
template <class A, class... Rest>
struct ArgPack<A, Rest...> {
  A head;                  ///< the first argument
  ArgPack<Rest...> tail;   ///< the others
  /// Calls f(head, rest...). Host and device.
  template <class F>
  DYNASOAR_HD void apply(F&& f) const {
    tail.apply([&](const auto&... rest) { f(head, rest...); });
  }
};

/// The empty pack.
inline ArgPack<> pack_args() { return {}; }
/// Copies (or moves) the arguments, decayed, into a pack.
template <class A, class... Rest>
ArgPack<std::decay_t<A>, std::decay_t<Rest>...> pack_args(A&& a, Rest&&... rest) {
  return {std::forward<A>(a), pack_args(std::forward<Rest>(rest)...)};
}

}  // namespace dynasoar::platform
