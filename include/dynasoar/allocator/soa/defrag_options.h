// Settings and result of heap compaction (allocator/soa/defrag.h), apart so
// that HandleOptions can name them without the compaction's kernels.
#pragma once

#include <cstdint>

namespace dynasoar::soa {

/// How parallel_defrag chooses the blocks it empties (CompactGpu,
/// Springer & Masuhara, ISMM 2019, Sec. 3.1).
struct DefragOptions {
  /// F: a block at most F/(F+1) full is a candidate, and each emptied
  /// block's objects go into at most F others (3: at most 75 % full).
  unsigned factor = 3;
  /// Candidates that stay as they are: a compaction starts only when there
  /// are more, and never brings them below this many (a few partly full
  /// blocks are where new objects go next, at no search).
  unsigned retained = 16;
};

/// When the heap compacts by itself (HandleOptions::defrag): off unless
/// `enabled`. Every `every`-th blocking parallel_do is followed by a look
/// at each concrete class, and a class is compacted when at least
/// `min_share` of its blocks are candidates (at most F/(F+1) full) and
/// there are enough of them to empty one block. Classes made by
/// parallel_new_indexed are left alone (their tables hold pointers).
struct DefragPolicy {
  bool enabled = false;      ///< off by default: objects move only when asked to
  unsigned every = 50;       ///< blocking parallel_do calls between looks
  double min_share = 0.25;   ///< share of a class's blocks that are candidates
  DefragOptions options{};   ///< the compactions' settings
};

/// What one compaction did.
struct DefragResult {
  std::uint64_t candidates = 0;    ///< blocks at most F/(F+1) full before
  std::uint64_t blocks_freed = 0;  ///< blocks emptied and returned to the free blocks
  std::uint64_t objects_moved = 0; ///< objects that now live in another block

  /// Adds another class's result.
  DefragResult& operator+=(const DefragResult& o) {
    candidates += o.candidates;
    blocks_freed += o.blocks_freed;
    objects_moved += o.objects_moved;
    return *this;
  }
};

}  // namespace dynasoar::soa
