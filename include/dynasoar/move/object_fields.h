// The fields of an object as the move layer sees them, generated from the
// class model at compile time: which fields hold object pointers and to
// which classes they may point, and the walks that copy an object field by
// field and visit every pointer it holds.
//
// Moving objects (compaction, checkpoints, migration between ranks) does the
// same three things to a class's objects: copy their fields elsewhere, and
// rewrite every pointer that referred to the old place (CompactGpu,
// Springer & Masuhara, ISMM 2019, Sec. 3). This header is the part that
// depends on the user's classes; compaction is move/defrag.h,
// the file format's is move/checkpoint.h.
//
// An object pointer field is one whose type is `U*` for a class U that is a
// registered class or a base of one, or a C array or std::array of such
// pointers (of any rank). Other pointers (`void*`, `int*`, pointers into
// memory of your own) and pointers inside structs are plain values: moving
// an object copies them unchanged (docs/guide/moving-objects.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "dynasoar/allocator/soa/object_pointer.h"
#include "dynasoar/model/class_model.h"
#include "dynasoar/model/type_list.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::move {

/// The object pointers a field of type F holds: kCount elements of type
/// `Pointee*` (kCount 0: none). Pointers, C arrays and std::arrays of them.
template <class F>
struct PointerSlots {
  using Pointee = void;                     ///< none: not a pointer
  static constexpr std::size_t kCount = 0;  ///< no object pointers
};
/// A pointer: one object pointer if it points to a class.
template <class U>
struct PointerSlots<U*> {
  using Pointee = std::remove_cv_t<U>;  ///< the class it points to
  /// 1 for a pointer to a class, 0 for one to anything else (`int*`, `void*`).
  static constexpr std::size_t kCount = std::is_class_v<Pointee> ? 1 : 0;
};
/// A C array: N times what one element holds.
template <class E, std::size_t N>
struct PointerSlots<E[N]> {
  using Pointee = typename PointerSlots<E>::Pointee;                    ///< the elements' pointee
  static constexpr std::size_t kCount = PointerSlots<E>::kCount * N;  ///< pointers of all elements
};
/// A std::array: as the C array.
template <class E, std::size_t N>
struct PointerSlots<std::array<E, N>> : PointerSlots<E[N]> {};

/// What the move layer knows of class C of the model Registry (a
/// soa::Registry: a class model with a block layout).
template <class Registry, class C>
struct ObjectFields {
  /// Field types of C, inherited ones first.
  using Fields = typename Registry::template Info<C>::AllFields;
  /// Number of fields.
  static constexpr std::size_t kNumFields = Fields::size;
  /// Type of field J.
  template <std::size_t J>
  using FieldType = model::At<Fields, J>;

  /// The registered concrete classes a pointer field of static pointee P
  /// may point to: P and every registered class derived from it.
  template <class P>
  static constexpr std::uint64_t kReferable = [] {
    if constexpr (std::is_same_v<P, void>) {
      return std::uint64_t{0};
    } else {
      return []<std::size_t... I>(std::index_sequence<I...>) {
        using Types = typename Registry::Types;
        return ((std::is_base_of_v<P, model::At<Types, I>> && Registry::kCapacityById[I] != 0
                     ? std::uint64_t{1} << I
                     : std::uint64_t{0}) |
                ... | std::uint64_t{0});
      }
      (std::make_index_sequence<Registry::kNumTypes>{});
    }
  }();

  /// The classes (type-id mask) field J's pointers may point to; 0 for a
  /// field that holds no object pointer.
  template <std::size_t J>
  static constexpr std::uint64_t kFieldTargets =
      PointerSlots<FieldType<J>>::kCount == 0
          ? 0
          : kReferable<typename PointerSlots<FieldType<J>>::Pointee>;

  /// Object pointers held by field J (0 if it holds none).
  template <std::size_t J>
  static constexpr std::size_t kFieldPointers =
      kFieldTargets<J> == 0 ? 0 : PointerSlots<FieldType<J>>::kCount;

  /// Every class some field of C may point to.
  static constexpr std::uint64_t kTargets = []<std::size_t... J>(std::index_sequence<J...>) {
    return (kFieldTargets<J> | ... | std::uint64_t{0});
  }
  (std::make_index_sequence<kNumFields>{});

  /// Address of field J's value in the object at `object` (its pointer bits).
  template <std::size_t J>
  DYNASOAR_HD DYNASOAR_FORCEINLINE static FieldType<J>* address(std::uint64_t object) {
    return soa::field_address<typename Registry::template Info<C>, J, FieldType<J>>(object);
  }

  /// Copies every field of the object at `from` to the object at `to`, of
  /// the same runtime class C, byte by byte (no constructor, assignment or
  /// destructor runs: the object moves, it is not copied).
  DYNASOAR_HD static void copy(std::uint64_t from, std::uint64_t to) {
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (std::memcpy(static_cast<void*>(address<J>(to)), static_cast<const void*>(address<J>(from)),
                   sizeof(FieldType<J>)),
       ...);
    }
    (std::make_index_sequence<kNumFields>{});
  }

  /// f(std::uint64_t& pointer) for every object pointer held by the object
  /// at `object` in a field that may point to a class of kMask (null ones
  /// too). The pointer's bits are read and written in place.
  template <std::uint64_t kMask, class F>
  DYNASOAR_HD static void for_each_pointer(std::uint64_t object, F&& f) {
    [&]<std::size_t... J>(std::index_sequence<J...>) { (visit_field<J, kMask, false>(object, f), ...); }
    (std::make_index_sequence<kNumFields>{});
  }

  /// The same walk, telling f where each pointer is and what it may point
  /// to: f(std::uint64_t& pointer, std::size_t field, std::uint64_t
  /// targets), with the field's index J and kFieldTargets<J>. Checkpoints
  /// check a pointer read from a file against its field's classes.
  template <std::uint64_t kMask, class F>
  DYNASOAR_HD static void for_each_pointer_field(std::uint64_t object, F&& f) {
    [&]<std::size_t... J>(std::index_sequence<J...>) { (visit_field<J, kMask, true>(object, f), ...); }
    (std::make_index_sequence<kNumFields>{});
  }

 private:
  template <std::size_t J, std::uint64_t kMask, bool kWithField, class F>
  DYNASOAR_HD DYNASOAR_FORCEINLINE static void visit_field(std::uint64_t object, F& f) {
    if constexpr ((kFieldTargets<J> & kMask) != 0) {
      static_assert(sizeof(void*) == sizeof(std::uint64_t), "object pointers are 64-bit");
      auto* bits = reinterpret_cast<std::uint64_t*>(address<J>(object));
      for (std::size_t i = 0; i < kFieldPointers<J>; ++i) {
        if constexpr (kWithField)
          f(bits[i], J, kFieldTargets<J>);
        else
          f(bits[i]);
      }
    }
  }
};

/// The classes (type-id mask) whose objects hold a pointer field that may
/// point to a class of kMask: the classes whose objects a move of kMask's
/// objects has to visit.
template <class Registry, std::uint64_t kMask>
inline constexpr std::uint64_t kReferringClasses = []<std::size_t... I>(std::index_sequence<I...>) {
  using Types = typename Registry::Types;
  return (((ObjectFields<Registry, model::At<Types, I>>::kTargets & kMask) != 0 &&
                   Registry::kCapacityById[I] != 0
               ? std::uint64_t{1} << I
               : std::uint64_t{0}) |
          ... | std::uint64_t{0});
}
(std::make_index_sequence<Registry::kNumTypes>{});

}  // namespace dynasoar::move
