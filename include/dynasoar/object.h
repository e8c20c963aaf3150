// What every object allocator of the framework shares, whatever its memory
// layout (SOA heap or plain structs on a byte allocator): the root class of
// user classes, the field-declaration macros, `destroy`, and device_do.
//
// An object allocator A (SoaAllocator, ByteAllocator; the ObjectAllocator
// concept below) is a trivially copyable device handle that derives from
// DeviceOps<A> (type ids, device_do) and provides
//   using Types = model::TypeList<...>;
//   using Registry = ...;    // model::ClassModel<Types>, or a layout that extends it
//   using Base = Object<A>;  // the root of the user's classes
//   using Handle = ...;      // its host handle (the BackendHandle concept, operations.h)
//   template <class C> C* allocate() const;        // memory for one C, or nullptr
//   template <class C> void free(C*) const;        // give it back (no destructor)
//   template <class C> static bool is_a(const void*);
//   template <class T, class F> void for_each_object(F&&) const;   // sequential
//   template <class C, std::size_t J, class T> static T* field_address(std::uint64_t object);
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#include "dynasoar/model/class_model.h"
#include "dynasoar/field.h"
#include "dynasoar/platform/config.h"

namespace dynasoar {

/// Member-function pointer traits: the class a method belongs to.
template <class M>
struct MethodClass;
/// MethodClass for a non-const method of C.
template <class C, class R, class... A>
struct MethodClass<R (C::*)(A...)> {
  /// The class that declares the method.
  using type = C;
};
/// MethodClass for a const method of C.
template <class C, class R, class... A>
struct MethodClass<R (C::*)(A...) const> {
  /// The class that declares the method.
  using type = C;
};

/// Run-time type id of class C in the type list Types, with a clear error
/// for a class that is not registered.
template <class Types, class C>
constexpr unsigned registered_type_id() {
  static_assert(
      model::kIndexOf<C, Types> != model::kNotFound,
      "this class is not registered with the allocator: add it to the allocator's type list");
  return static_cast<unsigned>(model::kIndexOf<C, Types>);
}

/// Compile-time checks of `new` of class C, shared by the allocators.
template <class Registry, class C>
constexpr bool check_allocatable() {
  static_assert(Registry::check());
  static_assert(!Registry::template Info<C>::kIsAbstract, "an abstract class cannot be allocated");
  return true;
}

/// Whether allocator A has its own for_each_object_staged (it says so with
/// `static constexpr bool kStagedWalk = true`). A trait rather than a
/// requires-expression on the call: nvcc's front end evaluated such an
/// expression to false in device code, which silently disabled staging.
template <class A, class = void>
inline constexpr bool kHasStagedWalk = false;
template <class A>
inline constexpr bool kHasStagedWalk<A, std::void_t<decltype(A::kStagedWalk)>> = A::kStagedWalk;

/// What every object allocator A shares (CRTP): type ids, and device_do
/// built on A::for_each_object.
template <class A>
class DeviceOps {
 public:
  /// Marks an object allocator, for which `destroy` is defined.
  static constexpr bool kIsObjectAllocator = true;

  /// Run-time type id of a registered class: its position in A::Types.
  template <class C>
  static constexpr unsigned type_id() {
    return registered_type_id<typename A::Types, C>();
  }

  /// Runs (obj->*Method)(args...) for every object of T and its subclasses,
  /// sequentially in the calling thread (paper: device_do). Objects created
  /// or deleted meanwhile may or may not be visited; the fields of an object
  /// deleted meanwhile are undefined (its slot may already hold another).
  template <class T, auto Method, class... Args>
  DYNASOAR_HD void device_do(Args&&... args) const {
    static_cast<const A*>(this)->template for_each_object<T>(
        [&](T* obj) { (obj->*Method)(args...); });
  }
  /// Same, with T taken from the method (the class that declares it).
  template <auto Method, class... Args>
  DYNASOAR_HD void device_do(Args&&... args) const {
    device_do<typename MethodClass<decltype(Method)>::type, Method>(std::forward<Args>(args)...);
  }

  /// Calls f(copy, object) for every object of T and its subclasses,
  /// sequentially in the calling thread, like device_do: `object` is the
  /// object, `copy` a read-only view of its fields that may be a copy in
  /// fast memory. Use `copy` to read and `object` for identity (comparing
  /// with `this`), for writes and for pointers kept after the call.
  ///
  /// With DYNASOAR_STAGED_DEVICE_DO=1, on the DynaSOAr heap on the GPU, when
  /// T has no registered subclass, the threads of a warp that call together
  /// copy each block of T into shared memory once and all read it from there
  /// (SoaAllocator::for_each_object_staged; off by default because it has
  /// been slower than the plain walk). Fields of visited
  /// objects must therefore not change during the call; changes made through
  /// `object` are not seen through the copies. Otherwise copy == object.
  template <class T, class F>
  DYNASOAR_HD void device_do_staged(F&& f) const {
    if constexpr (kHasStagedWalk<A>)
      static_cast<const A*>(this)->template for_each_object_staged<T>(f);
    else
      static_cast<const A*>(this)->template for_each_object<T>(
          [&](T* obj) { f(static_cast<const T*>(obj), obj); });
  }
};

/// The root of every user class (`AllocatorT::Base`). It has no data; it
/// gives classes the Field template and instance-of checks.
template <class Alloc>
class Object {
 public:
  /// The allocator the class is registered with.
  using Allocator = Alloc;
  /// dynasoar::Field, so that classes can write Field<Class, N> unqualified.
  template <class C, int N>
  using Field = ::dynasoar::Field<C, N>;

  /// True if this object is a C (or a subclass of C). Call it on an object,
  /// never through a null pointer (the compiler may assume `this` is not
  /// null); for a pointer that may be null use dynasoar::is_a<C>(p).
  template <class C>
  DYNASOAR_HD bool is_a() const {
    return Alloc::template is_a<C>(this);
  }
  /// This object as a C*, or nullptr if it is not a C. For a pointer that
  /// may be null use dynasoar::cast<C>(p).
  template <class C>
  DYNASOAR_HD C* cast() const {
    return is_a<C>() ? reinterpret_cast<C*>(const_cast<Object*>(this)) : nullptr;
  }
};

/// True if `p` points to a C (or a subclass of C); false for nullptr. Host
/// and device. The type comes from the pointer (SOA heap) or the
/// allocation's header (byte allocators), not from a virtual table.
template <class C, class P>
DYNASOAR_HD bool is_a(const P* p) {
  static_assert(std::is_same_v<typename C::Allocator, typename P::Allocator>,
                "is_a: C and the pointer's class belong to different allocators");
  return p != nullptr && P::Allocator::template is_a<C>(p);
}
/// `p` as a C*, or nullptr if it is null or not a C (dynamic_cast for
/// framework classes). Host and device.
template <class C, class P>
DYNASOAR_HD C* cast(P* p) {
  return is_a<C>(p) ? reinterpret_cast<C*>(const_cast<std::remove_const_t<P>*>(p)) : nullptr;
}

/// An object allocator (see the top of this file): what the member
/// templates need cannot be stated for every class, so the concept checks
/// the types and the trait that DeviceOps gives.
template <class A>
concept ObjectAllocator = std::is_trivially_copyable_v<A> && A::kIsObjectAllocator && requires {
  typename A::Types;
  typename A::Registry;
  typename A::Base;
  typename A::Handle;
};

/// Runs the destructor of `*p` and frees its memory (paper: destroy). The
/// destructor is the one of the static type T, as with `delete` of a class
/// without virtual functions. Null is ignored.
template <ObjectAllocator A, class T>
DYNASOAR_HD void destroy(const A& alloc, T* p) {
  if (p == nullptr) return;
  p->~T();
  alloc.free(p);
}
/// The same through a pointer to the allocator.
template <ObjectAllocator A, class T>
DYNASOAR_HD void destroy(const A* alloc, T* p) {
  destroy(*alloc, p);
}

}  // namespace dynasoar

// Implementation of the two declaration macros. Class-specific placement
// `operator new` makes `new (alloc) Class(args...)` allocate with the
// class's allocator;
// it is a template so that it is only compiled where it is used (abstract
// classes and classes still incomplete at this point are fine). `noexcept`:
// a null result (heap full) skips the constructor and yields nullptr.
#define DYNASOAR_DECLARE_FIELDS_(Class, Abstract, ...)                                             \
  using DynasoarThis = Class;                                                                      \
  using FieldTypes = ::dynasoar::model::TypeList<__VA_ARGS__>;                                       \
  static constexpr bool kDynasoarAbstract = Abstract;                                              \
  template <class DynasoarA,                                                                       \
            class =                                                                                \
                ::std::enable_if_t<::std::is_same_v<DynasoarA, typename DynasoarThis::Allocator>>> \
  DYNASOAR_HD static void* operator new(::std::size_t, const DynasoarA& alloc) noexcept {          \
    return alloc.template allocate<Class>();                                                       \
  }                                                                                                \
  template <class DynasoarA,                                                                       \
            class =                                                                                \
                ::std::enable_if_t<::std::is_same_v<DynasoarA, typename DynasoarThis::Allocator>>> \
  DYNASOAR_HD static void* operator new(::std::size_t, const DynasoarA* alloc) noexcept {          \
    return alloc->template allocate<Class>();                                                      \
  }                                                                                                \
  /* Called only if a constructor throws (host builds): give the slot back. */                     \
  template <class DynasoarA,                                                                       \
            class =                                                                                \
                ::std::enable_if_t<::std::is_same_v<DynasoarA, typename DynasoarThis::Allocator>>> \
  DYNASOAR_HD static void operator delete(void* p, const DynasoarA& alloc) noexcept {              \
    alloc.free(static_cast<Class*>(p));                                                            \
  }                                                                                                \
  template <class DynasoarA,                                                                       \
            class =                                                                                \
                ::std::enable_if_t<::std::is_same_v<DynasoarA, typename DynasoarThis::Allocator>>> \
  DYNASOAR_HD static void operator delete(void* p, const DynasoarA* alloc) noexcept {              \
    alloc->free(static_cast<Class*>(p));                                                           \
  }

/// Declares the types of the fields a class adds to its base class, in the
/// order of their Field<Class, 0>, Field<Class, 1>, ... members (paper
/// Listing 1). Put it in the public part of the class. A class that adds no
/// fields writes declare_field_types(Class).
#define declare_field_types(Class, ...) \
  DYNASOAR_DECLARE_FIELDS_(Class, false __VA_OPT__(, ) __VA_ARGS__)

/// The same for an abstract class: it is never allocated and has no blocks;
/// its fields and methods are used through its subclasses.
#define declare_abstract_field_types(Class, ...) \
  DYNASOAR_DECLARE_FIELDS_(Class, true __VA_OPT__(, ) __VA_ARGS__)
