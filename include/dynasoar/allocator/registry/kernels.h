// The kernels of ByteAllocatorHandle (byte_allocator_handle.h) on the
// object registry (allocator/registry/registry.h): renumbering after a
// compaction, growing an array, freeing what CUDA's device heap still holds,
// and the do-all over a class's entries. Implementation: users reach them
// through the handle.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dynasoar/allocator/registry/registry.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/watchdog_base.h"

namespace dynasoar::registry::detail {

/// Moves the compacted entries back and writes each object's new index.
struct Renumber {
  /// The non-null entries, in order, as the selection wrote them.
  void* const* compacted;
  /// The class's registry array, written back from `compacted`.
  void** entries;
  /// Type id of the class, written into each object's header.
  unsigned type;
  unsigned long long expected;  ///< entries - removals, as the host counted
  /// Number of entries the selection kept (device memory).
  const unsigned long long* selected;
  /// The registry's error flags; kRegistryCorrupt is raised if selected != expected.
  unsigned* error;
  /// Thread i moves entry i back and renumbers its object. Host and device.
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (i == 0 && *selected != expected)
      platform::atomic_fetch_or(error, static_cast<unsigned>(kRegistryCorrupt));
    if (i >= *selected) return;
    void* p = compacted[i];
    entries[i] = p;
    ObjectRegistry::header(p) =
        (static_cast<std::uint64_t>(type) << kTypeShift) | static_cast<std::uint64_t>(i);
  }
};

/// Frees every object still registered (a handle on CUDA's heap, which
/// outlives the handle, gives its memory back when it goes).
template <class Raw>
struct FreeEntries {
  /// The raw allocator the objects came from.
  Raw raw;
  /// The class's registry array (null entries are skipped).
  void* const* entries;
  /// Frees the object of entry i, if there is one. Host and device.
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (entries[i] != nullptr) raw.free(entries[i]);
  }
};

/// Copies a registry array into a larger one when the array grows.
struct CopyEntries {
  /// The old array.
  void* const* from;
  /// The new array, at least as long.
  void** to;
  /// Copies entry i. Host and device.
  DYNASOAR_HD void operator()(std::size_t i) const { to[i] = from[i]; }
};

/// The do-all kernel on the registry: one thread per entry.
template <class T, auto Method, class Pack>
struct DoAllEntries {
  /// The class's compacted registry array.
  void* const* entries;
  /// The method's arguments, copied into the kernel parameters.
  Pack args;
  /// The watchdog's progress counters (platform::count_finished), or null.
  unsigned long long* progress = nullptr;
  /// Runs the method on the object of entry i, if the entry is not null. Host and device.
  DYNASOAR_HD void operator()(std::size_t i) const {
    if (void* p = platform::atomic_load(&entries[i])) {
      T* obj = static_cast<T*>(p);
      args.apply([&](const auto&... a) { (obj->*Method)(a...); });
      platform::count_finished(progress);
    }
  }
};

}  // namespace dynasoar::registry::detail
