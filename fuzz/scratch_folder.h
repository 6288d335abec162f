// What the fuzz targets share. The fuzz run's own folder for the files a target writes: made on first use from `pattern` (mkdtemp's
// "...XXXXXX", a plain array, since the exit handler that removes it runs after static strings are destroyed),
// and removed with everything in it when libFuzzer ends the process with exit().
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "scene/patch.h"
#include "scene/scene.h"
#include "util/error.h"

template <size_t N>
std::string ScratchFolder(char (&pattern)[N]) {
  static char *folder = [&] {
    if (mkdtemp(pattern) == nullptr) std::abort();
    std::atexit([] { std::filesystem::remove_all(folder); });
    return pattern;
  }();
  return folder;
}

// The scene at `path` read and meshed as `formfactors --subdiv 1` would (up to 20000 patches), as hostile input
// meets it. A refusal (InputError) is a correct answer; anything else escapes to libFuzzer as a finding.
inline void LoadAndMeshHostileScene(const std::string &path) {
  try {
    const rad::Scene scene = rad::LoadScene(path);
    rad::Meshing meshing;
    meshing.subdiv = 1;
    const rad::Meshing resolved = rad::ResolveMeshing(scene, meshing);
    if (rad::CountPatches(scene, resolved) <= 20000) (void)rad::MakePatches(scene, resolved);
  } catch (const rad::InputError &) {
    // refused with a message: what hostile input should get
  }
}
