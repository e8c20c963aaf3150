// Checkpoints of the block heap: every live object of every concrete class
// written to a byte stream, and read back into a new, empty heap. The
// second user of the move layer (move/object_fields.h, after compaction in
// allocator/soa/defrag.h): which fields hold object pointers comes from
// ObjectFields, the walk over an object's pointers is its
// for_each_pointer_field. The format is docs/design/checkpoint-format.md;
// the API is SoaAllocatorHandle::save_checkpoint and load_checkpoint.
//
// Both directions work on a host copy of the blocks. An object pointer is a
// block address plus type, capacity and slot bits (allocator/soa/object_pointer.h),
// and a copy of a block at a 128-byte aligned host address is read and
// written through the same field_address arithmetic as the block itself.
// A save copies the allocated blocks to the host, replaces every object
// pointer there by a reference (class, position in the file) and writes the
// fields column by column. A load builds the blocks on the host, turns the
// references into pointers of the new heap, takes each block through the
// allocator's own initialize_block (so the bitmaps and headers are what the
// allocator itself would make), and copies the blocks to the heap.
//
// A file holds positions, not addresses: objects of a class are numbered
// in the order the file lists them, so a file does not depend on where the
// heap lies, how large it is, its block layout or the build. Field values
// are otherwise written as the host holds them (little-endian), which both
// builds of a program share: nvcc compiles the host side with the same
// host compiler, so field types have the same names and sizes.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <memory>
#include <new>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dynasoar/allocator/soa/heap.h"
#include "dynasoar/allocator/soa/heap_storage.h"
#include "dynasoar/allocator/soa/layout.h"
#include "dynasoar/allocator/soa/object_pointer.h"
#include "dynasoar/model/type_list.h"
#include "dynasoar/move/object_fields.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/names.h"

namespace dynasoar::move {

static_assert(std::endian::native == std::endian::little,
              "checkpoints are little-endian: field values are written as the host holds them");

/// A checkpoint that cannot be saved or loaded: a stream that fails, a file
/// that is no checkpoint, is cut short, has another format version or
/// another program's classes, a heap too small for its objects or not
/// empty, an object pointer to no live object. The message names the
/// problem; the heap is unchanged.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The first 8 bytes of every checkpoint.
inline constexpr char kCheckpointMagic[8] = {'D', 'S', 'O', 'A', 'R', 'C', 'K', 'P'};
/// The 8 bytes after the data: a file whose data ends early, or that
/// describes its data wrongly, shows here.
inline constexpr char kCheckpointEnd[8] = {'D', 'S', 'O', 'A', 'R', 'E', 'N', 'D'};
/// The format version this code writes, and the only one it reads. Any
/// change of what the bytes of a file mean takes a new version.
inline constexpr std::uint32_t kCheckpointVersion = 1;
/// A null object pointer in a file.
inline constexpr std::uint64_t kNullReference = ~std::uint64_t{0};
/// A reference to an object in a file: (class id << kReferenceClassShift) | position.
inline constexpr unsigned kReferenceClassShift = 56;
/// The position bits of a reference.
inline constexpr std::uint64_t kReferencePositionMask =
    (std::uint64_t{1} << kReferenceClassShift) - 1;

/// A field of a class as a file describes it.
struct FieldDescription {
  std::string type;            ///< the type's name, without qualifiers (platform::unqualified_name)
  std::uint64_t bytes = 0;     ///< sizeof the type
  std::uint64_t pointers = 0;  ///< object pointers it holds (ObjectFields::kFieldPointers)
  /// Same name, size and pointers.
  bool operator==(const FieldDescription&) const = default;
};

/// A registered class as a file describes it.
struct ClassDescription {
  std::string name;                      ///< without qualifiers
  bool abstract = false;                 ///< no objects of its own
  std::uint32_t capacity = 0;            ///< slots per block (0: abstract)
  std::vector<FieldDescription> fields;  ///< every field, inherited ones first
  /// Same name, kind, capacity and fields.
  bool operator==(const ClassDescription&) const = default;
};

/// What a file says about the objects of one concrete class, before their data.
struct ClassCensus {
  std::uint64_t positions = 0;  ///< numbered places of objects (objects and holes)
  std::uint64_t live = 0;       ///< places that hold an object
  /// Entries of each object table (parallel_new_indexed) of the class, in
  /// the order the tables were made. Table k's groups of `capacity` entries
  /// take the first positions, after those of tables 0 .. k-1.
  std::vector<std::uint64_t> tables;
};

/// Everything of a file but its data (read_checkpoint_info).
struct CheckpointInfo {
  std::uint32_t version = 0;              ///< format version
  std::string backend;                    ///< the back end that wrote it (dynasoar, bitmap_alloc)
  std::vector<ClassDescription> classes;  ///< every registered class, in type-id order
  std::string user;                       ///< the program's own bytes
  std::vector<ClassCensus> census;        ///< per class id (abstract ones: empty)
};

/// One object table of a class, as the heap handle keeps it to save it in
/// table order: its entries and the block of each group of `capacity`
/// entries (kNoBit where the group has none).
struct TableBlocks {
  std::uint64_t size = 0;         ///< entries
  std::vector<bit_index> blocks;  ///< per group of capacity entries
};

/// The tables of every class (by type id), as a handle keeps them.
template <std::size_t kNumTypes>
using TableRecords = std::array<std::vector<TableBlocks>, kNumTypes>;

/// What a load hands back: the user's bytes, and the tables the new heap
/// has for the classes that had tables in the file.
template <std::size_t kNumTypes>
struct Restored {
  std::string user;                ///< the program's own bytes
  TableRecords<kNumTypes> tables;  ///< per class id
};

namespace detail {

/// Name of the type F in a file: the compiler's, without qualifiers.
template <class F>
std::string field_type_name() {
  return platform::unqualified_name(platform::template_argument(platform::pretty_type_name<F>()));
}

/// The description of class I of Registry.
template <class Registry, std::size_t I>
ClassDescription describe_class() {
  using C = model::At<typename Registry::Types, I>;
  using Fields = ObjectFields<Registry, C>;
  ClassDescription d;
  d.name = field_type_name<C>();
  d.abstract = Registry::template Info<C>::kIsAbstract;
  d.capacity = Registry::kCapacityById[I];
  [&]<std::size_t... J>(std::index_sequence<J...>) {
    (d.fields.push_back(FieldDescription{field_type_name<typename Fields::template FieldType<J>>(),
                                         sizeof(typename Fields::template FieldType<J>),
                                         Fields::template kFieldPointers<J>}),
     ...);
  }
  (std::make_index_sequence<Fields::kNumFields>{});
  return d;
}

/// Writes a checkpoint through a buffer of its own (one write per MiB).
class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out), buffer_(new char[kBytes]) {}
  /// n bytes from p.
  void bytes(const void* p, std::size_t n) {
    const char* from = static_cast<const char*>(p);
    while (n != 0) {
      if (used_ == kBytes) flush();
      const std::size_t take = std::min(n, kBytes - used_);
      std::memcpy(buffer_.get() + used_, from, take);
      used_ += take;
      from += take;
      n -= take;
    }
  }
  /// n zero bytes.
  void zeros(std::size_t n) {
    while (n != 0) {
      if (used_ == kBytes) flush();
      const std::size_t take = std::min(n, kBytes - used_);
      std::memset(buffer_.get() + used_, 0, take);
      used_ += take;
      n -= take;
    }
  }
  /// An integer, little-endian.
  template <class T>
  void value(T v) {
    bytes(&v, sizeof v);
  }
  /// A string: its length (u32) and its bytes.
  void text(std::string_view s) {
    value(static_cast<std::uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  /// Hands what the buffer holds to the stream. Throws CheckpointError if it fails.
  void flush() {
    if (used_ != 0) out_.write(buffer_.get(), static_cast<std::streamsize>(used_));
    used_ = 0;
    if (!out_)
      throw CheckpointError(
          "checkpoint: writing failed (the disk is full, or the stream is closed)");
  }

 private:
  static constexpr std::size_t kBytes = std::size_t{1} << 20;
  std::ostream& out_;
  std::unique_ptr<char[]> buffer_;
  std::size_t used_ = 0;
};

/// Reads a checkpoint exactly as far as it goes (no read-ahead: a stream
/// may hold more after it). Every read names what it reads, for the
/// message of a file that ends there.
class Reader {
 public:
  explicit Reader(std::istream& in) : in_(in) {}
  /// n bytes into p.
  void bytes(void* p, std::size_t n, const std::string& what) {
    in_.read(static_cast<char*>(p), static_cast<std::streamsize>(n));
    const auto got = static_cast<std::size_t>(in_.gcount());
    if (got != n)
      throw CheckpointError("checkpoint: the file ends inside " + what + " (" +
                            std::to_string(got) + " of " + std::to_string(n) +
                            " bytes there); it was cut short");
  }
  /// An integer, little-endian.
  template <class T>
  T value(const std::string& what) {
    T v{};
    bytes(&v, sizeof v, what);
    return v;
  }
  /// A string of at most `most` bytes.
  std::string text(const std::string& what, std::size_t most = 1u << 16) {
    const auto n = value<std::uint32_t>(what);
    if (n > most)
      throw CheckpointError("checkpoint: " + what + " is " + std::to_string(n) +
                            " bytes long; the file is damaged, or no checkpoint");
    return blob(n, what);
  }
  /// n bytes as a string, read a MiB at a time, so that a damaged length
  /// ends in a message rather than a huge allocation.
  std::string blob(std::uint64_t n, const std::string& what) {
    std::string s;
    constexpr std::uint64_t kStep = std::uint64_t{1} << 20;
    for (std::uint64_t done = 0; done < n;) {
      const std::uint64_t take = std::min(kStep, n - done);
      s.resize(static_cast<std::size_t>(done + take));
      bytes(s.data() + done, static_cast<std::size_t>(take), what);
      done += take;
    }
    return s;
  }

 private:
  std::istream& in_;
};

/// Host memory for copies of `count` blocks, 4096-byte aligned (the block
/// alignment and more), so that object pointers can be made of its
/// addresses.
class HostBlocks {
 public:
  HostBlocks() = default;
  /// Room for `count` blocks of `block_bytes`; zeroed if `zero`.
  HostBlocks(std::size_t count, std::uint64_t block_bytes, bool zero)
      : bytes_(count * block_bytes) {
    if (bytes_ == 0) return;
    memory_.reset(::operator new (bytes_, std::align_val_t{kAlignment}));
    if (zero) std::memset(memory_.get(), 0, bytes_);
    if (address() + bytes_ > soa::kAddressLimit)
      throw CheckpointError(
          "checkpoint: host memory for the blocks lies beyond the 2^50 bytes object pointers "
          "address");
  }
  /// The first byte.
  void* data() const { return memory_.get(); }
  /// Its address, as object pointers hold it.
  std::uint64_t address() const { return reinterpret_cast<std::uint64_t>(memory_.get()); }

 private:
  static constexpr std::size_t kAlignment = 4096;
  struct Free {
    void operator()(void* p) const { ::operator delete (p, std::align_val_t{kAlignment}); }
  };
  std::size_t bytes_ = 0;
  std::unique_ptr<void, Free> memory_;
};

/// The first pointer that could not be written or read: its bits, the
/// class and field that hold it.
struct BadPointer {
  bool found = false;
  std::uint64_t bits = 0;
  unsigned holder = 0;
  std::size_t field = 0;
};

/// Save: every object pointer of a host copy becomes a reference (class id,
/// position), or the first that is no live object is recorded in *bad.
/// Plain data, so that ObjectFields' walk (host and device code) may call it.
struct EncodeReferences {
  std::uint64_t heap_base;     ///< address of the heap's block 0
  std::uint64_t heap_bytes;    ///< bytes of all its blocks
  std::uint64_t block_bytes;   ///< bytes of a block
  const std::uint8_t* owner;   ///< per block: its class, kNoClass if free
  const soa::word* live;       ///< per block: its objects' slots
  const std::uint64_t* first;  ///< per block: the position of its first object, or of slot 0
  const std::uint8_t*
      by_slot;  ///< per block: 1 if positions go by slot (a table's group), 0 if by rank
  const unsigned* capacity;  ///< per class
  unsigned holder;           ///< the class of the objects walked
  BadPointer* bad;
  DYNASOAR_HD void operator()(std::uint64_t& p, std::size_t field, std::uint64_t targets) const {
    if (p == 0) {
      p = kNullReference;
      return;
    }
    const unsigned type = soa::pointer_type(p);
    const unsigned slot = soa::pointer_slot(p);
    const std::uint64_t offset =
        soa::pointer_block(p) - heap_base;  // below the heap it wraps: too large
    const std::uint64_t b = offset / block_bytes;
    const bool ours = offset < heap_bytes && offset % block_bytes == 0 && owner[b] == type &&
                      ((targets >> type) & 1u) != 0 &&
                      soa::make_pointer(soa::pointer_block(p), slot, capacity[type], type) == p &&
                      ((live[b] >> slot) & 1u) != 0;
    if (!ours) {
      if (!bad->found) *bad = BadPointer{true, p, holder, field};
      return;
    }
    const std::uint64_t position =
        first[b] +
        (by_slot[b] != 0
             ? slot
             : static_cast<unsigned>(platform::popc(live[b] & platform::low_bits(slot))));
    p = (std::uint64_t{type} << kReferenceClassShift) | position;
  }
};

/// Load: every reference of the host blocks becomes an object pointer of
/// the new heap, or the first that names no object of the file is
/// recorded in *bad. Positions p of class k lie in block first_block[k] +
/// p / capacity, slot p % capacity.
struct DecodeReferences {
  std::uint64_t heap_base;           ///< the new heap's block 0
  std::uint64_t block_bytes;         ///< bytes of a block
  const std::uint64_t* positions;    ///< per class: positions in the file
  const std::uint64_t* first_block;  ///< per class: its first block in the new heap
  const unsigned* capacity;          ///< per class
  const soa::word* live;             ///< per new block: its objects' slots
  unsigned holder;                   ///< the class of the objects walked
  BadPointer* bad;
  DYNASOAR_HD void operator()(std::uint64_t& p, std::size_t field, std::uint64_t targets) const {
    if (p == kNullReference) {
      p = 0;
      return;
    }
    const auto type = static_cast<unsigned>(p >> kReferenceClassShift);
    const std::uint64_t position = p & kReferencePositionMask;
    bool ok = type < 64 && ((targets >> type) & 1u) != 0 && position < positions[type];
    std::uint64_t block = 0;
    unsigned slot = 0;
    if (ok) {
      block = first_block[type] + position / capacity[type];
      slot = static_cast<unsigned>(position % capacity[type]);
      ok = ((live[block] >> slot) & 1u) != 0;
    }
    if (!ok) {
      if (!bad->found) *bad = BadPointer{true, p, holder, field};
      return;
    }
    p = soa::make_pointer(soa::block_at(heap_base, block_bytes, block), slot, capacity[type], type);
  }
};

/// Load's last step: block b of the new heap becomes a block of class
/// type[b] with the slots live[b] taken, through the allocator's
/// initialize_block (which sets its header and bitmaps as a `new` would).
/// Blocks without objects stay free. The heap is empty, so every block
/// asked for is free; *missed counts those that were not (another stream
/// using the heap).
struct RestoreBlocks {
  soa::HeapState* state;
  const soa::word* live;
  const std::uint32_t* type;
  unsigned long long* missed;
  DYNASOAR_HD void operator()(std::size_t b) const {
    const soa::word taken = live[b];
    if (taken == 0) return;
    const unsigned t = type[b];
    const auto block = static_cast<bit_index>(b);
    if (state->initialize_block(t, state->capacity[t], platform::mix64(b), taken, block) != block)
      platform::atomic_fetch_add(missed, 1ull);
  }
};

/// "A, B, C": the names of the classes.
inline std::string class_names(const std::vector<ClassDescription>& classes) {
  std::string s;
  for (const ClassDescription& c : classes) s += (s.empty() ? "" : ", ") + c.name;
  return s;
}

/// "float (4 bytes)" or "Body* (8 bytes, 1 object pointer)".
inline std::string field_text(const FieldDescription& f) {
  std::string s = f.type + " (" + std::to_string(f.bytes) + " bytes";
  if (f.pointers != 0)
    s += ", " + std::to_string(f.pointers) + " object pointer" + (f.pointers == 1 ? "" : "s");
  return s + ")";
}

/// Throws CheckpointError naming the first difference between the classes
/// of a file and this program's.
inline void check_same_classes(const std::vector<ClassDescription>& file,
                               const std::vector<ClassDescription>& mine) {
  const std::string rule =
      "; a checkpoint loads only into a program with the same classes and fields as the one that "
      "wrote it";
  if (file.size() != mine.size())
    throw CheckpointError("checkpoint: the file's classes are " + class_names(file) +
                          "; this program's are " + class_names(mine) + rule);
  for (std::size_t i = 0; i < file.size(); ++i) {
    const ClassDescription& f = file[i];
    const ClassDescription& m = mine[i];
    const std::string where = "class " + std::to_string(i) + " (" + m.name + ")";
    if (f.name != m.name)
      throw CheckpointError("checkpoint: class " + std::to_string(i) + " is " + f.name +
                            " in the file, " + m.name + " in this program" + rule);
    if (f.abstract != m.abstract)
      throw CheckpointError("checkpoint: " + where + " is " +
                            (f.abstract ? "abstract" : "concrete") + " in the file, " +
                            (m.abstract ? "abstract" : "concrete") + " in this program" + rule);
    if (f.fields.size() != m.fields.size())
      throw CheckpointError("checkpoint: " + where + " has " + std::to_string(f.fields.size()) +
                            " fields in the file, " + std::to_string(m.fields.size()) +
                            " in this program" + rule);
    for (std::size_t j = 0; j < f.fields.size(); ++j)
      if (f.fields[j] != m.fields[j])
        throw CheckpointError("checkpoint: field " + std::to_string(j) + " of " + m.name + " is " +
                              field_text(f.fields[j]) + " in the file, " + field_text(m.fields[j]) +
                              " in this program" + rule);
    if (f.capacity != m.capacity)
      throw CheckpointError("checkpoint: " + where + " has " + std::to_string(f.capacity) +
                            " slots per block in the file, " + std::to_string(m.capacity) +
                            " in this program" + rule);
  }
}

/// Reads everything before the data; checks magic and version.
inline CheckpointInfo read_info(Reader& r) {
  CheckpointInfo info;
  char magic[8];
  r.bytes(magic, sizeof magic, "the magic number");
  if (std::memcmp(magic, kCheckpointMagic, sizeof magic) != 0)
    throw CheckpointError("checkpoint: wrong magic number; this is no dynasoar checkpoint");
  info.version = r.value<std::uint32_t>("the format version");
  if (info.version != kCheckpointVersion)
    throw CheckpointError("checkpoint: format version " + std::to_string(info.version) +
                          "; this program reads version " + std::to_string(kCheckpointVersion) +
                          " only");
  info.backend = r.text("the back end's name");
  const auto n = r.value<std::uint32_t>("the number of classes");
  if (n == 0 || n > model::kMaxTypes)
    throw CheckpointError("checkpoint: " + std::to_string(n) + " classes; the file is damaged");
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::string where = "the description of class " + std::to_string(i);
    ClassDescription c;
    c.name = r.text(where);
    c.abstract = r.value<std::uint8_t>(where) != 0;
    c.capacity = r.value<std::uint32_t>(where);
    const auto fields = r.value<std::uint32_t>(where);
    if (fields > 4096)
      throw CheckpointError("checkpoint: " + where + " has " + std::to_string(fields) +
                            " fields; the file is damaged");
    for (std::uint32_t j = 0; j < fields; ++j) {
      FieldDescription f;
      f.type = r.text(where);
      f.bytes = r.value<std::uint64_t>(where);
      f.pointers = r.value<std::uint64_t>(where);
      c.fields.push_back(std::move(f));
    }
    info.classes.push_back(std::move(c));
  }
  info.user = r.blob(r.value<std::uint64_t>("the length of the user's bytes"), "the user's bytes");
  info.census.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (info.classes[i].abstract) continue;
    const std::string where = "the object count of " + info.classes[i].name;
    ClassCensus& c = info.census[i];
    c.positions = r.value<std::uint64_t>(where);
    c.live = r.value<std::uint64_t>(where);
    const auto tables = r.value<std::uint32_t>(where);
    for (std::uint32_t k = 0; k < tables; ++k) c.tables.push_back(r.value<std::uint64_t>(where));
  }
  return info;
}

/// Groups of `capacity` entries of the tables of a class: the positions
/// its tables take are the first groups * capacity.
inline std::uint64_t table_groups(const std::vector<std::uint64_t>& tables,
                                  std::uint64_t capacity) {
  std::uint64_t groups = 0;
  for (const std::uint64_t n : tables) groups += (n + capacity - 1) / capacity;
  return groups;
}

/// The places of a class's objects on save, in file order: a table's
/// group (`capacity` positions, by slot; `block` kNoBit if the group has
/// no block of the class any more), or another block of the class (its
/// live slots in ascending order).
struct Segment {
  bit_index block;
  bool by_slot;
};

/// The host address of block b of a copy that starts with block `lo`.
inline std::uint64_t copy_address(const HostBlocks& copy, bit_index lo, std::uint64_t block_bytes,
                                  bit_index b) {
  return copy.address() + (static_cast<std::uint64_t>(b) - lo) * block_bytes;
}

/// Writes field J of every position of class kType (zeros for holes).
template <class Registry, unsigned kType, std::size_t J>
void write_column(Writer& w, const std::vector<Segment>& segments,
                  const std::vector<soa::word>& live, const HostBlocks& copy, bit_index lo) {
  using C = model::At<typename Registry::Types, kType>;
  using Fields = ObjectFields<Registry, C>;
  constexpr std::size_t kBytes = sizeof(typename Fields::template FieldType<J>);
  constexpr unsigned kCap = Registry::kCapacityById[kType];
  for (const Segment& seg : segments) {
    const soa::word l = seg.block == kNoBit ? 0 : live[seg.block];
    const std::uint64_t block =
        seg.block == kNoBit ? 0 : copy_address(copy, lo, Registry::kBlockBytes, seg.block);
    if (seg.by_slot) {
      for (unsigned slot = 0; slot < kCap; ++slot) {
        if (((l >> slot) & 1u) != 0)
          w.bytes(Fields::template address<J>(soa::make_pointer(block, slot, kCap, kType)), kBytes);
        else
          w.zeros(kBytes);
      }
    } else {
      for (soa::word m = l; m != 0; m &= m - 1) {
        const auto slot = static_cast<unsigned>(platform::ctz(m));
        w.bytes(Fields::template address<J>(soa::make_pointer(block, slot, kCap, kType)), kBytes);
      }
    }
  }
}

/// Reads field J of `positions` positions of class kType into the host
/// blocks of the new heap (class blocks from `first`), skipping holes.
template <class Registry, unsigned kType, std::size_t J>
void read_column(Reader& r, std::uint64_t positions, const std::vector<soa::word>& live,
                 const HostBlocks& blocks, std::uint64_t first, const std::string& name) {
  using C = model::At<typename Registry::Types, kType>;
  using Fields = ObjectFields<Registry, C>;
  constexpr std::size_t kBytes = sizeof(typename Fields::template FieldType<J>);
  constexpr unsigned kCap = Registry::kCapacityById[kType];
  constexpr std::size_t kChunk = std::max<std::size_t>(1, (std::size_t{1} << 20) / kBytes);
  std::vector<char> chunk(std::min<std::uint64_t>(kChunk, std::max<std::uint64_t>(positions, 1)) *
                          kBytes);
  const std::string what = "the values of field " + std::to_string(J) + " of " + name;
  for (std::uint64_t p = 0; p < positions;) {
    const std::uint64_t n = std::min<std::uint64_t>(kChunk, positions - p);
    r.bytes(chunk.data(), static_cast<std::size_t>(n * kBytes), what);
    for (std::uint64_t i = 0; i < n; ++i, ++p) {
      const std::uint64_t b = first + p / kCap;
      const auto slot = static_cast<unsigned>(p % kCap);
      if (((live[b] >> slot) & 1u) == 0) continue;
      const std::uint64_t block = blocks.address() + (b * Registry::kBlockBytes);
      std::memcpy(static_cast<void*>(
                      Fields::template address<J>(soa::make_pointer(block, slot, kCap, kType))),
                  chunk.data() + i * kBytes, kBytes);
    }
  }
}

/// f(std::integral_constant<unsigned, id>) for every concrete class of Registry, in id order.
template <class Registry, class F>
void for_each_concrete_class(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          if constexpr (Registry::kCapacityById[I] != 0) f(std::integral_constant<unsigned, I>{});
        }(),
        ...);
  }
  (std::make_index_sequence<Registry::kNumTypes>{});
}

/// "0x..." of a 64-bit value.
inline std::string hex(std::uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = 60; shift >= 0; shift -= 4) s += kDigits[(v >> shift) & 15u];
  return s;
}

}  // namespace detail

/// The classes of Registry as a file describes them, in type-id order.
template <class Registry>
std::vector<ClassDescription> describe_classes() {
  std::vector<ClassDescription> out;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (out.push_back(detail::describe_class<Registry, I>()), ...);
  }
  (std::make_index_sequence<Registry::kNumTypes>{});
  return out;
}

/// Reads a checkpoint's header, user bytes and object counts, not its data
/// (a tool's or a test's look into a file). Throws CheckpointError for a
/// file that is no checkpoint of this format version, or is cut short there.
inline CheckpointInfo read_checkpoint_info(std::istream& in) {
  detail::Reader r(in);
  return detail::read_info(r);
}

/// Writes every live object of `heap` to `out` (docs/design/checkpoint-format.md),
/// with `user` beside them. The objects of a class with object tables
/// (`tables`, per class id) come first, in table order; then the class's
/// other blocks in ascending order, each block's objects by slot.
/// Throws CheckpointError, writing nothing, if an object pointer field
/// holds a pointer to no live object of this heap of a class it may point
/// to; and if the stream fails. Waits for s; does not change the heap.
template <class Registry>
void save_heap(const soa::HeapStorage<Registry>& heap,
               const TableRecords<Registry::kNumTypes>& tables, std::string_view user,
               std::ostream& out, platform::Stream s) {
  constexpr std::size_t kNumTypes = Registry::kNumTypes;
  constexpr std::uint64_t kBlockBytes = Registry::kBlockBytes;
  constexpr std::uint8_t kNoClass = 0xff;
  const bit_index num_blocks = heap.num_blocks();
  const std::vector<soa::BlockHeader> headers = heap.copy_headers(s);

  // Which class each block belongs to, and its objects' slots.
  std::vector<std::uint8_t> owner(num_blocks, kNoClass);
  std::vector<soa::word> live(num_blocks, 0);
  std::array<std::vector<bit_index>, kNumTypes> blocks_of;
  bit_index lo = kNoBit, hi = 0;
  for (unsigned t = 0; t < kNumTypes; ++t) {
    if (Registry::kCapacityById[t] == 0) continue;
    blocks_of[t] = heap.allocated(t).indices(s);
    for (const bit_index b : blocks_of[t]) {
      if (headers[b].type != t)
        throw CheckpointError("checkpoint: block " + std::to_string(b) + " of class " +
                              std::to_string(t) + " has class " + std::to_string(headers[b].type) +
                              " in its header; the heap is inconsistent (a kernel still running?)");
      owner[b] = static_cast<std::uint8_t>(t);
      live[b] = headers[b].allocation & ~soa::padding_bits(Registry::kCapacityById[t]);
      lo = std::min(lo, b);
      hi = std::max(hi, b);
    }
  }

  // Positions: each class's tables first (a group's positions by slot),
  // then its other blocks (by rank).
  std::vector<std::uint64_t> first(num_blocks, 0);
  std::vector<std::uint8_t> by_slot(num_blocks, 0), placed(num_blocks, 0);
  std::array<std::vector<detail::Segment>, kNumTypes> segments;
  std::vector<ClassCensus> census(kNumTypes);
  for (unsigned t = 0; t < kNumTypes; ++t) {
    const unsigned cap = Registry::kCapacityById[t];
    if (cap == 0) continue;
    ClassCensus& c = census[t];
    for (const TableBlocks& table : tables[t]) {
      c.tables.push_back(table.size);
      const std::uint64_t groups = (table.size + cap - 1) / cap;
      for (std::uint64_t g = 0; g < groups; ++g) {
        bit_index b = g < table.blocks.size() ? table.blocks[g] : kNoBit;
        // A group whose block was emptied (and freed, or taken by another
        // class or another table) keeps its positions, as holes.
        if (b != kNoBit && (b >= num_blocks || owner[b] != t || placed[b] != 0)) b = kNoBit;
        if (b != kNoBit) {
          placed[b] = 1;
          by_slot[b] = 1;
          first[b] = c.positions;
          c.live += static_cast<std::uint64_t>(platform::popc(live[b]));
        }
        segments[t].push_back(detail::Segment{b, true});
        c.positions += cap;
      }
    }
    for (const bit_index b : blocks_of[t]) {
      if (placed[b] != 0) continue;
      placed[b] = 1;
      first[b] = c.positions;
      const auto n = static_cast<std::uint64_t>(platform::popc(live[b]));
      c.positions += n;
      c.live += n;
      segments[t].push_back(detail::Segment{b, false});
    }
    if (c.positions > kReferencePositionMask)
      throw CheckpointError(
          "checkpoint: 2^56 objects or more of one class; references cannot name them");
  }

  // The host copy, and its pointers turned into references.
  const bit_index count = lo == kNoBit ? 0 : hi - lo + 1;
  detail::HostBlocks copy(count, kBlockBytes, false);
  if (count != 0) heap.copy_blocks_to_host(copy.data(), lo, count, s);
  const std::vector<unsigned> capacity(std::begin(Registry::kCapacityById),
                                       std::end(Registry::kCapacityById));
  detail::BadPointer bad;
  detail::for_each_concrete_class<Registry>([&](auto type_constant) {
    constexpr unsigned kType = decltype(type_constant)::value;
    using Fields = ObjectFields<Registry, model::At<typename Registry::Types, kType>>;
    constexpr unsigned kCap = Registry::kCapacityById[kType];
    if constexpr (Fields::kTargets != 0) {
      const detail::EncodeReferences encode{heap.base(),    std::uint64_t{num_blocks} * kBlockBytes,
                                            kBlockBytes,    owner.data(),
                                            live.data(),    first.data(),
                                            by_slot.data(), capacity.data(),
                                            kType,          &bad};
      for (const bit_index b : blocks_of[kType]) {
        const std::uint64_t block = detail::copy_address(copy, lo, kBlockBytes, b);
        for (soa::word m = live[b]; m != 0; m &= m - 1)
          Fields::template for_each_pointer_field<~std::uint64_t{0}>(
              soa::make_pointer(block, static_cast<unsigned>(platform::ctz(m)), kCap, kType),
              encode);
      }
    }
  });
  const std::vector<ClassDescription> classes = describe_classes<Registry>();
  if (bad.found)
    throw CheckpointError(
        "checkpoint: field " + std::to_string(bad.field) + " (" +
        classes[bad.holder].fields[bad.field].type + ") of an object of " +
        classes[bad.holder].name + " holds " + detail::hex(bad.bits) +
        ", which is no live object of this heap of a class the field may point to (an object "
        "destroyed since, or one of another heap); nothing was written. Clear such a pointer when "
        "its object is destroyed.");

  detail::Writer w(out);
  w.bytes(kCheckpointMagic, sizeof kCheckpointMagic);
  w.value(kCheckpointVersion);
  w.text(soa::backend_name(Registry::kLayout));
  w.value(static_cast<std::uint32_t>(classes.size()));
  for (const ClassDescription& c : classes) {
    w.text(c.name);
    w.value(static_cast<std::uint8_t>(c.abstract ? 1 : 0));
    w.value(c.capacity);
    w.value(static_cast<std::uint32_t>(c.fields.size()));
    for (const FieldDescription& f : c.fields) {
      w.text(f.type);
      w.value(f.bytes);
      w.value(f.pointers);
    }
  }
  w.value(static_cast<std::uint64_t>(user.size()));
  w.bytes(user.data(), user.size());
  for (unsigned t = 0; t < kNumTypes; ++t) {
    if (Registry::kCapacityById[t] == 0) continue;
    w.value(census[t].positions);
    w.value(census[t].live);
    w.value(static_cast<std::uint32_t>(census[t].tables.size()));
    for (const std::uint64_t n : census[t].tables) w.value(n);
  }
  detail::for_each_concrete_class<Registry>([&](auto type_constant) {
    constexpr unsigned kType = decltype(type_constant)::value;
    using Fields = ObjectFields<Registry, model::At<typename Registry::Types, kType>>;
    constexpr unsigned kCap = Registry::kCapacityById[kType];
    const ClassCensus& c = census[kType];
    if (c.live != c.positions) {  // holes: which positions hold an object
      std::vector<std::uint8_t> present((c.positions + 7) / 8, 0);
      std::uint64_t p = 0;
      for (const detail::Segment& seg : segments[kType]) {
        const soa::word l = seg.block == kNoBit ? 0 : live[seg.block];
        const unsigned n = seg.by_slot ? kCap : static_cast<unsigned>(platform::popc(l));
        for (unsigned i = 0; i < n; ++i, ++p)
          if (!seg.by_slot || ((l >> i) & 1u) != 0)
            present[p / 8] |= static_cast<std::uint8_t>(1u << (p % 8));
      }
      w.bytes(present.data(), present.size());
    }
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (detail::write_column<Registry, kType, J>(w, segments[kType], live, copy, lo), ...);
    }
    (std::make_index_sequence<Fields::kNumFields>{});
  });
  w.bytes(kCheckpointEnd, sizeof kCheckpointEnd);
  w.flush();
}

/// Reads a checkpoint from `in` into `heap`, which must be empty: each
/// class's objects in consecutive blocks, in file order (position p of a
/// class in its block first + p / capacity, slot p % capacity), the
/// classes one after another in type-id order from block 0; a table's
/// groups so in consecutive blocks, as parallel_new_indexed makes them in
/// a new heap. Everything is read and checked before the heap is changed:
/// throws CheckpointError, the heap unchanged, for a heap that is not empty
/// or too small, a file that is no checkpoint, has another format version
/// or another program's classes, is cut short, or whose pointers name no
/// object of the file. Waits for s.
template <class Registry>
Restored<Registry::kNumTypes> load_heap(soa::HeapStorage<Registry>& heap, std::istream& in,
                                        platform::Stream s) {
  constexpr std::size_t kNumTypes = Registry::kNumTypes;
  constexpr std::uint64_t kBlockBytes = Registry::kBlockBytes;
  const bit_index num_blocks = heap.num_blocks();
  const std::uint64_t free = heap.free_blocks().count(s);
  if (free != num_blocks)
    throw CheckpointError("checkpoint: the heap is not empty (" +
                          std::to_string(num_blocks - free) + " of " + std::to_string(num_blocks) +
                          " blocks hold objects); load a checkpoint into a new heap");

  detail::Reader r(in);
  CheckpointInfo info = detail::read_info(r);
  detail::check_same_classes(info.classes, describe_classes<Registry>());

  // Where each class's positions go, and whether they fit.
  std::array<std::uint64_t, kNumTypes> positions{}, first_block{};
  const std::vector<unsigned> capacity(std::begin(Registry::kCapacityById),
                                       std::end(Registry::kCapacityById));
  std::uint64_t blocks = 0;
  for (unsigned t = 0; t < kNumTypes; ++t) {
    const unsigned cap = capacity[t];
    if (cap == 0) continue;
    const ClassCensus& c = info.census[t];
    const std::string name = info.classes[t].name;
    const bool tables_fit = std::all_of(c.tables.begin(), c.tables.end(),
                                        [&](std::uint64_t n) { return n <= c.positions; }) &&
                            detail::table_groups(c.tables, cap) <= c.positions / cap;
    if (c.live > c.positions || c.positions > kReferencePositionMask || !tables_fit)
      throw CheckpointError("checkpoint: the object count of " + name + " is damaged (" +
                            std::to_string(c.live) + " objects in " + std::to_string(c.positions) +
                            " positions, " + std::to_string(c.tables.size()) + " tables)");
    positions[t] = c.positions;
    first_block[t] = blocks;
    blocks += (c.positions + cap - 1) / cap;
  }
  if (blocks > num_blocks)
    throw CheckpointError(
        "checkpoint: its objects need " + std::to_string(blocks) + " blocks of " +
        std::to_string(kBlockBytes) + " bytes (" + std::to_string(blocks * kBlockBytes) +
        " bytes); this heap has " + std::to_string(num_blocks) + " (" +
        std::to_string(std::uint64_t{num_blocks} * kBlockBytes) +
        " bytes). Give the heap at least " + std::to_string(blocks * kBlockBytes) + " bytes.");

  // The blocks on the host: which slots hold objects, then the columns.
  const auto count = static_cast<std::size_t>(blocks);
  detail::HostBlocks host(count, kBlockBytes, true);
  std::vector<soa::word> live(count, 0);
  std::vector<std::uint32_t> type(count, 0);
  detail::for_each_concrete_class<Registry>([&](auto type_constant) {
    constexpr unsigned kType = decltype(type_constant)::value;
    using Fields = ObjectFields<Registry, model::At<typename Registry::Types, kType>>;
    constexpr unsigned kCap = Registry::kCapacityById[kType];
    const ClassCensus& c = info.census[kType];
    const std::string& name = info.classes[kType].name;
    const std::uint64_t first = first_block[kType];
    for (std::uint64_t b = first; b < first + (c.positions + kCap - 1) / kCap; ++b) type[b] = kType;
    if (c.live == c.positions) {
      for (std::uint64_t p = 0; p < c.positions; p += kCap)
        live[first + p / kCap] = platform::low_bits(
            static_cast<unsigned>(std::min<std::uint64_t>(kCap, c.positions - p)));
    } else {
      std::vector<std::uint8_t> present((c.positions + 7) / 8);
      r.bytes(present.data(), present.size(), "the positions that hold objects of " + name);
      std::uint64_t n = 0;
      for (std::uint64_t p = 0; p < c.positions; ++p)
        if (((present[p / 8] >> (p % 8)) & 1u) != 0) {
          live[first + p / kCap] |= soa::word{1} << (p % kCap);
          ++n;
        }
      const bool tail_clear = c.positions % 8 == 0 || (present.back() >> (c.positions % 8)) == 0;
      if (n != c.live || !tail_clear)
        throw CheckpointError("checkpoint: the positions of " + name + " hold " +
                              std::to_string(n) + " objects, its count says " +
                              std::to_string(c.live) + "; the file is damaged");
    }
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (detail::read_column<Registry, kType, J>(r, c.positions, live, host, first, name), ...);
    }
    (std::make_index_sequence<Fields::kNumFields>{});
  });
  char end[8];
  r.bytes(end, sizeof end, "the end marker");
  if (std::memcmp(end, kCheckpointEnd, sizeof end) != 0)
    throw CheckpointError("checkpoint: no end marker after the data; the file is damaged");

  // References to pointers of the new heap.
  detail::BadPointer bad;
  detail::for_each_concrete_class<Registry>([&](auto type_constant) {
    constexpr unsigned kType = decltype(type_constant)::value;
    using Fields = ObjectFields<Registry, model::At<typename Registry::Types, kType>>;
    constexpr unsigned kCap = Registry::kCapacityById[kType];
    if constexpr (Fields::kTargets != 0) {
      const detail::DecodeReferences decode{heap.base(),
                                            kBlockBytes,
                                            positions.data(),
                                            first_block.data(),
                                            capacity.data(),
                                            live.data(),
                                            kType,
                                            &bad};
      const std::uint64_t first = first_block[kType];
      for (std::uint64_t b = first; b < first + (positions[kType] + kCap - 1) / kCap; ++b)
        for (soa::word m = live[b]; m != 0; m &= m - 1)
          Fields::template for_each_pointer_field<~std::uint64_t{0}>(
              soa::make_pointer(host.address() + b * kBlockBytes,
                                static_cast<unsigned>(platform::ctz(m)), kCap, kType),
              decode);
    }
  });
  if (bad.found)
    throw CheckpointError("checkpoint: field " + std::to_string(bad.field) + " (" +
                          info.classes[bad.holder].fields[bad.field].type + ") of an object of " +
                          info.classes[bad.holder].name + " holds the reference " +
                          detail::hex(bad.bits) +
                          ", which names no object of the file of a class the field may point to; "
                          "the file is damaged");

  // Only now the heap: its blocks' headers and bitmaps, then their data.
  Restored<kNumTypes> restored;
  if (count != 0) {
    platform::Buffer<soa::word> live_device(count);
    platform::Buffer<std::uint32_t> type_device(count);
    platform::Buffer<unsigned long long> missed(1);
    live_device.copy_from_host(live.data(), count, 0, s);
    type_device.copy_from_host(type.data(), count, 0, s);
    missed.zero(s);
    platform::parallel_for(
        count,
        detail::RestoreBlocks{heap.state(), live_device.data(), type_device.data(), missed.data()},
        s);
    heap.copy_blocks_from_host(host.data(), 0, static_cast<bit_index>(count), s);
    unsigned long long not_had = 0;
    missed.copy_to_host(&not_had, 1, 0, s);
    if (not_had != 0)
      throw std::logic_error(
          "checkpoint: " + std::to_string(not_had) +
          " blocks of the heap were taken while the checkpoint was loaded; the heap was in use "
          "on another stream, and its state is undefined");
  }
  for (unsigned t = 0; t < kNumTypes; ++t) {
    const unsigned cap = capacity[t];
    if (cap == 0) continue;
    std::uint64_t group = first_block[t];
    for (const std::uint64_t n : info.census[t].tables) {
      TableBlocks table;
      table.size = n;
      for (std::uint64_t g = 0; g < (n + cap - 1) / cap; ++g)
        table.blocks.push_back(static_cast<bit_index>(group++));
      restored.tables[t].push_back(std::move(table));
    }
  }
  restored.user = std::move(info.user);
  return restored;
}

/// Runs write(std::ostream&) on a file next to `path` and renames it to
/// `path` once it is complete, so that a run stopped while it writes
/// leaves the previous checkpoint whole. Throws CheckpointError if the
/// file cannot be written (and removes the partial file on any throw).
template <class Write>
void write_file(const std::filesystem::path& path, Write&& write) {
  std::filesystem::path part = path;
  part += ".part";
  try {
    {
      std::ofstream out(part, std::ios::binary | std::ios::trunc);
      if (!out) throw CheckpointError("checkpoint: cannot write " + part.string());
      write(out);
      out.close();
      if (!out)
        throw CheckpointError("checkpoint: writing " + part.string() +
                              " failed (is the disk full?)");
    }
    std::error_code e;
    std::filesystem::rename(part, path, e);
    if (e)
      throw CheckpointError("checkpoint: cannot rename " + part.string() + " to " + path.string() +
                            ": " + e.message());
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(part, ignored);
    throw;
  }
}

/// Opens `path` for read(std::istream&). Throws CheckpointError if it cannot be read.
template <class Read>
auto read_file(const std::filesystem::path& path, Read&& read) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError("checkpoint: cannot read " + path.string());
  return read(in);
}

}  // namespace dynasoar::move
