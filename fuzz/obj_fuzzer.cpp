// libFuzzer target: the OBJ and MTL readers, polygon repair and meshing, on hostile bytes. The input is an OBJ
// file, optionally followed by a NUL byte and the MTL file it may name as `mtllib fuzz.mtl`. A file the readers
// refuse (InputError) is a correct answer; a crash, a sanitizer report, another exception or a leak is a finding.
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

char folder[] = "/tmp/radiosity_fuzz_obj_XXXXXX";

std::string Folder() { return ScratchFolder(folder); }

void WriteFile(const std::string &path, const uint8_t *data, size_t size) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char *>(data), std::streamsize(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = static_cast<const uint8_t *>(std::memchr(data, 0, size));
  const size_t objSize = nul != nullptr ? size_t(nul - data) : size;
  const std::string obj = Folder() + "/fuzz.obj", mtl = Folder() + "/fuzz.mtl";
  WriteFile(obj, data, objSize);
  if (nul != nullptr) WriteFile(mtl, nul + 1, size - objSize - 1);
  else std::remove(mtl.c_str());
  LoadAndMeshHostileScene(obj);
  return 0;
}
