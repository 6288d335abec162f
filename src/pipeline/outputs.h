// Checks on the files and folders a command will write, made before any work so that every rank fails early
// and alike (InputError on every rank).
#pragma once

#include <string>
#include <vector>

namespace rad {

// Checks on rank 0 that `path`'s folder exists and that `path` is not a folder (`option` names it).
void CheckOutputPath(const std::string &option, const std::string &path);
// CheckOutputPath for an image, and its extension first (ImageFormatOf: .png or .exr); `exrOnly` for --exr,
// whose name promises OpenEXR.
void CheckImageOutputPath(const std::string &option, const std::string &path, bool exrOnly = false);

// A file a command reads or writes, with the option that names it.
struct NamedPath {
  std::string option, path;
};
// Checks on rank 0 (every rank fails alike) that no output is an input (or a materials file) or another output:
// `formfactors --output scene.obj` overwrote the scene with HDF5 bytes, and two outputs of one name left one
// run's half of each. Empty paths are skipped; paths are compared as the same file (links and `..` resolved).
void CheckOutputsDistinct(const std::vector<NamedPath> &inputs, const std::vector<NamedPath> &outputs);
// The input side of a scene: its files (--input) and its materials file (--materials).
std::vector<NamedPath> SceneInputPaths(const std::vector<std::string> &files, const std::string &materials);

// The --output-dir of `run` and `validate`: made on rank 0 (with its parents) when missing, InputError on every
// rank if it cannot be. A folder made here is removed again when the object goes out of scope and the folder
// is still empty: a job refused before writing anything (bad scene, not enough memory) leaves nothing behind.
class OutputFolder {
 public:
  explicit OutputFolder(const std::string &dir);
  ~OutputFolder();
  OutputFolder(const OutputFolder &) = delete;
  OutputFolder &operator=(const OutputFolder &) = delete;

 private:
  std::string dir_;
  bool made_ = false;  // rank 0 only
};

}  // namespace rad
