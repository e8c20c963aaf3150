// Field<C, N>: the proxy a class declares for its N-th field (Springer & Masuhara
// 2019, Sec. 3.3 and App. B, after Ikra-Cpp). The proxy stores nothing; each one is
// a one-byte member, so its own address is the object pointer plus the
// field's position in the class. From that it recovers the object pointer,
// reads block, slot and capacity from it and yields a reference to the value
// in the field's SOA array of the block.
//
//   class Body : public AllocatorT::Base {
//    public:
//     declare_field_types(Body, float, float)
//     Field<Body, 0> pos;     // declare the fields in order, 0, 1, ...
//     Field<Body, 1> vel;
//     DYNASOAR_HD void move() { pos += vel; }
//   };
//
// Use a field like a value of its type: read it (implicit conversion),
// assign and compound-assign, `->` for struct and pointer fields, `[]` for
// array fields, `&` for the address of the value. A proxy cannot be copied:
// `auto v = body->pos;` does not compile; write `float v = body->pos;`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "dynasoar/model/class_model.h"
#include "dynasoar/platform/config.h"

namespace dynasoar {

/// The proxy for field N of class C: it stores nothing, and reads and writes
/// the value in the SOA array of the object's block (or the plain struct of a
/// byte allocator). Host and device; it cannot be copied.
template <class C, int N>
class Field {
  template <class Class = C>
  using Info = model::ClassInfo<typename Class::Allocator::Types, Class>;
  template <class Class = C>
  static constexpr std::size_t index() {
    return Info<Class>::kNumInherited + static_cast<std::size_t>(N);
  }

 public:
  /// The type of the value: the N-th type of C's declare_field_types.
  using value_type = model::At<typename C::FieldTypes, static_cast<std::size_t>(N)>;
  /// Short name of value_type.
  using T = value_type;

  Field() = default;
  Field(const Field&) = delete;
  /// Initialises the value (member initialiser lists of constructors).
  /// Explicit, so that `cond ? field : 1.0` has one meaning (the field's
  /// value), as a plain member would.
  DYNASOAR_HD explicit Field(const T& v) { get() = v; }

  /// The value's address in its SOA array.
  DYNASOAR_HD DYNASOAR_FORCEINLINE T* data_ptr() const {
    const auto object = reinterpret_cast<std::uintptr_t>(this) - index();
    return C::Allocator::template field_address<C, index(), T>(object);
  }
  /// The value, as a reference into its array.
  DYNASOAR_HD DYNASOAR_FORCEINLINE T& get() const { return *data_ptr(); }
  /// Reads or writes the value like a plain member (implicit conversion).
  DYNASOAR_HD DYNASOAR_FORCEINLINE operator T&() const { return get(); }  // NOLINT
  /// The address of the value, not of the proxy.
  DYNASOAR_HD DYNASOAR_FORCEINLINE T* operator&() const { return data_ptr(); }

  /// Assigns the value.
  DYNASOAR_HD DYNASOAR_FORCEINLINE Field& operator=(const T& v) {
    get() = v;
    return *this;
  }
  /// Assigns the value of another field of the same type (the proxies stay).
  DYNASOAR_HD DYNASOAR_FORCEINLINE Field& operator=(const Field& other) {
    get() = other.get();
    return *this;
  }

#define DYNASOAR_FIELD_COMPOUND(op)                                     \
  template <class U>                                                    \
  DYNASOAR_HD DYNASOAR_FORCEINLINE Field& operator op(const U& value) { \
    get() op value;                                                     \
    return *this;                                                       \
  }
  /// Adds `value` to the value.
  DYNASOAR_FIELD_COMPOUND(+=)
  /// Subtracts `value` from the value.
  DYNASOAR_FIELD_COMPOUND(-=)
  /// Multiplies the value by `value`.
  DYNASOAR_FIELD_COMPOUND(*=)
  /// Divides the value by `value`.
  DYNASOAR_FIELD_COMPOUND(/=)
  /// Replaces the value by its remainder modulo `value`.
  DYNASOAR_FIELD_COMPOUND(%=)
  /// Bitwise and of the value with `value`.
  DYNASOAR_FIELD_COMPOUND(&=)
  /// Bitwise or of the value with `value`.
  DYNASOAR_FIELD_COMPOUND(|=)
  /// Bitwise exclusive or of the value with `value`.
  DYNASOAR_FIELD_COMPOUND(^=)
  /// Shifts the value left by `value` bits.
  DYNASOAR_FIELD_COMPOUND(<<=)
  /// Shifts the value right by `value` bits.
  DYNASOAR_FIELD_COMPOUND(>>=)
#undef DYNASOAR_FIELD_COMPOUND

  /// Increments the value; returns a reference to it.
  DYNASOAR_HD DYNASOAR_FORCEINLINE T& operator++() { return ++get(); }
  /// Decrements the value; returns a reference to it.
  DYNASOAR_HD DYNASOAR_FORCEINLINE T& operator--() { return --get(); }
  /// Increments the value; returns the old value (not for array fields).
  template <class U = T, class = std::enable_if_t<!std::is_array_v<U>>>
  DYNASOAR_HD DYNASOAR_FORCEINLINE U operator++(int) {
    return get()++;
  }
  /// Decrements the value; returns the old value (not for array fields).
  template <class U = T, class = std::enable_if_t<!std::is_array_v<U>>>
  DYNASOAR_HD DYNASOAR_FORCEINLINE U operator--(int) {
    return get()--;
  }

  /// Member access: of the struct for a struct field, of the pointee for a
  /// pointer field.
  DYNASOAR_HD DYNASOAR_FORCEINLINE auto operator->() const {
    if constexpr (std::is_pointer_v<T>)
      return get();
    else
      return data_ptr();
  }
  /// Dereference of a pointer field.
  template <class U = T, class = std::enable_if_t<std::is_pointer_v<U>>>
  DYNASOAR_HD DYNASOAR_FORCEINLINE auto& operator*() const {
    return *get();
  }
  /// Element of an array field (a C array or a class with operator[]). The
  /// index is taken by reference: it may be another field (a proxy cannot
  /// be copied).
  template <class I>
  DYNASOAR_HD DYNASOAR_FORCEINLINE decltype(auto) operator[](const I& i) const {
    return get()[i];
  }
};

}  // namespace dynasoar
