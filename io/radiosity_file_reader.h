// Reading the project's HDF5 files serially (for `info`, tests and tools).
#pragma once

#include <string>
#include <vector>

#include "io/hdf5_util.h"
#include "scene/patch.h"

namespace rad {

class RadiosityFileReader {
 public:
  // Throws InputError if the file is missing, not HDF5, or not a radiosity file.
  explicit RadiosityFileReader(const std::string &path);

  const std::string &Path() const { return path_; }
  bool Complete() const;
  long long FormatVersion() const;
  // InputError for a path through a link to elsewhere (external or soft).
  bool Has(const std::string &dataset) const;
  // The dataset's dimensions; InputError when it is missing or virtual (its data in other files).
  std::vector<hsize_t> Shape(const std::string &dataset) const;
  long long PatchCount() const;  // from /patches/area
  std::vector<double> ReadDoubles(const std::string &dataset) const;  // whole dataset, flattened
  // Rows [first, first+count) of /formfactors/F as doubles.
  std::vector<double> ReadFormFactorRows(long long first, long long count) const;
  std::vector<std::pair<std::string, std::string>> DatasetAttributes(const std::string &dataset) const;
  // The whole /patches group; throws InputError if a dataset is missing or has the wrong size.
  std::vector<Patch> ReadPatches() const;
  // A file-level (root) string attribute, or "" if absent.
  std::string RootString(const std::string &name) const;
  hid_t File() const { return file_; }

 private:
  std::string path_;
  H5Handle file_;
};

}  // namespace rad
