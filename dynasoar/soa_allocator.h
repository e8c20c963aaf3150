// The device side of the DynaSOAr API (paper Sec. 2.1): the allocator handle
// kernels receive by value, the root class every user class derives from,
// the field-declaration macros, and `new (alloc) T(...)` / `destroy`.
//
//   class Body;
//   using AllocatorT = dynasoar::SoaAllocator<Body>;
//   class Body : public AllocatorT::Base {
//    public:
//     declare_field_types(Body, float, float)
//     Field<Body, 0> pos;
//     Field<Body, 1> vel;
//     DYNASOAR_HD Body(int i) : pos(i), vel(1.0f) {}
//     DYNASOAR_HD void move() { pos += vel; }
//   };
//
// The host side (owning the heap, parallel_new/parallel_do) is
// dynasoar::AllocatorHandle in allocator_handle.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "allocator/soa/heap.h"
#include "allocator/soa/layout.h"
#include "allocator/soa/object_pointer.h"
#include "allocator/soa/type_list.h"
#include "dynasoar/field.h"
#include "platform/config.h"

namespace dynasoar {

template <class Alloc>
class Object;

/// Member-function pointer traits: the class a method belongs to.
template <class M>
struct MethodClass;
template <class C, class R, class... A>
struct MethodClass<R (C::*)(A...)> {
  using type = C;
};
template <class C, class R, class... A>
struct MethodClass<R (C::*)(A...) const> {
  using type = C;
};

/// The allocator as kernels see it: a trivially copyable handle of the heap
/// owned by an AllocatorHandle. Ts are all classes that may be allocated,
/// abstract base classes included, in any order.
template <class... Ts>
class SoaAllocator {
 public:
  using Types = soa::TypeList<Ts...>;
  using Registry = soa::Registry<Types>;
  using Base = Object<SoaAllocator>;

  SoaAllocator() = default;
  DYNASOAR_HD explicit SoaAllocator(soa::HeapState* state) : state_(state) {}

  /// Run-time type id of a registered class.
  template <class C>
  static constexpr unsigned type_id() {
    static_assert(soa::kIndexOf<C, Types> != soa::kNotFound,
                  "this class is not registered with the allocator: add it to SoaAllocator<...>");
    return static_cast<unsigned>(soa::kIndexOf<C, Types>);
  }

  /// Memory for one object of C (not constructed), or nullptr when the heap
  /// is full. `new (alloc) C(args...)` calls this and then the constructor.
  template <class C>
  DYNASOAR_HD C* allocate() const {
    static_assert(Registry::check());
    static_assert(!Registry::template Info<C>::kIsAbstract, "an abstract class cannot be allocated");
    return reinterpret_cast<C*>(state_->allocate(type_id<C>()));
  }

  /// Returns an object's slot to the heap without running its destructor.
  template <class C>
  DYNASOAR_HD void free(C* p) const {
    if (p == nullptr) return;
    state_->deallocate(reinterpret_cast<std::uint64_t>(p));
  }

  /// True if `p` points to an object of class C or of a subclass of C.
  template <class C>
  DYNASOAR_HD static bool is_a(const void* p) {
    const auto bits = reinterpret_cast<std::uint64_t>(p);
    return bits != 0 && ((Registry::template kConcreteSubtypes<C> >> soa::pointer_type(bits)) & 1u) != 0;
  }

  /// Runs (obj->*Method)(args...) for every object of T and its subclasses,
  /// sequentially in the calling thread (paper: device_do). Objects created
  /// or deleted meanwhile may or may not be visited.
  template <class T, auto Method, class... Args>
  DYNASOAR_HD void device_do(Args&&... args) const {
    for_each_object<T>([&](T* obj) { (obj->*Method)(args...); });
  }
  /// Same, with T taken from the method (the class that declares it).
  template <auto Method, class... Args>
  DYNASOAR_HD void device_do(Args&&... args) const {
    device_do<typename MethodClass<decltype(Method)>::type, Method>(std::forward<Args>(args)...);
  }

  /// f(T*) for every live object of T and its subclasses, in this thread.
  template <class T, class F>
  DYNASOAR_HD void for_each_object(F&& f) const {
    constexpr std::uint64_t types = Registry::template kConcreteSubtypes<T>;
    for (std::uint64_t pending = types; pending != 0; pending &= pending - 1) {
      const auto type = static_cast<unsigned>(platform::ctz(pending));
      const unsigned cap = state_->capacity[type];
      state_->allocated[type].for_each_set([&](bit_index block) {
        for (soa::word w = state_->live_slots(block, type); w != 0; w &= w - 1)
          f(reinterpret_cast<T*>(soa::make_pointer(state_->block_address(block),
                                                   static_cast<unsigned>(platform::ctz(w)), cap, type)));
      });
    }
  }

  DYNASOAR_HD soa::HeapState* state() const { return state_; }

 private:
  soa::HeapState* state_ = nullptr;
};

/// The root of every user class (`AllocatorT::Base`). It has no data; it
/// gives classes the Field template and instance-of checks.
template <class Alloc>
class Object {
 public:
  using Allocator = Alloc;
  template <class C, int N>
  using Field = ::dynasoar::Field<C, N>;

  /// True if this object is a C (or a subclass of C).
  template <class C>
  DYNASOAR_HD bool is_a() const {
    return Alloc::template is_a<C>(this);
  }
  /// This object as a C*, or nullptr if it is not a C.
  template <class C>
  DYNASOAR_HD C* cast() const {
    return is_a<C>() ? reinterpret_cast<C*>(const_cast<Object*>(this)) : nullptr;
  }
};

/// Runs the destructor of `*p` and frees its slot (paper: destroy). The
/// destructor is the one of the static type T, as with `delete` of a class
/// without virtual functions. Null is ignored.
template <class... Ts, class T>
DYNASOAR_HD void destroy(const SoaAllocator<Ts...>& alloc, T* p) {
  if (p == nullptr) return;
  p->~T();
  alloc.free(p);
}
template <class... Ts, class T>
DYNASOAR_HD void destroy(const SoaAllocator<Ts...>* alloc, T* p) {
  destroy(*alloc, p);
}

}  // namespace dynasoar

// Implementation of the two declaration macros. Class-specific placement
// `operator new` makes `new (alloc) Class(args...)` allocate in the SOA heap;
// it is a template so that it is only compiled where it is used (abstract
// classes and classes still incomplete at this point are fine). `noexcept`:
// a null result (heap full) skips the constructor and yields nullptr.
#define DYNASOAR_DECLARE_FIELDS_(Class, Abstract, ...)                                         \
  using DynasoarThis = Class;                                                                  \
  using FieldTypes = ::dynasoar::soa::TypeList<__VA_ARGS__>;                                   \
  static constexpr bool kDynasoarAbstract = Abstract;                                          \
  template <class DynasoarA, class = ::std::enable_if_t<::std::is_same_v<DynasoarA, Allocator>>> \
  DYNASOAR_HD static void* operator new(::std::size_t, const DynasoarA& alloc) noexcept {      \
    return alloc.template allocate<Class>();                                                   \
  }                                                                                            \
  template <class DynasoarA, class = ::std::enable_if_t<::std::is_same_v<DynasoarA, Allocator>>> \
  DYNASOAR_HD static void* operator new(::std::size_t, const DynasoarA* alloc) noexcept {      \
    return alloc->template allocate<Class>();                                                  \
  }                                                                                            \
  /* Called only if a constructor throws (host builds): give the slot back. */                 \
  template <class DynasoarA, class = ::std::enable_if_t<::std::is_same_v<DynasoarA, Allocator>>> \
  DYNASOAR_HD static void operator delete(void* p, const DynasoarA& alloc) noexcept {          \
    alloc.free(static_cast<Class*>(p));                                                        \
  }                                                                                            \
  template <class DynasoarA, class = ::std::enable_if_t<::std::is_same_v<DynasoarA, Allocator>>> \
  DYNASOAR_HD static void operator delete(void* p, const DynasoarA* alloc) noexcept {          \
    alloc->free(static_cast<Class*>(p));                                                       \
  }

/// Declares the types of the fields a class adds to its base class, in the
/// order of their Field<Class, 0>, Field<Class, 1>, ... members (paper
/// Listing 1). Put it in the public part of the class. A class that adds no
/// fields writes declare_field_types(Class).
#define declare_field_types(Class, ...) DYNASOAR_DECLARE_FIELDS_(Class, false __VA_OPT__(, ) __VA_ARGS__)

/// The same for an abstract class: it is never allocated and has no blocks;
/// its fields and methods are used through its subclasses.
#define declare_abstract_field_types(Class, ...) \
  DYNASOAR_DECLARE_FIELDS_(Class, true __VA_OPT__(, ) __VA_ARGS__)
