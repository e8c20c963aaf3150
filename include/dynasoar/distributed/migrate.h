// Migration: objects whose owner rank changed leave their rank's heap and
// are made again on the owner's (the architecture's third user of the move
// layer, after compaction and checkpoints: choose, pack, carry, recreate).
//
//   // every Fish whose cell is now in another rank's stripe moves there;
//   // on arrival each runs Fish::arrived(world) (it links itself to its cell)
//   distributed::migrate<Fish, &Fish::arrived>(heap, comm, FishOwner{stripes}, world);
//
// Per concrete class: (1) each live object's owner(object) is computed and
// the leavers counted per destination; (2) the leavers' fields are packed
// into one buffer, grouped by destination, and the leavers destroyed;
// (3) the counts are all-gathered and the packed objects sent in one group
// of point-to-point messages; (4) each received object gets a slot of its
// class, its fields back, and its Arrive method called.
//
// Pointer fields (the rule, docs/guide/distributed.md): a pointer names an
// object of its own rank's heap only. A moved object's object pointer fields
// arrive null, and Arrive (or a later phase) links it again; pointers to a
// leaver held by objects that stay must be cleared before the move by the
// program, as it would for a destroyed object. With the pointer check on
// (DYNASOAR_CHECK_POINTERS=1, or check_pointers() called by the program),
// every object pointer field of
// every live object is checked after the move, and one that names no live
// object of this heap (a pointer that leaked across ranks) is an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dynasoar/allocator/soa/launch.h"
#include "dynasoar/distributed/communicator.h"
#include "dynasoar/model/visit.h"
#include "dynasoar/move/field_record.h"
#include "dynasoar/move/heap_access.h"
#include "dynasoar/move/object_fields.h"
#include "dynasoar/move/object_walk.h"
#include "dynasoar/operations.h"
#include "dynasoar/platform/arg_pack.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/names.h"

namespace dynasoar::distributed {

/// Whether DYNASOAR_CHECK_POINTERS asks for the pointer check (set, not "0").
inline bool pointer_check_from_environment() {
  const char* v = std::getenv("DYNASOAR_CHECK_POINTERS");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

/// What a migrate did on this rank.
struct MigrateResult {
  std::uint64_t sent = 0;      ///< objects that left this rank
  std::uint64_t received = 0;  ///< objects made here for other ranks' leavers
};

/// The objects of T that leave this rank, listed by the methods that move
/// them, for migrate_departures: where a model knows which objects leave
/// (a fish that swam into a ghost cell), the migration packs those alone
/// instead of asking an owner function of every object. Host code owns the
/// list; methods get device() and call leave().
template <class T>
class Departures {
 public:
  /// Room for `capacity` departures between two migrations: at most as many
  /// objects as may leave (a migration that finds more throws
  /// std::length_error, moving nothing).
  explicit Departures(std::size_t capacity, platform::Stream s = {})
      : capacity_(capacity),
        objects_(std::max<std::size_t>(capacity, 1)),
        ranks_(std::max<std::size_t>(capacity, 1)),
        count_(1) {
    count_.zero(s);
  }

  /// The list as methods use it (pass by value).
  struct Device {
    std::uint64_t* objects;      ///< the leavers' pointers
    int* ranks;                  ///< their destinations
    unsigned long long* count;   ///< how many called leave (may pass capacity)
    std::size_t capacity;        ///< room
    /// `object` goes to rank `rank` at the next migrate_departures. Call it
    /// once per leaving object, from any thread.
    DYNASOAR_HD void leave(const T* object, int rank) const {
      const unsigned long long i = platform::atomic_fetch_add(count, 1ull);
      if (i < capacity) {
        objects[i] = reinterpret_cast<std::uint64_t>(object);
        ranks[i] = rank;
      }
    }
  };
  /// The handle for methods and kernels.
  Device device() const { return Device{objects_.data(), ranks_.data(), count_.data(), capacity_}; }
  /// Room of the list.
  std::size_t capacity() const { return capacity_; }

 private:
  template <class U, auto Arrive, class Handle, class... Args>
  friend MigrateResult migrate_departures(Handle& heap, Communicator& comm, Departures<U>& departures,
                                          Args&&... args);
  std::size_t capacity_;
  platform::Buffer<std::uint64_t> objects_;
  platform::Buffer<int> ranks_;
  platform::Buffer<unsigned long long> count_;
};

namespace detail {

/// Flags of a migration kernel (device memory).
enum MigrateFlag : unsigned { kBadOwner = 1, kOverflow = 2 };

/// Step 1: leavers counted per destination rank.
template <class Registry, unsigned kType, class T, class Owner>
struct CountLeavers {
  soa::HeapState* state;
  const bit_index* blocks;
  const bit_index* count;
  std::size_t threads;
  Owner owner;
  int rank;
  int ranks;
  unsigned long long* per_rank;
  unsigned* flags;
  DYNASOAR_HD void operator()(std::size_t t) const {
    using C = model::At<typename Registry::Types, kType>;
    move::for_each_listed_object<Registry, kType>(state, blocks, *count, threads, t, [&](std::uint64_t object) {
      const int to = owner(static_cast<T*>(reinterpret_cast<C*>(object)));
      if (to < 0 || to >= ranks)
        platform::atomic_fetch_or(flags, static_cast<unsigned>(kBadOwner));
      else if (to != rank)
        platform::atomic_fetch_add(per_rank + to, 1ull);
    });
  }
};

/// Step 2a: each leaver packed at its destination's next place, its pointer kept.
template <class Registry, unsigned kType, class T, class Owner>
struct PackLeavers {
  soa::HeapState* state;
  const bit_index* blocks;
  const bit_index* count;
  std::size_t threads;
  Owner owner;
  int rank;
  int ranks;
  unsigned long long* next;  ///< per rank: its next leaver's place (its first place before)
  unsigned char* records;
  std::uint64_t* leavers;
  DYNASOAR_HD void operator()(std::size_t t) const {
    using C = model::At<typename Registry::Types, kType>;
    move::for_each_listed_object<Registry, kType>(state, blocks, *count, threads, t, [&](std::uint64_t object) {
      const int to = owner(static_cast<T*>(reinterpret_cast<C*>(object)));
      if (to < 0 || to >= ranks || to == rank) return;
      const unsigned long long i = platform::atomic_fetch_add(next + to, 1ull);
      move::WholeRecord<Registry, C>::pack(object, records + i * move::WholeRecord<Registry, C>::bytes());
      leavers[i] = object;
    });
  }
};

/// Step 1 from a Departures list: its entries of class kType counted per
/// destination; an overfull list raises kOverflow.
template <unsigned kType>
struct CountDepartures {
  const std::uint64_t* objects;
  const int* ranks;
  const unsigned long long* count;
  std::size_t capacity;
  int rank;
  int n_ranks;
  unsigned long long* per_rank;
  unsigned* flags;
  DYNASOAR_HD void operator()(std::size_t i) const {
    const unsigned long long n = *count;
    if (i == 0 && n > capacity) platform::atomic_fetch_or(flags, static_cast<unsigned>(kOverflow));
    if (i >= n || soa::pointer_type(objects[i]) != kType) return;
    const int to = ranks[i];
    if (to < 0 || to >= n_ranks)
      platform::atomic_fetch_or(flags, static_cast<unsigned>(kBadOwner));
    else if (to != rank)
      platform::atomic_fetch_add(per_rank + to, 1ull);
  }
};

/// Step 2a from a Departures list.
template <class Registry, unsigned kType>
struct PackDepartures {
  const std::uint64_t* objects;
  const int* ranks;
  const unsigned long long* count;
  int rank;
  unsigned long long* next;
  unsigned char* records;
  std::uint64_t* leavers;
  DYNASOAR_HD void operator()(std::size_t i) const {
    using C = model::At<typename Registry::Types, kType>;
    if (i >= *count || soa::pointer_type(objects[i]) != kType || ranks[i] == rank) return;
    const unsigned long long at = platform::atomic_fetch_add(next + ranks[i], 1ull);
    move::WholeRecord<Registry, C>::pack(objects[i], records + at * move::WholeRecord<Registry, C>::bytes());
    leavers[at] = objects[i];
  }
};

/// Step 2b: the leavers destroyed (a kernel of its own: a block freed by its
/// last leaver must not be walked by the packing any more).
struct DestroyLeavers {
  soa::HeapState* state;
  const std::uint64_t* leavers;
  DYNASOAR_HD void operator()(std::size_t i) const { state->deallocate(leavers[i]); }
};

/// Step 4: each received object made in a slot of its class, then Arrive.
template <class Registry, unsigned kType, class T, auto Arrive, class Pack>
struct Recreate {
  soa::HeapState* state;
  const unsigned char* records;
  Pack pack;
  DYNASOAR_HD void operator()(std::size_t i) const {
    using C = model::At<typename Registry::Types, kType>;
    const std::uint64_t object = state->allocate(kType);
    if (object == 0) return;  // out of memory: flagged by allocate, reported by check_errors
    move::WholeRecord<Registry, C>::unpack(records + i * move::WholeRecord<Registry, C>::bytes(), object);
    // The rule of this layer: object pointers name objects of their own rank's heap only.
    move::ObjectFields<Registry, C>::template for_each_pointer<~std::uint64_t{0}>(object,
                                                                                [](std::uint64_t& p) { p = 0; });
    if constexpr (!std::is_same_v<decltype(Arrive), std::nullptr_t>) {
      T* self = static_cast<T*>(reinterpret_cast<C*>(object));
      pack.apply([&](const auto&... args) { (self->*Arrive)(args...); });
    }
  }
};

/// The pointer check: object pointers in class kRef's fields that name no
/// live object of this heap, counted; the first one's holder class and
/// field kept.
template <class Registry, unsigned kRef>
struct FindStalePointers {
  soa::HeapState* state;
  const bit_index* blocks;
  const bit_index* count;
  std::size_t threads;
  unsigned long long* stale;         ///< [0] count, [1] (field + 1) of the first found
  DYNASOAR_HD void operator()(std::size_t t) const {
    using Fields = move::ObjectFields<Registry, model::At<typename Registry::Types, kRef>>;
    move::for_each_listed_object<Registry, kRef>(state, blocks, *count, threads, t, [&](std::uint64_t object) {
      Fields::template for_each_pointer_field<~std::uint64_t{0}>(
          object, [&](std::uint64_t& p, std::size_t field, std::uint64_t) {
            if (p == 0 || move::names_live_object(state, p)) return;
            platform::atomic_fetch_add(stale, 1ull);
            unsigned long long none = 0;
            platform::atomic_compare_exchange(stale + 1, none, static_cast<unsigned long long>(field + 1));
          });
    });
  }
};

}  // namespace detail

/// Checks that every object pointer field of every live object of `heap`
/// names a live object of this heap (or is null); throws DistributedError
/// naming `context`, the holder class and the field otherwise: a pointer to
/// an object that left this rank (or was destroyed). Blocking.
template <class Handle>
void check_pointers(Handle& heap, const std::string& context, int rank = 0) {
  using Registry = typename Handle::Registry;
  auto& storage = move::HeapAccess::storage(heap);
  const platform::Stream s = heap.stream();
  platform::Buffer<unsigned long long> stale(2);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          constexpr unsigned kRef = static_cast<unsigned>(I);
          using Ref = model::At<typename Registry::Types, kRef>;
          if constexpr (Registry::kCapacityById[kRef] != 0 && move::ObjectFields<Registry, Ref>::kTargets != 0) {
            stale.zero(s);
            storage.list_blocks(kRef, s);
            const std::size_t threads = soa::do_all_threads(storage.num_blocks(), Registry::kCapacityById[kRef]);
            platform::parallel_for(threads,
                                   detail::FindStalePointers<Registry, kRef>{storage.state(), storage.block_list(kRef),
                                                                             storage.block_count(kRef).get(),
                                                                             threads, stale.data()},
                                   s);
            const std::vector<unsigned long long> found = stale.to_vector(s);
            if (found[0] != 0)
              throw DistributedError("rank " + std::to_string(rank) + ", " + context + ": " +
                                     std::to_string(found[0]) + " object pointer(s) in objects of " +
                                     platform::type_name(platform::pretty_type_name<Ref>()) + " (field " + std::to_string(found[1] - 1) +
                                     " counting inherited fields first, and maybe others) name no live object of "
                                     "this rank's heap: a pointer to an object that moved to another rank or was "
                                     "destroyed. Clear such pointers before the move, and link moved objects again "
                                     "on arrival (docs/guide/distributed.md).");
          }
        }(),
        ...);
  }
  (std::make_index_sequence<Registry::kNumTypes>{});
}

namespace detail {

// Zeroes n counters (a kernel: the workspace is raw memory).
struct ZeroCounters {
  unsigned long long* at;
  DYNASOAR_HD void operator()(std::size_t i) const { at[i] = 0; }
};

// The communicator's workspace slots of migration (halo.h uses 0 and 1).
enum MigrateSlot : std::size_t { kSlotCounts = 2, kSlotSent, kSlotLeavers, kSlotReceived };

// The steps of a migration of one concrete class kType, whatever chooses
// the leavers: count(counts, flags, threads) queues the kernel that counts
// them per destination into counts[0, ranks) and raises MigrateFlag bits;
// pack(next, sent, leavers) queues the one that packs each at
// next[destination]++ and keeps its pointer. Waits for the stream twice:
// for the counts, and in the all-gather of every rank's counts; the objects'
// messages and their recreation are queued behind it.
template <class T, auto Arrive, unsigned kType, class Handle, class Pack, class Count, class PackLeavers>
MigrateResult migrate_class(Handle& heap, Communicator& comm, const Pack& pack, const Count& count,
                            const PackLeavers& pack_leavers, const std::string& what) {
  using Registry = typename Handle::Registry;
  using C = model::At<typename Registry::Types, kType>;
  constexpr std::size_t kBytes = move::WholeRecord<Registry, C>::bytes();
  auto& storage = move::HeapAccess::storage(heap);
  const platform::Stream s = heap.stream();
  const int rank = comm.rank(), ranks = comm.size();
  const auto n = static_cast<std::size_t>(ranks);

  // 1. Leavers per destination. counts: [0, n) this rank's, [n] flags,
  // [n + 1, 2n + 1) the packing's next places, then every rank's (gathered).
  const std::size_t n_counts = 2 * n + 1 + n * n;
  auto* counts = reinterpret_cast<unsigned long long*>(comm.workspace(kSlotCounts, n_counts * 8));
  platform::parallel_for(n_counts, ZeroCounters{counts}, s);
  count(counts, reinterpret_cast<unsigned*>(counts + n));
  std::vector<unsigned long long> out(n + 1);
  comm.settle();  // the previous class's messages, within the time limit, before the host waits here
  platform::copy_bytes(out.data(), counts, (n + 1) * 8, false, s);
  const std::string where = what + "<" + platform::type_name(platform::pretty_type_name<C>()) + ">: rank " +
                            std::to_string(rank) + ": ";
  if ((out[n] & kBadOwner) != 0)
    throw std::invalid_argument(where + "a leaver's destination is outside 0.." + std::to_string(ranks - 1) +
                                "; nothing moved");
  if ((out[n] & kOverflow) != 0)
    throw std::length_error(where + "more objects left than the Departures list holds; nothing moved. Give "
                            "it a larger capacity (at most as many objects as may leave between two migrations)");
  out.pop_back();
  std::vector<unsigned long long> first(n, 0);
  std::exclusive_scan(out.begin(), out.end(), first.begin(), 0ull);
  const unsigned long long leaving = first.back() + out.back();

  // 2. Pack and destroy the leavers (the next places start at `first`).
  unsigned char* sent = comm.workspace(kSlotSent, leaving * kBytes + 1);
  if (leaving != 0) {
    auto* leavers = reinterpret_cast<std::uint64_t*>(comm.workspace(kSlotLeavers, leaving * 8));
    platform::copy_bytes(counts + n + 1, first.data(), n * 8, true, s);
    pack_leavers(counts + n + 1, sent, leavers);
    platform::parallel_for(leaving, DestroyLeavers{storage.state(), leavers}, s);
  }

  // 3. Every rank's counts (a blocking collective), then the objects in
  // one group of messages, queued.
  unsigned long long* all = counts + 2 * n + 1;
  comm.all_gather(counts, all, n);
  std::vector<unsigned long long> matrix(n * n);
  platform::copy_bytes(matrix.data(), all, n * n * 8, false, s);
  unsigned long long arriving = 0;
  for (std::size_t p = 0; p < n; ++p) arriving += matrix[p * n + static_cast<std::size_t>(rank)];
  unsigned char* received = comm.workspace(kSlotReceived, arriving * kBytes + 1);
  std::vector<Message> sends, receives;
  unsigned long long at = 0;
  for (std::size_t p = 0; p < n; ++p) {
    if (p == static_cast<std::size_t>(rank)) continue;
    if (out[p] != 0) sends.push_back({static_cast<int>(p), sent + first[p] * kBytes, out[p] * kBytes});
    const unsigned long long in = matrix[p * n + static_cast<std::size_t>(rank)];
    if (in != 0) receives.push_back({static_cast<int>(p), received + at * kBytes, in * kBytes});
    at += in;
  }
  comm.exchange_async(sends, receives);

  // 4. The arrivals made again here, queued behind their messages.
  if (arriving != 0)
    platform::parallel_for(arriving, Recreate<Registry, kType, T, Arrive, Pack>{storage.state(), received, pack}, s);
  return MigrateResult{leaving, arriving};
}

// migrate_class with the leavers chosen by `owner` over all objects of kType.
template <class T, auto Arrive, unsigned kType, class Handle, class Owner, class Pack>
MigrateResult migrate_by_owner(Handle& heap, Communicator& comm, const Owner& owner, const Pack& pack) {
  using Registry = typename Handle::Registry;
  auto& storage = move::HeapAccess::storage(heap);
  const platform::Stream s = heap.stream();
  const int rank = comm.rank(), ranks = comm.size();
  storage.list_blocks(kType, s);
  const std::size_t threads = soa::do_all_threads(storage.num_blocks(), Registry::kCapacityById[kType]);
  const bit_index* blocks = storage.block_list(kType);
  const bit_index* n_blocks = storage.block_count(kType).get();
  return migrate_class<T, Arrive, kType>(
      heap, comm, pack,
      [&](unsigned long long* per_rank, unsigned* flags) {
        platform::parallel_for(threads,
                               CountLeavers<Registry, kType, T, Owner>{storage.state(), blocks, n_blocks, threads,
                                                                       owner, rank, ranks, per_rank, flags},
                               s);
      },
      [&](unsigned long long* next, unsigned char* sent, std::uint64_t* leavers) {
        platform::parallel_for(threads,
                               PackLeavers<Registry, kType, T, Owner>{storage.state(), blocks, n_blocks, threads,
                                                                      owner, rank, ranks, next, sent, leavers},
                               s);
      },
      "migrate");
}

}  // namespace detail

namespace detail {

// What migrate and migrate_departures share around the classes' moves: the
// queued messages and the heap's flags first (a host wait follows), then
// move(type constant) for each concrete class of T, then the messages of
// the last class (so that a host wait of the program after this one waits
// for local work only), and the pointer check if asked for.
template <class T, class Handle, class Move>
MigrateResult migrate_each_class(Handle& heap, Communicator& comm, const std::string& what, Move&& move) {
  using Registry = typename Handle::Registry;
  static_assert(kCanMoveObjects<typename Handle::Allocator>,
                "migrate: objects move between ranks only on the back ends whose objects can move (the "
                "DynaSOAr heap, BitmapAlloc)");
  comm.settle();
  heap.check_errors();
  MigrateResult total;
  model::for_each_concrete_constant<Registry, T, true>([&](auto type_constant) {
    const MigrateResult r = move(type_constant);
    total.sent += r.sent;
    total.received += r.received;
  });
  comm.settle();
  if (pointer_check_from_environment())
    check_pointers(heap, "after " + what + "<" + platform::type_name(platform::pretty_type_name<T>()) + ">",
                   comm.rank());
  return total;
}

}  // namespace detail

/// Moves every object of T (and of its concrete subclasses) whose
/// owner(T*) is not this rank to that rank: packed, sent, made again there
/// with its fields (object pointer fields null) and its Arrive method called
/// with `args` (Arrive: nullptr for none); destroyed here. Every rank must
/// call it, with the same T and Arrive. The arrivals are queued on the
/// heap's stream (over NCCL the call returns before they are made): a
/// do-all queued after it sees them. `owner` is a device function object
/// (a struct with a DYNASOAR_HD operator(), or a DYNASOAR_HD lambda) giving
/// a rank 0..size()-1; it must be a function of the object's fields. Throws
/// std::invalid_argument for a rank outside that range: the objects of that
/// concrete class and of those after it stay where they were (the concrete
/// classes move one after another, in the order of the class list, so those
/// before it have moved; for a T without subclasses nothing moved), and
/// DistributedError if a peer failed. Arrivals that do not fit this rank's
/// heap raise its out-of-memory flag, which the next check_errors (the
/// next migrate's, say) throws as OutOfMemory. The heap must be the
/// DynaSOAr heap or BitmapAlloc (objects that can move). With
/// DYNASOAR_CHECK_POINTERS=1 it ends with check_pointers.
template <class T, auto Arrive = nullptr, class Handle, class Owner, class... Args>
MigrateResult migrate(Handle& heap, Communicator& comm, const Owner& owner, Args&&... args) {
  const auto pack = platform::pack_args(std::forward<Args>(args)...);
  return detail::migrate_each_class<T>(heap, comm, "migrate", [&](auto type_constant) {
    return detail::migrate_by_owner<T, Arrive, decltype(type_constant)::value>(heap, comm, owner, pack);
  });
}

/// migrate for the objects a model listed as they left (Departures):
/// each listed object of T (and of its concrete subclasses) goes to the
/// rank given with it, as migrate moves it; the list is emptied. Costs work
/// in proportion to the list, not to all objects of T. Every rank calls it
/// with the same T and Arrive. Throws std::invalid_argument for a rank
/// outside 0..size()-1 and std::length_error for more departures than the
/// list holds (nothing moved either way), and DistributedError if a peer
/// failed. An object listed twice, or destroyed after it was listed, breaks
/// the migration: list each leaving object once, after its last change.
template <class T, auto Arrive = nullptr, class Handle, class... Args>
MigrateResult migrate_departures(Handle& heap, Communicator& comm, Departures<T>& departures, Args&&... args) {
  using Registry = typename Handle::Registry;
  const platform::Stream s = heap.stream();
  const typename Departures<T>::Device list = departures.device();
  if (comm.size() == 1) {  // nothing can leave (no peer to wait for): only a bad rank in the list is news
    unsigned long long listed = 0;
    platform::copy_bytes(&listed, list.count, sizeof listed, false, s);
    if (listed == 0) return {};
  }
  const auto pack = platform::pack_args(std::forward<Args>(args)...);
  const std::size_t threads = std::max<std::size_t>(list.capacity, 1);
  const MigrateResult total =
      detail::migrate_each_class<T>(heap, comm, "migrate_departures", [&](auto type_constant) {
        constexpr unsigned kType = decltype(type_constant)::value;
        return detail::migrate_class<T, Arrive, kType>(
            heap, comm, pack,
            [&](unsigned long long* per_rank, unsigned* flags) {
              platform::parallel_for(threads,
                                     detail::CountDepartures<kType>{list.objects, list.ranks, list.count,
                                                                    list.capacity, comm.rank(), comm.size(),
                                                                    per_rank, flags},
                                     s);
            },
            [&](unsigned long long* next, unsigned char* sent, std::uint64_t* leavers) {
              platform::parallel_for(threads,
                                     detail::PackDepartures<Registry, kType>{list.objects, list.ranks, list.count,
                                                                             comm.rank(), next, sent, leavers},
                                     s);
            },
            "migrate_departures");
      });
  departures.count_.zero(s);  // queued: the next methods that list see it
  return total;
}

}  // namespace dynasoar::distributed
