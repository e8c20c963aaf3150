#include "example/gol/pattern.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace dynasoar::example::gol {
namespace {

[[noreturn]] void fail(const std::string& name, int line, const std::string& what) {
  throw std::runtime_error(name + ":" + std::to_string(line) + ": " + what);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "x = 3, y = 2, rule = B3/S23": fills width and height, checks the rule.
void parse_header(const std::string& line, const std::string& name, int number, Pattern& p) {
  std::string compact;
  for (const char c : line)
    if (!std::isspace(static_cast<unsigned char>(c))) compact += c;
  std::stringstream fields(compact);
  std::string field;
  bool have_x = false, have_y = false;
  while (std::getline(fields, field, ',')) {
    const auto eq = field.find('=');
    if (eq == std::string::npos) fail(name, number, "malformed header field '" + field + "'");
    const std::string key = lower(field.substr(0, eq)), value = field.substr(eq + 1);
    if (key == "x" || key == "y") {
      int v = 0;
      try {
        std::size_t used = 0;
        v = std::stoi(value, &used);
        if (used != value.size()) throw std::invalid_argument(value);
      } catch (const std::exception&) {
        fail(name, number, "header: " + key + " is not a number: '" + value + "'");
      }
      if (v < 0) fail(name, number, "header: " + key + " is negative");
      (key == "x" ? p.width : p.height) = v;
      (key == "x" ? have_x : have_y) = true;
    } else if (key == "rule") {
      const std::string r = lower(value);
      if (r != "b3/s23" && r != "23/3")
        fail(name, number, "rule " + value + " is not supported (only Conway's B3/S23)");
    }
  }
  if (!have_x || !have_y) fail(name, number, "header needs x = ... and y = ...");
}

// Runs of dead cells and line ends move the position by up to 2^24 each; a
// position far outside every grid is an error before it can overflow (a
// file of such runs wrapped it to negative cells that the run then wrote).
constexpr std::int64_t kMaxPosition = std::int64_t{1} << 31;

void check_inside(const Pattern& p, std::int64_t x, std::int64_t y, const std::string& name,
                  int number) {
  if (x >= p.width || y >= p.height)
    fail(name, number,
         "cell (" + std::to_string(x) + ", " + std::to_string(y) + ") lies outside the header's " +
             std::to_string(p.width) + "x" + std::to_string(p.height));
}

}  // namespace

Pattern parse_rle(const std::string& text, const std::string& name) {
  Pattern p;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  bool header = false, done = false;
  std::int64_t x = 0, y = 0;
  int run = 0;
  while (!done && std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      parse_header(line, name, number, p);
      header = true;
      continue;
    }
    for (const char c : line) {
      if (std::isspace(static_cast<unsigned char>(c))) continue;
      if (std::isdigit(static_cast<unsigned char>(c))) {
        run = run * 10 + (c - '0');
        if (run > (1 << 24)) fail(name, number, "run count too large");
        continue;
      }
      const int n = run == 0 ? 1 : run;
      run = 0;
      if (c == 'b' || c == '.') {
        x += n;
      } else if (c == 'o' || c == 'A') {
        for (int k = 0; k < n; ++k) {
          check_inside(p, x, y, name, number);
          p.alive.emplace_back(static_cast<int>(x++), static_cast<int>(y));
        }
      } else if (c == '$') {
        y += n;
        x = 0;
      } else if (c == '!') {
        done = true;
        break;
      } else {
        fail(name, number, std::string("unexpected character '") + c + "' in the pattern");
      }
      if (x > kMaxPosition || y > kMaxPosition)
        fail(name, number,
             "the pattern runs beyond 2^31 cells from its corner (the header says " +
                 std::to_string(p.width) + "x" + std::to_string(p.height) + ")");
    }
  }
  if (!header) fail(name, number, "no header line (x = ..., y = ...)");
  if (!done) fail(name, number, "the pattern does not end with '!'");
  return p;
}

Pattern parse_plaintext(const std::string& text, const std::string& name) {
  Pattern p;
  std::istringstream in(text);
  std::string line;
  int number = 0, y = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line[0] == '!') continue;
    for (int x = 0; x < static_cast<int>(line.size()); ++x) {
      const char c = line[static_cast<std::size_t>(x)];
      if (c == 'O' || c == '*')
        p.alive.emplace_back(x, y);
      else if (c != '.')
        fail(name, number, std::string("unexpected character '") + c + "' (use '.' and 'O')");
    }
    p.width = std::max(p.width, static_cast<int>(line.size()));
    ++y;
  }
  p.height = y;
  return p;
}

Pattern load_pattern(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open the pattern file");
  std::stringstream buf;
  buf << f.rdbuf();
  const std::string ext = lower(path.substr(path.find_last_of('.') == std::string::npos ? path.size()
                                                                                         : path.find_last_of('.')));
  if (ext == ".rle") return parse_rle(buf.str(), path);
  if (ext == ".cells" || ext == ".txt") return parse_plaintext(buf.str(), path);
  throw std::runtime_error(path + ": unknown pattern format (expected .rle, .cells or .txt)");
}

}  // namespace dynasoar::example::gol
