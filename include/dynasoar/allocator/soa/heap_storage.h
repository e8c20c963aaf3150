// The memory the host owns for one object heap (paper Sec. 3): the blocks,
// their headers, the free-block bitmap and each class's allocated- and
// active-block bitmaps, the device state the allocator reads, the error
// flags, and per class the block list and snapshot a do-all runs over.
// SoaAllocatorHandle owns one; soa/launch.h queues the heap's kernels on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dynasoar/allocator/soa/heap.h"
#include "dynasoar/bitmap/bitmap_handle.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar::soa {

/// The heap of the classes of Registry (a soa::Layout): owns its memory
/// (RAII; moves, does not copy). Moving leaves the memory where it is, so
/// device pointers taken before stay valid.
template <class Registry>
class HeapStorage {
 public:
  /// Registered classes, abstract ones included.
  static constexpr std::size_t kNumTypes = Registry::kNumTypes;
  /// Bytes of every block (the headers are kept apart).
  static constexpr std::uint64_t kBlockBytes = Registry::kBlockBytes;
  /// Classes that have blocks (abstract ones have none).
  static constexpr std::uint64_t kConcreteClasses = [] {
    std::uint64_t n = 0;
    for (unsigned c : Registry::kCapacityById) n += c != 0;
    return n;
  }();

  HeapStorage() = default;

  /// `heap_bytes` of blocks (rounded down to whole blocks), every bitmap
  /// and header, set up on stream s (not waited for). Throws
  /// std::invalid_argument if that is fewer blocks than concrete classes
  /// or more than a bitmap can index, std::runtime_error if the memory
  /// lies outside what object pointers address (Sec. 3.3).
  HeapStorage(std::uint64_t heap_bytes, const HeapOptions& options, platform::Stream s) {
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
    if (base() % kBlockAlignment != 0 || base() + blocks * kBlockBytes > kAddressLimit)
      throw std::runtime_error(
          "AllocatorHandle: the heap memory lies outside the 2^50-byte range "
          "object pointers can address");
    free_blocks_ = std::make_unique<BitmapHandle>(blocks, BitmapHandle::Init::kAllSet, s);
    // Zeroed headers: a block never used has no objects and no class
    // (initialize_block sets both before its first use).
    headers_ = platform::Buffer<BlockHeader>(blocks);
    headers_.zero(s);
    error_.reset(s);
    initializing_ = platform::Buffer<unsigned>(1);
    initializing_.zero(s);
    HeapState host{};
    host.blocks = base();
    host.headers = headers_.data();
    host.block_bytes = kBlockBytes;
    host.options = options;
    host.error = error_.data();
    host.error_seen = error_.seen();
    host.initializing = initializing_.data();
    host.free_blocks = free_blocks_->device();
    for (std::size_t t = 0; t < kNumTypes; ++t) {
      host.capacity[t] = Registry::kCapacityById[t];
      if (host.capacity[t] == 0) continue;  // abstract: no blocks
      allocated_[t] = std::make_unique<BitmapHandle>(blocks, BitmapHandle::Init::kAllClear, s);
      active_[t] = std::make_unique<BitmapHandle>(blocks, BitmapHandle::Init::kAllClear, s);
      block_counts_[t] = AlternatingCount(s);
      host.allocated[t] = allocated_[t]->device();
      host.active[t] = active_[t]->device();
    }
    state_ = platform::Buffer<HeapState>(1);
    state_.copy_from_host(&host, 1, 0, s);
    total_ = platform::Buffer<unsigned long long>(1);
  }

  /// The device state the allocator reads (device memory).
  HeapState* state() const { return state_.data(); }
  /// Address of block 0.
  std::uint64_t base() const { return reinterpret_cast<std::uint64_t>(heap_.data()); }
  /// Number of blocks.
  bit_index num_blocks() const { return num_blocks_; }
  /// The free-block bitmap.
  const BitmapHandle& free_blocks() const { return *free_blocks_; }
  /// The allocated-block bitmap of a concrete class.
  const BitmapHandle& allocated(unsigned type) const { return *allocated_[type]; }
  /// The heap's error flags (HeapError).
  platform::ErrorFlags& error() { return error_; }
  /// The heap's error flags (HeapError).
  const platform::ErrorFlags& error() const { return error_; }
  /// One counter in device memory, for kernels that count (objects, claims).
  unsigned long long* total() const { return total_.data(); }
  /// Sets `total()` to zero on s.
  void zero_total(platform::Stream s) { total_.zero(s); }
  /// Reads `total()` (waits for s).
  unsigned long long read_total(platform::Stream s) const {
    unsigned long long n = 0;
    total_.copy_to_host(&n, 1, 0, s);
    return n;
  }

  /// The block headers, copied to the host (checkpoints). Waits for s.
  std::vector<BlockHeader> copy_headers(platform::Stream s) const { return headers_.to_vector(s); }
  /// Copies blocks [first, first + count) to `to`, host memory of count *
  /// kBlockBytes bytes (checkpoints). Waits for s.
  void copy_blocks_to_host(void* to, bit_index first, bit_index count, platform::Stream s) const {
    heap_.copy_to_host(static_cast<std::uint64_t*>(to), std::size_t{count} * kWordsPerBlock,
                       std::size_t{first} * kWordsPerBlock, s);
  }
  /// Copies count * kBlockBytes bytes of host memory at `from` into blocks
  /// [first, first + count) (checkpoints). Waits for s.
  void copy_blocks_from_host(const void* from, bit_index first, bit_index count, platform::Stream s) {
    heap_.copy_from_host(static_cast<const std::uint64_t*>(from), std::size_t{count} * kWordsPerBlock,
                         std::size_t{first} * kWordsPerBlock, s);
  }

  /// The block list of `type` (device memory, room for every block), made
  /// on first use: a class that is never listed costs nothing.
  bit_index* block_list(unsigned type) {
    if (block_lists_[type].size() == 0) block_lists_[type] = platform::Buffer<bit_index>(num_blocks_);
    return block_lists_[type].data();
  }
  /// The snapshot of each entry of the block list of `type` (Sec. 3.1;
  /// device memory, 8 bytes a block), made by the class's first do-all.
  word* snapshot_list(unsigned type) {
    if (snapshot_lists_[type].size() == 0) snapshot_lists_[type] = platform::Buffer<word>(num_blocks_);
    return snapshot_lists_[type].data();
  }
  /// The length of the block list of `type`, as its last listing wrote it.
  AlternatingCount& block_count(unsigned type) { return block_counts_[type]; }

  /// Writes the allocated blocks of `type` to its block list and count.
  void list_blocks(unsigned type, platform::Stream s) {
    allocated_[type]->enumerate(block_list(type), block_counts_[type], s);
  }

  /// Every bitmap consistent (App. A.5), and the block states agree with
  /// them: a block is free or belongs to exactly one class, is not empty,
  /// has that class in its header, no live slot marked destroyed, and is
  /// active exactly when it has a free slot. Empty if all holds, else the
  /// first violation. Waits for s.
  std::string check_consistency(platform::Stream s) const {
    std::string e = free_blocks_->check_consistency(s);
    if (!e.empty()) return "free-block bitmap: " + e;
    std::vector<std::vector<bit_index>> alloc(kNumTypes), act(kNumTypes);
    for (std::size_t t = 0; t < kNumTypes; ++t) {
      if (!allocated_[t]) continue;
      for (auto* b : {allocated_[t].get(), active_[t].get()}) {
        e = b->check_consistency(s);
        if (!e.empty()) return "type " + std::to_string(t) + " block bitmap: " + e;
      }
      alloc[t] = allocated_[t]->indices(s);
      act[t] = active_[t]->indices(s);
    }
    std::vector<int> owner(num_blocks_, -1);
    for (bit_index b : free_blocks_->indices(s)) owner[b] = -2;
    for (std::size_t t = 0; t < kNumTypes; ++t)
      for (bit_index b : alloc[t]) {
        if (owner[b] != -1)
          return "block " + std::to_string(b) + " is allocated to type " + std::to_string(t) +
                 " and also " +
                 (owner[b] == -2 ? std::string("free") : "allocated to type " + std::to_string(owner[b]));
        owner[b] = static_cast<int>(t);
      }
    for (bit_index b = 0; b < num_blocks_; ++b)
      if (owner[b] == -1) return "block " + std::to_string(b) + " is neither free nor allocated";
    const std::vector<BlockHeader> headers = headers_.to_vector(s);
    for (std::size_t t = 0; t < kNumTypes; ++t) {
      if (!allocated_[t]) continue;
      const word padding = padding_bits(Registry::kCapacityById[t]);
      std::vector<char> is_active(num_blocks_, 0);
      for (bit_index b : act[t]) {
        if (owner[b] != static_cast<int>(t))
          return "block " + std::to_string(b) + " is active for type " + std::to_string(t) +
                 " but not allocated to it";
        is_active[b] = 1;
      }
      for (bit_index b : alloc[t]) {
        const BlockHeader& h = headers[b];
        if (h.type != t)
          return "block " + std::to_string(b) + " of type " + std::to_string(t) + " has type " +
                 std::to_string(h.type) + " in its header";
        if (h.allocation == padding) return "block " + std::to_string(b) + " is allocated but empty";
        if ((h.allocation & h.destroyed & ~padding) != 0)
          return "block " + std::to_string(b) + " has a live object marked destroyed";
        if ((h.allocation != kAllSlots) != (is_active[b] != 0))
          return "block " + std::to_string(b) +
                 (is_active[b] ? " is active but full" : " has free slots but is not active");
      }
    }
    return {};
  }

 private:
  static constexpr std::size_t kWordsPerBlock = kBlockBytes / sizeof(std::uint64_t);

  bit_index num_blocks_ = 0;
  platform::Buffer<std::uint64_t> heap_;
  platform::Buffer<BlockHeader> headers_;  // HeapState::headers
  platform::Buffer<HeapState> state_;
  platform::ErrorFlags error_;              // HeapError flags
  platform::Buffer<unsigned> initializing_;  // HeapState::initializing
  std::unique_ptr<BitmapHandle> free_blocks_;
  std::unique_ptr<BitmapHandle> allocated_[kNumTypes];
  std::unique_ptr<BitmapHandle> active_[kNumTypes];
  platform::Buffer<bit_index> block_lists_[kNumTypes];  // per class, made on first use
  platform::Buffer<word> snapshot_lists_[kNumTypes];    // per class, made by its first do-all
  AlternatingCount block_counts_[kNumTypes];            // per class: the block list's length
  platform::Buffer<unsigned long long> total_;
};

}  // namespace dynasoar::soa
