// Checks on the files and folders a command will write, made before any work so that every rank fails early
// and alike (InputError on every rank).
#pragma once

#include <string>

namespace rad {

// Checks on rank 0 that `path`'s folder exists and that `path` is not a folder (`option` names it).
void CheckOutputPath(const std::string &option, const std::string &path);
// CheckOutputPath for an image, and its extension first (ImageFormatOf: .png or .exr); `exrOnly` for --exr,
// whose name promises OpenEXR.
void CheckImageOutputPath(const std::string &option, const std::string &path, bool exrOnly = false);

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
