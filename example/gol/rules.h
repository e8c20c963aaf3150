// Conway's game of life (B3/S23) on a torus, as in the DynaSOAr benchmark
// (paper Sec. 6), shared by the object version and the hand-written
// baseline: the grid, the initial state and the checksum.
#pragma once

#include <cstdint>

#include "example/common/philox.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"

namespace dynasoar::example::gol {

struct Grid {
  int width = 0;
  int height = 0;

  DYNASOAR_HD int cells() const { return width * height; }

  /// Neighbour k (0..7) of `cell`, wrapping around the edges: k runs over
  /// the 3x3 square around the cell, row by row, skipping its centre.
  DYNASOAR_HD int neighbor(int cell, int k) const {
    const int j = k < 4 ? k : k + 1;
    int nx = cell % width + j % 3 - 1, ny = cell / width + j / 3 - 1;
    if (nx < 0) nx += width;
    if (nx >= width) nx -= width;
    if (ny < 0) ny += height;
    if (ny >= height) ny -= height;
    return ny * width + nx;
  }

  /// All eight neighbours at once, out[k] = neighbor(cell, k), from one
  /// division. Where the loop over the neighbours holds atomics (which the
  /// compiler does not move loads across), neighbor() divides again for
  /// every k. A loop without atomics keeps neighbor(): there the compiler
  /// reuses one division for every k.
  DYNASOAR_HD void neighbors(int cell, int (&out)[8]) const {
    const int y = cell / width, x = cell - y * width;
    const int left = x == 0 ? width - 1 : x - 1, right = x == width - 1 ? 0 : x + 1;
    const int above = (y == 0 ? height - 1 : y - 1) * width, row = y * width;
    const int below = (y == height - 1 ? 0 : y + 1) * width;
    out[0] = above + left;
    out[1] = above + x;
    out[2] = above + right;
    out[3] = row + left;
    out[4] = row + right;
    out[5] = below + left;
    out[6] = below + x;
    out[7] = below + right;
  }
};

/// The rule: alive next step with n alive neighbours.
DYNASOAR_HD inline bool next_alive(bool alive, int n) { return n == 3 || (alive && n == 2); }

/// Random soup: a cell is alive with probability threshold / 2^32.
DYNASOAR_HD inline bool soup_alive(std::uint64_t seed, std::uint32_t threshold, int cell) {
  return random_u32(seed, static_cast<std::uint32_t>(cell), 0u, 0u) < threshold;
}

/// An alive cell's term of the checksum (summed mod 2^64 over alive cells).
DYNASOAR_HD inline std::uint64_t checksum_term(int cell) {
  return platform::mix64(platform::mix64(static_cast<std::uint64_t>(cell)) ^ 0x9E3779B97F4A7C15ull);
}

}  // namespace dynasoar::example::gol
