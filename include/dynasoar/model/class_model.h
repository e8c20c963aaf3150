// The class model every back end shares: which classes an allocator
// registers, their type ids, which registered class each derives from,
// which are abstract, and which fields each has (inherited ones first).
// Springer & Masuhara 2019, Sec. 3.1: the type list of the allocator is the program's
// closed world of classes; the type id of a class is its position there.
//
// Nothing here knows how objects are stored. The SOA heap adds its block
// layout on top (allocator/soa/layout.h), the byte allocators their plain
// struct layout (allocator/registry/struct_layout.h).
//
// Everything is computed when a class is first used, so the classes may
// still be incomplete where the allocator type is named (the paper's
// `class Body : public AllocatorT::Base`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "dynasoar/model/type_list.h"

namespace dynasoar::model {

/// Registered classes per allocator at most (type masks are 64-bit words).
inline constexpr std::size_t kMaxTypes = 64;

/// The class model of the registered classes `Types` (a TypeList).
template <class Types>
struct ClassModel;

/// What the model knows about one registered class C of the type list Types.
template <class Types, class C>
struct ClassInfo {
  static_assert(kIndexOf<C, Types> != kNotFound,
                "this class is not registered with the allocator: add it to the allocator's "
                "type list (Allocator<...>)");
  static_assert(std::is_same_v<typename C::DynasoarThis, C>,
                "every registered class must declare its own fields with "
                "declare_field_types(Class, ...) (or declare_abstract_field_types), even if it "
                "has none");

  /// Run-time type id of C: its position in Types.
  static constexpr std::size_t kTypeId = kIndexOf<C, Types>;
  /// The registered class C derives from directly, or void.
  using Base = typename ClassModel<Types>::template DirectBase<C>;
  /// Types of the fields C declares itself.
  using OwnFields = typename C::FieldTypes;
  /// Types of the fields of C's registered base classes, the root's first.
  using InheritedFields = typename ClassInfo<Types, Base>::AllFields;
  /// Types of all fields of C: inherited ones first, then its own.
  using AllFields = Concat<InheritedFields, OwnFields>;
  /// Number of inherited fields: field J of C is its own for J >= this.
  static constexpr std::size_t kNumInherited = InheritedFields::size;
  /// Number of all fields of C.
  static constexpr std::size_t kNumFields = AllFields::size;
  /// Whether C is abstract: it has no objects of its own.
  static constexpr bool kIsAbstract = C::kDynasoarAbstract;
};

/// The root: no fields.
template <class Types>
struct ClassInfo<Types, void> {
  using AllFields = TypeList<>;  ///< Empty: a class with no registered base inherits no fields.
};

/// The class model of the classes Ts... (Sec. 3.1): type ids, direct bases,
/// abstract classes and subclass masks, all computed at compile time.
template <class... Ts>
struct ClassModel<TypeList<Ts...>> {
  /// The registered classes; a class's type id is its position here.
  using Types = TypeList<Ts...>;
  /// Number of registered classes (1 to kMaxTypes).
  static constexpr std::size_t kNumTypes = sizeof...(Ts);
  static_assert(kNumTypes >= 1, "an allocator needs at least one class");
  static_assert(kNumTypes <= kMaxTypes, "an allocator takes at most 64 classes");

 private:
  template <class B, class C>
  static constexpr bool kProperBase = std::is_base_of_v<B, C> && !std::is_same_v<B, C>;
  // B is a registered base of C with no registered class between them.
  template <class B, class C>
  static constexpr bool kDirectBase = kProperBase<B, C> && !((kProperBase<B, Ts> && kProperBase<Ts, C>) || ...);
  template <class C>
  static constexpr std::size_t direct_base_index() {
    constexpr bool direct[] = {kDirectBase<Ts, C>..., false};
    std::size_t found = kNotFound, count = 0;
    for (std::size_t i = 0; i < kNumTypes; ++i)
      if (direct[i]) {
        found = i;
        ++count;
      }
    return count > 1 ? kNotFound - 1 : found;
  }
  template <std::size_t I>
  struct BaseAt {
    using type = At<Types, I>;
  };

 public:
  /// The registered class C derives from directly (through classes that are
  /// not registered, if any), or void; void also for two registered bases,
  /// which check() rejects with a message.
  template <class C>
  using DirectBase = typename std::conditional_t<
      direct_base_index<C>() >= kNumTypes, std::type_identity<void>,
      BaseAt<(direct_base_index<C>() >= kNumTypes ? 0 : direct_base_index<C>())>>::type;

  /// Whether C derives directly from at most one registered class (check() requires it).
  template <class C>
  static constexpr bool kSingleInheritance = direct_base_index<C>() != kNotFound - 1;

  /// The ClassInfo of registered class C.
  template <class C>
  using Info = ClassInfo<Types, C>;

  /// Whether the class of each type id is abstract (it has no objects).
  static constexpr bool kIsAbstractById[kNumTypes] = {Info<Ts>::kIsAbstract...};

  /// Mask of the concrete classes that are C or derive from it: the runtime
  /// types a pointer to C may have.
  template <class C>
  static constexpr std::uint64_t kConcreteSubtypes =
      ((std::is_base_of_v<C, Ts> && !Info<Ts>::kIsAbstract ? std::uint64_t{1} << kIndexOf<Ts, Types> : 0) |
       ...);

  /// The concrete classes a do-all over C visits: C and its concrete
  /// subclasses, or (kWithSubclasses false) C alone.
  template <class C, bool kWithSubclasses = true>
  static constexpr std::uint64_t kVisitedTypes =
      kWithSubclasses ? kConcreteSubtypes<C> : kConcreteSubtypes<C> & (std::uint64_t{1} << kIndexOf<C, Types>);

  /// Compile-time checks of one registered class C. A template of its own,
  /// so that the compiler's "in instantiation of ... [with C = ...]" line
  /// under a failed check names the class.
  template <class C>
  static constexpr bool check_class() {
    static_assert(kSingleInheritance<C>,
                  "a registered class derives from two registered classes; the SOA layout "
                  "supports single inheritance only");
    static_assert(Info<C>::kIsAbstract || Info<C>::kNumFields > 0,
                  "a concrete registered class has no fields; give it at least one");
    // Every Field proxy is one byte: a class of n fields (inherited ones
    // included) is n bytes, or 1 if it has none. Checked only for a class
    // that declares its fields (Info<C> reports one that does not).
    if constexpr (std::is_same_v<typename C::DynasoarThis, C>) {
      constexpr std::size_t kFieldBytes = Info<C>::kNumFields == 0 ? 1 : Info<C>::kNumFields;
      static_assert(sizeof(C) >= kFieldBytes,
                    "a registered class lists more types in declare_field_types than it has "
                    "Field<Class, N> members: declare one Field member for each listed type, or "
                    "remove the extra types");
      static_assert(sizeof(C) <= kFieldBytes,
                    "a registered class has members other than its Field<Class, N> proxies (data "
                    "members or virtual functions); store every value in a declared field");
    }
    return true;
  }

  /// Compile-time checks of the model, whatever the storage; instantiated by
  /// every allocator (through its layout's check()).
  static constexpr bool check() {
    static_assert(((!Info<Ts>::kIsAbstract) || ...), "an allocator needs at least one concrete class");
    static_assert((check_class<Ts>() && ...));
    return true;
  }
};

}  // namespace dynasoar::model
