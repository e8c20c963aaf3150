// The one options type of every heap handle (dynasoar::AllocatorHandle on
// any back end): each handle reads the settings of its kind and ignores the
// others, so code written for one back end passes the same options to all.
#pragma once

#include <cstdint>

#include "dynasoar/allocator/raw/pool_options.h"
#include "dynasoar/move/defrag_options.h"
#include "dynasoar/allocator/soa/heap.h"
#include "dynasoar/platform/watchdog.h"

namespace dynasoar {

/// Settings of a heap handle. Default-constructed: the defaults of every
/// back end. The DynaSOAr heap reads `heap`; the byte allocators read `pool`
/// and `registry_capacity`.
struct HandleOptions {
  /// DynaSOAr heap: warp coalescing, bitmap rotation, active-block searches
  /// (the ablations of paper Fig. 12c).
  soa::HeapOptions heap{};
  /// DynaSOAr heap and BitmapAlloc: compaction by itself after parallel_do
  /// (off by default; docs/guide/moving-objects.md).
  DefragPolicy defrag{};
  /// Byte allocators: settings of the raw allocator's pool (split policy, heaps).
  raw::PoolOptions pool{};
  /// Byte allocators: registry entries per class at first. An array grows
  /// (doubles) when a compaction finds it over half full and before
  /// parallel_new; a `new` that finds it full between compactions fails like
  /// an out-of-memory.
  std::uint64_t registry_capacity = std::uint64_t{1} << 20;
  /// Every handle: the watchdog's limit in seconds. A parallel_do or
  /// parallel_new that has not finished after this long stops the program
  /// with a message that names it and says how far it got (exit status
  /// dynasoar::kWatchdogExitCode; docs/guide/operations.md, "The
  /// watchdog"). 0, the default, turns it off, unless the environment
  /// variable DYNASOAR_WATCHDOG gives a number of seconds.
  double watchdog_seconds = platform::watchdog_seconds_from_environment();

  HandleOptions() = default;
  /// The DynaSOAr heap's settings, the others at their defaults (so that a
  /// soa::HeapOptions can be passed where HandleOptions are asked for).
  HandleOptions(const soa::HeapOptions& h) : heap(h) {}  // NOLINT: implicit on purpose
};

}  // namespace dynasoar
