// The fuzz run's own folder for the files a target writes: made on first use from `pattern` (mkdtemp's
// "...XXXXXX", a plain array, since the exit handler that removes it runs after static strings are destroyed),
// and removed with everything in it when libFuzzer ends the process with exit().
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

template <size_t N>
std::string ScratchFolder(char (&pattern)[N]) {
  static char *folder = [&] {
    if (mkdtemp(pattern) == nullptr) std::abort();
    std::atexit([] { std::filesystem::remove_all(folder); });
    return pattern;
  }();
  return folder;
}
