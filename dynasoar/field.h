// Field<C, N>: the proxy a class declares for its N-th field (DynaSOAr paper
// Sec. 3.3 and App. B, after Ikra-Cpp). The proxy stores nothing; each one is
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

#include "allocator/soa/layout.h"
#include "allocator/soa/object_pointer.h"
#include "platform/config.h"

namespace dynasoar {

template <class C, int N>
class Field {
  template <class Class = C>
  using Info = soa::ClassInfo<typename Class::Allocator::Types, Class>;
  template <class Class = C>
  static constexpr std::size_t index() {
    return Info<Class>::kNumInherited + static_cast<std::size_t>(N);
  }

 public:
  using value_type = soa::At<typename C::FieldTypes, static_cast<std::size_t>(N)>;
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
    return C::Allocator::template field_address<Info<>, index(), T>(object);
  }
  DYNASOAR_HD DYNASOAR_FORCEINLINE T& get() const { return *data_ptr(); }
  DYNASOAR_HD DYNASOAR_FORCEINLINE operator T&() const { return get(); }  // NOLINT
  DYNASOAR_HD DYNASOAR_FORCEINLINE T* operator&() const { return data_ptr(); }

  DYNASOAR_HD DYNASOAR_FORCEINLINE Field& operator=(const T& v) {
    get() = v;
    return *this;
  }
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
  DYNASOAR_FIELD_COMPOUND(+=)
  DYNASOAR_FIELD_COMPOUND(-=)
  DYNASOAR_FIELD_COMPOUND(*=)
  DYNASOAR_FIELD_COMPOUND(/=)
  DYNASOAR_FIELD_COMPOUND(%=)
  DYNASOAR_FIELD_COMPOUND(&=)
  DYNASOAR_FIELD_COMPOUND(|=)
  DYNASOAR_FIELD_COMPOUND(^=)
  DYNASOAR_FIELD_COMPOUND(<<=)
  DYNASOAR_FIELD_COMPOUND(>>=)
#undef DYNASOAR_FIELD_COMPOUND

  DYNASOAR_HD DYNASOAR_FORCEINLINE T& operator++() { return ++get(); }
  DYNASOAR_HD DYNASOAR_FORCEINLINE T& operator--() { return --get(); }
  template <class U = T, class = std::enable_if_t<!std::is_array_v<U>>>
  DYNASOAR_HD DYNASOAR_FORCEINLINE U operator++(int) {
    return get()++;
  }
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
