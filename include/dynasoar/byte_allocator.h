// The device side of the API on a byte allocator (a raw allocator: the CMalloc
// family, CUDA's malloc, ScatterAlloc, XMalloc): each object is one
// allocation with the plain struct layout of
// dynasoar/allocator/registry/struct_layout.h, and the generic object registry
// (dynasoar/allocator/registry/registry.h) stands in for the enumeration the
// allocator lacks (Springer & Masuhara 2019, Sec. 6). User classes are written exactly
// as for SoaAllocator; only the allocator type differs:
//
//   class Body;
//   using AllocatorT = dynasoar::ByteAllocator<dynasoar::cmalloc::CFMMalloc, Body>;
//   class Body : public AllocatorT::Base { ... };   // as for SoaAllocator
//
// Usually the type comes from dynasoar::Allocator<...> (dynasoar/backend.h),
// which picks the back end at build time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dynasoar/allocator/registry/registry.h"
#include "dynasoar/allocator/registry/struct_layout.h"
#include "dynasoar/model/class_model.h"
#include "dynasoar/object.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"

namespace dynasoar {

template <class Alloc>
class ByteAllocatorHandle;

/// Raw: a raw allocator (raw::RawAllocator: malloc(bytes), free(p), 16-byte
/// aligned). Ts: every class that may be allocated, abstract ones included.
template <class Raw, class... Ts>
class ByteAllocator : public DeviceOps<ByteAllocator<Raw, Ts...>> {
 public:
  /// The registered classes, in the order that gives their type ids.
  using Types = model::TypeList<Ts...>;
  /// The compile-time table of those classes (ids, subclasses, field layouts).
  using Registry = model::ClassModel<Types>;
  /// The root class user classes derive from (`AllocatorT::Base`).
  using Base = Object<ByteAllocator>;
  /// The raw allocator the objects are allocated with.
  using RawAllocator = Raw;
  /// The host handle that owns the pool and the registry (dynasoar/byte_allocator_handle.h).
  using Handle = ByteAllocatorHandle<ByteAllocator>;
  /// Name of the back end in error messages: the raw allocator's name.
  static constexpr const char* kBackendName = Raw::kName;

  /// Allocation bytes of an object of C (header and fields).
  template <class C>
  static constexpr std::uint64_t kObjectBytes =
      registry::StructLayout<typename Registry::template Info<C>::AllFields>::kBytes;

  /// The same by type id.
  static constexpr std::uint64_t kObjectBytesById[sizeof...(Ts)] = {kObjectBytes<Ts>...};

  ByteAllocator() = default;
  /// A handle on the raw allocator `raw` and the registry `objects`, as
  /// ByteAllocatorHandle::device() makes it. Host and device.
  DYNASOAR_HD ByteAllocator(Raw raw, registry::ObjectRegistry objects)
      : raw_(raw), objects_(objects) {}

  /// Memory for one object of C (not constructed), or nullptr when the
  /// allocator or the class's registry array is full (an error flag is
  /// raised either way; the handle's check_errors() reports it).
  template <class C>
  DYNASOAR_HD C* allocate() const {
    static_assert(check_allocatable<Registry, C>());
    void* p = raw_.malloc(kObjectBytes<C>);
    if (p == nullptr) return nullptr;
    if (!objects_.add(ByteAllocator::template type_id<C>(), p)) {
      raw_.free(p);
      return nullptr;
    }
    return static_cast<C*>(p);
  }

  /// Forgets the object and frees its memory without running its destructor.
  /// A pointer that is no live object of this heap (destroyed before, or of
  /// another heap) is left alone and raises the registry's error flag
  /// (ObjectRegistry::remove).
  template <class C>
  DYNASOAR_HD void free(C* p) const {
    if (p == nullptr) return;
    if (objects_.remove(p)) raw_.free(p);
  }

  /// True if `p` points to an object of class C or of a subclass of C.
  template <class C>
  DYNASOAR_HD static bool is_a(const void* p) {
    return p != nullptr &&
           ((Registry::template kConcreteSubtypes<C> >> registry::ObjectRegistry::type_of(p)) &
            1u) != 0;
  }

  /// f(T*) for every live object of T and its subclasses, in this thread.
  template <class T, class F>
  DYNASOAR_HD void for_each_object(F&& f) const {
    for (std::uint64_t pending = Registry::template kConcreteSubtypes<T>; pending != 0;
         pending &= pending - 1) {
      const auto type = static_cast<unsigned>(platform::ctz(pending));
      const unsigned long long n = objects_.end(type);
      for (unsigned long long i = 0; i < n; ++i)
        if (void* p = objects_.entry(type, i)) f(static_cast<T*>(p));
    }
  }

  /// Address of field J (global index, of type T) of the object at `object`.
  template <class C, std::size_t J, class T>
  DYNASOAR_HD DYNASOAR_FORCEINLINE static T* field_address(std::uint64_t object) {
    return reinterpret_cast<T*>(
        object + registry::StructLayout<typename Registry::template Info<C>::AllFields>::template kOffset<J>);
  }

  /// The raw allocator the objects are allocated with.
  DYNASOAR_HD const Raw& raw() const { return raw_; }
  /// The object registry: the live objects of every class.
  DYNASOAR_HD const registry::ObjectRegistry& objects() const { return objects_; }

 private:
  Raw raw_{};
  registry::ObjectRegistry objects_{};
};

}  // namespace dynasoar
