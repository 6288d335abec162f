// A path in the temp directory for one test, unique per process and test, removed (with any ".partial" the
// writers leave) when it goes out of scope.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace rad::test {

struct TempFile {
  std::string path;
  explicit TempFile(const std::string &suffix) {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    path = (std::filesystem::temp_directory_path() /
            ("rad_" + std::to_string(getpid()) + "_" + info->test_suite_name() + "_" + info->name() + suffix))
               .string();
  }
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    std::filesystem::remove(path + ".partial", ignored);
  }
};

}  // namespace rad::test
