// Block layout of the SOA heap (Springer & Masuhara 2019, Sec. 3.2-3.3), on top of the
// class model (model/class_model.h): how many objects a block of each
// registered class holds, where each field's value lies inside a block, and
// how large every block is.
//
// Two layouts of a block's data segment, chosen at compile time (Layout):
// kSoa, one array per field (DynaSOAr), and kAos, whole objects one after
// another (BitmapAlloc, Sec. 6). Capacities, block size rule, bitmaps and
// object pointers are the same for both; only the place of a field's value
// in the data segment differs, so that a program run on both shows what the
// SOA layout is worth.
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

/// Every SOA array starts on a 64-byte boundary of its block. Since Volta,
/// global memory is read in 32-byte sectors, so a warp reading consecutive
/// slots of an array that starts on a sector boundary fetches no extra
/// sector (Sec. 2.3).
inline constexpr std::uint64_t kArrayAlignment = 64;
/// Every block starts on a 128-byte boundary (its size is a multiple of
/// 128 bytes), and its data segment at its first byte: the block headers
/// (HeapState::header) are an array of their own, not the block's first
/// bytes as in the paper (Sec. 3.3). A 64-byte header in front of the data
/// would start every other block's arrays in the middle of a 128-byte line,
/// which a warp's reads of one array then share with bytes no warp reads at
/// the time (docs/design/heap.md, "Layout").
inline constexpr std::uint64_t kBlockAlignment = 128;

/// `x` rounded up to a multiple of `to`.
DYNASOAR_HD constexpr std::uint64_t round_up(std::uint64_t x, std::uint64_t to) {
  return (x + to - 1) / to * to;
}

/// How a block's data segment holds its objects' field values.
enum class Layout {
  kSoa,  ///< one array per field, each on a 64-byte boundary (DynaSOAr, Sec. 3.3)
  kAos,  ///< whole objects of `stride` bytes one after another (BitmapAlloc, Sec. 6)
};

/// The back end of the block heap in layout L (CMake's DYNASOAR_BACKEND and
/// the name in messages): "dynasoar" or "bitmap_alloc".
/// (A switch, so that a new layout without a name draws -Wswitch.)
constexpr const char* backend_name(Layout l) {
  switch (l) {
    case Layout::kSoa:
      return "dynasoar";
    case Layout::kAos:
      return "bitmap_alloc";
  }
  return "";
}

/// The class model of the registered classes `Types` (a model::TypeList)
/// with the heap's block layout L.
template <class Types, Layout L = Layout::kSoa>
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

// The AOS object of the field types Fs... (inherited ones first): each
// field at the next offset of its natural alignment, like a C struct.
template <class Fields>
struct AosObject;
template <class... Fs>
struct AosObject<model::TypeList<Fs...>> {
  static constexpr std::size_t kNumFields = sizeof...(Fs);
  // Largest field alignment (1 without fields).
  static constexpr std::uint64_t kAlignment = [] {
    std::uint64_t a = 1;
    ((a = alignof(Fs) > a ? alignof(Fs) : a), ...);
    return a;
  }();
  // at[J]: offset of field J in the object; at[kNumFields]: the stride.
  struct Offsets {
    std::uint64_t at[kNumFields + 1];
  };
  static constexpr Offsets kOffsets = [] {
    constexpr std::uint64_t sizes[] = {sizeof(Fs)..., 0};
    constexpr std::uint64_t aligns[] = {alignof(Fs)..., 1};
    Offsets o{};
    std::uint64_t at = 0;
    for (std::size_t i = 0; i < kNumFields; ++i) {
      at = round_up(at, aligns[i]);
      o.at[i] = at;
      at += sizes[i];
    }
    o.at[kNumFields] = round_up(at, kAlignment);
    return o;
  }();
};

// What both layouts know of class C: its fields and their total size.
template <class Types, class C>
struct BlockClass : model::ClassInfo<Types, C> {
  using AllFields = typename model::ClassInfo<Types, C>::AllFields;
  static constexpr std::size_t kNumFields = AllFields::size;
  static constexpr std::uint64_t kObjectBytes = sum_of_sizes(AllFields{});
};
}  // namespace detail

/// The block layout L of one registered class C of the type list Types:
/// its class model (model::ClassInfo) and where its fields lie in a block.
template <class Types, class C, Layout L = Layout::kSoa>
struct ClassInfo;

/// The SOA layout of class C (Sec. 3.3): field J of the objects of a block
/// of `capacity` slots is an array of `capacity` values that starts on a
/// 64-byte boundary of the block, after the arrays of fields 0..J-1.
template <class Types, class C>
struct ClassInfo<Types, C, Layout::kSoa> : detail::BlockClass<Types, C> {
  /// The layout this describes.
  static constexpr Layout kLayout = Layout::kSoa;
  /// Types of all fields of C: inherited ones first, then its own.
  using AllFields = typename detail::BlockClass<Types, C>::AllFields;
  /// Number of all fields of C.
  static constexpr std::size_t kNumFields = AllFields::size;

  /// Bytes of one object: the sum of its field sizes (the proxies take none
  /// of this; the values live in the SOA arrays). The capacities follow it,
  /// in both layouts.
  static constexpr std::uint64_t kObjectBytes = detail::BlockClass<Types, C>::kObjectBytes;

  /// Offset of field J's SOA array from the start of the block, in a
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

/// The AOS layout of class C (BitmapAlloc, paper Sec. 6): the objects of a
/// block lie whole, one after another, from its first byte.
///
///   value of field J of the object in slot s
///     = block + s * stride(runtime class) + offset(J)
///
/// offset(J) places the fields like a C struct: field J at the first
/// multiple of its alignment at or after the end of field J-1 (field 0 at
/// 0). stride(C) is the end of C's last field rounded up to C's largest field
/// alignment, so every field of every slot is naturally aligned (the data
/// segment starts on a 64-byte boundary; check() rejects fields aligned to
/// more). Inherited fields come first and the offsets of a class's fields
/// depend only on the fields before them, so field J has the same offset in
/// C and in every subclass of C: an object's fields are found through a
/// pointer to any of its bases. Its stride, though, is its runtime class's,
/// which stride_of selects by the pointer's type id (a constant where C has
/// one stride for all its concrete classes, and in do-alls, whose pointers
/// carry constant type bits).
template <class Types, class C>
struct ClassInfo<Types, C, Layout::kAos> : detail::BlockClass<Types, C> {
 private:
  using Object = detail::AosObject<typename detail::BlockClass<Types, C>::AllFields>;

 public:
  /// The layout this describes.
  static constexpr Layout kLayout = Layout::kAos;
  /// Types of all fields of C: inherited ones first, then its own.
  using AllFields = typename detail::BlockClass<Types, C>::AllFields;
  /// Number of all fields of C.
  static constexpr std::size_t kNumFields = AllFields::size;
  /// Sum of the field sizes, as in the SOA layout: the capacities follow it,
  /// so they are the same in both layouts (the stride may be larger).
  static constexpr std::uint64_t kObjectBytes = detail::BlockClass<Types, C>::kObjectBytes;
  /// Largest alignment of C's fields (1 without fields).
  static constexpr std::uint64_t kAlignment = Object::kAlignment;
  /// Offset of field J inside an object (global index, inherited fields first).
  template <std::size_t J>
  static constexpr std::uint64_t kFieldOffset = Object::kOffsets.at[J];
  /// Bytes from one object of C to the next in a block: a multiple of kAlignment.
  static constexpr std::uint64_t kStride = Object::kOffsets.at[kNumFields];

  /// Bytes of the data segment of a block of `capacity` objects of C.
  DYNASOAR_HD static constexpr std::uint64_t data_bytes(std::uint64_t capacity) {
    return capacity * kStride;
  }

  /// Stride of the runtime class with type id `type`, one of the concrete
  /// classes a pointer to C may point to (C and its subclasses).
  DYNASOAR_HD DYNASOAR_FORCEINLINE static constexpr std::uint64_t stride_of(unsigned type) {
    return select_stride(type, std::make_index_sequence<Types::size>{});
  }

 private:
  static constexpr std::uint64_t kRuntimeTypes =
      model::ClassModel<Types>::template kConcreteSubtypes<C>;
  template <std::size_t I>
  static constexpr std::uint64_t kStrideAt =
      ClassInfo<Types, model::At<Types, I>, Layout::kAos>::kStride;
  // The stride shared by every runtime class of C, or 0 if they differ.
  template <std::size_t... I>
  static constexpr std::uint64_t common_stride(std::index_sequence<I...>) {
    const std::uint64_t strides[] = {((kRuntimeTypes >> I) & 1u ? kStrideAt<I> : 0)..., 0};
    std::uint64_t s = 0;
    for (const std::uint64_t x : strides) {
      if (x == 0) continue;  // no runtime class of C (concrete classes have fields)
      if (s != 0 && s != x) return 0;
      s = x;
    }
    return s;
  }
  static constexpr std::uint64_t kCommonStride =
      common_stride(std::make_index_sequence<Types::size>{});

  template <std::size_t... I>
  DYNASOAR_HD DYNASOAR_FORCEINLINE static constexpr std::uint64_t select_stride(
      [[maybe_unused]] unsigned type, std::index_sequence<I...>) {
    if constexpr (kCommonStride != 0) {
      return kCommonStride;  // one stride for every runtime class: a constant
    } else {
      // Selects, no table in memory: only C's concrete classes take part.
      std::uint64_t s = 0;
      ((s = ((kRuntimeTypes >> I) & 1u) != 0 && type == I ? kStrideAt<I> : s), ...);
      return s;
    }
  }
};

/// The registry of the classes Ts... (Sec. 3.1-3.3) in the block layout L:
/// their class model, and their capacities and the block size, all computed
/// at compile time.
template <class... Ts, Layout L>
struct Registry<model::TypeList<Ts...>, L> : model::ClassModel<model::TypeList<Ts...>> {
  /// The class model this layout adds to.
  using Model = model::ClassModel<model::TypeList<Ts...>>;
  /// The registered classes; a class's type id is its position here.
  using Types = model::TypeList<Ts...>;
  /// Number of registered classes.
  static constexpr std::size_t kNumTypes = sizeof...(Ts);
  /// The layout of the blocks' data segments.
  static constexpr Layout kLayout = L;

  /// The layout of registered class C (its class model included).
  template <class C>
  using Info = ClassInfo<Types, C, L>;

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

  /// Bytes of every block: the largest data segment of any class, rounded
  /// up to kBlockAlignment (the header is not in the block).
  /// In the AOS layout, at least the SOA layout's block: the same whenever
  /// every class's objects fit in it, so that both layouts give a heap of
  /// the same bytes the same blocks. Larger where a class's padded objects
  /// (capacity x stride) do not fit: the SOA arrays of a class of 64 slots
  /// have no slack, so any padding of its stride makes the block grow (the
  /// paper's Sec. 6.2: only SOA arrays are aligned, not every object).
  static constexpr std::uint64_t kBlockBytes = [] {
    std::uint64_t data = 0;
    ((data = !Info<Ts>::kIsAbstract && Info<Ts>::data_bytes(kCapacity<Ts>) > data
                 ? Info<Ts>::data_bytes(kCapacity<Ts>)
                 : data),
     ...);
    if constexpr (L != Layout::kSoa) {
      const std::uint64_t soa = Registry<Types, Layout::kSoa>::kBlockBytes;
      if (soa > data) data = soa;
    }
    return round_up(data, kBlockAlignment);
  }();

  /// Capacity by type id (0 for abstract classes: they have no blocks).
  static constexpr unsigned kCapacityById[kNumTypes] = {(Info<Ts>::kIsAbstract ? 0u : kCapacity<Ts>)...};

  /// Compile-time checks of the model and of the layout; instantiated by the allocator.
  static constexpr bool check() {
    static_assert(Model::check());
    static_assert(((Info<Ts>::kIsAbstract || kCapacity<Ts> >= 1) && ...),
                  "a registered class is more than 64 times larger than the smallest one; a "
                  "block cannot hold even one of its objects (paper Sec. 3.2)");
    if constexpr (L == Layout::kAos)
      static_assert(
          ((Info<Ts>::kAlignment <= kArrayAlignment) && ...),
          "a field type needs more than 64-byte alignment, which the AOS layout's objects "
          "(aligned within 64-byte aligned data segments) cannot give");
    return true;
  }
};

}  // namespace dynasoar::soa
