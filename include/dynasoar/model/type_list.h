// Compile-time lists of types: the registered classes of an allocator and
// the field types of a class. The class model's vocabulary (model/).
#pragma once

#include <cstddef>
#include <type_traits>

namespace dynasoar::model {

/// A list of types, used only at compile time.
template <class... Ts>
struct TypeList {
  static constexpr std::size_t size = sizeof...(Ts);  ///< Number of types in the list.
};

/// kIndexOf's result for a type that is not in the list.
inline constexpr std::size_t kNotFound = static_cast<std::size_t>(-1);

namespace detail {
template <std::size_t I, class List>
struct At;
template <class T, class... Ts>
struct At<0, TypeList<T, Ts...>> {
  using type = T;
};
template <std::size_t I, class T, class... Ts>
struct At<I, TypeList<T, Ts...>> : At<I - 1, TypeList<Ts...>> {};

template <class A, class B>
struct Concat;
template <class... As, class... Bs>
struct Concat<TypeList<As...>, TypeList<Bs...>> {
  using type = TypeList<As..., Bs...>;
};
}  // namespace detail

/// The I-th type of List.
template <class List, std::size_t I>
using At = typename detail::At<I, List>::type;

/// A list followed by another.
template <class A, class B>
using Concat = typename detail::Concat<A, B>::type;

/// Position of T in TypeList<Ts...>, or kNotFound.
template <class T, class List>
inline constexpr std::size_t kIndexOf = kNotFound;
template <class T, class... Ts>
inline constexpr std::size_t kIndexOf<T, TypeList<Ts...>> = [] {
  constexpr bool same[] = {std::is_same_v<T, Ts>..., false};
  for (std::size_t i = 0; i < sizeof...(Ts); ++i)
    if (same[i]) return i;
  return kNotFound;
}();

/// Whether no type appears twice among Ts.
template <class... Ts>
inline constexpr bool kAllDistinct = [] {
  constexpr std::size_t index[] = {kIndexOf<Ts, TypeList<Ts...>>..., 0};
  for (std::size_t i = 0; i < sizeof...(Ts); ++i)
    if (index[i] != i) return false;
  return true;
}();

/// f(std::type_identity<T>{}) for every T of the list, in order: a loop
/// over a list of types (back ends, classes) in host code.
template <class... Ts, class F>
constexpr void for_each_type(TypeList<Ts...>, F&& f) {
  (f(std::type_identity<Ts>{}), ...);
}

}  // namespace dynasoar::model
