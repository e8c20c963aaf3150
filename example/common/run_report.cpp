#include "example/common/run_report.h"

#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <ostream>

namespace dynasoar::example {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string hex64(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}

std::optional<std::uint64_t> parse_checksum(const std::string& s) {
  if (s.empty()) return std::nullopt;
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  std::uint64_t v = 0;
  for (std::size_t i = hex ? 2 : 0; i < s.size(); ++i) {
    const char c = s[i];
    unsigned digit = 0;
    if (c >= '0' && c <= '9')
      digit = static_cast<unsigned>(c - '0');
    else if (hex && c >= 'a' && c <= 'f')
      digit = static_cast<unsigned>(c - 'a' + 10);
    else if (hex && c >= 'A' && c <= 'F')
      digit = static_cast<unsigned>(c - 'A' + 10);
    else
      return std::nullopt;
    const unsigned base = hex ? 16 : 10;
    if (v > (UINT64_MAX - digit) / base) return std::nullopt;  // overflow
    v = v * base + digit;
  }
  return v;
}

std::optional<double> parse_float(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string checksum_text(const RunReport& r) {
  if (!r.float_checksum) return hex64(r.checksum);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12g", *r.float_checksum);
  return buf;
}

RunReport make_run_report(std::string example, std::string variant, std::string device,
                          std::vector<std::pair<std::string, std::string>> config, double total_ms,
                          const std::map<std::string, double>& phases_ms) {
  RunReport r;
  r.example = std::move(example);
  r.variant = std::move(variant);
  r.device = std::move(device);
  r.config = std::move(config);
  r.total_ms = total_ms;
  for (const auto& [phase, ms] : phases_ms) r.phases_ms.emplace_back(phase, ms);
  return r;
}

void print_human(const RunReport& r, std::ostream& out) {
  out << r.example << " on " << r.variant << " (" << r.device << ")";
  for (const auto& [k, v] : r.config) out << ", " << k << " " << v;
  out << "\n  total            " << fixed(r.total_ms, 3) << " ms\n";
  for (const auto& [k, v] : r.phases_ms) {
    std::string label = k;
    label.resize(16, ' ');
    out << "    " << label << fixed(v, 3) << " ms\n";
  }
  for (const auto& [k, v] : r.extra_ms) out << "  of which " << k << ": " << fixed(v, 3) << " ms\n";
  out << "  checksum         " << checksum_text(r) << "\n";
  if (!r.live.empty()) {
    out << "  live objects    ";
    for (const auto& [k, v] : r.live) out << " " << k << " " << v;
    out << "\n";
  }
  for (const auto& [k, v] : r.heap) out << "  " << k << ": " << v << "\n";
}

void print_json(const RunReport& r, std::ostream& out) {
  out << "{\"example\": " << json_string(r.example) << ", \"variant\": " << json_string(r.variant)
      << ", \"device\": " << json_string(r.device) << ", \"config\": {";
  const char* sep = "";
  for (const auto& [k, v] : r.config) {
    out << sep << json_string(k) << ": " << json_string(v);
    sep = ", ";
  }
  out << "}, \"total_ms\": " << fixed(r.total_ms, 4) << ", \"phases_ms\": {";
  sep = "";
  for (const auto& [k, v] : r.phases_ms) {
    out << sep << json_string(k) << ": " << fixed(v, 4);
    sep = ", ";
  }
  out << "}, \"extra_ms\": {";
  sep = "";
  for (const auto& [k, v] : r.extra_ms) {
    out << sep << json_string(k) << ": " << fixed(v, 4);
    sep = ", ";
  }
  out << "}, \"checksum\": " << (r.float_checksum ? checksum_text(r) : json_string(hex64(r.checksum)))
      << ", \"live\": {";
  sep = "";
  for (const auto& [k, v] : r.live) {
    out << sep << json_string(k) << ": " << v;
    sep = ", ";
  }
  out << "}, \"heap\": {";
  sep = "";
  for (const auto& [k, v] : r.heap) {
    out << sep << json_string(k) << ": " << json_string(v);
    sep = ", ";
  }
  out << "}}\n";
}

void check_one_rank(int ranks, const std::string& program) {
  if (ranks != 1)
    throw std::invalid_argument("--ranks " + std::to_string(ranks) + ": " + program +
                                " runs on one rank; the distributed program of this simulation takes --ranks");
}

}  // namespace dynasoar::example
