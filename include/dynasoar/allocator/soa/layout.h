// Compile-time layout of the SOA heap (DynaSOAr paper Sec. 3.1-3.3): which
// fields each registered class has (inherited ones first), how many objects
// a block of each class holds, where each field's SOA array starts inside a
// block, and how large every block is.
//
// Everything here is computed from the allocator's type list when a class is
// first used, so the classes may still be incomplete where the allocator type
// is named (the paper's `class Body : public AllocatorT::Base`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "dynasoar/allocator/soa/type_list.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::soa {

/// Object slots per block at most: one 64-bit allocation bitmap per block.
inline constexpr unsigned kMaxSlots = 64;

/// Every SOA array starts on a 64-byte boundary, and so does the data
/// segment: the block header takes 64 bytes. Since Volta, global memory is
/// read in 32-byte sectors, so a warp reading consecutive slots of an array
/// that starts on a sector boundary fetches no extra sector (Sec. 2.3).
/// A 128-byte header would cost the smallest class 3 % of the heap (a block
/// of 64 x 64-byte objects is 4096 data bytes); 64 bytes cost 1.5 %.
inline constexpr std::uint64_t kArrayAlignment = 64;
/// Bytes of the block header, before the data segment (see kArrayAlignment).
inline constexpr std::uint64_t kBlockHeaderBytes = 64;

/// Registered classes per allocator at most (type masks are 64-bit words).
inline constexpr std::size_t kMaxTypes = 64;

/// `x` rounded up to a multiple of `to`.
DYNASOAR_HD constexpr std::uint64_t round_up(std::uint64_t x, std::uint64_t to) {
  return (x + to - 1) / to * to;
}

/// The compile-time facts about the registered classes `Types` (a TypeList).
template <class Types>
struct Registry;

namespace detail {
template <class... Fs>
constexpr std::uint64_t sum_of_sizes(TypeList<Fs...>) {
  return (std::uint64_t{0} + ... + sizeof(Fs));
}
// Offset of the array after the fields I... (each array rounded up to the alignment).
template <class Fields, std::size_t... I>
DYNASOAR_HD DYNASOAR_FORCEINLINE constexpr std::uint64_t arrays_bytes(std::index_sequence<I...>,
                                                                       std::uint64_t capacity) {
  return (std::uint64_t{0} + ... + round_up(sizeof(soa::At<Fields, I>) * capacity, kArrayAlignment));
}
}  // namespace detail

/// What the heap knows about one registered class C of the type list Types.
template <class Types, class C>
struct ClassInfo {
  static_assert(kIndexOf<C, Types> != kNotFound,
                "this class is not registered with the allocator: add it to the allocator's "
                "type list (SoaAllocator<...>)");
  static_assert(std::is_same_v<typename C::DynasoarThis, C>,
                "every registered class must declare its own fields with "
                "declare_field_types(Class, ...) (or declare_abstract_field_types), even if it "
                "has none");

  /// Run-time type id of C: its position in Types.
  static constexpr std::size_t kTypeId = kIndexOf<C, Types>;
  /// The registered class C derives from directly, or void.
  using Base = typename Registry<Types>::template DirectBase<C>;
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
  /// Whether C is abstract: it has no blocks and no objects of its own.
  static constexpr bool kIsAbstract = C::kDynasoarAbstract;

  /// Bytes of one object: the sum of its field sizes (the proxies take none
  /// of this; the values live in the SOA arrays).
  static constexpr std::uint64_t kObjectBytes = detail::sum_of_sizes(AllFields{});

  /// Offset of field J's SOA array from the start of the data segment, in a
  /// block of `capacity` slots (the runtime class's capacity; inherited
  /// fields come first, so J means the same in every subclass).
  template <std::size_t J>
  DYNASOAR_HD DYNASOAR_FORCEINLINE static constexpr std::uint64_t array_offset(std::uint64_t capacity) {
    return detail::arrays_bytes<AllFields>(std::make_index_sequence<J>{}, capacity);
  }

  /// Bytes of the data segment of a block of `capacity` slots.
  DYNASOAR_HD static constexpr std::uint64_t data_bytes(std::uint64_t capacity) {
    return array_offset<kNumFields>(capacity);
  }

};

/// The root: no fields.
template <class Types>
struct ClassInfo<Types, void> {
  using AllFields = TypeList<>;  ///< Empty: a class with no registered base inherits no fields.
};

/// The registry of the classes Ts... (Sec. 3.1-3.3): their bases, capacities and
/// the block size, all computed at compile time.
template <class... Ts>
struct Registry<TypeList<Ts...>> {
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

  /// Object bytes of the smallest concrete class; it gets kMaxSlots per block.
  static constexpr std::uint64_t kSmallestObjectBytes = [] {
    std::uint64_t smallest = ~std::uint64_t{0};
    ((smallest = !Info<Ts>::kIsAbstract && Info<Ts>::kObjectBytes < smallest ? Info<Ts>::kObjectBytes
                                                                             : smallest),
     ...);
    return smallest;
  }();

  /// Slots of a block of class C (Sec. 3.2): 64 for the smallest class, in
  /// proportion fewer for larger ones, so blocks have about the same size.
  template <class C>
  static constexpr unsigned kCapacity = [] {
    if (Info<C>::kObjectBytes == 0) return kMaxSlots;  // only abstract classes may have no fields
    const std::uint64_t c = kMaxSlots * kSmallestObjectBytes / Info<C>::kObjectBytes;
    return static_cast<unsigned>(c < kMaxSlots ? c : kMaxSlots);
  }();

  /// Bytes of every block: header plus the largest data segment of any class.
  static constexpr std::uint64_t kBlockBytes = [] {
    std::uint64_t data = 0;
    ((data = !Info<Ts>::kIsAbstract && Info<Ts>::data_bytes(kCapacity<Ts>) > data
                 ? Info<Ts>::data_bytes(kCapacity<Ts>)
                 : data),
     ...);
    return kBlockHeaderBytes + round_up(data, kArrayAlignment);
  }();

  /// Capacity by type id (0 for abstract classes: they have no blocks).
  static constexpr unsigned kCapacityById[kNumTypes] = {(Info<Ts>::kIsAbstract ? 0u : kCapacity<Ts>)...};

  /// Compile-time checks of the whole registry; instantiated by the allocator.
  static constexpr bool check() {
    static_assert((kSingleInheritance<Ts> && ...),
                  "a registered class derives from two registered classes; the SOA layout "
                  "supports single inheritance only");
    static_assert(((Info<Ts>::kIsAbstract || Info<Ts>::kObjectBytes > 0) && ...),
                  "a concrete registered class has no fields; give it at least one");
    static_assert(((Info<Ts>::kIsAbstract || kCapacity<Ts> >= 1) && ...),
                  "a registered class is more than 64 times larger than the smallest one; a "
                  "block cannot hold even one of its objects (paper Sec. 3.2)");
    static_assert(((!Info<Ts>::kIsAbstract) || ...), "an allocator needs at least one concrete class");
    static_assert(((sizeof(Ts) == (Info<Ts>::kNumFields == 0 ? 1 : Info<Ts>::kNumFields)) && ...),
                  "a registered class has members other than its Field<Class, N> proxies (data "
                  "members or virtual functions); store every value in a declared field");
    return true;
  }
};

}  // namespace dynasoar::soa
