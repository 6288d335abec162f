#include "pipeline/outputs.h"

#include <mpi.h>

#include <filesystem>

#include "io/image_io.h"
#include "pipeline/execution.h"
#include "util/agree.h"
#include "util/error.h"

namespace rad {

void CheckImageOutputPath(const std::string &option, const std::string &path, bool exrOnly) {
  // The same answer on every rank: the path is all it looks at.
  if (ImageFormatOf(option, path) != ImageFormat::kExr && exrOnly)
    throw InputError(option + " " + path + ": " + option + " writes OpenEXR, so the file must end in .exr");
  CheckOutputPath(option, path);
}

namespace {

bool SameFile(const std::string &a, const std::string &b) {
  std::error_code ec;
  const std::filesystem::path pa = std::filesystem::weakly_canonical(a, ec);
  if (ec) return a == b;
  const std::filesystem::path pb = std::filesystem::weakly_canonical(b, ec);
  if (ec) return a == b;
  if (pa == pb) return true;
  return std::filesystem::exists(pa, ec) && std::filesystem::exists(pb, ec) && std::filesystem::equivalent(pa, pb, ec);
}

}  // namespace

std::vector<NamedPath> SceneInputPaths(const std::vector<std::string> &files, const std::string &materials) {
  std::vector<NamedPath> paths;
  for (const std::string &f : files) paths.push_back({"--input", f});
  if (!materials.empty()) paths.push_back({"--materials", materials});
  return paths;
}

void CheckOutputsDistinct(const std::vector<NamedPath> &inputs, const std::vector<NamedPath> &outputs) {
  bool ok = true;
  std::string why;
  if (WorldRank() == 0) {
    for (size_t k = 0; k < outputs.size() && ok; ++k) {
      const NamedPath &out = outputs[k];
      if (out.path.empty()) continue;
      for (const NamedPath &in : inputs)
        if (!in.path.empty() && SameFile(out.path, in.path)) {
          ok = false;
          why = out.path + ": " + out.option + " would overwrite the input " + in.option + " " + in.path;
          break;
        }
      for (size_t j = 0; j < k && ok; ++j)
        if (!outputs[j].path.empty() && SameFile(out.path, outputs[j].path)) {
          ok = false;
          why = out.path + ": " + out.option + " and " + outputs[j].option + " name the same file";
        }
    }
  }
  AgreeOrThrow(ok, why);
}

OutputFolder::OutputFolder(const std::string &dir) : dir_(dir) {
  OnRankZero(MPI_COMM_WORLD, [&] {
    std::error_code ec;
    made_ = !std::filesystem::exists(dir, ec);
    std::filesystem::create_directories(dir, ec);
    if (!std::filesystem::is_directory(dir, ec))
      throw InputError(dir + ": cannot create the output folder (--output-dir)");
  });
}

OutputFolder::~OutputFolder() {
  std::error_code ec;
  if (made_ && std::filesystem::is_empty(dir_, ec) && !ec) std::filesystem::remove(dir_, ec);
}

void CheckOutputPath(const std::string &option, const std::string &path) {
  bool ok = true;
  std::string why;
  if (WorldRank() == 0) {
    const std::filesystem::path p(path);
    const std::filesystem::path folder = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
    std::error_code ec;
    if (path.empty()) {
      ok = false;
      why = option + ": empty path";
    } else if (!std::filesystem::is_directory(folder, ec)) {
      ok = false;
      why = path + ": folder '" + folder.string() + "' does not exist (" + option + ")";
    } else if (std::filesystem::is_directory(p, ec)) {
      ok = false;
      why = path + ": is a folder, not a file (" + option + ")";
    }
  }
  AgreeOrThrow(ok, why);
}

}  // namespace rad
