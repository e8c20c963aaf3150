// ByteAllocatorHandle: the host side of the API on a byte allocator (ByteAllocator).
// It owns the raw allocator's pool (raw::PoolHandle) and the generic
// object registry, and offers what SoaAllocatorHandle offers, so that code written
// against AllocatorHandle<A> runs unchanged on every back end:
//
//   dynasoar::AllocatorHandle<AllocatorT> heap(1ull << 30);   // 1 GiB pool
//   heap.parallel_new<Body>(1000, 2.0f);
//   heap.parallel_do<Body, &Body::move>();
//
// Enumeration (Springer & Masuhara 2019, Sec. 6, "Parallel do-all in Custom Allocators"):
// before a do-all, a count or statistics, the class's registry array is
// compacted on the stream (platform::PointerCompactor: the non-null entries
// in order, then a kernel that moves them back and renumbers the object
// headers). The host needs the number of live objects to size that work and the do-all, so
// unlike the SOA heap this waits for the stream once per class. The time of
// these steps is summed in enumeration_seconds(), apart from the do-all
// kernels, as the paper reports it.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dynasoar/allocator/raw/alignment.h"
#include "dynasoar/allocator/raw/pool_handle.h"
#include "dynasoar/allocator/registry/registry.h"
#include "dynasoar/byte_allocator.h"
#include "dynasoar/allocator/registry/kernels.h"
#include "dynasoar/handle_options.h"
#include "dynasoar/model/visit.h"
#include "dynasoar/operations.h"
#include "dynasoar/platform/error.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/select.h"

namespace dynasoar {

/// Owns the pool and object registry of a ByteAllocator Alloc and runs the
/// parallel operations on it. Users name it AllocatorHandle<Alloc>, the same
/// for every back end.
template <class Alloc>
class ByteAllocatorHandle final : public HandleOps<ByteAllocatorHandle<Alloc>> {
 public:
  /// The device allocator type this handle owns the memory of.
  using Allocator = Alloc;
  /// The compile-time table of the allocator's classes (ids, layouts).
  using Registry = typename Alloc::Registry;
  /// The raw byte allocator that holds the objects (a raw::RawAllocator).
  using Raw = typename Alloc::RawAllocator;
  /// Where the handle queues its work: a CUDA stream, or an empty tag in a host build.
  using Stream = platform::Stream;
  /// Number of registered classes, abstract ones included.
  static constexpr std::size_t kNumTypes = Registry::kNumTypes;
  static_assert(Registry::check());

  /// A pool of `pool_bytes` bytes for the raw allocator, plus the registry.
  /// Throws std::invalid_argument for a pool the allocator cannot use.
  explicit ByteAllocatorHandle(std::uint64_t pool_bytes, HandleOptions options = {}, Stream s = {})
      : stream_(s),
        pool_(pool_bytes, options.pool, s),
        initial_capacity_(std::max<std::uint64_t>(options.registry_capacity, 1)) {
    std::vector<registry::TypeEntries> host(kNumTypes);
    for (std::size_t t = 0; t < kNumTypes; ++t) {
      if (Registry::kIsAbstractById[t]) continue;  // abstract: never allocated
      entries_[t] = platform::Buffer<void*>(initial_capacity_);
      host[t] = {entries_[t].data(), 0, 0, initial_capacity_};
    }
    types_ = platform::Buffer<registry::TypeEntries>(kNumTypes);
    types_.copy_from_host(host.data(), kNumTypes, 0, s);
    error_.reset(s);
    selected_ = platform::Buffer<unsigned long long>(1);
    watchdog_ = platform::Watchdog(options.watchdog_seconds, s);
    platform::synchronize(s);
  }

  /// A handle whose pool holds about `objects` objects of T: each takes its
  /// allocation rounded to 16 bytes plus the allocator's 16-byte chunk
  /// header, doubled for the circular allocators' split policy (a chunk up
  /// to max_frag times the request is handed out whole). An estimate, not a
  /// guarantee as on the SOA heap: how well a pool packs depends on the
  /// allocator and the order of requests.
  template <class T>
  static ByteAllocatorHandle for_objects(std::uint64_t objects, HandleOptions options = {},
                                Stream s = {}) {
    return for_objects<T>(std::array<std::uint64_t, 1>{objects}, options, s);
  }

  /// A handle whose pool holds about objects[i] objects of the i-th class
  /// of Ts at the same time (each estimated as above).
  template <class... Ts>
  static ByteAllocatorHandle for_objects(const std::array<std::uint64_t, sizeof...(Ts)>& objects,
                                         HandleOptions options = {}, Stream s = {}) {
    static_assert(sizeof...(Ts) > 0, "for_objects<T...>: name at least one class");
    static_assert(model::kAllDistinct<Ts...>, "for_objects<T...>: a class is named twice");
    std::uint64_t bytes = 0;
    std::size_t i = 0;
    (
        [&] {
          const std::uint64_t chunk = raw::aligned_size(Alloc::template kObjectBytes<Ts>) + raw::kAlignment;
          bytes += objects[i] * chunk * 2;
          options.registry_capacity = std::max(options.registry_capacity, objects[i]);
          ++i;
        }(),
        ...);
    return ByteAllocatorHandle(bytes + (std::uint64_t{1} << 20), options, s);
  }

  ByteAllocatorHandle(const ByteAllocatorHandle&) = delete;
  ByteAllocatorHandle& operator=(const ByteAllocatorHandle&) = delete;
  /// Handles move: the pool and the registry stay where they are, so
  /// `device()` handles made before the move stay valid. The moved-from
  /// handle owns nothing; it may only be destroyed or assigned to. Host
  /// only; not while kernels of either handle are still running.
  ByteAllocatorHandle(ByteAllocatorHandle&&) noexcept = default;
  /// Frees this handle's objects and pool, then takes over `other`'s.
  ByteAllocatorHandle& operator=(ByteAllocatorHandle&& other) noexcept {
    // The destructor frees what this handle holds and the move constructor
    // takes every member, so no member list is kept twice (the class is
    // final and has no const or reference member: replacing it is allowed).
    if (this != &other) {
      std::destroy_at(this);
      std::construct_at(this, std::move(other));
    }
    return *this;
  }

  /// The pool goes with the handle; only a heap that outlives its pool
  /// (CUDA's device heap) stays, so the objects still in it are freed first.
  ~ByteAllocatorHandle() { free_objects_in_device_heap(); }

 private:
  /// On a heap that outlives the pool (raw::PoolHandle::kHeapOutlivesPool:
  /// CUDA's device heap): frees the objects the registry still lists
  /// (nothing for a moved-from handle, whose registry is empty). Other
  /// pools are freed whole with the handle.
  void free_objects_in_device_heap() noexcept {
    if constexpr (raw::PoolHandle<Raw>::kHeapOutlivesPool) {
      try {
        platform::synchronize(stream_);
        for (std::size_t t = 0; t < kNumTypes; ++t) {
          if (entries_[t].size() == 0) continue;
          registry::TypeEntries e{};
          types_.copy_to_host(&e, 1, t, stream_);
          const std::uint64_t n = std::min<std::uint64_t>(e.size, e.capacity);
          if (n != 0)
            platform::parallel_for(n, registry::detail::FreeEntries<Raw>{pool_.device(), e.entries},
                                   stream_);
        }
        platform::synchronize(stream_);
      } catch (...) {  // a destructor must not throw; the memory stays in CUDA's heap
      }
    }
  }

 public:
  /// The allocator for kernels (pass by value).
  Alloc device() const {
    return Alloc(pool_.device(), registry::ObjectRegistry{types_.data(), error_.data(),
                                                         static_cast<unsigned>(kNumTypes)});
  }
  /// The stream every operation of this handle is queued on.
  Stream stream() const { return stream_; }
  /// The raw allocator's pool (size, fragmentation).
  const raw::PoolHandle<Raw>& pool() const { return pool_; }
  /// Bytes of the raw allocator's pool, without the registry arrays.
  std::uint64_t heap_bytes() const { return pool_.bytes(); }

  /// parallel_do without the final wait. Each class's compaction waits for
  /// the stream (see the file comment); the do-all kernels are queued.
  /// Every visited class is compacted before the first do-all: objects a
  /// method creates are registered after the live count taken then, so no
  /// do-all visits them, whatever their class.
  template <class T, auto Method, bool kWithSubclasses = true, class... Args>
  void parallel_do_async(Args&&... args) {
    if constexpr (detail::check_do_all_call<T, Method, Args...>()) {
      const auto pack = platform::pack_args(std::forward<Args>(args)...);
      std::uint64_t live[kNumTypes] = {};
      model::for_each_concrete<Registry, T, kWithSubclasses>(
          [&](unsigned type) { live[type] = compact(type, 0); });
      model::for_each_concrete<Registry, T, kWithSubclasses>([&](unsigned type) {
        if (live[type] == 0) return;
        platform::WatchedOperation op = platform::watched_do_all<T, Method>(model::class_name<Registry>(type));
        op.objects = static_cast<long long>(live[type]);
        const auto watched = watchdog_.watch(op);
        const registry::detail::DoAllEntries<T, Method, decltype(pack)> each{entries_[type].data(), pack,
                                                                              watched.progress()};
#if DYNASOAR_CUDA
        platform::parallel_for(live[type], each, stream_);
#else
        // Host build: as many threads as the objects are worth (kHostDoAllGrain
        // each), every hardware thread for many; parallel_for's split, meant
        // for loops of a few instructions an item, would give most do-alls one.
        platform::host_for(live[type], platform::kHostDoAllGrain, each);
#endif
      });
    }
  }

  /// BackendHandle hook of statistics<T>(): the live objects of the
  /// concrete class with id `type` and their allocation size. Waits for the stream.
  TypeStatistics type_statistics(unsigned type) {
    TypeStatistics st;
    st.type_id = type;
    st.objects = compact(type, 0);
    st.object_bytes = Alloc::kObjectBytesById[type];
    return st;
  }

  /// BackendHandle hook of count<T>(): live objects of the concrete class
  /// with id `type` (compacts its registry array). Waits for the stream.
  std::uint64_t count_type(unsigned type) { return compact(type, 0); }

  /// BackendHandle hook of parallel_new: room in the registry first, then a
  /// `new` per thread, queued on the stream.
  template <class T, class Pack>
  void create_objects(std::size_t n, const Pack& pack) {
    make_room<T>(n);
    const auto watched = watchdog_.watch(platform::watched_new<T>(n));
    this->template create_one_by_one<T>(n, pack);
  }

  /// BackendHandle hook of parallel_new_indexed: as create_objects, with
  /// each object's pointer written to the table (a pointer per object).
  template <class T, class Pack>
  ObjectTable<Alloc, T> create_objects_indexed(std::size_t n, const Pack& pack) {
    platform::Buffer<T*> pointers(std::max<std::size_t>(n, 1));
    make_room<T>(n);
    const auto watched = watchdog_.watch(platform::watched_new<T>(n));
    this->template create_one_by_one<T>(n, pack, pointers.data());
    return ObjectTable<Alloc, T>(std::move(pointers), n, 0, 0);
  }

  /// Seconds spent compacting registry arrays since construction (the
  /// enumeration cost, reported apart from the do-all kernels).
  double enumeration_seconds() const { return enumeration_seconds_; }

  /// True if a `new` found no memory or no registry room since the last check.
  bool out_of_memory() const {
    return pool_.out_of_memory() || (registry_error() & registry::kRegistryFull) != 0;
  }

  /// Throws OutOfMemory (and clears the flags) if a `new` failed, and
  /// std::logic_error if a `destroy` was given a pointer that is no live
  /// object of this heap (nothing was freed then) or the registry lost count.
  /// Waits for the stream (the flags are copied behind everything queued).
  void check_errors() {
    const unsigned reg = registry_error();
    const bool pool_full = pool_.out_of_memory();
    if (reg == 0 && !pool_full) return;
    error_.clear(stream_);
    pool_.clear_errors();  // waits for the stream
    if ((reg & registry::kRegistryBadFree) != 0)
      throw std::logic_error(
          std::string("dynasoar: ") + Alloc::kBackendName +
          ": `destroy` was given a pointer that is no live object of this heap (an object "
          "destroyed twice, or one of another heap); nothing was freed. Clear the pointers to an "
          "object when it is destroyed, and destroy objects through the allocator of the heap "
          "that made them.");
    if ((reg & registry::kRegistryCorrupt) != 0)
      throw std::logic_error(std::string("dynasoar: ") + Alloc::kBackendName +
                             ": the object registry lost count; an object was destroyed twice");
    if (pool_full)
      throw OutOfMemory(
          std::string("dynasoar: the ") + Alloc::kBackendName + " pool of " +
          std::to_string(pool_.bytes()) +
          " bytes is out of memory; at least one `new` returned nullptr. Give AllocatorHandle a "
          "larger pool.");
    throw OutOfMemory(
        std::string("dynasoar: an object registry array is full (") + Alloc::kBackendName +
        "); at least one `new` returned nullptr. Raise HandleOptions::registry_capacity.");
  }

 private:
  // Room for n more objects of T in the registry (and, on an allocator
  // that reuses live memory, AWMalloc, n that fit the pool together),
  // before a creation kernel.
  template <class T>
  void make_room(std::size_t n) {
    if constexpr (raw::kReusesLiveMemory<Raw>) {
      // AWMalloc never fails a request that fits the pool: it wraps to the
      // pool's start, over memory still in use. Objects of one call that
      // together exceed the pool would overwrite each other; refuse them.
      // (An object larger than the pool fails by itself, with the flag.)
      const std::uint64_t each = raw::aligned_size(Alloc::template kObjectBytes<T>);
      if (each <= pool_.bytes() && n > pool_.bytes() / each)
        throw OutOfMemory(std::string("dynasoar: parallel_new of ") + std::to_string(n) +
                          " objects of " + std::to_string(each) + " bytes exceeds the " +
                          Raw::kName + " pool of " + std::to_string(pool_.bytes()) + " bytes, and " +
                          Raw::kName + " would hand out memory of objects this call made; "
                          "nothing was made. Give AllocatorHandle a larger pool.");
    }
    compact(Alloc::template type_id<T>(), n);
  }

  // The registry's error flags after everything queued. Waits for the stream.
  unsigned registry_error() const { return error_.read(stream_); }

  // Compacts the registry array of `type` and makes room for `extra` more
  // entries (growing the array when it is over half full); returns the
  // number of live objects. Waits for the stream.
  std::uint64_t compact(unsigned type, std::uint64_t extra) {
    platform::synchronize(stream_);
    const auto start = std::chrono::steady_clock::now();
    registry::TypeEntries e{};
    types_.copy_to_host(&e, 1, type, stream_);
    const std::uint64_t n = std::min<std::uint64_t>(e.size, e.capacity);
    const std::uint64_t live = n - std::min<std::uint64_t>(e.removed, n);
    bool changed = e.size != live || e.removed != 0;
    if (e.removed != 0) {
      if (scratch_.size() < n)
        scratch_ = platform::Buffer<void*>(std::max<std::uint64_t>(n, scratch_.size() * 2));
      compactor_.select_nonnull(e.entries, scratch_.data(), n, selected_.data(), stream_);
      platform::parallel_for(std::max<std::uint64_t>(live, 1),
                             registry::detail::Renumber{scratch_.data(), e.entries, type, live,
                                                selected_.data(), error_.data()},
                             stream_);
    }
    const std::uint64_t need = live + extra;
    if (need > e.capacity || live > e.capacity / 2) {
      const std::uint64_t capacity =
          std::max<std::uint64_t>({e.capacity * 2, need * 2, initial_capacity_});
      platform::Buffer<void*> grown(capacity);
      if (live != 0)
        platform::parallel_for(live, registry::detail::CopyEntries{e.entries, grown.data()}, stream_);
      platform::synchronize(stream_);
      entries_[type] = std::move(grown);
      e.entries = entries_[type].data();
      e.capacity = capacity;
      changed = true;
    }
    if (changed) {  // nothing was queued otherwise
      e.size = live;
      e.removed = 0;
      types_.copy_from_host(&e, 1, type, stream_);  // waits for the stream
    }
    enumeration_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return live;
  }

  Stream stream_;
  raw::PoolHandle<Raw> pool_;
  std::uint64_t initial_capacity_;
  platform::Buffer<registry::TypeEntries> types_;
  platform::Buffer<void*> entries_[kNumTypes];
  platform::Buffer<void*> scratch_;
  platform::ErrorFlags error_;  // registry flags
  platform::Buffer<unsigned long long> selected_;
  platform::PointerCompactor compactor_;
  double enumeration_seconds_ = 0;
  platform::Watchdog watchdog_;  // last: its monitor stops before the rest goes
};

}  // namespace dynasoar
