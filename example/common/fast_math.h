// Arithmetic the simulations share between their object forms and baselines.
#pragma once

#include <cmath>

#include "dynasoar/platform/config.h"

namespace dynasoar::example {

/// 1 / sqrt(x): the GPU's reciprocal square root (within 2 ulp, one
/// instruction instead of a correctly rounded square root and division);
/// exact operations on the host. Results of the CPU and GPU builds differ by
/// this rounding, which the examples' checksum tolerances allow for.
DYNASOAR_HD inline float inverse_sqrt(float x) {
#if defined(__CUDA_ARCH__)
  return rsqrtf(x);
#else
  return 1.0f / std::sqrt(x);
#endif
}

/// One coordinate moved by one time step dt under acceleration a, reflected
/// at the walls of [-1, 1] (n-body and Barnes-Hut).
DYNASOAR_HD inline void move_in_box(float dt, float& x, float& v, float a) {
  v += a * dt;
  x += v * dt;
  if (x < -1.0f) {
    x = -2.0f - x;
    v = -v;
  } else if (x > 1.0f) {
    x = 2.0f - x;
    v = -v;
  }
}

}  // namespace dynasoar::example
