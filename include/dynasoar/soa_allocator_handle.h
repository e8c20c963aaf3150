// AllocatorHandle: the host side of the DynaSOAr API. It owns the object heap
// and its bitmaps (RAII) and runs the parallel operations of Springer & Masuhara 2019, Sec. 2.1:
// parallel_new, parallel_do, count and statistics.
//
//   dynasoar::AllocatorHandle<AllocatorT> heap(1ull << 30);   // 1 GiB heap
//   heap.parallel_new<Body>(1000, 2.0f);     // Body(i, 2.0f) for i < 1000
//   heap.parallel_do<Body, &Body::move>();   // every Body (and subclass) moves
//   my_kernel<<<...>>>(heap.device());       // new/destroy/device_do inside
//   heap.check_errors();                     // throws if a `new` ran out of memory
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dynasoar/allocator/soa/heap.h"
#include "dynasoar/detail/soa_kernels.h"
#include "dynasoar/bitmap/bitmap_handle.h"
#include "dynasoar/handle_options.h"
#include "dynasoar/operations.h"
#include "dynasoar/soa_allocator.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar {

namespace debug {
struct HeapInspector;  // dynasoar/detail/debug.h
}

// dynasoar::OutOfMemory (dynasoar/platform/error.h): a `new` in device code found the heap full.

/// Owns the object heap of allocator type Alloc (a HeapAllocator<...>:
/// SoaAllocator or BitmapAllocator; the layout changes nothing here).
/// Users name it AllocatorHandle<Alloc> (backend.h), the same for every back end.
template <class Alloc>
class SoaAllocatorHandle : public HandleOps<SoaAllocatorHandle<Alloc>> {
 public:
  /// The device allocator type this handle owns the heap of.
  using Allocator = Alloc;
  /// The compile-time table of the allocator's classes (ids, capacities, layouts).
  using Registry = typename Alloc::Registry;
  /// Where the handle queues its work: a CUDA stream, or an empty tag in a host build.
  using Stream = platform::Stream;
  /// Number of registered classes, abstract ones included.
  static constexpr std::size_t kNumTypes = Registry::kNumTypes;
  static_assert(Registry::check());

  /// Bytes of every block of this allocator type (the headers are kept apart).
  static constexpr std::uint64_t kBlockBytes = Registry::kBlockBytes;

  /// Classes that have blocks (abstract ones have none).
  static constexpr std::uint64_t kConcreteClasses = [] {
    std::uint64_t n = 0;
    for (unsigned c : Registry::kCapacityById) n += c != 0;
    return n;
  }();

  /// Heap bytes that hold `objects` objects of T (whole blocks).
  template <class T>
  static constexpr std::uint64_t bytes_for(std::uint64_t objects) {
    constexpr unsigned cap = Registry::template kCapacity<T>;
    return (objects + cap - 1) / cap * kBlockBytes;
  }

  /// A heap of `heap_bytes` bytes of back-end memory (rounded down to whole
  /// blocks), plus its bitmaps and block headers (32 bytes a block). Throws
  /// std::invalid_argument if it cannot hold one block per concrete class or
  /// more blocks than a bitmap can index, and dynasoar::CudaError if device
  /// memory runs out.
  explicit SoaAllocatorHandle(std::uint64_t heap_bytes, HandleOptions options = {}, Stream s = {})
      : stream_(s) {
    const std::uint64_t blocks = heap_bytes / kBlockBytes;
    if (blocks < kConcreteClasses)
      throw std::invalid_argument(
          "AllocatorHandle: a heap of " + std::to_string(heap_bytes) + " bytes has " +
          std::to_string(blocks) + " blocks of " + std::to_string(kBlockBytes) +
          " bytes; it needs at least one per class (" + std::to_string(kConcreteClasses) + ")");
    if (blocks > kMaxBitmapCapacity)
      throw std::invalid_argument("AllocatorHandle: " + std::to_string(blocks) +
                                  " blocks are more than the block bitmaps can index (" +
                                  std::to_string(kMaxBitmapCapacity) + ")");
    num_blocks_ = static_cast<bit_index>(blocks);
    heap_ = platform::Buffer<std::uint64_t>(blocks * kBlockBytes / sizeof(std::uint64_t));
    const auto base = reinterpret_cast<std::uint64_t>(heap_.data());
    if (base % soa::kBlockAlignment != 0 || base + blocks * kBlockBytes > soa::kAddressLimit)
      throw std::runtime_error(
          "AllocatorHandle: the heap memory lies outside the 2^50-byte range "
          "object pointers can address");

    free_blocks_ =
        std::make_unique<BitmapHandle>(blocks, BitmapHandle::Init::kAllSet, s);
    // The blocks' headers, zeroed: a block that was never used has no
    // objects and no class (initialize_block sets both before its first use).
    headers_ = platform::Buffer<soa::BlockHeader>(blocks);
    headers_.zero(s);
    soa::HeapState host{};
    host.blocks = base;
    host.headers = headers_.data();
    host.block_bytes = kBlockBytes;
    host.options = options.heap;
    error_.reset(s);
    host.error = error_.data();
    host.error_seen = error_.seen();
    initializing_ = platform::Buffer<unsigned>(1);
    initializing_.zero(s);
    host.initializing = initializing_.data();
    host.free_blocks = free_blocks_->device();
    for (std::size_t t = 0; t < kNumTypes; ++t) {
      host.capacity[t] = Registry::kCapacityById[t];
      if (host.capacity[t] == 0) continue;  // abstract: no blocks
      allocated_[t] =
          std::make_unique<BitmapHandle>(blocks, BitmapHandle::Init::kAllClear, s);
      block_counts_[t] = AlternatingCount(s);
      active_[t] =
          std::make_unique<BitmapHandle>(blocks, BitmapHandle::Init::kAllClear, s);
      host.allocated[t] = allocated_[t]->device();
      host.active[t] = active_[t]->device();
    }
    state_ = platform::Buffer<soa::HeapState>(1);
    state_.copy_from_host(&host, 1, 0, s);
    total_ = platform::Buffer<unsigned long long>(1);
    watchdog_ = platform::Watchdog(options.watchdog_seconds, s);
    platform::synchronize(s);
  }

  /// A heap with room for `objects` objects of T (whole blocks, at least
  /// one block per class): a `new T` fails only after that many T live.
  /// Blocks of other classes take room of their own.
  ///   auto heap = AllocatorHandle<AllocatorT>::for_objects<Body>(1 << 20);
  template <class T>
  static SoaAllocatorHandle for_objects(std::uint64_t objects, HandleOptions options = {},
                               Stream s = {}) {
    // One block of T also for no objects: T's block counts among the classes' blocks.
    const std::uint64_t own = bytes_for<T>(std::max<std::uint64_t>(objects, 1));
    return SoaAllocatorHandle(own + (kConcreteClasses - 1) * kBlockBytes, options, s);
  }

  SoaAllocatorHandle(const SoaAllocatorHandle&) = delete;
  SoaAllocatorHandle& operator=(const SoaAllocatorHandle&) = delete;
  /// Handles move: the heap, its bitmaps and the device state stay where
  /// they are, so `device()` handles made before the move stay valid. The
  /// moved-from handle owns nothing; it may only be destroyed or assigned
  /// to. Host only; not while kernels of either handle are still running.
  SoaAllocatorHandle(SoaAllocatorHandle&&) noexcept = default;
  /// Frees this handle's heap, then takes over `other`'s (see the move constructor).
  SoaAllocatorHandle& operator=(SoaAllocatorHandle&&) noexcept = default;

  /// The handle for kernels (pass by value).
  Alloc device() const { return Alloc(state_.data()); }

  /// Blocks of the heap (free and allocated).
  bit_index num_blocks() const { return num_blocks_; }
  /// Bytes of the heap: its blocks, without the bitmaps.
  std::uint64_t heap_bytes() const { return static_cast<std::uint64_t>(num_blocks_) * kBlockBytes; }
  /// The stream every operation of this handle is queued on.
  Stream stream() const { return stream_; }

  /// parallel_do without waiting: everything is queued on the handle's
  /// stream, with no host synchronisation between the steps (block
  /// enumeration, snapshot, do-all kernel). Call check_errors() after the stream
  /// is done to learn about allocation failures. kWithSubclasses false:
  /// objects of T only (parallel_do_single_type).
  template <class T, auto Method, bool kWithSubclasses = true, class... Args>
  void parallel_do_async(Args&&... args) {
    const auto pack = detail::pack_args(std::forward<Args>(args)...);
    // Every visited class's blocks and snapshot first, then the do-alls: a
    // method may create objects of a class visited after its own (a subclass
    // made by a base class's method), and objects created during the
    // parallel_do must not be visited (Sec. 3.1). Each class keeps its own
    // block list until its do-all has run; blocks that class gets meanwhile
    // are not on it, and slots it fills meanwhile are not in the snapshot.
    // The snapshot and do-all kernels are launched early
    // (parallel_for_early): their thread blocks are scheduled while the
    // kernel ahead of them ends, and wait for it before they read anything.
    for_each_concrete_constant<Registry, T, kWithSubclasses>([&](auto type_constant) {
      constexpr unsigned type = decltype(type_constant)::value;
      list_and_snapshot(type);
    });
    for_each_concrete_constant<Registry, T, kWithSubclasses>([&](auto type_constant) {
      do_all<T, Method, decltype(type_constant)::value>(pack);
    });
  }

  /// BackendHandle hook of statistics<T>(): blocks and objects of the
  /// concrete class with id `type`. Waits for the stream.
  TypeStatistics type_statistics(unsigned type) {
    TypeStatistics st;
    st.type_id = type;
    st.capacity = Registry::kCapacityById[type];
    st.blocks = allocated_[type]->count(stream_);
    st.objects = count_type(type);
    return st;
  }

  /// Blocks in use (of any class) and all blocks.
  std::uint64_t allocated_blocks() const { return num_blocks_ - free_blocks_->count(stream_); }

  /// True if a `new` found the heap full since the last check.
  bool out_of_memory() const { return (error_.read(stream_) & soa::kHeapOutOfMemory) != 0; }

  /// Throws OutOfMemory if a `new` found the heap full, and std::logic_error
  /// if a `destroy` was given a pointer that is no live object of this heap
  /// (HeapState::deallocate; nothing was freed then). Clears the flags.
  /// Waits for the stream. Every flag the heap raises also marks the error
  /// word's page-locked mirror (HeapState::raise_error), so the wait alone
  /// tells whether there is anything to report, and the word is copied only
  /// then: a copy behind the kernels would lengthen every blocking call.
  void check_errors() {
    if (error_.has_seen() && !error_.any_raised(stream_)) return;
    const unsigned e = error_.read(stream_);
    if (e == soa::kHeapOk) return;
    error_.clear(stream_);
    platform::synchronize(stream_);
    const std::string also_full =
        (e & soa::kHeapOutOfMemory) != 0 ? " The heap also ran out of memory." : "";
    if ((e & soa::kHeapForeignPointer) != 0)
      throw std::logic_error(
          "dynasoar: `destroy` was given a pointer that is no object of this heap (an object of "
          "another heap, or not an object pointer); nothing was freed. Destroy objects through the "
          "allocator of the heap that made them." + also_full);
    if ((e & soa::kHeapDoubleFree) != 0)
      throw std::logic_error(
          "dynasoar: `destroy` was given an object that was destroyed before (an object destroyed "
          "twice); nothing was freed. Clear the pointers to an object when it is destroyed." +
          also_full);
    throw OutOfMemory(
        "dynasoar: the object heap is out of memory (" + std::to_string(num_blocks_) +
        " blocks of " + std::to_string(kBlockBytes) +
        " bytes); at least one `new` returned nullptr. Give AllocatorHandle a larger heap.");
  }

  /// BackendHandle hook of parallel_new: objects in whole blocks. One
  /// kernel takes n / capacity free blocks with all their slots reserved,
  /// a second constructs object i in slot
  /// i % capacity of block i / capacity; the last n % capacity objects, and
  /// those whose block could not be had, are made by `new` (active blocks
  /// first), so parallel_new fails only where `new` would. Both kernels are
  /// queued on the stream. Until the second has run, the reserved slots hold
  /// no objects: no walk over T may run on another stream meanwhile.
  template <class T, class Pack>
  void create_objects(std::size_t n, const Pack& pack) {
    static_assert(check_allocatable<Registry, T>());
    constexpr unsigned type = Alloc::template type_id<T>();
    constexpr unsigned cap = Registry::kCapacityById[type];
    const std::size_t groups = std::min<std::size_t>(n / cap, num_blocks_);
    construct_in_blocks<T>(n, pack, block_list(type), groups, groups * cap, nullptr);
  }

  /// BackendHandle hook of parallel_new_indexed: as create_objects, but
  /// every group of `capacity` objects, the last one too, gets a block of
  /// its own (no `new`), and the table keeps the blocks' numbers: those of
  /// a run of consecutive free blocks where the heap has one, and the index
  /// then computes them. Throws OutOfMemory, making nothing, if fewer blocks
  /// are free than there are groups. Waits for the stream (it counts the
  /// free blocks, looks for the run, and checks that every group got its
  /// block of the run). Should a claim still find no block (another stream
  /// using the heap meanwhile), its objects are not made and the
  /// out-of-memory flag is raised.
  template <class T, class Pack>
  ObjectTable<Alloc, T> create_objects_indexed(std::size_t n, const Pack& pack) {
    static_assert(check_allocatable<Registry, T>());
    constexpr unsigned type = Alloc::template type_id<T>();
    constexpr unsigned cap = Registry::kCapacityById[type];
    const std::size_t groups = (n + cap - 1) / cap;
    // The free blocks, counted and searched for a run in one copy of the
    // free-block bitmap's lowest level (one wait for the stream).
    const std::vector<BitmapHandle::word> free_level0 =
        groups == 0 ? std::vector<BitmapHandle::word>{} : free_blocks_->copy_level(0, stream_);
    std::uint64_t free = 0;
    for (const BitmapHandle::word w : free_level0) free += static_cast<std::uint64_t>(platform::popc(w));
    if (groups > free)
      throw OutOfMemory("dynasoar: the object heap is out of memory: parallel_new_indexed of " + std::to_string(n) +
                        " objects needs " +
                        std::to_string(groups) + " free blocks (one per " + std::to_string(cap) +
                        " objects); the heap has " + std::to_string(free) + " of " + std::to_string(num_blocks_) +
                        " free; nothing was made. Give AllocatorHandle a larger heap.");
    platform::Buffer<bit_index> blocks(std::max<std::size_t>(groups, 1));
    // Consecutive blocks where the heap has a run of free ones (a grid made
    // first in a new heap): object i is then at a computed place, found
    // without the table load, and neighbours in the grid are neighbours in
    // memory. Each group asks for its block of the run; should another
    // thread take one first (another stream), the index uses the table.
    const bit_index run = BitmapHandle::find_run(free_level0, num_blocks_, groups);
    if (run != kNoBit) total_.zero(stream_);
    construct_in_blocks<T>(n, pack, blocks.data(), groups, n, state_.data(), run, total_.data());
    bit_index consecutive = kNoBit;
    if (run != kNoBit) {
      unsigned long long outside = 0;  // counted by the claims
      total_.copy_to_host(&outside, 1, 0, stream_);
      if (outside == 0) consecutive = run;
    }
    return ObjectTable<Alloc, T>(std::move(blocks), n, heap_base(), kBlockBytes, consecutive);
  }

  /// BackendHandle hook of count<T>(): live objects of the concrete class
  /// with id `type`. Waits for the stream.
  std::uint64_t count_type(unsigned type) {
    list_blocks(type);
    total_.zero(stream_);
    platform::parallel_workers_up_to(workers_for_blocks(),
                               soa::detail::CountObjects{state_.data(), block_list(type), block_count(type), type,
                                                 total_.data()},
                               stream_);
    unsigned long long n = 0;
    total_.copy_to_host(&n, 1, 0, stream_);
    return n;
  }

 private:
  friend struct debug::HeapInspector;
  // The two kernels of create_objects and create_objects_indexed: the first
  // `groups` groups of the class's capacity claim a block each into
  // blocks[g] (reserving the slots of objects below `claimed`; group g asks
  // for block run + g first where `run` is given, counting into *outside
  // if it did not get it), then object
  // i is made in slot i % capacity of its group's block; where a group has
  // none, by `new` (indexed == nullptr) or not at all, with indexed's
  // out-of-memory flag raised.
  template <class T, class Pack>
  void construct_in_blocks(std::size_t n, const Pack& pack, bit_index* blocks, std::size_t groups,
                           std::size_t claimed, soa::HeapState* indexed, bit_index run = kNoBit,
                           unsigned long long* outside = nullptr) {
    constexpr unsigned type = Alloc::template type_id<T>();
    constexpr unsigned cap = Registry::kCapacityById[type];
    const auto watched = watchdog_.watch(platform::watched_new<T>(n));
    if (groups != 0)
      platform::parallel_for(
          groups, soa::detail::ClaimFullBlocks{state_.data(), blocks, type, cap, claimed, run, outside}, stream_);
    platform::parallel_for(n,
                           soa::detail::ConstructInBlocks<Alloc, T, Pack, type, cap>{
                               device(), heap_base(), kBlockBytes, blocks, groups, pack, indexed},
                           stream_);
  }

  /// debug::check_consistency (dynasoar/detail/debug.h): every bitmap consistent
  /// (App. A.5), and the block states agree with them: a block is free or
  /// belongs to exactly one class, is non-empty, has that class in its
  /// header, no live slot marked destroyed, and is active iff it has a free
  /// slot. Empty string if all holds, else the first violation.
  std::string check_consistency() const {
    std::string e = free_blocks_->check_consistency(stream_);
    if (!e.empty()) return "free-block bitmap: " + e;
    std::vector<std::vector<bit_index>> alloc(kNumTypes), act(kNumTypes);
    for (std::size_t t = 0; t < kNumTypes; ++t) {
      if (!allocated_[t]) continue;
      for (auto* b : {allocated_[t].get(), active_[t].get()}) {
        e = b->check_consistency(stream_);
        if (!e.empty()) return "type " + std::to_string(t) + " block bitmap: " + e;
      }
      alloc[t] = allocated_[t]->indices(stream_);
      act[t] = active_[t]->indices(stream_);
    }
    const std::vector<bit_index> free_list = free_blocks_->indices(stream_);
    std::vector<int> owner(num_blocks_, -1);
    for (bit_index b : free_list) owner[b] = -2;
    for (std::size_t t = 0; t < kNumTypes; ++t)
      for (bit_index b : alloc[t]) {
        if (owner[b] != -1)
          return "block " + std::to_string(b) + " is allocated to type " + std::to_string(t) +
                 " and also " +
                 (owner[b] == -2 ? std::string("free")
                                 : "allocated to type " + std::to_string(owner[b]));
        owner[b] = static_cast<int>(t);
      }
    for (bit_index b = 0; b < num_blocks_; ++b)
      if (owner[b] == -1) return "block " + std::to_string(b) + " is neither free nor allocated";
    std::vector<soa::BlockHeader> headers = read_headers();
    for (std::size_t t = 0; t < kNumTypes; ++t) {
      if (!allocated_[t]) continue;
      const soa::word padding = soa::padding_bits(Registry::kCapacityById[t]);
      std::vector<char> is_active(num_blocks_, 0);
      for (bit_index b : act[t]) {
        if (owner[b] != static_cast<int>(t))
          return "block " + std::to_string(b) + " is active for type " + std::to_string(t) +
                 " but not allocated to it";
        is_active[b] = 1;
      }
      for (bit_index b : alloc[t]) {
        const soa::BlockHeader& h = headers[b];
        if (h.type != t)
          return "block " + std::to_string(b) + " of type " + std::to_string(t) + " has type " +
                 std::to_string(h.type) + " in its header";
        if (h.allocation == padding)
          return "block " + std::to_string(b) + " is allocated but empty";
        if ((h.allocation & h.destroyed & ~padding) != 0)
          return "block " + std::to_string(b) + " has a live object marked destroyed";
        if ((h.allocation != soa::kAllSlots) != (is_active[b] != 0))
          return "block " + std::to_string(b) +
                 (is_active[b] ? " is active but full" : " has free slots but is not active");
      }
    }
    return {};
  }

  // The block list of `type` (device memory, room for every block), made on
  // first use: a class that is never listed costs nothing.
  bit_index* block_list(unsigned type) {
    if (block_lists_[type].size() == 0) block_lists_[type] = platform::Buffer<bit_index>(num_blocks_);
    return block_lists_[type].data();
  }
  // The snapshot of each entry of the block list of `type` (device memory,
  // room for every block), made by the first parallel_do over the class:
  // 8 bytes a block for each class that is iterated over.
  soa::word* snapshot_list(unsigned type) {
    if (snapshot_lists_[type].size() == 0) snapshot_lists_[type] = platform::Buffer<soa::word>(num_blocks_);
    return snapshot_lists_[type].data();
  }
  // The number of entries of the block list of `type` (device memory), as
  // the last list_blocks or parallel_do wrote it; it moves with each of them.
  bit_index* block_count(unsigned type) { return block_counts_[type].get(); }

  // Writes the allocated blocks of `type` to its block list and count (device).
  void list_blocks(unsigned type) { allocated_[type]->enumerate(block_list(type), block_counts_[type], stream_); }

  // The block list of `type` and its snapshot (Sec. 3.1), queued on the
  // stream: on the GPU one kernel where the block bitmap takes one
  // enumeration step (soa::detail::ListAndSnapshotBlocks, launched early),
  // else (and in a host build) the enumeration's steps and then a snapshot
  // kernel.
  void list_and_snapshot(unsigned type) {
#if DYNASOAR_CUDA
    const BitmapHandle& bitmap = *allocated_[type];
    if (bitmap.enumerates_in_one_step()) {
      const BitmapHandle::OneStep step = bitmap.one_step(block_counts_[type]);
      // A warp per container, in whole thread blocks, at most one thread per
      // resident thread (every thread takes exactly one item).
      constexpr std::size_t kBlockWarps = soa::detail::kListThreads / 32;
      const std::size_t most = std::max<std::size_t>(
          kBlockWarps, platform::concurrent_threads() / soa::detail::kListThreads * kBlockWarps);
      const std::size_t warps =
          std::min((step.containers + kBlockWarps - 1) / kBlockWarps * kBlockWarps, most);
      platform::parallel_for_early<soa::detail::kListThreads>(
          warps * 32,
          soa::detail::ListAndSnapshotBlocks{step.words, step.containers, warps, block_list(type), step.count,
                                             step.zero_after, snapshot_list(type), state_.data(), type},
          stream_);
      return;
    }
#endif
    list_blocks(type);
    const std::size_t workers = workers_for_blocks();
    platform::parallel_for_early(
        workers, soa::detail::SnapshotBlocks{state_.data(), block_list(type), block_count(type), snapshot_list(type),
                                             type, workers},
        stream_);
  }

  std::size_t workers_for_blocks() const {
    const std::size_t resident = platform::concurrent_threads();
    return std::min<std::size_t>(resident, std::max<std::size_t>(num_blocks_, 1));
  }

  // Threads of a do-all kernel: a multiple of the capacity, enough to fill
  // the device (the block count is known only on the device), and a
  // multiple of kDoAllBlockThreads (DoAll::spread permutes the threads of
  // whole blocks).
  std::size_t do_all_threads(unsigned cap) const {
    const std::size_t want =
        platform::kCudaBuild ? platform::concurrent_threads() : platform::host_threads();
    const std::size_t needed = static_cast<std::size_t>(num_blocks_) * cap;
    const std::size_t unit = std::lcm(std::size_t{cap}, std::size_t{soa::kDoAllBlockThreads});
    return std::max<std::size_t>(1, std::min(want, needed) / unit) * unit;
  }

  // The do-all of Method over the objects of class `type` (T or a
  // subclass), watched by the watchdog. A function of its own: the lambda
  // that for_each_concrete_constant (host and device) calls must stay
  // constexpr, which a local with a destructor, the watch, would prevent.
  // The watch is plain data: what it costs to compile and to run when the
  // watchdog is off is a few stores.
  template <class T, auto Method, unsigned type, class Pack>
  void do_all(const Pack& pack) {
    constexpr unsigned cap = Registry::kCapacityById[type];
    using C = model::At<typename Registry::Types, type>;
    platform::WatchedOperation op = platform::watched_do_all<T, Method>(platform::pretty_type_name<C>());
    op.list_length = block_count(type);
    op.snapshots = snapshot_list(type);
    op.slots = cap;
    const auto watched = watchdog_.watch(op);
#if DYNASOAR_CUDA
    const std::size_t threads = do_all_threads(cap);
    platform::parallel_for_early<soa::kDoAllBlockThreads>(
        threads,
        soa::detail::DoAll<T, Method, Pack, type, cap>{heap_base(), kBlockBytes, block_list(type), snapshot_list(type),
                                                       block_count(type), threads, pack, watched.progress()},
        stream_);
#else
    host_do_all<T, Method, type, cap>(pack, watched.progress());
#endif
  }

#if !DYNASOAR_CUDA
  // The host build's do-all of one class. Here the block list is in host
  // memory once list_blocks returns, so the work is split by the number of
  // blocks it holds: host_chunk_count chunks of whole blocks, of at least
  // kHostDoAllGrain slots each, chunk c on a thread of its own. A do-all over
  // many objects thus uses every hardware thread, one over a few runs on the
  // caller alone (the device's grid, sized by resident threads, gave the host
  // a few dozen "threads", and so one OS thread).
  template <class T, auto Method, unsigned kType, unsigned kCap, class Pack>
  void host_do_all(const Pack& pack, unsigned long long* progress) {
    const bit_index n = block_counts_[kType].read(stream_);
    platform::host_parallel_chunks(
        n, platform::host_chunk_count(static_cast<std::size_t>(n) * kCap, platform::kHostDoAllGrain),
        soa::detail::HostDoAll<T, Method, Pack, kType, kCap>{heap_base(), kBlockBytes, block_list(kType),
                                                             snapshot_list(kType), pack, progress});
  }
#endif

  std::uint64_t heap_base() const { return reinterpret_cast<std::uint64_t>(heap_.data()); }

  std::vector<soa::BlockHeader> read_headers() const { return headers_.to_vector(stream_); }

  Stream stream_;
  bit_index num_blocks_ = 0;
  platform::Buffer<std::uint64_t> heap_;
  platform::Buffer<soa::BlockHeader> headers_;  // HeapState::headers
  platform::Buffer<soa::HeapState> state_;
  platform::ErrorFlags error_;  // soa::kHeap* flags
  platform::Buffer<unsigned> initializing_;  // HeapState::initializing
  std::unique_ptr<BitmapHandle> free_blocks_;
  std::unique_ptr<BitmapHandle> allocated_[kNumTypes];
  std::unique_ptr<BitmapHandle> active_[kNumTypes];
  platform::Buffer<bit_index> block_lists_[kNumTypes];  // per class, made on first use
  platform::Buffer<soa::word> snapshot_lists_[kNumTypes];  // per class, made by its first parallel_do
  AlternatingCount block_counts_[kNumTypes];  // per class: the block list's length
  mutable platform::Buffer<unsigned long long> total_;
  platform::Watchdog watchdog_;  // last: its monitor stops before the rest goes
};

}  // namespace dynasoar
