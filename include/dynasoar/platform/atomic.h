// Atomic read-modify-write operations on plain memory, the same spelling on
// host and device. Device code uses libcu++ `cuda::atomic_ref` at device
// scope; host code uses `std::atomic_ref`. Both compile to single atomic
// instructions, so device code pays nothing for the abstraction.
//
// The lock-free structures of this project use relaxed operations and place
// explicit fences where an algorithm needs ordering (DynaSOAr paper, App. A),
// so `relaxed` is the default order here.
#pragma once

#include <cstdint>

#include "dynasoar/platform/config.h"

#include <thread>

#if DYNASOAR_CUDA
#include <cuda/atomic>
#else
#include <atomic>
#endif

namespace dynasoar::platform {

#if DYNASOAR_CUDA
template <class T>
using atomic_ref = cuda::atomic_ref<T, cuda::thread_scope_device>;
using memory_order = cuda::std::memory_order;
#else
template <class T>
using atomic_ref = std::atomic_ref<T>;
using memory_order = std::memory_order;
#endif

inline constexpr memory_order relaxed = memory_order::relaxed;
inline constexpr memory_order acquire = memory_order::acquire;
inline constexpr memory_order release = memory_order::release;
inline constexpr memory_order acq_rel = memory_order::acq_rel;
inline constexpr memory_order seq_cst = memory_order::seq_cst;

template <class T>
DYNASOAR_HD DYNASOAR_FORCEINLINE T atomic_load(const T* p, memory_order o = relaxed) {
  // atomic_ref needs a non-const referent; loading does not modify it.
  return atomic_ref<T>(*const_cast<T*>(p)).load(o);
}

template <class T>
DYNASOAR_HD DYNASOAR_FORCEINLINE void atomic_store(T* p, T v, memory_order o = relaxed) {
  atomic_ref<T>(*p).store(v, o);
}

// atomic_fetch_or, atomic_fetch_and, atomic_fetch_add, atomic_fetch_sub and
// atomic_exchange(p, v, order = relaxed): that operation of atomic_ref on *p;
// each returns the value *p held before.
#define DYNASOAR_ATOMIC_READ_MODIFY_WRITE(op)                                           \
  template <class T>                                                                   \
  DYNASOAR_HD DYNASOAR_FORCEINLINE T atomic_##op(T* p, T v, memory_order o = relaxed) { \
    return atomic_ref<T>(*p).op(v, o);                                                 \
  }
DYNASOAR_ATOMIC_READ_MODIFY_WRITE(fetch_or)
DYNASOAR_ATOMIC_READ_MODIFY_WRITE(fetch_and)
DYNASOAR_ATOMIC_READ_MODIFY_WRITE(fetch_add)
DYNASOAR_ATOMIC_READ_MODIFY_WRITE(fetch_sub)
DYNASOAR_ATOMIC_READ_MODIFY_WRITE(exchange)
#undef DYNASOAR_ATOMIC_READ_MODIFY_WRITE

/// Compare-and-swap; on failure `expected` receives the current value.
template <class T>
DYNASOAR_HD DYNASOAR_FORCEINLINE bool atomic_compare_exchange(T* p, T& expected, T desired,
                                                              memory_order o = relaxed) {
  return atomic_ref<T>(*p).compare_exchange_strong(expected, desired, o, relaxed);
}

/// A full fence at device scope (the paper's `__threadfence()`).
DYNASOAR_HD DYNASOAR_FORCEINLINE void thread_fence() {
#if DYNASOAR_CUDA
  cuda::atomic_thread_fence(cuda::std::memory_order_seq_cst, cuda::thread_scope_device);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

/// Called in every spin loop: lets the thread we wait for run. On the GPU a
/// short sleep keeps a spinning warp from taking issue slots from the warp it
/// waits for (independent thread scheduling guarantees that one runs); on the
/// host the OS thread yields its core.
DYNASOAR_HD DYNASOAR_FORCEINLINE void spin_pause() {
#if DYNASOAR_DEVICE_CODE
  __nanosleep(32);
#else
  std::this_thread::yield();
#endif
}

}  // namespace dynasoar::platform
