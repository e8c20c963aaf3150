// The memory of a pool that is a buffer of its own (every raw allocator's
// but CUDA's device heap): what an allocator's Pool takes for itself.
#pragma once

#include <cstdint>
#include <vector>

#include "dynasoar/allocator/raw/alignment.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar::raw {

/// A pool's memory: a buffer of the back end's memory in 16-byte granules,
/// owned (RAII). Moves; the moved-from memory is empty. Host only.
class PoolMemory {
 public:
  /// No memory.
  PoolMemory() = default;
  /// `bytes` rounded down to kAlignment, left uninitialised.
  explicit PoolMemory(std::uint64_t bytes) : words_(bytes / kAlignment * 2) {}

  /// Address of the first byte (16-byte aligned), 0 for no memory.
  std::uint64_t address() const { return reinterpret_cast<std::uint64_t>(words_.data()); }
  /// Bytes of the memory, a multiple of kAlignment.
  std::uint64_t bytes() const { return words_.size() * sizeof(std::uint64_t); }
  /// A copy of the memory on the host, after everything queued on `s`; waits for `s`.
  std::vector<std::uint64_t> to_vector(platform::Stream s) const { return words_.to_vector(s); }

 private:
  platform::Buffer<std::uint64_t> words_;  // two words per granule
};

}  // namespace dynasoar::raw
