// Game-of-life patterns from files: the run-length encoded format (.rle,
// https://conwaylife.com/wiki/Run_Length_Encoded) and the plain-text format
// (.cells: '.' dead, 'O' alive, lines starting with '!' are comments). Host
// code only; errors name the file, the line and what is wrong.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace dynasoar::example::gol {

struct Pattern {
  int width = 0;   // bounding box
  int height = 0;
  std::vector<std::pair<int, int>> alive;  // (x, y) of the alive cells, y down
};

/// Parses RLE text. `name` appears in error messages. Rules other than
/// B3/S23 are rejected. Throws std::runtime_error.
Pattern parse_rle(const std::string& text, const std::string& name);
/// Parses plain-text (.cells) text. Throws std::runtime_error.
Pattern parse_plaintext(const std::string& text, const std::string& name);
/// Reads a file, choosing the format by its extension (.rle, .cells or
/// .txt). Throws std::runtime_error if it cannot be read or parsed.
Pattern load_pattern(const std::string& path);

}  // namespace dynasoar::example::gol
