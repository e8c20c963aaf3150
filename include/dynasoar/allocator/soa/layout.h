// Block layout of the SOA heap (DynaSOAr paper Sec. 3.2-3.3), on top of the
// class model (model/class_model.h): how many objects a block of each
// registered class holds, where each field's SOA array starts inside a
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

#include "dynasoar/model/class_model.h"
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

/// `x` rounded up to a multiple of `to`.
DYNASOAR_HD constexpr std::uint64_t round_up(std::uint64_t x, std::uint64_t to) {
  return (x + to - 1) / to * to;
}

/// The class model of the registered classes `Types` (a model::TypeList)
/// with the SOA heap's block layout.
template <class Types>
struct Registry;

namespace detail {
template <class... Fs>
constexpr std::uint64_t sum_of_sizes(model::TypeList<Fs...>) {
  return (std::uint64_t{0} + ... + sizeof(Fs));
}
// Offset of the array after the fields I... (each array rounded up to the alignment).
template <class Fields, std::size_t... I>
DYNASOAR_HD DYNASOAR_FORCEINLINE constexpr std::uint64_t arrays_bytes(std::index_sequence<I...>,
                                                                       std::uint64_t capacity) {
  return (std::uint64_t{0} + ... + round_up(sizeof(model::At<Fields, I>) * capacity, kArrayAlignment));
}
}  // namespace detail

/// The block layout of one registered class C of the type list Types: its
/// class model (model::ClassInfo) and where its fields lie in a block.
template <class Types, class C>
struct ClassInfo : model::ClassInfo<Types, C> {
  /// Types of all fields of C: inherited ones first, then its own.
  using AllFields = typename model::ClassInfo<Types, C>::AllFields;
  /// Number of all fields of C.
  static constexpr std::size_t kNumFields = AllFields::size;

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

/// The registry of the classes Ts... (Sec. 3.1-3.3): their class model, and
/// their capacities and the block size, all computed at compile time.
template <class... Ts>
struct Registry<model::TypeList<Ts...>> : model::ClassModel<model::TypeList<Ts...>> {
  /// The class model this layout adds to.
  using Model = model::ClassModel<model::TypeList<Ts...>>;
  /// The registered classes; a class's type id is its position here.
  using Types = model::TypeList<Ts...>;
  /// Number of registered classes.
  static constexpr std::size_t kNumTypes = sizeof...(Ts);

  /// The layout of registered class C (its class model included).
  template <class C>
  using Info = ClassInfo<Types, C>;

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

  /// Compile-time checks of the model and of the layout; instantiated by the allocator.
  static constexpr bool check() {
    static_assert(Model::check());
    static_assert(((Info<Ts>::kIsAbstract || kCapacity<Ts> >= 1) && ...),
                  "a registered class is more than 64 times larger than the smallest one; a "
                  "block cannot hold even one of its objects (paper Sec. 3.2)");
    return true;
  }
};

}  // namespace dynasoar::soa
