// The host-side operations every allocator handle offers in the same form
// (Springer & Masuhara 2019, Sec. 2.1): parallel_new, the blocking parallel_do, count and
// statistics, written once (HandleOps) on top of a few hooks each back end's
// handle provides (the BackendHandle concept). Also the per-class statistics
// type and the argument packs the parallel kernels carry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <concepts>
#include <type_traits>
#include <utility>
#include <vector>

#include "dynasoar/object.h"
#include "dynasoar/object_index.h"
#include "dynasoar/move/defrag_options.h"
#include "dynasoar/model/visit.h"
#include "dynasoar/platform/arg_pack.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar {

/// Occupancy of one class. On the SOA heap: blocks and slots; on a byte
/// allocator (no blocks): the live objects and their allocation size.
struct TypeStatistics {
  /// Type id of the class (its position in the allocator's type list).
  unsigned type_id = 0;
  unsigned capacity = 0;           ///< slots per block (SOA heap; 0 on byte allocators)
  std::uint64_t blocks = 0;        ///< allocated blocks (SOA heap)
  std::uint64_t objects = 0;       ///< live objects
  std::uint64_t object_bytes = 0;  ///< bytes of one object's allocation (byte allocators)
  /// Unused slots among the allocated blocks (paper Sec. 6.3): 1 - objects / (blocks * capacity).
  double fragmentation() const {
    return blocks == 0
               ? 0.0
               : 1.0 - static_cast<double>(objects) / (static_cast<double>(blocks) * capacity);
  }
};

namespace detail {

/// False, for a static_assert that fails only when its template is used.
template <class...>
inline constexpr bool kNever = false;

/// Checks a do-all's method and arguments where the user wrote the call,
/// before any kernel is instantiated, so that a mistake reads as one line
/// instead of an error deep inside the kernels. True if all holds.
template <class T, auto Method, class... Args>
constexpr bool check_do_all_call() {
  using M = decltype(Method);
  static_assert(std::is_member_function_pointer_v<M>,
                "parallel_do<T, Method>: Method must be a pointer to a method, written &Class::method");
  if constexpr (std::is_member_function_pointer_v<M>) {
    static_assert(std::is_invocable_v<M, T&, const std::decay_t<Args>&...>,
                  "parallel_do<T, &C::method>(args...): the method cannot be called on a T with these "
                  "arguments: it is no method of T or of a base of T, or the arguments do not fit its "
                  "parameters (their number or types)");
    return std::is_invocable_v<M, T&, const std::decay_t<Args>&...>;
  }
  return false;
}

/// Checks parallel_new's arguments where the user wrote the call: object i
/// is constructed as T(i, args...). True if T has such a constructor.
template <class T, class... Args>
constexpr bool check_new_call() {
  static_assert(std::is_constructible_v<T, int, const std::decay_t<Args>&...>,
                "parallel_new<T>(n, args...): T has no constructor T(int index, args...) for these "
                "arguments; object i is made as T(i, args...)");
  return std::is_constructible_v<T, int, const std::decay_t<Args>&...>;
}

/// parallel_new's kernel: object i is T(i, args...), and out[i] its
/// pointer where `out` is given (parallel_new_indexed).
template <class Alloc, class T, class Pack>
struct NewObjects {
  Alloc alloc;
  Pack args;
  T** out = nullptr;
  DYNASOAR_HD void operator()(std::size_t i) const {
    T* p = alloc.template allocate<T>();
    if (out != nullptr) out[i] = p;
    if (p == nullptr) return;  // out of memory: the error flag is raised
    args.apply(
        [&](const auto&... a) { ::new (static_cast<void*>(p)) T(static_cast<int>(i), a...); });
  }
};

}  // namespace detail

/// What HandleOps needs of a back end's host handle H (SoaAllocatorHandle,
/// ByteAllocatorHandle). These hooks are public members of H, so that a back
/// end provides them without befriending the framework; user code calls
/// parallel_new, parallel_do, count and statistics instead. Besides what the
/// concept can state, H has the member templates
///   template <class T, class Pack> void create_objects(std::size_t n, const Pack& args);
///     // queue T(i, args...) for i < n on stream() (parallel_new)
///   template <class T, class Pack>
///   ObjectTable<Allocator, T> create_objects_indexed(std::size_t n, const Pack& args);
///     // the same, and where object i is (parallel_new_indexed)
///   template <class T, auto Method, bool kWithSubclasses, class... Args>
///   void parallel_do_async(Args&&... args);   // queue the do-all on stream()
template <class H>
concept BackendHandle = requires(H& h, const H& ch, unsigned type) {
  typename H::Allocator;  // the device-side allocator
  typename H::Registry;   // its class model (model::ClassModel or a layout that extends it)
  { ch.device() } -> std::same_as<typename H::Allocator>;
  { ch.stream() } -> std::same_as<platform::Stream>;
  h.check_errors();  // waits for everything queued on stream(), then throws what the kernels flagged
  { h.count_type(type) } -> std::same_as<std::uint64_t>;      // live objects of one class
  { h.type_statistics(type) } -> std::same_as<TypeStatistics>;  // occupancy of one class
};

/// Whether the objects of allocator A can move: compaction
/// (parallel_defrag) and checkpoints. The DynaSOAr heap and BitmapAlloc.
template <class A>
inline constexpr bool kCanMoveObjects = requires { requires A::kMovesObjects; };

/// The operations of every allocator handle (parallel_new, parallel_do,
/// count, statistics), on top of the hooks of BackendHandle: H derives from
/// HandleOps<H> (CRTP). create_one_by_one below serves a back end whose
/// create_objects has no faster way.
template <class H>
class HandleOps {
 public:
  /// Creates n objects of T: T(i, args...) for i < n (paper: parallel_new).
  /// Returns when done; throws OutOfMemory if memory ran out (the objects
  /// that fit were created).
  template <class T, class... Args>
  void parallel_new(std::size_t n, Args&&... args) {
    parallel_new_async<T>(n, std::forward<Args>(args)...);
    handle().check_errors();  // waits for the stream
  }

  /// parallel_new that also returns where the objects are: the table's
  /// index()[i] is object T(i, args...) (dynasoar/object_index.h). On the
  /// block heap the objects fill whole blocks, group by group, and the index
  /// holds a block number per group; it needs a free block for every group
  /// of objects (the last one partly filled), and throws OutOfMemory without
  /// making anything if there are fewer. On a byte allocator it is a table
  /// of pointers (OutOfMemory as for parallel_new). Errors of operations
  /// queued before are reported first, before anything is made. Blocking.
  template <class T, class... Args>
  auto parallel_new_indexed(std::size_t n, Args&&... args) {  // ObjectTable<H::Allocator, T>
    if constexpr (detail::check_new_call<T, Args...>()) {
      check_object_count(n);
      handle().check_errors();  // earlier errors are not this call's: report them before making anything
      ObjectTable<typename H::Allocator, T> table =
          handle().template create_objects_indexed<T>(n, platform::pack_args(std::forward<Args>(args)...));
      handle().check_errors();  // waits for the stream
      return table;
    }
  }

  /// parallel_new without waiting: queued on the handle's stream (the
  /// handle's operations are ordered on it; a second stream needs a second
  /// handle). Call check_errors() after the stream is done to learn whether
  /// memory ran out. On a byte allocator the registry is grown first, which
  /// waits for the stream.
  template <class T, class... Args>
  void parallel_new_async(std::size_t n, Args&&... args) {
    check_object_count(n);
    if constexpr (detail::check_new_call<T, Args...>())
      handle().template create_objects<T>(n, platform::pack_args(std::forward<Args>(args)...));
  }

  /// Runs (obj->*Method)(args...) on every object of T and of its subclasses
  /// that exists when the call starts (paper: parallel_do). Objects created
  /// meanwhile are not visited; an object may destroy itself. Returns when
  /// done; throws OutOfMemory if a `new` in the method found no memory.
  template <class T, auto Method, class... Args>
  void parallel_do(Args&&... args) {
    run_do_all<T, Method, true>(std::forward<Args>(args)...);
  }
  /// Same, with T the class that declares Method. Note that for an inherited
  /// method that is the base class, so all its subclasses are visited; name
  /// T explicitly (parallel_do<Fish, &Fish::move>) to visit Fish and its
  /// subclasses.
  template <auto Method, class... Args>
  void parallel_do(Args&&... args) {
    parallel_do<typename MethodClass<decltype(Method)>::type, Method>(std::forward<Args>(args)...);
  }

  /// Runs (obj->*Method)(args...) on every object of exactly class T, not of
  /// its subclasses (the original DynaSOAr's parallel_do_single_type, there
  /// also called fast_parallel_do). Otherwise as parallel_do.
  template <class T, auto Method, class... Args>
  void parallel_do_single_type(Args&&... args) {
    static_assert(!H::Registry::template Info<T>::kIsAbstract,
                  "parallel_do_single_type: an abstract class has no objects of its own; use parallel_do");
    run_do_all<T, Method, false>(std::forward<Args>(args)...);
  }

  /// Heap compaction (the DynaSOAr heap and BitmapAlloc have their own,
  /// SoaAllocatorHandle::parallel_defrag): a byte allocator's objects do
  /// not move, so a program that compacts is refused at compile time.
  template <class T, class... Options>
  void parallel_defrag(const Options&...) {
    static_assert(detail::kNever<T>,
                  "parallel_defrag: this back end cannot move objects; only the DynaSOAr heap (dynasoar) and "
                  "BitmapAlloc (bitmap_alloc) compact. Build the program for one of them, or leave the call out "
                  "for this back end: in a template, under if constexpr (dynasoar::kCanMoveObjects<Allocator>), "
                  "as example/learn/compaction.cpp does");
  }

  /// Checkpoints (the DynaSOAr heap and BitmapAlloc have them,
  /// SoaAllocatorHandle::save_checkpoint): a byte allocator's objects lie
  /// where its allocator put them and cannot be recreated elsewhere, so a
  /// program that saves one is refused at compile time.
  template <class... Args>
  void save_checkpoint(Args&&...) {
    static_assert(detail::kNever<Args...>,
                  "save_checkpoint: this back end cannot save its objects; only the DynaSOAr heap (dynasoar) and "
                  "BitmapAlloc (bitmap_alloc) have checkpoints. Build the program for one of them, or leave the call "
                  "out for this back end: in a template, under if constexpr (dynasoar::kCanMoveObjects<Allocator>), "
                  "as example/learn/checkpoint.cpp does");
  }
  /// See save_checkpoint: refused at compile time on a byte allocator.
  template <class... Args>
  void load_checkpoint(Args&&...) {
    static_assert(detail::kNever<Args...>,
                  "load_checkpoint: this back end cannot load objects; only the DynaSOAr heap (dynasoar) and "
                  "BitmapAlloc (bitmap_alloc) have checkpoints. Build the program for one of them, or leave the call "
                  "out for this back end: in a template, under if constexpr (dynasoar::kCanMoveObjects<Allocator>), "
                  "as example/learn/checkpoint.cpp does");
  }

  /// The step boundary of HandleOptions::defrag: a byte allocator's
  /// objects do not move, so nothing happens (the DynaSOAr heap and
  /// BitmapAlloc compact here when the policy says so).
  DefragResult compact_if_fragmented() { return {}; }

  /// Live objects of T and its subclasses (H::count_type per class). Waits
  /// for the stream.
  template <class T>
  std::uint64_t count() {
    return count_types<T, true>();
  }

  /// Live objects of exactly class T, not of its subclasses (0 for an
  /// abstract class). Waits for the stream.
  template <class T>
  std::uint64_t count_single_type() {
    return count_types<T, false>();
  }

  /// Occupancy of T and of each of its concrete subclasses, one entry per
  /// class (H::type_statistics). Waits for the stream.
  template <class T>
  std::vector<TypeStatistics> statistics() {
    H& self = handle();
    std::vector<TypeStatistics> out;
    model::for_each_concrete<typename H::Registry, T>(
        [&](unsigned type) { out.push_back(self.type_statistics(type)); });
    return out;
  }

 private:
  // The derived handle, checked against the concept here, where H is complete.
  H& handle() {
    static_assert(BackendHandle<H>, "an allocator handle lacks a hook of BackendHandle (dynasoar/operations.h)");
    return static_cast<H&>(*this);
  }

  // Live objects of the classes a do-all over T visits.
  template <class T, bool kWithSubclasses>
  std::uint64_t count_types() {
    H& self = handle();
    std::uint64_t total = 0;
    model::for_each_concrete<typename H::Registry, T, kWithSubclasses>(
        [&](unsigned type) { total += self.count_type(type); });
    return total;
  }

  // The blocking do-all: queued by the handle, then waited for and checked.
  template <class T, auto Method, bool kWithSubclasses, class... Args>
  void run_do_all(Args&&... args) {
    H& self = handle();
    self.template parallel_do_async<T, Method, kWithSubclasses>(std::forward<Args>(args)...);
    // check_errors waits for the stream: its copy of the flags is queued
    // behind the kernels, so the host waits once (a wait and then the copy
    // were two round trips of the blocking call).
    self.check_errors();
  }

 protected:
  /// parallel_new the plain way: every thread of one kernel runs `new T`
  /// (and writes the object's pointer to out[i] where `out` is given).
  template <class T, class Pack>
  void create_one_by_one(std::size_t n, const Pack& pack, T** out = nullptr) {
    H& self = handle();
    platform::parallel_for(n, detail::NewObjects<decltype(self.device()), T, Pack>{self.device(), pack, out},
                           self.stream());
  }

  /// The object index of parallel_new and parallel_new_indexed is an int.
  static void check_object_count(std::size_t n) {
    if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw std::invalid_argument(
          "parallel_new: at most 2^31 - 1 objects per call (the index is an int)");
  }
};

}  // namespace dynasoar
