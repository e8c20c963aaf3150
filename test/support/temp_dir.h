// A fresh folder for a test's files, removed afterwards. The process id
// keeps parallel runs (ctest -j, two build folders) apart.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace dynasoar::test {

/// The folder <temp>/dynasoar_<name>_<pid>, made empty; removed with the object.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("dynasoar_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// A path inside the folder.
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace dynasoar::test
