// Atomic read-modify-write operations on plain memory, the same spelling on
// host and device. Device code uses nvcc's `__nv_atomic_*` builtins at
// device scope; host code uses `std::atomic_ref`. Both compile to single
// atomic instructions, so device code pays nothing for the abstraction.
//
// Why the builtins and not libcu++'s `cuda::atomic_ref`: they emit the same
// PTX (`atom.<op>.<order>.gpu`, `ld.acquire.gpu`, `fence.sc.gpu` ahead of a
// seq_cst operation, as cuda::atomic_ref does), but <cuda/atomic> is a
// large part of the compile time of every translation unit that includes
// the framework. The builtins take the memory order only as an integer
// literal; DYNASOAR_NV_ORDERED below turns the run-time order
// into one call per order, which inlining folds to one.
//
// The lock-free structures of this project use relaxed operations and place
// explicit fences where an algorithm needs ordering (Springer & Masuhara 2019, App. A),
// so `relaxed` is the default order here.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "dynasoar/platform/config.h"

namespace dynasoar::platform {

using memory_order = std::memory_order;

inline constexpr memory_order relaxed = memory_order::relaxed;
inline constexpr memory_order acquire = memory_order::acquire;
inline constexpr memory_order release = memory_order::release;
inline constexpr memory_order acq_rel = memory_order::acq_rel;
inline constexpr memory_order seq_cst = memory_order::seq_cst;

#if DYNASOAR_DEVICE_CODE
// `call(ORDER)` with ORDER the builtin's literal for `o` (consume is
// acquire). The builtins check the literal of every case, also those that
// inlining removes, so loads and stores list only the orders they allow
// (std::atomic_ref's precondition; any other is taken as seq_cst).
#define DYNASOAR_NV_ORDERED(o, call)                       \
  switch (o) {                                             \
    case memory_order::relaxed: call(__NV_ATOMIC_RELAXED); \
    case memory_order::consume:                            \
    case memory_order::acquire: call(__NV_ATOMIC_ACQUIRE); \
    case memory_order::release: call(__NV_ATOMIC_RELEASE); \
    case memory_order::acq_rel: call(__NV_ATOMIC_ACQ_REL); \
    default: call(__NV_ATOMIC_SEQ_CST);                    \
  }
#define DYNASOAR_NV_LOAD_ORDERED(o, call)                  \
  switch (o) {                                             \
    case memory_order::relaxed: call(__NV_ATOMIC_RELAXED); \
    case memory_order::consume:                            \
    case memory_order::acquire: call(__NV_ATOMIC_ACQUIRE); \
    default: call(__NV_ATOMIC_SEQ_CST);                    \
  }
#define DYNASOAR_NV_STORE_ORDERED(o, call)                 \
  switch (o) {                                             \
    case memory_order::relaxed: call(__NV_ATOMIC_RELAXED); \
    case memory_order::release: call(__NV_ATOMIC_RELEASE); \
    default: call(__NV_ATOMIC_SEQ_CST);                    \
  }
#endif

template <class T>
DYNASOAR_HD DYNASOAR_FORCEINLINE T atomic_load(const T* p, memory_order o = relaxed) {
#if DYNASOAR_DEVICE_CODE
  T v;
#define DYNASOAR_CALL(order)                                                  \
  __nv_atomic_load(const_cast<T*>(p), &v, order, __NV_THREAD_SCOPE_DEVICE); \
  return v;
  DYNASOAR_NV_LOAD_ORDERED(o, DYNASOAR_CALL)
#undef DYNASOAR_CALL
#else
  // atomic_ref needs a non-const referent; loading does not modify it.
  return std::atomic_ref<T>(*const_cast<T*>(p)).load(o);
#endif
}

template <class T>
DYNASOAR_HD DYNASOAR_FORCEINLINE void atomic_store(T* p, T v, memory_order o = relaxed) {
#if DYNASOAR_DEVICE_CODE
#define DYNASOAR_CALL(order)                                   \
  __nv_atomic_store(p, &v, order, __NV_THREAD_SCOPE_DEVICE); \
  return;
  DYNASOAR_NV_STORE_ORDERED(o, DYNASOAR_CALL)
#undef DYNASOAR_CALL
#else
  std::atomic_ref<T>(*p).store(v, o);
#endif
}

// atomic_fetch_or, atomic_fetch_and, atomic_fetch_add and atomic_fetch_sub
// (p, v, order = relaxed): that operation on *p; each returns the value *p
// held before. fetch_add takes floating-point types as well.
#if DYNASOAR_DEVICE_CODE
#define DYNASOAR_ATOMIC_READ_MODIFY_WRITE(op)                                                     \
  template <class T>                                                                             \
  DYNASOAR_HD DYNASOAR_FORCEINLINE T atomic_##op(T* p, T v, memory_order o = relaxed) {           \
    DYNASOAR_NV_ORDERED(o, DYNASOAR_CALL_##op)                                                    \
  }
#define DYNASOAR_CALL_fetch_or(order) return __nv_atomic_fetch_or(p, v, order, __NV_THREAD_SCOPE_DEVICE);
#define DYNASOAR_CALL_fetch_and(order) return __nv_atomic_fetch_and(p, v, order, __NV_THREAD_SCOPE_DEVICE);
#define DYNASOAR_CALL_fetch_add(order) return __nv_atomic_fetch_add(p, v, order, __NV_THREAD_SCOPE_DEVICE);
#define DYNASOAR_CALL_fetch_sub(order) return __nv_atomic_fetch_sub(p, v, order, __NV_THREAD_SCOPE_DEVICE);
#else
#define DYNASOAR_ATOMIC_READ_MODIFY_WRITE(op)                                           \
  template <class T>                                                                   \
  DYNASOAR_HD DYNASOAR_FORCEINLINE T atomic_##op(T* p, T v, memory_order o = relaxed) { \
    return std::atomic_ref<T>(*p).op(v, o);                                            \
  }
#endif
DYNASOAR_ATOMIC_READ_MODIFY_WRITE(fetch_or)
DYNASOAR_ATOMIC_READ_MODIFY_WRITE(fetch_and)
DYNASOAR_ATOMIC_READ_MODIFY_WRITE(fetch_add)
DYNASOAR_ATOMIC_READ_MODIFY_WRITE(fetch_sub)
#undef DYNASOAR_ATOMIC_READ_MODIFY_WRITE
#undef DYNASOAR_CALL_fetch_or
#undef DYNASOAR_CALL_fetch_and
#undef DYNASOAR_CALL_fetch_add
#undef DYNASOAR_CALL_fetch_sub

/// Stores `v` into *p and returns the value *p held before.
template <class T>
DYNASOAR_HD DYNASOAR_FORCEINLINE T atomic_exchange(T* p, T v, memory_order o = relaxed) {
#if DYNASOAR_DEVICE_CODE
  T old;
#define DYNASOAR_CALL(order)                                          \
  __nv_atomic_exchange(p, &v, &old, order, __NV_THREAD_SCOPE_DEVICE); \
  return old;
  DYNASOAR_NV_ORDERED(o, DYNASOAR_CALL)
#undef DYNASOAR_CALL
#else
  return std::atomic_ref<T>(*p).exchange(v, o);
#endif
}

/// Compare-and-swap; on failure `expected` receives the current value (read
/// with relaxed order).
template <class T>
DYNASOAR_HD DYNASOAR_FORCEINLINE bool atomic_compare_exchange(T* p, T& expected, T desired,
                                                              memory_order o = relaxed) {
#if DYNASOAR_DEVICE_CODE
#define DYNASOAR_CALL(order)                                                                                \
  return __nv_atomic_compare_exchange(p, &expected, &desired, false, order, __NV_ATOMIC_RELAXED, \
                                      __NV_THREAD_SCOPE_DEVICE);
  DYNASOAR_NV_ORDERED(o, DYNASOAR_CALL)
#undef DYNASOAR_CALL
#else
  return std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired, o, relaxed);
#endif
}

#if DYNASOAR_DEVICE_CODE
#undef DYNASOAR_NV_ORDERED
#undef DYNASOAR_NV_LOAD_ORDERED
#undef DYNASOAR_NV_STORE_ORDERED
#endif

/// A full fence at device scope (the paper's `__threadfence()`).
DYNASOAR_HD DYNASOAR_FORCEINLINE void thread_fence() {
#if DYNASOAR_DEVICE_CODE
  __nv_atomic_thread_fence(__NV_ATOMIC_SEQ_CST, __NV_THREAD_SCOPE_DEVICE);
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
