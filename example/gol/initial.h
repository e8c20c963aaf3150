// The initial state as a byte per cell (1: alive), made on the device from
// the soup's seed or from the pattern's cells; used by both versions.
#pragma once

#include <cstddef>
#include <vector>

#include "example/gol/gol.h"
#include "example/gol/rules.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"

namespace dynasoar::example::gol {

struct FillSoup {
  unsigned char* alive;
  std::uint64_t seed;
  std::uint32_t threshold;
  DYNASOAR_HD void operator()(std::size_t i) const {
    alive[i] = soup_alive(seed, threshold, static_cast<int>(i)) ? 1 : 0;
  }
};

struct MarkCells {
  unsigned char* alive;
  const int* cells;
  DYNASOAR_HD void operator()(std::size_t i) const { alive[cells[i]] = 1; }
};

inline void initial_state(const Config& c, platform::Buffer<unsigned char>& alive, platform::Stream s) {
  const auto n = static_cast<std::size_t>(c.width) * static_cast<std::size_t>(c.height);
  if (c.pattern_name.empty()) {
    platform::parallel_for(n, FillSoup{alive.data(), c.seed, soup_threshold(c.density)}, s);
    return;
  }
  alive.zero(s);
  if (c.pattern_cells.empty()) return;
  platform::Buffer<int> cells(c.pattern_cells.size());
  cells.copy_from_host(c.pattern_cells.data(), c.pattern_cells.size(), 0, s);
  platform::parallel_for(c.pattern_cells.size(), MarkCells{alive.data(), cells.data()}, s);
  platform::synchronize(s);
}

}  // namespace dynasoar::example::gol
