// Stream compaction of pointer arrays: the non-null entries of an array,
// in order, with their count. CUB's DeviceSelect on the stream in a CUDA
// build; a plain loop in a host build.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dynasoar/platform/config.h"
#include "dynasoar/platform/error.h"
#include "dynasoar/platform/memory.h"

#if DYNASOAR_CUDA
#include <cub/device/device_select.cuh>
#endif

namespace dynasoar::platform {

/// Predicate for CUB's DeviceSelect::If: keeps the non-null pointers.
struct IsNonNull {
  /// True if `p` is not null; callable from host and device code.
  DYNASOAR_HD bool operator()(const void* p) const { return p != nullptr; }
};

/// Keeps the scratch memory CUB needs between calls.
class PointerCompactor {
 public:
  /// out[0, k) = the non-null entries of in[0, n), in order; *selected = k
  /// (device memory). Asynchronous on `s` in a CUDA build.
  void select_nonnull(void* const* in, void** out, std::size_t n, unsigned long long* selected,
                      Stream s = {}) {
#if DYNASOAR_CUDA
    std::size_t bytes = 0;
    DYNASOAR_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, in, out, selected,
                                              static_cast<std::int64_t>(n), IsNonNull{}, s.handle));
    if (bytes > scratch_.size()) scratch_ = Buffer<unsigned char>(bytes);
    DYNASOAR_CUDA_CHECK(cub::DeviceSelect::If(scratch_.data(), bytes, in, out, selected,
                                              static_cast<std::int64_t>(n), IsNonNull{}, s.handle));
#else
    (void)s;
    unsigned long long k = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (in[i] != nullptr) out[k++] = in[i];
    *selected = k;
#endif
  }

 private:
  Buffer<unsigned char> scratch_;
};

}  // namespace dynasoar::platform
