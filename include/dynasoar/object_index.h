// Objects by the index they were made with: parallel_new_indexed<T>(n,
// args...) makes T(i, args...) for i < n, like parallel_new, and returns an
// ObjectTable whose index() finds object i in device code:
//
//   dynasoar::ObjectTable<AllocatorT, Cell> cells = heap.parallel_new_indexed<Cell>(n);
//   World w{..., cells.index()};      // trivially copyable: pass it to kernels
//   ... Cell* c = w.cells[i];          // in a method or kernel
//
// Grid models (wa-tor, game of life, sugarscape) look their cells up by
// position; a table of n pointers made by the constructors (Cell** filled
// with `table[i] = this`) costs 8 bytes a cell and a load from it before
// every cell access, a cache miss where the neighbours are far apart in the
// table. On the block heap parallel_new already puts object i in slot
// i % capacity of one block per group of `capacity` objects; the index keeps
// those blocks' numbers, 4 bytes per group (wa-tor's 2048x2560 cells: 427
// KiB instead of 40 MiB), so the lookup is one small table load and some
// arithmetic. Where the heap has a run of free blocks (a grid made first),
// the groups get consecutive blocks, and the lookup is arithmetic alone;
// neighbours in the grid are then neighbours in memory too, as in a
// hand-written array. On the byte allocators, whose objects lie wherever their
// allocator put them, the index is the table of pointers.
//
// The index stays valid while the objects live; an object destroyed leaves
// its entry pointing at a slot that is no longer that object. The table owns
// the index's memory: keep it while kernels use the index. A table that was
// moved from is empty (size 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "dynasoar/allocator/soa/layout.h"
#include "dynasoar/allocator/soa/object_pointer.h"
#include "dynasoar/bitmap/bitmap.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar {

template <soa::Layout L, class... Ts>
class HeapAllocator;

namespace detail {
/// True for the block heap's allocators (objects at computable places).
template <class Alloc>
struct IsBlockHeap : std::false_type {};
template <soa::Layout L, class... Ts>
struct IsBlockHeap<HeapAllocator<L, Ts...>> : std::true_type {};
}  // namespace detail

/// Object i of a parallel_new_indexed, found from device (or host-build)
/// code: index[i]. Trivially copyable; made by ObjectTable.
template <class Alloc, class T>
class ObjectIndex {
 public:
  /// True where objects are found by their group's block (the block heap).
  static constexpr bool kByBlock = detail::IsBlockHeap<Alloc>::value;
  /// What the table holds per entry: a block number per group of
  /// `capacity` objects (block heap), else a pointer per object.
  using Entry = std::conditional_t<kByBlock, bit_index, T*>;

  ObjectIndex() = default;
  /// The index over `entries` for n objects (heap_base and block_bytes:
  /// the block heap's block 0 and block size; unused otherwise). `first`:
  /// where the groups' blocks are consecutive, the first of them (entry g
  /// is first + g, and no entry is read); kNoBit otherwise.
  ObjectIndex(const Entry* entries, std::size_t n, std::uint64_t heap_base, std::uint64_t block_bytes,
              bit_index first = kNoBit)
      : entries_(entries), size_(n), heap_base_(heap_base), block_bytes_(block_bytes), first_(first) {}

  /// Object i (i < size()). Host and device.
  DYNASOAR_HD DYNASOAR_FORCEINLINE T* operator[](std::size_t i) const {
    if constexpr (kByBlock) {
      constexpr unsigned type = Alloc::template type_id<T>();
      constexpr unsigned cap = Alloc::Registry::kCapacityById[type];
      // The same branch in every thread of a kernel (first_ is a parameter).
      const bit_index block = first_ != kNoBit ? static_cast<bit_index>(first_ + i / cap) : entries_[i / cap];
      return reinterpret_cast<T*>(soa::make_pointer(soa::block_at(heap_base_, block_bytes_, block),
                                                    static_cast<unsigned>(i % cap), cap, type));
    } else {
      return entries_[i];
    }
  }
  /// Number of objects.
  DYNASOAR_HD std::size_t size() const { return size_; }
  /// True where object i is found by arithmetic alone (the block heap gave
  /// the groups consecutive blocks), without a table load.
  DYNASOAR_HD bool consecutive() const { return first_ != kNoBit; }

 private:
  const Entry* entries_ = nullptr;
  std::size_t size_ = 0;
  std::uint64_t heap_base_ = 0;
  std::uint64_t block_bytes_ = 0;
  bit_index first_ = kNoBit;
};

/// The memory of an ObjectIndex (device memory in a CUDA build), returned by
/// parallel_new_indexed. Move-only; index() is valid while the table is.
template <class Alloc, class T>
class ObjectTable {
 public:
  /// The view kernels take.
  using Index = ObjectIndex<Alloc, T>;
  /// A block number per group (block heap) or a pointer per object.
  using Entry = typename Index::Entry;

  ObjectTable() = default;
  /// Takes `entries`, filled (or queued to be filled) for n objects;
  /// `first` as for ObjectIndex.
  ObjectTable(platform::Buffer<Entry> entries, std::size_t n, std::uint64_t heap_base, std::uint64_t block_bytes,
              bit_index first = kNoBit)
      : entries_(std::move(entries)), index_(entries_.data(), n, heap_base, block_bytes, first) {}
  /// Takes over the memory of `o`, which is left empty (the index moves
  /// with the memory it points into).
  ObjectTable(ObjectTable&& o) noexcept : entries_(std::move(o.entries_)), index_(std::exchange(o.index_, Index{})) {}
  /// Frees the memory held now, then takes over that of `o`, which is left empty.
  ObjectTable& operator=(ObjectTable&& o) noexcept {
    entries_ = std::move(o.entries_);
    index_ = std::exchange(o.index_, Index{});
    return *this;
  }

  /// The view to pass to kernels and methods.
  const Index& index() const { return index_; }
  /// Number of objects.
  std::size_t size() const { return index_.size(); }

 private:
  platform::Buffer<Entry> entries_;
  Index index_;
};

}  // namespace dynasoar
