// A run's pictures as numbered PNG files in one folder, named so that they
// sort by step: DIR/wator_000000.png, DIR/wator_000100.png, ... Needs libpng
// (dynasoar/support/png.h). Host code.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "dynasoar/support/image.h"
#include "dynasoar/support/png.h"

namespace dynasoar::support {

/// A folder of PNG snapshots of one run, one file per step written.
class Snapshots {
 public:
  /// Snapshots in `folder` (created now, with its parents, if missing),
  /// named `name`_STEP.png with STEP zero-padded to 6 digits, or more if
  /// `last_step` needs them, so that the names sort by step. Throws
  /// std::runtime_error ("cannot create the folder ...") if the folder
  /// cannot be made, so that a wrong path stops a program before its run.
  Snapshots(std::string folder, std::string name, std::int64_t last_step = 0)
      : folder_(std::move(folder)), name_(std::move(name)) {
    for (std::int64_t s = last_step; s >= 1000000; s /= 10) ++digits_;
    std::error_code ec;
    std::filesystem::create_directories(folder_, ec);
    if (ec || !std::filesystem::is_directory(folder_))
      throw std::runtime_error("cannot create the folder " + folder_ + (ec ? ": " + ec.message() : ""));
  }

  /// The file of `step`: folder/name_000100.png.
  std::string path(std::int64_t step) const {
    char number[32];
    std::snprintf(number, sizeof number, "%0*lld", digits_, static_cast<long long>(step));
    return (std::filesystem::path(folder_) / (name_ + "_" + number + ".png")).string();
  }

  /// Writes `image` as the snapshot of `step` (write_png's errors).
  void write(std::int64_t step, const Image& image) const { write_png(path(step), image); }

  /// The folder, as given.
  const std::string& folder() const { return folder_; }

 private:
  std::string folder_;
  std::string name_;
  int digits_ = 6;
};

}  // namespace dynasoar::support
