// Halos of grid models: each rank keeps copies ("ghosts") of the objects
// next to its part of the grid that other ranks own, and refreshes them
// between do-alls, so that methods read their neighbours without touching
// another rank's memory (docs/guide/distributed.md).
//
// The objects are those of an object table (parallel_new_indexed): a rank's
// table holds its own objects and its ghosts, and a TableHalo pairs table
// indices with the peers' (HaloRange lists, which Stripes makes for a grid
// split into bands of rows). refresh() copies the owners' fields into the
// ghosts; combine() merges a field between an object and its ghosts, so
// that what methods wrote into a ghost (a request set on a neighbour's cell,
// say) reaches the owner, and the owner's value the ghost.
// Object pointer fields are never copied: a pointer names an object of its
// own rank's heap only (the rule of migrate.h).
//
//   distributed::Stripes stripes(height, comm.size(), comm.rank());
//   auto cells = heap.parallel_new_indexed<Cell>(stripes.local_rows() * width);
//   distributed::TableHalo<Handle, Cell> halo(comm, cells, stripes.sends(width), stripes.receives(width));
//   halo.refresh();                                  // ghosts = their owners, every value field
//   halo.combine<&Cell::requests>(HaloCombine::kBitOr);   // owner and ghost: owner | ghost
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "dynasoar/distributed/communicator.h"
#include "dynasoar/field.h"
#include "dynasoar/model/class_model.h"
#include "dynasoar/move/field_record.h"
#include "dynasoar/move/object_fields.h"
#include "dynasoar/object_index.h"
#include "dynasoar/platform/arg_pack.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar::distributed {

/// Objects `count` table indices from `first` on, sent to or received from rank `peer`.
struct HaloRange {
  int peer = 0;             ///< the other rank
  std::uint64_t first = 0;  ///< the first table index
  std::uint64_t count = 0;  ///< how many objects, from `first` on
};

/// The rows of a grid (a torus in the vertical) split into bands, one per
/// rank, as evenly as whole rows allow: rank r owns rows
/// [rows * r / ranks, rows * (r + 1) / ranks). With more than one rank, a
/// rank's table holds a ghost row on either side of its band: local row 0 is
/// the row above the band, local rows 1..band its own, band + 1 the row
/// below. With one rank there are no ghosts and local rows are rows.
struct Stripes {
  int rows = 0;   ///< rows of the whole grid
  int ranks = 1;  ///< number of ranks
  int rank = 0;   ///< this rank

  Stripes() = default;
  /// Throws std::invalid_argument if a band would have fewer than 2 rows
  /// (a ghost row must be another rank's, and both ghosts different rows).
  Stripes(int rows_, int ranks_, int rank_) : rows(rows_), ranks(ranks_), rank(rank_) {
    if (ranks < 1 || rank < 0 || rank >= ranks)
      throw std::invalid_argument("Stripes: rank " + std::to_string(rank) + " of " + std::to_string(ranks));
    if (ranks > 1 && rows / ranks < 2)
      throw std::invalid_argument("Stripes: " + std::to_string(rows) + " rows on " + std::to_string(ranks) +
                                  " ranks leave a band of fewer than 2 rows; use at most " +
                                  std::to_string(std::max(1, rows / 2)) + " ranks");
  }
  /// The first row of rank r's band.
  DYNASOAR_HD int first_of(int r) const {
    return static_cast<int>(static_cast<long long>(rows) * r / ranks);
  }
  /// This rank's band: rows [first(), last()).
  DYNASOAR_HD int first() const { return first_of(rank); }
  /// One past the last row of this rank's band.
  DYNASOAR_HD int last() const { return first_of(rank + 1); }
  /// Rows of this rank's band.
  DYNASOAR_HD int band() const { return last() - first(); }
  /// The rank whose band holds `row`.
  DYNASOAR_HD int owner(int row) const {
    return static_cast<int>((static_cast<long long>(row + 1) * ranks - 1) / rows);
  }
  /// Whether this rank's band holds `row`.
  DYNASOAR_HD bool owns(int row) const { return row >= first() && row < last(); }
  /// Rows of this rank's table: its band and, with several ranks, two ghost rows.
  DYNASOAR_HD int local_rows() const { return band() + (ranks > 1 ? 2 : 0); }
  /// The local row of `row`: its place in this rank's table, or -1 for a
  /// row that is neither this rank's nor a ghost here.
  DYNASOAR_HD int local_row(int row) const {
    if (ranks == 1) return row;
    if (owns(row)) return row - first() + 1;
    if (row == (first() + rows - 1) % rows) return 0;
    if (row == last() % rows) return band() + 1;
    return -1;
  }
  /// The table index of the cell of global index `i` of a grid `width`
  /// cells wide (row by row), for a cell of this rank's band or a ghost:
  /// local_row(i / width) * width + i % width, without the divisions
  /// (methods look cells up by index all the time).
  DYNASOAR_HD int local_index(int i, int width) const {
    if (ranks == 1) return i;
    const int local = i - (first() - 1) * width;
    const int n = local_rows() * width;
    if (local >= 0 && local < n) return local;
    return local >= n ? local - rows * width : local + rows * width;  // a ghost row across the torus's seam
  }
  /// Whether the cell of global index `i` is in this rank's band.
  DYNASOAR_HD bool owns_index(int i, int width) const { return i >= first() * width && i < last() * width; }
  /// The row of local row `local` (0 .. local_rows() - 1).
  DYNASOAR_HD int global_row(int local) const {
    if (ranks == 1) return local;
    return (first() - 1 + local + rows) % rows;
  }
  /// The halo of a grid of `width` objects a row whose table holds row by
  /// row the local rows: this rank's first and last rows go to the ranks
  /// that hold them as ghosts.
  std::vector<HaloRange> sends(int width) const {
    if (ranks == 1) return {};
    return sorted({{owner((first() + rows - 1) % rows), first(), 1}, {owner(last() % rows), last() - 1, band()}},
                  width);
  }
  /// ... and the ghost rows come from their owners.
  std::vector<HaloRange> receives(int width) const {
    if (ranks == 1) return {};
    return sorted({{owner((first() + rows - 1) % rows), (first() + rows - 1) % rows, 0},
                   {owner(last() % rows), last() % rows, band() + 1}},
                  width);
  }

 private:
  // (peer, row, local row) in the order both sides list them: by peer, then row.
  struct Row {
    int peer;
    int row;
    int local;
  };
  static std::vector<HaloRange> sorted(std::vector<Row> rows_, int width) {
    std::sort(rows_.begin(), rows_.end(),
              [](const Row& a, const Row& b) { return std::tie(a.peer, a.row) < std::tie(b.peer, b.row); });
    std::vector<HaloRange> out;
    for (const Row& r : rows_)
      out.push_back({r.peer, static_cast<std::uint64_t>(r.local) * static_cast<std::uint64_t>(width),
                     static_cast<std::uint64_t>(width)});
    return out;
  }
};

/// How combine() merges a ghost's value into its owner's.
enum class HaloCombine { kBitOr, kSum, kMax };

namespace detail {

// The field index (inherited fields first) of a field member `Field<D, N> D::*`.
template <class M>
struct FieldMember;
template <class D, int N>
struct FieldMember<Field<D, N> D::*> {
  static constexpr std::size_t kIndex =
      model::ClassInfo<typename D::Allocator::Types, D>::kNumInherited + static_cast<std::size_t>(N);
};

// The fields of C that hold no object pointer, as a FieldRecord.
template <class Registry, class C>
struct ValueFields {
  using Fields = move::ObjectFields<Registry, C>;
  static constexpr std::size_t kNum = Fields::kNumFields;
  static constexpr std::size_t kKept = []<std::size_t... J>(std::index_sequence<J...>) {
    return ((Fields::template kFieldTargets<J> == 0 ? std::size_t{1} : std::size_t{0}) + ... + std::size_t{0});
  }(std::make_index_sequence<kNum>{});
  static constexpr std::array<std::size_t, kKept + 1> kIndices = []<std::size_t... J>(std::index_sequence<J...>) {
    std::array<std::size_t, kKept + 1> out{};
    std::size_t n = 0;
    ((Fields::template kFieldTargets<J> == 0 ? void(out[n++] = J) : void()), ...);
    return out;
  }(std::make_index_sequence<kNum>{});
};

template <class Registry, class C, class Seq>
struct ValueRecordOf;
template <class Registry, class C, std::size_t... K>
struct ValueRecordOf<Registry, C, std::index_sequence<K...>> {
  using type = move::FieldRecord<Registry, C, ValueFields<Registry, C>::kIndices[K]...>;
};
// The FieldRecord of C's fields that hold no object pointer.
template <class Registry, class C>
using ValueRecord =
    typename ValueRecordOf<Registry, C, std::make_index_sequence<ValueFields<Registry, C>::kKept>>::type;

template <class Record, class Index>
struct PackItems {
  Index index;
  const std::uint32_t* items;
  unsigned char* out;
  DYNASOAR_HD void operator()(std::size_t k) const {
    Record::pack(reinterpret_cast<std::uint64_t>(index[items[k]]), out + k * Record::bytes());
  }
};

template <class Record, class Index>
struct UnpackItems {
  Index index;
  const std::uint32_t* items;
  const unsigned char* in;
  DYNASOAR_HD void operator()(std::size_t k) const {
    Record::unpack(in + k * Record::bytes(), reinterpret_cast<std::uint64_t>(index[items[k]]));
  }
};

template <class F>
DYNASOAR_HD void combine_value(F& into, const F& v, HaloCombine op) {
  static_assert(std::is_arithmetic_v<F>, "combine: a field of a number type");
  if (op == HaloCombine::kSum) {
    into = static_cast<F>(into + v);
  } else if (op == HaloCombine::kMax) {
    if (into < v) into = v;
  } else {
    if constexpr (std::is_integral_v<F>) into = static_cast<F>(into | v);
  }
}

template <class Record, class Index>
struct CombineItems {
  Index index;
  const std::uint32_t* items;
  const unsigned char* in;
  HaloCombine op;
  DYNASOAR_HD void operator()(std::size_t k) const {
    using F = typename Record::template Type<0>;
    F v;
    std::memcpy(&v, in + k * Record::bytes(), sizeof(F));
    F* at = Record::Fields::template address<Record::template field_of<0>()>(reinterpret_cast<std::uint64_t>(index[items[k]]));
    combine_value(*at, v, op);
  }
};

template <class C, auto Method, class Index, class Pack>
struct CallItems {
  Index index;
  const std::uint32_t* items;
  Pack pack;
  DYNASOAR_HD void operator()(std::size_t k) const {
    C* self = index[items[k]];
    pack.apply([&](const auto&... args) { (self->*Method)(args...); });
  }
};

}  // namespace detail

/// The halo of class C's object table on one rank (see the top of this
/// file). Handle is the rank's AllocatorHandle type. Host code; every
/// operation is collective (every rank calls it, in the same order) and
/// queued on the communicator's stream, which must be the heap's: the
/// do-alls queued after it see its result, and no host wait is needed
/// (over NCCL; over host threads it completes before it returns).
template <class Handle, class C>
class TableHalo {
  using Registry = typename Handle::Registry;
  using Index = ObjectIndex<typename Handle::Allocator, C>;

 public:
  /// Pairs `sends` (this rank's objects, by table index, to the peers that
  /// hold them as ghosts) with `receives` (this rank's ghosts, from their
  /// owners). The k-th range sent to a peer must be the k-th range that
  /// peer receives from this rank, of the same length (Stripes lists them
  /// so). Throws std::invalid_argument for a range outside the table or a
  /// peer that is no other rank.
  TableHalo(Communicator& comm, const ObjectTable<typename Handle::Allocator, C>& table, std::vector<HaloRange> sends,
            std::vector<HaloRange> receives)
      : comm_(&comm), index_(table.index()) {
    sends_ = flatten(sends, table.size(), send_items_);
    receives_ = flatten(receives, table.size(), receive_items_);
  }

  /// Objects sent and ghosts received by a refresh.
  std::size_t sent_objects() const { return count(sends_); }
  /// Ghosts of this rank.
  std::size_t received_objects() const { return count(receives_); }

  /// Copies every field of the sent objects that holds no object pointer
  /// into their ghosts on the peers.
  void refresh() { transfer<detail::ValueRecord<Registry, C>>(); }

  /// Copies the fields Members... (field members of C or a base, as
  /// `&Cell::kind`) of the sent objects into their ghosts.
  template <auto... Members>
  void refresh_fields() {
    static_assert(sizeof...(Members) > 0, "refresh_fields: name at least one field");
    transfer<move::FieldRecord<Registry, C, detail::FieldMember<decltype(Members)>::kIndex...>>();
  }

  /// Merges one number field over the copies of an object: each sent
  /// object ends with op over its value and its ghosts', and each ghost
  /// with op over its value and its owner's (the owner's before the merge).
  /// Where an object has one ghost (Stripes' halos), owner and ghost end
  /// equal: what a method wrote into a ghost reaches the owner, and the
  /// other way round. One exchange each way, both in one group. For kSum
  /// the copies' values must be the parts to add up.
  template <auto Member>
  void combine(HaloCombine op) {
    using Record = move::FieldRecord<Registry, C, detail::FieldMember<decltype(Member)>::kIndex>;
    constexpr std::size_t kBytes = Record::bytes();
    const platform::Stream s = comm_->stream();
    const std::size_t ns = sent_objects(), nr = received_objects();
    unsigned char* out_sent = comm_->workspace(kSlotOut, (ns + nr) * kBytes + 1);
    unsigned char* out_received = out_sent + ns * kBytes;
    unsigned char* in_sent = comm_->workspace(kSlotIn, (ns + nr) * kBytes + 1);
    unsigned char* in_received = in_sent + ns * kBytes;
    if (ns != 0)
      platform::parallel_for(ns, detail::PackItems<Record, Index>{index_, send_items_.data(), out_sent}, s);
    if (nr != 0)
      platform::parallel_for(nr, detail::PackItems<Record, Index>{index_, receive_items_.data(), out_received}, s);
    // Per peer, both directions, in the same order on both sides: first the
    // ghosts' values to their owner, then the owners' values to the ghosts.
    std::vector<Message> sends, receives;
    for (int p = 0; p < comm_->size(); ++p) {
      const Segment* ghosts = find(receives_, p);
      const Segment* owned = find(sends_, p);
      if (ghosts != nullptr) sends.push_back(message(*ghosts, out_received, kBytes));
      if (owned != nullptr) sends.push_back(message(*owned, out_sent, kBytes));
      if (owned != nullptr) receives.push_back(message(*owned, in_sent, kBytes));
      if (ghosts != nullptr) receives.push_back(message(*ghosts, in_received, kBytes));
    }
    comm_->exchange_async(sends, receives);
    if (ns != 0)
      platform::parallel_for(ns, detail::CombineItems<Record, Index>{index_, send_items_.data(), in_sent, op}, s);
    if (nr != 0)
      platform::parallel_for(nr, detail::CombineItems<Record, Index>{index_, receive_items_.data(), in_received, op},
                             s);
  }

  /// Method(args...) on every ghost of this rank (a parallel_do over the
  /// received objects only): to clear what a step left in them, say.
  template <auto Method, class... Args>
  void parallel_do_received(Args&&... args) {
    if (received_objects() == 0) return;
    const auto pack = platform::pack_args(std::forward<Args>(args)...);
    platform::parallel_for(received_objects(),
                           detail::CallItems<C, Method, Index, decltype(pack)>{index_, receive_items_.data(), pack},
                           comm_->stream());
  }

 private:
  // Per peer, its items' place in the flattened list: (peer, first item, items).
  struct Segment {
    int peer;
    std::size_t first;
    std::size_t count;
  };

  std::vector<Segment> flatten(const std::vector<HaloRange>& ranges, std::size_t table_size,
                               platform::Buffer<std::uint32_t>& items) {
    std::vector<std::uint32_t> host;
    std::vector<Segment> segments;
    for (const HaloRange& r : ranges) {
      if (r.peer < 0 || r.peer >= comm_->size() || r.peer == comm_->rank())
        throw std::invalid_argument("TableHalo: rank " + std::to_string(comm_->rank()) + " names peer " +
                                    std::to_string(r.peer) + " (another rank, 0 to " +
                                    std::to_string(comm_->size() - 1) + ")");
      if (r.first > table_size || r.count > table_size - r.first)
        throw std::invalid_argument("TableHalo: range [" + std::to_string(r.first) + ", " +
                                    std::to_string(r.first + r.count) + ") outside the table of " +
                                    std::to_string(table_size) + " objects");
      if (segments.empty() || segments.back().peer != r.peer) segments.push_back({r.peer, host.size(), 0});
      for (std::uint64_t i = 0; i < r.count; ++i) host.push_back(static_cast<std::uint32_t>(r.first + i));
      segments.back().count += r.count;
    }
    items = platform::Buffer<std::uint32_t>(std::max<std::size_t>(host.size(), 1));
    items.copy_from_host(host.data(), host.size(), 0, comm_->stream());
    return segments;
  }

  static std::size_t count(const std::vector<Segment>& segments) {
    std::size_t n = 0;
    for (const Segment& s : segments) n += s.count;
    return n;
  }

  static Message message(const Segment& s, unsigned char* data, std::size_t record_bytes) {
    return {s.peer, data + s.first * record_bytes, s.count * record_bytes};
  }
  static std::vector<Message> messages(const std::vector<Segment>& segments, unsigned char* data,
                                       std::size_t record_bytes) {
    std::vector<Message> out;
    for (const Segment& s : segments) out.push_back(message(s, data, record_bytes));
    return out;
  }
  static const Segment* find(const std::vector<Segment>& segments, int peer) {
    for (const Segment& s : segments)
      if (s.peer == peer) return &s;
    return nullptr;
  }
  // The communicator's workspace slots of halos (migrate.h uses others).
  static constexpr std::size_t kSlotOut = 0;
  static constexpr std::size_t kSlotIn = 1;

  // Owners' fields (Record) into their ghosts, queued on the stream.
  template <class Record>
  void transfer() {
    const platform::Stream s = comm_->stream();
    unsigned char* out = comm_->workspace(kSlotOut, sent_objects() * Record::bytes() + 1);
    unsigned char* in = comm_->workspace(kSlotIn, received_objects() * Record::bytes() + 1);
    if (sent_objects() != 0)
      platform::parallel_for(sent_objects(), detail::PackItems<Record, Index>{index_, send_items_.data(), out}, s);
    comm_->exchange_async(messages(sends_, out, Record::bytes()), messages(receives_, in, Record::bytes()));
    if (received_objects() != 0)
      platform::parallel_for(received_objects(),
                             detail::UnpackItems<Record, Index>{index_, receive_items_.data(), in}, s);
  }

  Communicator* comm_;
  Index index_;
  std::vector<Segment> sends_, receives_;
  platform::Buffer<std::uint32_t> send_items_, receive_items_;
};

}  // namespace dynasoar::distributed
