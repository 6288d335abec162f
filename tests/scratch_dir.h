// A fresh directory per test (removed with everything in it at the end), so that tests cannot see each other's
// files; `Write` puts a file in it byte for byte.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace rad::test {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string &prefix = "scratch") {
    std::string pattern = ::testing::TempDir() + prefix + "_XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    const char *made = mkdtemp(buffer.data());
    if (made == nullptr) ADD_FAILURE() << "mkdtemp failed for " << pattern;
    path_ = made == nullptr ? pattern : std::string(made);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;

  std::string Write(const std::string &name, const std::string &bytes) const {
    const std::string file = Path(name);
    std::ofstream(file, std::ios::binary) << bytes;
    return file;
  }
  std::string Path(const std::string &name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace rad::test
