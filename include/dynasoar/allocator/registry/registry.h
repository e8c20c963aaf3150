// The generic object registry of the byte allocators (Springer & Masuhara 2019, Sec. 6,
// "Parallel do-all in Custom Allocators"): allocators such as the CMalloc
// family or CUDA's malloc cannot enumerate their objects, so the framework
// keeps, per class, an array of the live objects' addresses.
//
// - `new` appends the address with one atomic add on the class's size and
//   writes the entry's index into the object's 8-byte header;
// - `destroy` reads the index from the header and clears that entry (the
//   deletion is recorded in place, O(1)), and counts the removal;
// - before a do-all the host compacts the array (the non-null entries, in
//   order, on the stream: platform/select.h) and renumbers the headers.
//
// The header word: bits 63..58 the class's type id, bits 57..0 the index.
// This file is the device side; ByteAllocatorHandle (dynasoar/byte_allocator_handle.h) owns the
// arrays and runs the compaction.
#pragma once

#include <cstdint>

#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::registry {

/// Position of the type id in the object header (bits 63..58).
inline constexpr unsigned kTypeShift = 58;
/// The entry index in the object header (bits 57..0).
inline constexpr std::uint64_t kIndexMask = (std::uint64_t{1} << kTypeShift) - 1;

/// Error flags of the registry (the raw allocator has its own).
enum RegistryError : unsigned {
  kRegistryOk = 0,       ///< no error
  kRegistryFull = 1,     ///< a class's array had no room for a new object
  kRegistryCorrupt = 2,  ///< compaction found another count than expected
  kRegistryBadFree = 4,  ///< destroy of a pointer that is no live object of this registry
};

/// The live objects of one class.
struct TypeEntries {
  void** entries;               ///< entry i: an object, or nullptr once it was destroyed
  unsigned long long size;      ///< entries appended (appends beyond capacity fail but count)
  unsigned long long removed;   ///< entries cleared since the last compaction
  unsigned long long capacity;  ///< length of `entries`
};

/// The device handle of the registry (by value in ByteAllocator).
struct ObjectRegistry {
  TypeEntries* types;  ///< one per class of the allocator, in device memory
  unsigned* error;     ///< RegistryError flags
  unsigned num_types;  ///< entries of `types`

  /// The 8-byte header word at the start of `object` (type id and entry index).
  DYNASOAR_HD static std::uint64_t& header(void* object) {
    return *static_cast<std::uint64_t*>(object);
  }
  /// The type id in the header of `object` (one atomic load).
  DYNASOAR_HD static unsigned type_of(const void* object) {
    return static_cast<unsigned>(platform::atomic_load(static_cast<const std::uint64_t*>(object)) >>
                                 kTypeShift);
  }

  /// Records a new object of `type`; false (and the error flag) if the
  /// class's array is full.
  DYNASOAR_HD bool add(unsigned type, void* object) const {
    TypeEntries& t = types[type];
    const unsigned long long i = platform::atomic_fetch_add(&t.size, 1ull);
    if (i >= t.capacity) {
      platform::atomic_fetch_or(error, static_cast<unsigned>(kRegistryFull));
      return false;
    }
    platform::atomic_store(&header(object), (static_cast<std::uint64_t>(type) << kTypeShift) |
                                                static_cast<std::uint64_t>(i));
    platform::atomic_store(&t.entries[i], object);
    return true;
  }

  /// Forgets an object (before its memory is freed). Returns false, changes
  /// nothing and raises kRegistryBadFree if `object` is no live object of
  /// this registry, i.e. its header does not lead to an entry that holds it:
  /// an object destroyed before (its header may since have been overwritten
  /// by the allocator or by another object) or one of another heap. Its
  /// memory must then not be freed: freeing it twice corrupted the circular
  /// allocators' chunk lists. The entry is cleared by a compare-and-swap, so
  /// of two threads that destroy the same object one wins. Not detected: an
  /// address that a new object of this registry has been given since.
  DYNASOAR_HD bool remove(void* object) const {
    const std::uint64_t h = platform::atomic_load(&header(object));
    const auto type = static_cast<unsigned>(h >> kTypeShift);
    const std::uint64_t index = h & kIndexMask;
    void* expected = object;
    if (type < num_types && index < end(type) &&
        platform::atomic_compare_exchange(&types[type].entries[index], expected,
                                          static_cast<void*>(nullptr))) {
      platform::atomic_fetch_add(&types[type].removed, 1ull);
      return true;
    }
    platform::atomic_fetch_or(error, static_cast<unsigned>(kRegistryBadFree));
    return false;
  }

  /// Entries of `type` a do-all or device_do looks at: [0, this).
  DYNASOAR_HD unsigned long long end(unsigned type) const {
    const unsigned long long n = platform::atomic_load(&types[type].size);
    return n < types[type].capacity ? n : types[type].capacity;
  }
  /// Entry i of `type`: a live object, or nullptr where one was destroyed.
  DYNASOAR_HD void* entry(unsigned type, unsigned long long i) const {
    return platform::atomic_load(&types[type].entries[i]);
  }
};

}  // namespace dynasoar::registry
