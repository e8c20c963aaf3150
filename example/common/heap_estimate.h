// The default heap of the grid examples (wa-tor, the game of life,
// sugarscape), for their headers: host code without the framework.
#pragma once

#include <cstdint>

namespace dynasoar::example {

/// `bytes_per_cell` for every cell of a width x height grid, and at least
/// 32 MiB (small grids still get room for the back ends' fixed structures).
inline std::uint64_t grid_heap_bytes(int width, int height, std::uint64_t bytes_per_cell) {
  const std::uint64_t bytes =
      static_cast<std::uint64_t>(width) * static_cast<std::uint64_t>(height) * bytes_per_cell;
  constexpr std::uint64_t kLeast = std::uint64_t{32} << 20;
  return bytes < kLeast ? kLeast : bytes;
}

}  // namespace dynasoar::example
