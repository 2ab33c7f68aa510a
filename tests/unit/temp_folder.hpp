#pragma once
// A fresh folder in the temp folder (TMPDIR, else /tmp) for one test, removed with
// everything in it when the test ends, passed or failed: a test run leaves nothing
// behind, and two runs at once (the stress script, two builds) never share one.
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace slurmtune::testing {

class TempFolder {
 public:
  explicit TempFolder(const std::string& prefix = "slurmtune-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot create a temporary folder like " + pattern);
    path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// `name` inside the folder, as a string.
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace slurmtune::testing
