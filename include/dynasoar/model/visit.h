// The walk over the classes an operation on T reaches: T and every concrete
// class derived from it (paper Sec. 3.1: a parallel_do over T runs on the
// objects of its subclasses too). Each back end builds its parallel_do,
// count and device_do on these two loops.
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/names.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::model {

/// f(type id) for every concrete class that is T or derives from it (only T
/// if kWithSubclasses is false), in type-id order. Host only.
template <class Registry, class T, bool kWithSubclasses = true, class F>
void for_each_concrete(F&& f) {
  for (std::uint64_t m = Registry::template kVisitedTypes<T, kWithSubclasses>; m != 0; m &= m - 1)
    f(static_cast<unsigned>(platform::ctz(m)));
}

/// The same, with the type id as a compile-time constant
/// (std::integral_constant<unsigned, id>), so that code instantiated per
/// class (do-all kernels, the walk of device_do) knows its capacity and the
/// pointer bits it makes. Host and device. f must stay usable in constant
/// expressions (no local with a destructor): nvcc warns otherwise (#20014).
template <class Registry, class T, bool kWithSubclasses = true, class F>
DYNASOAR_HD DYNASOAR_FORCEINLINE void for_each_concrete_constant(F&& f) {
  constexpr std::uint64_t kTypes = Registry::template kVisitedTypes<T, kWithSubclasses>;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          if constexpr (((kTypes >> I) & 1u) != 0)
            f(std::integral_constant<unsigned, static_cast<unsigned>(I)>{});
        }(),
        ...);
  }(std::make_index_sequence<Registry::kNumTypes>{});
}

/// The compiler's name of the registered class with id `type`
/// (platform::pretty_type_name), for messages. Host only.
template <class Registry>
const char* class_name(unsigned type) {
  static const auto names = []<class... Ts>(TypeList<Ts...>) {
    return std::array<const char*, sizeof...(Ts)>{platform::pretty_type_name<Ts>()...};
  }(typename Registry::Types{});
  return names[type];
}

}  // namespace dynasoar::model
