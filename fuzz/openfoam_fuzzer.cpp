// libFuzzer target: the OpenFOAM polyMesh reader (io/openfoam_mesh.cpp), polygon repair and meshing, on hostile
// bytes. The input is the case's constant/polyMesh/boundary, a NUL byte, its points file, a NUL byte, its faces
// file (a part that is missing leaves that file out). A case the reader refuses (InputError) is a correct answer;
// a crash, a sanitizer report, another exception or a leak is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz/scratch_folder.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "util/error.h"

namespace {

char folder[] = "/tmp/radiosity_fuzz_openfoam_XXXXXX";

// The case folder, with its constant/polyMesh.
std::string Folder() {
  static const std::string made = [] {
    std::filesystem::create_directories(ScratchFolder(folder) + "/constant/polyMesh");
    return ScratchFolder(folder);
  }();
  return made;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string mesh = Folder() + "/constant/polyMesh/";
  const char *names[3] = {"boundary", "points", "faces"};
  size_t at = 0;
  for (const char *name : names) {
    const std::string path = mesh + name;
    if (at > size) {
      std::remove(path.c_str());
      continue;
    }
    const uint8_t *nul = static_cast<const uint8_t *>(std::memchr(data + at, 0, size - at));
    const size_t end = nul != nullptr ? size_t(nul - data) : size;
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char *>(data + at), std::streamsize(end - at));
    at = end + 1;
  }
  LoadAndMeshHostileScene(Folder());
  return 0;
}
