// The error flags of a raw allocator's pool: raised in device code, read
// and reported on the host by raw::PoolHandle.
#pragma once

namespace dynasoar::raw {

/// Error flags raised in device code and reported by the pool's handle
/// (raw::PoolHandle::check_errors), for every raw allocator.
enum PoolError : unsigned {
  kPoolOk = 0,
  /// A malloc returned nullptr.
  kPoolOutOfMemory = 1,
  /// free() was given a pointer that is no live allocation of this pool;
  /// nothing was freed (allocators that check their pointers raise it).
  kPoolBadFree = 2
};

}  // namespace dynasoar::raw
