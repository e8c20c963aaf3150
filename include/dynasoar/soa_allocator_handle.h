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
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dynasoar/move/defrag.h"
#include "dynasoar/allocator/soa/heap_storage.h"
#include "dynasoar/allocator/soa/launch.h"
#include "dynasoar/handle_options.h"
#include "dynasoar/model/visit.h"
#include "dynasoar/move/checkpoint.h"
#include "dynasoar/operations.h"
#include "dynasoar/platform/arg_pack.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/watchdog.h"
#include "dynasoar/soa_allocator.h"

namespace dynasoar {

namespace debug {
struct HeapInspector;  // dynasoar/debug.h
}
namespace move {
struct HeapAccess;  // dynasoar/move/heap_access.h
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
  static constexpr std::uint64_t kConcreteClasses = soa::HeapStorage<Registry>::kConcreteClasses;

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
      : stream_(s),
        heap_(heap_bytes, options.heap, s),
        defrag_policy_(options.defrag),
        watchdog_(options.watchdog_seconds, s) {
    check_defrag_options(options.defrag.options);
    platform::synchronize(s);
  }

  /// A heap with room for `objects` objects of T (whole blocks, at least
  /// one block per class): a `new T` fails only after that many T live.
  /// Blocks of other classes take room of their own.
  ///   auto heap = AllocatorHandle<AllocatorT>::for_objects<Body>(1 << 20);
  template <class T>
  static SoaAllocatorHandle for_objects(std::uint64_t objects, HandleOptions options = {},
                               Stream s = {}) {
    return for_objects<T>(std::array<std::uint64_t, 1>{objects}, options, s);
  }

  /// A heap with room for objects[i] objects of the i-th class of Ts at the
  /// same time (whole blocks each, and one block for every other class):
  /// for a model whose classes grow side by side.
  ///   auto heap = AllocatorHandle<AllocatorT>::for_objects<Fish, Shark>({1 << 20, 1 << 16});
  template <class... Ts>
  static SoaAllocatorHandle for_objects(const std::array<std::uint64_t, sizeof...(Ts)>& objects,
                                        HandleOptions options = {}, Stream s = {}) {
    static_assert(sizeof...(Ts) > 0, "for_objects<T...>: name at least one class");
    static_assert((!Registry::template Info<Ts>::kIsAbstract && ...),
                  "for_objects<T...>: an abstract class has no objects of its own; name its concrete subclasses");
    static_assert(model::kAllDistinct<Ts...>, "for_objects<T...>: a class is named twice");
    std::uint64_t bytes = 0;
    std::size_t i = 0;
    // One block of each named class also for no objects: it counts among the classes' blocks.
    ((bytes += bytes_for<Ts>(std::max<std::uint64_t>(objects[i++], 1))), ...);
    return SoaAllocatorHandle(bytes + (kConcreteClasses - sizeof...(Ts)) * kBlockBytes, options, s);
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
  Alloc device() const { return Alloc(heap_.state()); }

  /// Blocks of the heap (free and allocated).
  bit_index num_blocks() const { return heap_.num_blocks(); }
  /// Bytes of the heap: its blocks, without the bitmaps.
  std::uint64_t heap_bytes() const { return static_cast<std::uint64_t>(num_blocks()) * kBlockBytes; }
  /// The stream every operation of this handle is queued on.
  Stream stream() const { return stream_; }

  /// parallel_do without waiting: everything is queued on the handle's
  /// stream, with no host synchronisation between the steps (block
  /// enumeration, snapshot, do-all kernel). Call check_errors() after the stream
  /// is done to learn about allocation failures. kWithSubclasses false:
  /// objects of T only (parallel_do_single_type).
  template <class T, auto Method, bool kWithSubclasses = true, class... Args>
  void parallel_do_async(Args&&... args) {
    if constexpr (detail::check_do_all_call<T, Method, Args...>()) {
      const auto pack = platform::pack_args(std::forward<Args>(args)...);
      // Every visited class's blocks and snapshot first, then the do-alls: a
      // method may create objects of a class visited after its own (a subclass
      // made by a base class's method), and objects created during the
      // parallel_do must not be visited (Sec. 3.1). Each class keeps its own
      // block list until its do-all has run; blocks that class gets meanwhile
      // are not on it, and slots it fills meanwhile are not in the snapshot.
      // The snapshot and do-all kernels are launched early
      // (parallel_for_early): their thread blocks are scheduled while the
      // kernel ahead of them ends, and wait for it before they read anything.
      model::for_each_concrete<Registry, T, kWithSubclasses>(
          [&](unsigned type) { soa::list_and_snapshot(heap_, type, stream_); });
      model::for_each_concrete_constant<Registry, T, kWithSubclasses>([&](auto type_constant) {
        do_all<T, Method, decltype(type_constant)::value>(pack);
      });
    }
  }

  /// Compacts the objects of T and of its concrete subclasses (the original
  /// DynaSOAr's parallel_defrag, after CompactGpu, ISMM 2019): the objects
  /// of blocks at most F/(F+1) full move into free slots of other such
  /// blocks of their class, the emptied blocks are freed, and every pointer
  /// field of every live object that may point to a moved object is
  /// rewritten (move/object_fields.h says which fields those are).
  /// Pointers to T held anywhere else (arrays of your own, an ObjectTable)
  /// are not: they go stale. Throws std::logic_error, moving nothing, for a
  /// class made by parallel_new_indexed, whose table holds its pointers.
  /// Blocking: waits for the work queued before and for the compaction.
  template <class T>
  DefragResult parallel_defrag(const DefragOptions& o = {}) {
    check_defrag_options(o);
    check_errors();
    model::for_each_concrete<Registry, T>([&](unsigned type) {
      if (made_indexed(type))
        throw std::logic_error("parallel_defrag: the objects of " + platform::type_name(model::class_name<Registry>(type)) +
                               " were made by parallel_new_indexed, and its table holds their pointers; "
                               "they cannot move. Compact the classes whose objects come and go.");
    });
    DefragResult total;
    model::for_each_concrete_constant<Registry, T>(
        [&](auto type_constant) { total += defrag_class<decltype(type_constant)::value>(o); });
    return total;
  }

  /// A point where the program lets objects move (the end of a step):
  /// with the policy of HandleOptions::defrag on, every `every`-th call
  /// compacts each concrete class (not made by parallel_new_indexed) whose
  /// candidate blocks make at least `min_share` of its blocks; with it off
  /// (the default), nothing. Blocking when it looks (it counts the
  /// candidates); else free. The same rule as parallel_defrag for pointers
  /// held outside the heap's fields.
  DefragResult compact_if_fragmented() {
    DefragResult done;
    if (!defrag_policy_.enabled || ++calls_since_look_ < defrag_policy_.every) return done;
    calls_since_look_ = 0;
    check_errors();
    for_each_class_constant([&](auto type_constant) {
      constexpr unsigned kType = decltype(type_constant)::value;
      if (made_indexed(kType)) return;
      const DefragOptions& o = defrag_policy_.options;
      const std::uint64_t candidates = move::defrag_candidates(heap_, defrag_scratch(), kType, o, stream_);
      const bit_index blocks = heap_.block_count(kType).read(stream_);
      if (candidates > std::uint64_t{o.retained} + o.factor &&
          static_cast<double>(candidates) >= defrag_policy_.min_share * static_cast<double>(blocks))
        done += move::defrag_listed<Registry, kType>(heap_, defrag_scratch(), candidates, o, stream_);
      else
        clear_candidates(candidates);
    });
    policy_result_ += done;
    return done;
  }

  /// What the policy's compactions did so far (all classes together).
  DefragResult defrag_policy_result() const { return policy_result_; }
  /// The compaction policy this heap follows (HandleOptions::defrag).
  const DefragPolicy& defrag_policy() const { return defrag_policy_; }

  /// Saves every live object of every concrete class to `out`, with
  /// `user` (the program's own state: its step, seed, ..., as bytes) beside
  /// them: a checkpoint (docs/guide/moving-objects.md; the format is
  /// docs/design/checkpoint-format.md). The objects of a class made by
  /// parallel_new_indexed come first, in the order of its tables, so that a
  /// load gives the tables back (restored_table). Throws
  /// move::CheckpointError, having written nothing, if an object pointer
  /// field holds a pointer to no live object of this heap (an object
  /// destroyed since); and if the stream fails. Pointers held outside the
  /// objects' fields (arrays of your own) are not saved. Blocking: waits for
  /// the work queued before; the heap is not changed.
  void save_checkpoint(std::ostream& out, std::string_view user = {}) {
    check_errors();
    move::save_heap(heap_, tables_, user, out, stream_);
  }

  /// save_checkpoint into the file `path`, which is replaced only once the
  /// new file is complete (it is written as `path`.part and renamed), so
  /// that a run stopped meanwhile leaves the previous checkpoint whole.
  void save_checkpoint(const std::filesystem::path& path, std::string_view user = {}) {
    move::write_file(path, [&](std::ostream& out) { save_checkpoint(out, user); });
  }

  /// Loads a checkpoint from `in` into this heap, which must be empty (new,
  /// or with every object destroyed), and returns the user bytes saved with
  /// it. The heap may have another size than the one that saved it, and the
  /// other block layout (a DynaSOAr heap's file loads into BitmapAlloc and
  /// the reverse); the program must have the same classes with the same
  /// fields. Each class's objects lie in consecutive blocks afterwards, in
  /// the file's order; a class's tables from parallel_new_indexed are
  /// given back by restored_table. Everything is read and checked before
  /// the heap changes: throws move::CheckpointError, the heap unchanged, if
  /// the heap is not empty or too small, or the file is no checkpoint, of
  /// another format version or another program's classes, or cut short.
  /// Blocking.
  std::string load_checkpoint(std::istream& in) {
    check_errors();
    move::Restored<kNumTypes> restored = move::load_heap(heap_, in, stream_);
    tables_ = std::move(restored.tables);
    return std::move(restored.user);
  }

  /// load_checkpoint from the file `path`.
  std::string load_checkpoint(const std::filesystem::path& path) {
    return move::read_file(path, [&](std::istream& in) { return load_checkpoint(in); });
  }

  /// The k-th object table of T (in the order parallel_new_indexed made
  /// them) as this heap has it: after load_checkpoint, the tables of the
  /// program that saved it, with entry i at the object that was entry i
  /// there (an entry whose object was destroyed before the save names a
  /// free slot). Also the tables of this heap's own parallel_new_indexed
  /// calls. Each call makes a new table of its own. Throws
  /// std::out_of_range if T has no k-th table.
  template <class T>
  ObjectTable<Alloc, T> restored_table(std::size_t k = 0) const {
    constexpr unsigned type = Alloc::template type_id<T>();
    const std::vector<move::TableBlocks>& tables = tables_[type];
    if (k >= tables.size())
      throw std::out_of_range("restored_table: " + platform::type_name(model::class_name<Registry>(type)) + " has " +
                              std::to_string(tables.size()) + " object tables, not " + std::to_string(k + 1) +
                              " (tables come from parallel_new_indexed and load_checkpoint)");
    const move::TableBlocks& table = tables[k];
    bool consecutive = !table.blocks.empty();
    for (std::size_t g = 0; g < table.blocks.size(); ++g)
      consecutive = consecutive && table.blocks[g] == table.blocks[0] + g;
    platform::Buffer<bit_index> entries(std::max<std::size_t>(table.blocks.size(), 1));
    entries.copy_from_host(table.blocks.data(), table.blocks.size(), 0, stream_);
    return ObjectTable<Alloc, T>(std::move(entries), table.size, heap_.base(), kBlockBytes,
                                 consecutive ? table.blocks[0] : kNoBit);
  }

  /// BackendHandle hook of statistics<T>(): blocks and objects of the
  /// concrete class with id `type`. Waits for the stream.
  TypeStatistics type_statistics(unsigned type) {
    TypeStatistics st;
    st.type_id = type;
    st.capacity = Registry::kCapacityById[type];
    st.blocks = heap_.allocated(type).count(stream_);
    st.objects = count_type(type);
    return st;
  }

  /// Blocks in use (of any class) and all blocks.
  std::uint64_t allocated_blocks() const { return num_blocks() - heap_.free_blocks().count(stream_); }

  /// True if a `new` found the heap full since the last check.
  bool out_of_memory() const { return (heap_.error().read(stream_) & soa::kHeapOutOfMemory) != 0; }

  /// Throws OutOfMemory if a `new` found the heap full, and std::logic_error
  /// if a `destroy` was given a pointer that is no live object of this heap
  /// (HeapState::deallocate; nothing was freed then). Clears the flags.
  /// Waits for the stream. Every flag the heap raises also marks the error
  /// word's page-locked mirror (HeapState::raise_error), so the wait alone
  /// tells whether there is anything to report, and the word is copied only
  /// then: the blocking parallel_do that ends here costs one round trip.
  void check_errors() {
    platform::ErrorFlags& error = heap_.error();
    if (error.has_seen() && !error.any_raised(stream_)) return;
    const unsigned e = error.read(stream_);
    if (e == soa::kHeapOk) return;
    error.clear(stream_);
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
        "dynasoar: the object heap is out of memory (" + std::to_string(num_blocks()) +
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
    const std::size_t groups = std::min<std::size_t>(n / cap, num_blocks());
    construct_in_blocks<T>(n, pack, heap_.block_list(type), groups, groups * cap, nullptr);
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
        groups == 0 ? std::vector<BitmapHandle::word>{} : heap_.free_blocks().copy_level(0, stream_);
    std::uint64_t free = 0;
    for (const BitmapHandle::word w : free_level0) free += static_cast<std::uint64_t>(platform::popc(w));
    if (groups > free)
      throw OutOfMemory("dynasoar: the object heap is out of memory: parallel_new_indexed of " + std::to_string(n) +
                        " objects needs " +
                        std::to_string(groups) + " free blocks (one per " + std::to_string(cap) +
                        " objects); the heap has " + std::to_string(free) + " of " + std::to_string(num_blocks()) +
                        " free; nothing was made. Give AllocatorHandle a larger heap.");
    platform::Buffer<bit_index> blocks(std::max<std::size_t>(groups, 1));
    // Consecutive blocks where the heap has a run of free ones (a grid made
    // first in a new heap): object i is then at a computed place, found
    // without the table load, and neighbours in the grid are neighbours in
    // memory. Each group asks for its block of the run; should another
    // thread take one first (another stream), the index uses the table.
    const bit_index run = BitmapHandle::find_run(free_level0, num_blocks(), groups);
    if (run != kNoBit) heap_.zero_total(stream_);
    construct_in_blocks<T>(n, pack, blocks.data(), groups, n, heap_.state(), run, heap_.total());
    // The claims counted the groups that did not get their block of the run.
    const bit_index consecutive = run != kNoBit && heap_.read_total(stream_) == 0 ? run : kNoBit;
    // The table's blocks, for a checkpoint to save the class in table order.
    move::TableBlocks record;
    record.size = n;
    if (consecutive != kNoBit) {
      for (std::size_t g = 0; g < groups; ++g) record.blocks.push_back(static_cast<bit_index>(consecutive + g));
    } else if (groups != 0) {
      record.blocks.resize(groups);
      blocks.copy_to_host(record.blocks.data(), groups, 0, stream_);
    }
    tables_[type].push_back(std::move(record));
    return ObjectTable<Alloc, T>(std::move(blocks), n, heap_.base(), kBlockBytes, consecutive);
  }

  /// BackendHandle hook of count<T>(): live objects of the concrete class
  /// with id `type`. Waits for the stream.
  std::uint64_t count_type(unsigned type) { return soa::count_objects(heap_, type, stream_); }

 private:
  friend struct debug::HeapInspector;
  friend struct move::HeapAccess;

  // parallel_new's kernels (soa::construct_in_blocks), watched by the watchdog.
  template <class T, class Pack>
  void construct_in_blocks(std::size_t n, const Pack& pack, bit_index* blocks, std::size_t groups,
                           std::size_t claimed, soa::HeapState* indexed, bit_index run = kNoBit,
                           unsigned long long* outside = nullptr) {
    const auto watched = watchdog_.watch(platform::watched_new<T>(n));
    soa::construct_in_blocks<Alloc, T>(heap_, device(), n, pack, blocks, groups, claimed, indexed, run, outside,
                                       stream_);
  }

  // f(std::integral_constant<unsigned, id>) for every concrete class.
  template <class F>
  static void for_each_class_constant(F&& f) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (
          [&] {
            if constexpr (Registry::kCapacityById[I] != 0) f(std::integral_constant<unsigned, I>{});
          }(),
          ...);
    }(std::make_index_sequence<kNumTypes>{});
  }

  // Whether class `type` has a table of parallel_new_indexed (made here or
  // given back by a load): its blocks may not move.
  bool made_indexed(unsigned type) const { return !tables_[type].empty(); }

  static void check_defrag_options(const DefragOptions& o) {
    if (o.factor < 1 || o.factor > 63)
      throw std::invalid_argument("parallel_defrag: DefragOptions::factor is " + std::to_string(o.factor) +
                                  "; it must be 1 to 63 (a block at most F/(F+1) full is compacted)");
  }

  move::DefragScratch& defrag_scratch() {
    if (!defrag_scratch_) defrag_scratch_ = std::make_unique<move::DefragScratch>(num_blocks(), stream_);
    return *defrag_scratch_;
  }

  // The compaction of one concrete class (move::defrag_class).
  template <unsigned kType>
  DefragResult defrag_class(const DefragOptions& o) {
    return move::defrag_class<Registry, kType>(heap_, defrag_scratch(), o, stream_);
  }

  // Clears the marks of `n` listed candidates without compacting (the policy's look).
  void clear_candidates(std::uint64_t n) {
    move::DefragScratch& scratch = defrag_scratch();
    if (n != 0)
      platform::parallel_for(n, move::detail::ClearDefragMarks{scratch.sorted(), 0, scratch.candidates().device(),
                                                              scratch.record_of()},
                             stream_);
  }

  // debug::check_consistency (dynasoar/debug.h).
  std::string check_consistency() const { return heap_.check_consistency(stream_); }

  // The do-all of Method over the objects of class `type` (T or a
  // subclass), watched by the watchdog. A function of its own: the lambda
  // that for_each_concrete_constant calls must stay constexpr, which a
  // local with a destructor, the watch, would prevent.
  template <class T, auto Method, unsigned type, class Pack>
  void do_all(const Pack& pack) {
    using C = model::At<typename Registry::Types, type>;
    platform::WatchedOperation op = platform::watched_do_all<T, Method>(platform::pretty_type_name<C>());
    op.list_length = heap_.block_count(type).get();
    op.snapshots = heap_.snapshot_list(type);
    op.slots = Registry::kCapacityById[type];
    const auto watched = watchdog_.watch(op);
    soa::do_all<T, Method, type>(heap_, pack, watched.progress(), stream_);
  }

  Stream stream_;
  soa::HeapStorage<Registry> heap_;
  DefragPolicy defrag_policy_;
  unsigned calls_since_look_ = 0;
  DefragResult policy_result_;
  move::TableRecords<kNumTypes> tables_;  // their tables' blocks (checkpoints save in table order)
  std::unique_ptr<move::DefragScratch> defrag_scratch_;
  platform::Watchdog watchdog_;  // last: its monitor stops before the rest goes
};

}  // namespace dynasoar
