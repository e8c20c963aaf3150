// Fields of an object packed into a record of bytes, the form in which the
// distributed layer carries objects (a whole object to another rank's heap,
// or some of its fields to a neighbour's ghost). Generated from the class
// model like move/object_fields.h, which it builds on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "dynasoar/move/object_fields.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::move {

/// The fields J... (indices, inherited fields first) of class C packed
/// one after the other, each at an offset aligned for its type, the record
/// rounded to 8 bytes.
template <class Registry, class C, std::size_t... J>
struct FieldRecord {
  using Fields = ObjectFields<Registry, C>;  ///< the class's fields
  static constexpr std::size_t kCount = sizeof...(J);  ///< fields packed
  /// The field index of the K-th field packed.
  template <std::size_t K>
  static constexpr std::size_t field_of() {
    constexpr std::size_t all[] = {J..., 0};
    return all[K];
  }
  /// The type of the K-th field packed.
  template <std::size_t K>
  using Type = typename Fields::template FieldType<field_of<K>()>;
  /// Where the K-th field lies in a record.
  template <std::size_t K>
  static constexpr std::size_t offset() {
    if constexpr (K == 0) {
      return 0;
    } else {
      return (offset<K - 1>() + sizeof(Type<K - 1>) + alignof(Type<K>) - 1) / alignof(Type<K>) * alignof(Type<K>);
    }
  }
  /// Bytes of a record.
  static constexpr std::size_t bytes() {
    if constexpr (kCount == 0) {
      return 8;
    } else {
      return (offset<kCount - 1>() + sizeof(Type<kCount - 1>) + 7) / 8 * 8;
    }
  }
  /// The fields of the object at `object` into `record`.
  DYNASOAR_HD static void pack(std::uint64_t object, unsigned char* record) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (std::memcpy(record + offset<K>(),
                   static_cast<const void*>(Fields::template address<field_of<K>()>(object)),
                   sizeof(Type<K>)),
       ...);
    }
    (std::make_index_sequence<kCount>{});
  }
  /// The fields of `record` into the object at `object`.
  DYNASOAR_HD static void unpack(const unsigned char* record, std::uint64_t object) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (std::memcpy(static_cast<void*>(Fields::template address<field_of<K>()>(object)),
                   record + offset<K>(), sizeof(Type<K>)),
       ...);
    }
    (std::make_index_sequence<kCount>{});
  }
};

/// Every field of class C as a FieldRecord (what migration carries).
template <class Registry, class C, class Seq = std::make_index_sequence<ObjectFields<Registry, C>::kNumFields>>
struct WholeRecordOf;
/// The specialisation that names the field indices.
template <class Registry, class C, std::size_t... J>
struct WholeRecordOf<Registry, C, std::index_sequence<J...>> {
  using type = FieldRecord<Registry, C, J...>;  ///< the record
};
/// The FieldRecord of every field of C.
template <class Registry, class C>
using WholeRecord = typename WholeRecordOf<Registry, C>::type;

}  // namespace dynasoar::move
