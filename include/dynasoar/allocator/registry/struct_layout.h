// The plain struct layout of objects on the byte allocators (CMalloc family,
// CUDA malloc): an object is one allocation holding an 8-byte header and its
// field values one after another, each at its natural alignment, inherited
// fields first (like a C struct of the class's fields). Since a subclass's
// fields follow its base class's, a field has the same offset in every
// subclass: a Field proxy finds its value without knowing the runtime class.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dynasoar/model/type_list.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::registry {

/// Bytes before the first field: the object header (registry.h).
inline constexpr std::uint64_t kObjectHeaderBytes = 8;
/// Alignment of every allocation of the byte allocators.
inline constexpr std::uint64_t kObjectAlignment = 16;

/// Offsets and size of an object whose fields are `Fields` (a model::TypeList).
template <class Fields>
struct StructLayout;

/// The layout for the field types Fs..., inherited fields first; all of it is
/// computed at compile time.
template <class... Fs>
struct StructLayout<model::TypeList<Fs...>> {
  static_assert(
      ((alignof(Fs) <= kObjectAlignment) && ...),
      "a field type needs more than 16-byte alignment, which the byte allocators do not give");
  /// Number of fields, inherited ones included.
  static constexpr std::size_t kNumFields = sizeof...(Fs);

  /// The offsets as a literal type, so that a constexpr lambda can fill them.
  struct Offsets {
    std::uint64_t at[sizeof...(Fs) + 1];  ///< field i's offset; at[kNumFields]: the object's size
  };
  /// Offset of each field from the object's address, and the object's size.
  static constexpr Offsets kOffsets = [] {
    constexpr std::uint64_t sizes[] = {sizeof(Fs)..., 0};
    constexpr std::uint64_t aligns[] = {alignof(Fs)..., 1};
    Offsets o{};
    std::uint64_t at = kObjectHeaderBytes;
    for (std::size_t i = 0; i < kNumFields; ++i) {
      at = (at + aligns[i] - 1) / aligns[i] * aligns[i];
      o.at[i] = at;
      at += sizes[i];
    }
    o.at[kNumFields] = at;
    return o;
  }();

  /// Offset of field J from the object's address.
  template <std::size_t J>
  static constexpr std::uint64_t kOffset = kOffsets.at[J];
  /// Bytes of an object (header and fields), the size of its allocation.
  static constexpr std::uint64_t kBytes = kOffsets.at[kNumFields];
};

}  // namespace dynasoar::registry
