// Owning memory of the back end (device memory in a CUDA build, host memory
// in a host build) and the stream that orders work on it.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/error.h"

namespace dynasoar::platform {

/// Orders asynchronous work: a CUDA stream in a CUDA build (default: the
/// legacy default stream), an empty tag in a host build, where every
/// operation completes before it returns.
struct Stream {
#if DYNASOAR_CUDA
  cudaStream_t handle = nullptr;  ///< The CUDA stream; null is the legacy default stream.
#endif
};

/// Waits until all work queued on `s` has finished (and reports its errors).
inline void synchronize(Stream s = {}) {
#if DYNASOAR_CUDA
  DYNASOAR_CUDA_CHECK(cudaStreamSynchronize(s.handle));
#else
  (void)s;
#endif
}

/// Copies `bytes` bytes between host memory and the back end's memory
/// (to_device: host to back end), in s's order; waits for s.
inline void copy_bytes(void* dst, const void* src, std::size_t bytes, bool to_device, Stream s = {}) {
  if (bytes == 0) return;
#if DYNASOAR_CUDA
  DYNASOAR_CUDA_CHECK(cudaMemcpyAsync(
      dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s.handle));
  synchronize(s);
#else
  (void)to_device;
  (void)s;
  std::memcpy(dst, src, bytes);
#endif
}

/// A fixed-size array of trivially copyable T in the back end's memory,
/// aligned to 256 bytes. Owns its memory (RAII); move-only. Its `data()`
/// pointer is what kernels and handles receive.
template <class T>
class Buffer {
  static_assert(std::is_trivially_copyable_v<T>, "Buffer holds trivially copyable types only");

 public:
  Buffer() = default;

  /// Allocates room for `n` elements (left uninitialized); host code. Throws
  /// CudaError if cudaMalloc fails, std::bad_alloc in a host build.
  explicit Buffer(std::size_t n) : size_(n) {
    if (n == 0) return;
    const std::size_t bytes = n * sizeof(T);
#if DYNASOAR_CUDA
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, bytes);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();  // clear the sticky-free allocation error
      throw CudaError("cudaMalloc of " + std::to_string(bytes) +
                      " bytes failed: " + cudaGetErrorString(err));
    }
    data_ = static_cast<T*>(p);
#else
    data_ = static_cast<T*>(::operator new(bytes, std::align_val_t{256}));
#endif
  }

  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  /// Takes over the memory of `o`, which is left empty.
  Buffer(Buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  /// Frees the memory held now, then takes over that of `o`, which is left empty.
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~Buffer() { release(); }

  /// The first element, in the back end's memory; null when empty.
  T* data() const { return data_; }
  /// The number of elements.
  std::size_t size() const { return size_; }

  /// Sets every byte to zero, in stream order.
  void zero(Stream s = {}) {
    if (size_ == 0) return;
#if DYNASOAR_CUDA
    DYNASOAR_CUDA_CHECK(cudaMemsetAsync(data_, 0, size_ * sizeof(T), s.handle));
#else
    (void)s;
    std::memset(static_cast<void*>(data_), 0, size_ * sizeof(T));
#endif
  }

  /// Copies `n` elements from host memory to elements [offset, offset+n); waits for `s`.
  void copy_from_host(const T* src, std::size_t n, std::size_t offset = 0, Stream s = {}) {
    check_range(n, offset);
    copy_bytes(data_ + offset, src, n * sizeof(T), true, s);
  }

  /// Copies `n` elements from host memory to elements [0, n) in stream `s`'s order; waits for `s`.
  void copy_from_host(const T* src, std::size_t n, Stream s) { copy_from_host(src, n, 0, s); }

  /// Copies elements [offset, offset+n) to host memory; waits for `s`.
  void copy_to_host(T* dst, std::size_t n, std::size_t offset = 0, Stream s = {}) const {
    check_range(n, offset);
    copy_bytes(dst, data_ + offset, n * sizeof(T), false, s);
  }

  /// Copies elements [0, n) to host memory in stream `s`'s order; waits for `s`.
  void copy_to_host(T* dst, std::size_t n, Stream s) const { copy_to_host(dst, n, 0, s); }

  /// The whole array as a host vector; waits for `s`.
  std::vector<T> to_vector(Stream s = {}) const {
    std::vector<T> v(size_);
    copy_to_host(v.data(), size_, 0, s);
    return v;
  }

 private:
  void check_range(std::size_t n, std::size_t offset) const {
    if (offset > size_ || n > size_ - offset)
      throw std::out_of_range("Buffer: copy of " + std::to_string(n) + " elements at offset " +
                              std::to_string(offset) + " exceeds size " + std::to_string(size_));
  }

  void release() noexcept {
    if (data_ == nullptr) return;
#if DYNASOAR_CUDA
    (void)cudaFree(data_);  // cannot throw from a destructor; errors resurface at the next call
#else
    ::operator delete(static_cast<void*>(data_), std::align_val_t{256});
#endif
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// One value of trivially copyable T in page-locked host memory (plain host
/// memory in a host build): a destination for small device-to-host copies
/// that the driver can copy into directly. A copy of 4 bytes into pageable
/// memory is staged through a driver buffer, a visible part of a blocking
/// call that reads an error flag after every parallel_do. Movable.
template <class T>
class PinnedValue {
  static_assert(std::is_trivially_copyable_v<T>, "PinnedValue holds trivially copyable types");

 public:
  /// One value-initialised T. Throws dynasoar::CudaError if page-locked memory cannot be had.
  PinnedValue() {
#if DYNASOAR_CUDA
    void* p = nullptr;
    DYNASOAR_CUDA_CHECK(cudaMallocHost(&p, sizeof(T)));
    value_ = ::new (p) T{};
#else
    value_ = new T{};
#endif
  }
  PinnedValue(const PinnedValue&) = delete;
  PinnedValue& operator=(const PinnedValue&) = delete;
  /// Takes over the value of `o`, which is left empty (get() is null).
  PinnedValue(PinnedValue&& o) noexcept : value_(std::exchange(o.value_, nullptr)) {}
  /// Frees the value held now, then takes over that of `o`, which is left empty.
  PinnedValue& operator=(PinnedValue&& o) noexcept {
    if (this != &o) {
      release();
      value_ = std::exchange(o.value_, nullptr);
    }
    return *this;
  }
  /// Frees the value.
  ~PinnedValue() { release(); }

  /// The value's address (host memory).
  T* get() const { return value_; }

 private:
  void release() noexcept {
    if (value_ == nullptr) return;
#if DYNASOAR_CUDA
    (void)cudaFreeHost(value_);  // cannot throw from a destructor
#else
    delete value_;
#endif
    value_ = nullptr;
  }

  T* value_ = nullptr;
};

/// A word of error flags that kernels raise and the host reads: the device
/// word and its page-locked mirror. read() copies the word into the mirror
/// behind everything queued on the stream (cudaMemcpyAsync), then waits.
///
/// Kernels that raise flags through raise(data(), seen(), flag) also set
/// the mirror to a non-zero value themselves, with one plain store into
/// the mapped page-locked memory (atomics across the bus are not available
/// everywhere). Then any_raised() tells whether a flag was raised by only
/// waiting for the stream, and read() is needed only when one was: a
/// blocking parallel_do on the DynaSOAr heap saves the copy, which the copy
/// engine starts only after the kernels.
/// One class serves the heap's, the pools' and the registry's flags.
class ErrorFlags {
 public:
  /// The page-locked mirror only; reset() makes the device word (handles
  /// set it up in their constructor bodies, on their stream).
  ErrorFlags() = default;
  /// Makes the device word, zeroed in the order of `s`, and clears the mirror.
  void reset(Stream s) {
    word_ = Buffer<unsigned>(1);
    word_.zero(s);
    atomic_store(mirror_.get(), 0u);
#if DYNASOAR_CUDA
    // Page-locked memory is mapped on every 64-bit platform CUDA supports
    // (unified addressing); asked once here. Where it is not, seen() is
    // null and any_raised() is not available (has_seen()).
    if (cudaHostGetDevicePointer(reinterpret_cast<void**>(&seen_), mirror_.get(), 0) != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky; clear it so that later checks do not report it
      seen_ = nullptr;
    }
#else
    seen_ = mirror_.get();
#endif
  }

  /// The device word the kernels raise flags in.
  unsigned* data() const { return word_.data(); }
  /// The mirror as kernels address it, for raise(); null where page-locked
  /// memory is not mapped.
  unsigned* seen() const { return seen_; }
  /// The flags as they are after everything queued on `s`; waits for `s`.
  unsigned read(Stream s) const {
    word_.copy_to_host(mirror_.get(), 1, 0, s);
    return *mirror_.get();
  }
  /// Whether any_raised() can be used (seen() is not null).
  bool has_seen() const { return seen_ != nullptr; }
  /// Whether a kernel queued on `s` raised a flag through raise() since the
  /// last clear(), once everything queued on `s` is done; waits for `s`.
  /// False only if no flag is raised; read() then gives the flags. Only for
  /// flags raised with raise() (seen() given), and where has_seen().
  bool any_raised(Stream s) const {
    synchronize(s);
    return atomic_load(mirror_.get()) != 0;
  }
  /// Clears every flag, in the order of `s` (does not wait). The mirror is
  /// cleared at once: a flag raised by a kernel still running then sets it
  /// again, and one whose word is then cleared by the queued memset leaves
  /// it set with no flag in the word, which read() shows.
  void clear(Stream s) {
    word_.zero(s);
    atomic_store(mirror_.get(), 0u);
  }

  /// In a kernel (or a host loop): raises `flag` in `word`, and the first
  /// thread to raise it since the last clear also stores 1 into `seen`
  /// (ErrorFlags::seen(); may be null).
  DYNASOAR_HD static void raise(unsigned* word, unsigned* seen, unsigned flag) {
    if ((atomic_fetch_or(word, flag) & flag) == flag || seen == nullptr) return;  // raised before, or no flag
#ifdef __CUDA_ARCH__
    *static_cast<volatile unsigned*>(seen) = 1u;
#else
    atomic_store(seen, 1u);
#endif
  }

 private:
  Buffer<unsigned> word_;
  PinnedValue<unsigned> mirror_;
  unsigned* seen_ = nullptr;  // mirror_ as kernels address it (reset)
};

}  // namespace dynasoar::platform
