// What every example prints when it finishes: a human summary or one JSON
// object (--json), built from a RunReport. Host code only (no CUDA), shared
// by all examples and baselines.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dynasoar::example {

struct RunReport {
  std::string example;   // "wator"
  std::string variant;   // back end ("dynasoar", "cmalloc", ...) or "baseline"
  std::string device;    // "NVIDIA H100 80GB HBM3" or "CPU, 2 threads"
  std::vector<std::pair<std::string, std::string>> config;  // problem size, seed, ...
  double total_ms = 0;   // the simulation loop, set-up and result read-back excluded
  std::vector<std::pair<std::string, double>> phases_ms;    // parts of total_ms
  std::vector<std::pair<std::string, double>> extra_ms;     // inside the phases (e.g. enumeration)
  std::uint64_t checksum = 0;
  // Examples whose sums depend on the order of floating-point additions
  // (n-body) report a floating-point checksum instead, compared with a
  // relative tolerance; `checksum` is then unused.
  std::optional<double> float_checksum;
  std::vector<std::pair<std::string, std::uint64_t>> live;  // objects per class at the end
  std::vector<std::pair<std::string, std::string>> heap;    // heap statistics
};

/// A report with the fields every simulation fills the same way.
RunReport make_run_report(std::string example, std::string variant, std::string device,
                          std::vector<std::pair<std::string, std::string>> config, double total_ms,
                          const std::map<std::string, double>& phases_ms);

void print_human(const RunReport& r, std::ostream& out);
void print_json(const RunReport& r, std::ostream& out);

/// "0x" and 16 hex digits.
std::string hex64(std::uint64_t v);
/// Parses a checksum given as hex (with or without 0x) or decimal; nullopt if malformed.
std::optional<std::uint64_t> parse_checksum(const std::string& s);
/// Parses a whole string as a finite floating-point number; nullopt otherwise.
std::optional<double> parse_float(const std::string& s);
/// The checksum as printed: hex64(checksum), or the floating-point one with 12 digits.
std::string checksum_text(const RunReport& r);

/// Throws std::invalid_argument unless `ranks` (--ranks) is 1: the program
/// runs on one rank; the simulation's distributed program takes more.
void check_one_rank(int ranks, const std::string& program);

}  // namespace dynasoar::example
