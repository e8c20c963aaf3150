// Settings and result of heap compaction (move/defrag.h), apart so
// that HandleOptions can name them without the compaction's kernels.
#pragma once

#include <cstdint>
#include <cstdlib>

namespace dynasoar {

/// How parallel_defrag chooses the blocks it empties (CompactGpu,
/// Springer & Masuhara, ISMM 2019, Sec. 3.1).
struct DefragOptions {
  /// F: a block at most F/(F+1) full is a candidate, and each emptied
  /// block's objects go into at most F others (3: at most 75 % full).
  unsigned factor = 3;
  /// Candidates that stay as they are: a compaction starts only when there
  /// are more, and never brings them below this many (a few partly full
  /// blocks are where new objects go next, at no search). 16 unless the
  /// environment variable DYNASOAR_DEFRAG_RETAINED gives another number
  /// (tests of small problems set 0).
  unsigned retained = environment_number("DYNASOAR_DEFRAG_RETAINED", 16);

  /// The environment variable `name` as a number below 2^30, else `otherwise`.
  static unsigned environment_number(const char* name, unsigned otherwise) {
    const char* v = std::getenv(name);
    if (v == nullptr) return otherwise;
    char* end = nullptr;
    const unsigned long n = std::strtoul(v, &end, 10);
    return end != v && *end == '\0' && n < (1ul << 30) ? static_cast<unsigned>(n) : otherwise;
  }
};

/// When the heap compacts by itself (HandleOptions::defrag): off unless
/// `enabled`. Every `every`-th call of compact_if_fragmented() (the
/// program's step boundary) looks at each concrete class, and compacts one
/// when at least `min_share` of its blocks are candidates (at most F/(F+1)
/// full) and there are enough of them to empty a block. Classes made by
/// parallel_new_indexed are left alone (their tables hold pointers).
/// Default-constructed, it is on if the environment variable
/// DYNASOAR_DEFRAG is set to a positive number, which is then `every`
/// (the examples' --defrag sets it).
struct DefragPolicy {
  bool enabled = environment_every() > 0;  ///< off by default: objects move only when asked to
  /// Calls between looks. Each look costs a few small kernels and a wait per
  /// class, which a program whose classes do not fragment pays for nothing
  /// (docs/results.md, "Compaction", measures both sides).
  unsigned every = enabled ? environment_every() : 100;
  double min_share = 0.25;  ///< share of a class's blocks that are candidates
  DefragOptions options{};  ///< the compactions' settings

  /// DYNASOAR_DEFRAG as a number, else 0.
  static unsigned environment_every() {
    return DefragOptions::environment_number("DYNASOAR_DEFRAG", 0);
  }
};

/// What one compaction did.
struct DefragResult {
  std::uint64_t candidates = 0;     ///< blocks at most F/(F+1) full before
  std::uint64_t blocks_freed = 0;   ///< blocks emptied and returned to the free blocks
  std::uint64_t objects_moved = 0;  ///< objects that now live in another block

  /// Adds another class's result.
  DefragResult& operator+=(const DefragResult& o) {
    candidates += o.candidates;
    blocks_freed += o.blocks_freed;
    objects_moved += o.objects_moved;
    return *this;
  }
};

}  // namespace dynasoar
