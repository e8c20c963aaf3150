// BitmapHandle: the owning host object of a lock-free hierarchical
// bitmap (Springer & Masuhara 2019, Sec. 4.1). It owns the containers in the back
// end's memory (RAII) and runs the bulk operations; kernels work on the
// trivially copyable handle from device() (bitmap.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "dynasoar/bitmap/bitmap.h"
#include "dynasoar/bitmap/detail/bitmap_kernels.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar {

/// A count for BitmapHandle::enumerate that needs no memset before each
/// call: two device counters used in turn. An enumeration counts into the
/// one that is zero and, in its last kernel, zeroes the other (the previous
/// count, which every kernel queued before it has read by then), so the
/// invariant "the unused counter is 0" holds between calls. For callers
/// that enumerate again and again, as every parallel_do does: the memset it
/// saves is a dependent operation of its own on the stream, a few
/// microseconds. Movable; one enumeration at a time, queued in stream order
/// after every reader of the previous count.
class AlternatingCount {
 public:
  /// No counters yet (a placeholder to assign to).
  AlternatingCount() = default;
  /// Two zeroed counters (asynchronous on `s`).
  explicit AlternatingCount(platform::Stream s) : slots_(2) { slots_.zero(s); }
  /// The number of entries the last enumeration wrote (device memory; 0
  /// before the first). Changes with every enumeration: take it after.
  bit_index* get() const { return slots_.data() + current_; }
  /// The value *get() holds, copied to the host. Waits for `s`.
  bit_index read(platform::Stream s = {}) const {
    bit_index n = 0;
    slots_.copy_to_host(&n, 1, current_, s);
    return n;
  }

 private:
  friend class BitmapHandle;
  platform::Buffer<bit_index> slots_;
  unsigned current_ = 0;
};

/// The owning host object of a hierarchical bitmap (Sec. 4.1): it holds the
/// containers and scratch space and runs the bulk operations; kernels use device().
class BitmapHandle {
 public:
  /// One container of 64 bits.
  using word = Bitmap::word;
  /// The stream that orders the asynchronous operations.
  using Stream = platform::Stream;

  /// Initial state of every bit.
  enum class Init { kAllClear, kAllSet };

  /// A bitmap of `capacity` bits (1 to kMaxBitmapCapacity), all clear or all
  /// set. Host only. Throws std::invalid_argument for a capacity out of range
  /// and dynasoar::CudaError when device memory runs out.
  explicit BitmapHandle(std::uint64_t capacity, Init init = Init::kAllClear, Stream s = {})
      : resident_threads_(platform::concurrent_threads()) {
    if (capacity == 0 || capacity > kMaxBitmapCapacity)
      throw std::invalid_argument("BitmapHandle: capacity " + std::to_string(capacity) +
                                  " is out of range; it must be between 1 and " +
                                  std::to_string(kMaxBitmapCapacity) + " bits");
    const auto cap = static_cast<bit_index>(capacity);
    words_ = platform::Buffer<word>(Bitmap::layout(cap, nullptr, nullptr));
    Bitmap::layout(cap, words_.data(), &ref_);
    // Enumeration ping-pongs the selected containers of the upper levels
    // between two halves; level 1 is the largest of them.
    const std::size_t upper = ref_.levels() > 1 ? ref_.level_bits(1) : 0;
    scratch_ = platform::Buffer<bit_index>(2 * upper);
    counters_ = platform::Buffer<bit_index>(kMaxBitmapLevels);
    total_ = platform::Buffer<unsigned long long>(1);
    fill(init, s);
    platform::synchronize(s);
  }

  /// The device handle. Host and device code may call its operations
  /// concurrently with each other, but not with fill() or enumerate().
  Bitmap device() const { return ref_; }

  /// Number of bits (valid positions are [0, capacity())).
  bit_index capacity() const { return ref_.capacity(); }
  /// Number of levels, 1 for capacities up to 64.
  int levels() const { return ref_.levels(); }

  /// Bytes of back-end memory this object owns (containers and scratch).
  std::size_t memory_bytes() const {
    return words_.size() * sizeof(word) + (scratch_.size() + counters_.size()) * sizeof(bit_index) +
           total_.size() * sizeof(unsigned long long);
  }

  /// Sets every bit to 0 or 1 (asynchronous on `s`).
  void fill(Init init, Stream s = {}) {
    platform::parallel_for(words_.size(), detail::FillBitmap{ref_, init == Init::kAllSet}, s);
  }

  /// Number of set bits. Waits for `s`.
  std::uint64_t count(Stream s = {}) const {
    total_.zero(s);
    const std::size_t n = ref_.level_words(0);
    platform::parallel_workers_up_to(std::min(n, resident_threads_),
                               detail::CountBits{ref_.level_data(0), n, total_.data()}, s);
    unsigned long long result = 0;
    total_.copy_to_host(&result, 1, 0, s);
    return result;
  }

  /// Writes the positions of all set bits to `out` (back-end memory with room
  /// for capacity() entries) in no particular order, and their number to
  /// *out_count (back-end memory). Asynchronous on `s`, with no host
  /// synchronisation between its steps, so a kernel queued after it on `s`
  /// can read *out_count directly. Call it while no other thread modifies
  /// the bitmap; not reentrant (one call at a time per bitmap, it uses
  /// internal scratch memory).
  ///
  /// Uses the hierarchy to skip empty containers (Alg. 5), but not all of
  /// it: it scans the lowest level that has at most flat_scan_limit()
  /// containers in full, then descends one level per step, visiting only the
  /// containers whose bit above is set. Each step is a kernel launch of a few
  /// microseconds, while reading 2^20 containers costs about as much, so the
  /// small upper levels are not worth a step of their own: with the default
  /// limit a bitmap of up to 2^26 bits is one launch and any larger one two.
  /// One memset precedes them (none with an AlternatingCount, below, where
  /// the bitmap takes one step); each step zeroes the next step's counter.
  void enumerate(bit_index* out, bit_index* out_count, Stream s = {}) const {
    enumerate_steps(out, out_count, nullptr, s);
  }

  /// enumerate(out, count.get(), s) without the memset where the
  /// bitmap takes one step (up to flat_scan_limit() containers): the count
  /// goes to the counter of `count` that is zero, and the last step zeroes
  /// the other one (AlternatingCount). Read the result through count.get()
  /// after this call.
  void enumerate(bit_index* out, AlternatingCount& count, Stream s = {}) const {
    const Counters c = advance(count);
    enumerate_steps(out, c.next, c.previous, s);
  }

  /// Whether enumerate() takes a single step here: the lowest level has at
  /// most flat_scan_limit() containers (or it is the only one).
  bool enumerates_in_one_step() const { return first_step_level() == 0; }

  /// What enumerate(out, count) reads and writes where it takes one step
  /// (one_step()).
  struct OneStep {
    const word* words;          ///< the lowest level's containers
    std::size_t containers;     ///< how many
    bit_index* count;           ///< the (zero) counter of this enumeration
    bit_index* zero_after;      ///< AlternatingCount's other counter, to be zeroed
  };
  /// For a caller that runs its own form of enumerate's single step (the
  /// heap's block list with its snapshot, soa_allocator_handle.h): the
  /// lowest level's containers, the counter the set bits are to be counted
  /// into (zero) and the counter to zero afterwards. Advances `count` as
  /// enumerate does; queue the step before the next enumeration. Only where
  /// enumerates_in_one_step() (throws std::logic_error otherwise).
  OneStep one_step(AlternatingCount& count) const {
    if (!enumerates_in_one_step())
      throw std::logic_error("BitmapHandle::one_step: this bitmap takes several enumeration steps");
    const Counters c = advance(count);
    return {ref_.level_data(0), ref_.level_words(0), c.next, c.previous};
  }

  /// Default of flat_scan_limit(): 2^20 containers (8 MiB).
  static constexpr std::size_t kDefaultFlatScanLimit = std::size_t{1} << 20;

  /// Containers enumerate() reads in full at its first level (see there).
  std::size_t flat_scan_limit() const { return flat_scan_limit_; }
  /// Tuning knob; 1 makes enumerate() descend from the top level through
  /// every level, as in the paper (tests use it to cover every step).
  void set_flat_scan_limit(std::size_t containers) {
    if (containers == 0) throw std::invalid_argument("BitmapHandle: flat scan limit must be positive");
    flat_scan_limit_ = containers;
  }

  /// Positions of all set bits in ascending order. Waits for `s`.
  std::vector<bit_index> indices(Stream s = {}) const {
    platform::Buffer<bit_index> out(capacity());
    platform::Buffer<bit_index> n(1);
    enumerate(out.data(), n.data(), s);
    bit_index count = 0;
    n.copy_to_host(&count, 1, 0, s);
    std::vector<bit_index> result(count);
    out.copy_to_host(result.data(), count, 0, s);
    std::sort(result.begin(), result.end());
    return result;
  }

  /// The containers of level `l`, copied to the host. Waits for `s`.
  std::vector<word> copy_level(int l, Stream s = {}) const {
    if (l < 0 || l >= levels())
      throw std::out_of_range("BitmapHandle::copy_level: level " + std::to_string(l) +
                              " does not exist (levels: " + std::to_string(levels()) + ")");
    std::vector<word> v(ref_.level_words(l));
    const std::size_t offset = static_cast<std::size_t>(ref_.level_data(l) - ref_.level_data(0));
    words_.copy_to_host(v.data(), v.size(), offset, s);
    return v;
  }

  /// First position of `length` consecutive set bits (a run) in `level0`,
  /// the lowest level of a bitmap of `capacity` bits as copy_level(0)
  /// returns it, or kNoBit if there is none (or `length` is 0). Host code,
  /// for rare callers: parallel_new_indexed asks for a run of free blocks in
  /// the copy it also counts them in.
  static bit_index find_run(const std::vector<word>& level0, std::uint64_t capacity, std::uint64_t length) {
    if (length == 0 || length > capacity) return kNoBit;
    std::uint64_t start = 0, have = 0;  // the run that ends at the current bit
    for (std::uint64_t c = 0; c < level0.size(); ++c) {
      // Whole containers at a time where they are all set.
      if (level0[c] == ~word{0} && (c + 1) * Bitmap::kWordBits <= capacity) {
        if (have == 0) start = c * Bitmap::kWordBits;
        have += Bitmap::kWordBits;
        if (have >= length) return static_cast<bit_index>(start);
        continue;
      }
      for (unsigned b = 0; b < Bitmap::kWordBits && c * Bitmap::kWordBits + b < capacity; ++b) {
        if (((level0[c] >> b) & 1u) == 0) {
          have = 0;
          continue;
        }
        if (have++ == 0) start = c * Bitmap::kWordBits + b;
        if (have >= length) return static_cast<bit_index>(start);
      }
    }
    return kNoBit;
  }

  /// Checks container consistency of every level (App. A.5, Def. A.1) and
  /// that no bit beyond a level's size is set. Returns an empty string if
  /// consistent, else a description of the first violation. Meaningful only
  /// while no operation is in flight. Waits for `s`.
  std::string check_consistency(Stream s = {}) const {
    std::vector<word> below = copy_level(0, s);
    for (int l = 0; l < levels(); ++l) {
      std::vector<word> here = l == 0 ? below : copy_level(l, s);
      const std::uint64_t bits = ref_.level_bits(l);
      if (bits % Bitmap::kWordBits != 0 &&
          (here.back() & ~platform::low_bits(static_cast<unsigned>(bits % Bitmap::kWordBits))) != 0)
        return "level " + std::to_string(l) + " has bits set beyond its size " +
               std::to_string(bits);
      if (l > 0) {
        for (std::uint64_t j = 0; j < bits; ++j) {
          const bool bit = (here[j / Bitmap::kWordBits] >> (j % Bitmap::kWordBits)) & 1u;
          const bool nonempty = below[j] != 0;
          if (bit != nonempty)
            return "level " + std::to_string(l) + " bit " + std::to_string(j) + " is " +
                   (bit ? "set" : "clear") + " but container " + std::to_string(j) +
                   " of level " + std::to_string(l - 1) + " is " +
                   (nonempty ? "not empty" : "empty");
        }
      }
      below = std::move(here);
    }
    return {};
  }

 private:
  // The level enumerate() reads in full: the lowest with at most
  // flat_scan_limit() containers, or the top one.
  int first_step_level() const {
    int first = 0;
    while (ref_.level_words(first) > flat_scan_limit_ && first + 1 < ref_.levels()) ++first;
    return first;
  }

  // An AlternatingCount's counter for the next enumeration (zero) and the
  // one that enumeration zeroes (the previous count); flips `count`.
  struct Counters {
    bit_index* next;
    bit_index* previous;
  };
  static Counters advance(AlternatingCount& count) {
    bit_index* const previous = count.slots_.data() + count.current_;
    bit_index* const next = count.slots_.data() + (count.current_ ^ 1u);
    count.current_ ^= 1u;
    return {next, previous};
  }

  // The steps of enumerate. `zero_last`: AlternatingCount's other counter,
  // which worker 0 of the last step zeroes; given, *out_count is known to
  // be 0 already, so a bitmap of one step needs no memset.
  void enumerate_steps(bit_index* out, bit_index* out_count, bit_index* zero_last, Stream s) const {
    const int first = first_step_level();
    bit_index* const first_count = first == 0 ? out_count : counters_.data() + first;
    if (first != 0 || zero_last == nullptr) {
#if DYNASOAR_CUDA
      DYNASOAR_CUDA_CHECK(cudaMemsetAsync(first_count, 0, sizeof(bit_index), s.handle));
#else
      *first_count = 0;
#endif
    }
    const bit_index* selected = nullptr;
    const bit_index* selected_count = nullptr;
    for (int l = first; l >= 0; --l) {
      const bool last = l == 0;
      bit_index* dst = last ? out : scratch_.data() + ((first - l) % 2) * (scratch_.size() / 2);
      bit_index* dst_count = last ? out_count : counters_.data() + l;
      bit_index* next_count = l == 0 ? zero_last : l == 1 ? out_count : counters_.data() + (l - 1);
      const detail::EnumerateLevel step{ref_.level_data(l),
                                        selected,
                                        selected_count,
                                        selected == nullptr ? ref_.level_words(l) : 0,
                                        dst,
                                        dst_count,
                                        next_count};
      platform::parallel_workers_up_to(workers_for(ref_.level_words(l)), step, s);
      selected = dst;
      selected_count = dst_count;
    }
  }

  // One lane per container, no more workers than can run at once.
  std::size_t workers_for(std::size_t containers) const {
    const std::size_t lanes = platform::kCudaBuild ? 32 : 1;
    return std::max<std::size_t>(
        lanes, std::min((containers + lanes - 1) / lanes * lanes, resident_threads_));
  }

  std::size_t resident_threads_;
  Bitmap ref_;
  platform::Buffer<word> words_;
  mutable platform::Buffer<bit_index> scratch_;
  mutable platform::Buffer<bit_index> counters_;
  mutable platform::Buffer<unsigned long long> total_;
  std::size_t flat_scan_limit_ = kDefaultFlatScanLimit;
};

}  // namespace dynasoar
