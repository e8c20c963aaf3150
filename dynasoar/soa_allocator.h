// The device side of the DynaSOAr API (paper Sec. 2.1) on the SOA heap: the
// allocator handle kernels receive by value. The root class, the
// field-declaration macros and `destroy` are shared by every back end
// (dynasoar/object.h).
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
#include "dynasoar/object.h"
#include "platform/config.h"

namespace dynasoar {

template <class Alloc>
class SoaHandle;

/// The allocator as kernels see it: a trivially copyable handle of the heap
/// owned by an AllocatorHandle. Ts are all classes that may be allocated,
/// abstract base classes included, in any order.
template <class... Ts>
class SoaAllocator : public DeviceOps<SoaAllocator<Ts...>> {
 public:
  using Types = soa::TypeList<Ts...>;
  using Registry = soa::Registry<Types>;
  using Base = Object<SoaAllocator>;
  /// The host handle that owns the heap (dynasoar/allocator_handle.h).
  using Handle = SoaHandle<SoaAllocator>;
  static constexpr bool kIsObjectAllocator = true;
  static constexpr const char* kBackendName = "dynasoar";

  SoaAllocator() = default;
  DYNASOAR_HD explicit SoaAllocator(soa::HeapState* state) : state_(state) {}

  /// Run-time type id of a registered class.
  template <class C>
  static constexpr unsigned type_id() {
    return registered_type_id<Types, C>();
  }

  /// Memory for one object of C (not constructed), or nullptr when the heap
  /// is full. `new (alloc) C(args...)` calls this and then the constructor.
  template <class C>
  DYNASOAR_HD C* allocate() const {
    static_assert(check_allocatable<Registry, C>());
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
    return bits != 0 &&
           ((Registry::template kConcreteSubtypes<C> >> soa::pointer_type(bits)) & 1u) != 0;
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
          f(reinterpret_cast<T*>(soa::make_pointer(
              state_->block_address(block), static_cast<unsigned>(platform::ctz(w)), cap, type)));
      });
    }
  }

  /// Address of field J (global index, of type T) of the object at
  /// `object`, whose static class has layout Info (Field's data_ptr).
  template <class Info, std::size_t J, class T>
  DYNASOAR_HD DYNASOAR_FORCEINLINE static T* field_address(std::uint64_t object) {
    return soa::field_address<Info, J, T>(object);
  }

  DYNASOAR_HD soa::HeapState* state() const { return state_; }

 private:
  soa::HeapState* state_ = nullptr;
};

}  // namespace dynasoar
