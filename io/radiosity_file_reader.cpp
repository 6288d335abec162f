#include "io/radiosity_file_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

namespace rad {

namespace {

// A call on what the file holds that fails means the file is damaged, or not as radiosity writes it: an
// InputError naming the file and what was read, not RAD_H5's abort (which is for the program's own mistakes;
// a fuzzed file ended the job with MPI_ABORT).
template <typename T>
T Checked(T result, const std::string &path, const std::string &what) {
  if (result < 0) throw InputError(path + ": cannot read " + what + " (the HDF5 file is damaged, or not one radiosity wrote)");
  return result;
}

}  // namespace

RadiosityFileReader::RadiosityFileReader(const std::string &path) : path_(path) {
  H5QuietErrors quiet;
  if (!std::ifstream(path).good()) throw InputError(path + ": cannot open (missing or unreadable)");
  if (H5Fis_hdf5(path.c_str()) <= 0) throw InputError(path + ": not an HDF5 file");
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) throw InputError(path + ": cannot open as HDF5");
  file_ = H5Handle(f);
  bool isRadiosity = false;
  try {
    isRadiosity = HasAttribute(file_, "format") && ReadStringAttribute(file_, "format") == "radiosity";
    // Read now the attributes that are read later, so that one of a wrong type is reported with the file's name.
    if (HasAttribute(file_, "complete")) ReadDoubleAttribute(file_, "complete");
    if (HasAttribute(file_, "format_version")) ReadDoubleAttribute(file_, "format_version");
  } catch (const InputError &e) {
    throw InputError(path + ": " + e.what());
  }
  if (!isRadiosity) throw InputError(path + ": not a radiosity file (no format=\"radiosity\" attribute)");
}

bool RadiosityFileReader::Complete() const {
  if (!HasAttribute(file_, "complete")) return false;
  return ReadDoubleAttribute(file_, "complete") == 1.0;
}

long long RadiosityFileReader::FormatVersion() const {
  if (!HasAttribute(file_, "format_version")) return 0;
  const double version = ReadDoubleAttribute(file_, "format_version");
  // Converting 1.8e308 or NaN to an integer is undefined (found by fuzzing).
  if (!(version >= 0 && version <= 1e9) || version != std::floor(version))
    throw InputError(path_ + ": format_version is not a version number");
  return (long long)version;
}

bool RadiosityFileReader::Has(const std::string &dataset) const {
  H5QuietErrors quiet;
  // Check each path component so that a missing group is not an error.
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dataset.find('/', pos + 1);
    partial = dataset.substr(0, pos);
    if (H5Lexists(file_, partial.c_str(), H5P_DEFAULT) <= 0) return false;
    // A link to another file (or a soft link) would have the reader follow it wherever it points: a file of
    // ours holds its datasets itself.
    H5L_info_t link;
    if (H5Lget_info(file_, partial.c_str(), &link, H5P_DEFAULT) < 0 || link.type != H5L_TYPE_HARD)
      throw InputError(path_ + ": " + partial + " is a link to elsewhere (external or soft): refused, a radiosity "
                       "file holds its own datasets");
  }
  return true;
}

std::vector<hsize_t> RadiosityFileReader::Shape(const std::string &dataset) const {
  if (!Has(dataset)) throw InputError(path_ + ": no " + dataset + " dataset");
  H5QuietErrors quiet;
  H5Handle d(Checked(H5Dopen2(file_, dataset.c_str(), H5P_DEFAULT), path_, dataset));
  H5Handle plist(Checked(H5Dget_create_plist(d), path_, dataset));
  const H5D_layout_t layout = H5Pget_layout(plist);
  if (layout == H5D_VIRTUAL)
    throw InputError(path_ + ": " + dataset + " is a virtual dataset (its data lie in other files): refused");
  H5Handle s(Checked(H5Dget_space(d), path_, dataset));
  const int rank = H5Sget_simple_extent_ndims(s);
  if (rank < 0) throw InputError(path_ + ": " + dataset + ": cannot read its shape");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0) Checked(H5Sget_simple_extent_dims(s, dims.data(), nullptr), path_, dataset);
  // A dataset may declare any size and hold nothing (chunks never written read as the fill value): a file of a
  // few kilobytes declared 2e11 values and had the reader allocate them. radiosity writes every value, without
  // filters, so an unfiltered dataset must hold all the bytes it declares.
  H5Handle type(Checked(H5Dget_type(d), path_, dataset));
  const hssize_t points = H5Sget_simple_extent_npoints(s);
  const double declared = double(std::max<hssize_t>(points, 0)) * double(H5Tget_size(type));
  if (layout != H5D_COMPACT && H5Pget_nfilters(plist) == 0 && double(H5Dget_storage_size(d)) < declared)
    throw InputError(path_ + ": " + dataset + " declares " + std::to_string(points) + " values but holds " +
                     std::to_string(H5Dget_storage_size(d)) + " of their " + std::to_string((long long)declared) +
                     " bytes: the file is damaged or truncated");
  return dims;
}

long long RadiosityFileReader::PatchCount() const {
  const std::vector<hsize_t> dims = Shape("/patches/area");
  if (dims.size() != 1)
    throw InputError(path_ + ": /patches/area has " + std::to_string(dims.size()) + " dimensions, not 1 (one area a patch)");
  return (long long)dims[0];
}

std::vector<double> RadiosityFileReader::ReadDoubles(const std::string &dataset) const {
  Shape(dataset);  // there, held in the file, whole, and not virtual
  H5QuietErrors quiet;
  H5Handle d(Checked(H5Dopen2(file_, dataset.c_str(), H5P_DEFAULT), path_, dataset));
  H5Handle s(Checked(H5Dget_space(d), path_, dataset));
  const hssize_t n = H5Sget_simple_extent_npoints(s);
  std::vector<double> out(size_t(std::max<hssize_t>(n, 0)));
  if (n > 0) Checked(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), path_, dataset);
  return out;
}

std::vector<double> RadiosityFileReader::ReadFormFactorRows(long long first, long long count) const {
  const std::vector<hsize_t> shape = Shape("/formfactors/F");
  const long long n = PatchCount();
  // `info` read past its buffer on an N x (N - 1) F and crashed on a 20000 x 1 one.
  if (shape.size() != 2 || (long long)shape[0] != n || (long long)shape[1] != n)
    throw InputError(path_ + ": /formfactors/F is " +
                     (shape.size() == 2 ? std::to_string(shape[0]) + " x " + std::to_string(shape[1])
                                        : std::to_string(shape.size()) + "-dimensional") +
                     ", not " + std::to_string(n) + " x " + std::to_string(n) + " for the file's " +
                     std::to_string(n) + " patches");
  RAD_CHECK(first >= 0 && count >= 0 && first + count <= n, "ReadFormFactorRows: rows out of range");
  H5QuietErrors quiet;
  const std::string what = "/formfactors/F";
  H5Handle d(Checked(H5Dopen2(file_, "/formfactors/F", H5P_DEFAULT), path_, what));
  H5Handle s(Checked(H5Dget_space(d), path_, what));
  const hsize_t dims[2] = {shape[0], shape[1]};
  const hsize_t start[2] = {hsize_t(first), 0}, cnt[2] = {hsize_t(count), dims[1]};
  Checked(H5Sselect_hyperslab(s, H5S_SELECT_SET, start, nullptr, cnt, nullptr), path_, what);
  H5Handle mem(RAD_H5(H5Screate_simple(2, cnt, nullptr)));
  std::vector<double> out(size_t(count) * size_t(dims[1]));
  if (count > 0) Checked(H5Dread(d, H5T_NATIVE_DOUBLE, mem, s, H5P_DEFAULT, out.data()), path_, what);
  return out;
}

namespace {
struct CollectedAttributes {
  std::vector<std::pair<std::string, std::string>> values;
  std::string failure;  // an InputError caught here: exceptions must not unwind through HDF5's C frames
};

herr_t CollectAttribute(hid_t location, const char *name, const H5A_info_t *, void *data) {
  auto *out = static_cast<CollectedAttributes *>(data);
  try {
    H5Handle attr(H5Aopen(location, name, H5P_DEFAULT));
    H5Handle type(H5Aget_type(attr));
    if (!attr.valid() || !type.valid()) throw InputError(std::string("attribute '") + name + "' cannot be read");
    if (H5Tget_class(type) == H5T_STRING) {
      out->values.push_back({name, ReadStringAttribute(location, name)});
    } else {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.10g", ReadDoubleAttribute(location, name));
      out->values.push_back({name, buf});
    }
  } catch (const InputError &e) {
    out->failure = e.what();
    return -1;
  }
  return 0;
}
}  // namespace

std::vector<std::pair<std::string, std::string>> RadiosityFileReader::DatasetAttributes(
    const std::string &dataset) const {
  CollectedAttributes out;
  H5QuietErrors quiet;
  H5Handle d(Checked(H5Oopen(file_, dataset.c_str(), H5P_DEFAULT), path_, dataset));
  const herr_t status = H5Aiterate2(d, H5_INDEX_NAME, H5_ITER_NATIVE, nullptr, CollectAttribute, &out);
  if (!out.failure.empty()) throw InputError(path_ + ": " + dataset + ": " + out.failure);
  Checked(status, path_, dataset + "'s attributes");
  return out.values;
}

std::vector<Patch> RadiosityFileReader::ReadPatches() const {
  const long long n = PatchCount();
  auto read = [&](const char *name, size_t perPatch) {
    std::vector<double> v = ReadDoubles(std::string("/patches/") + name);
    if (v.size() != perPatch * size_t(n))
      throw InputError(path_ + ": /patches/" + name + " has " + std::to_string(v.size()) + " values, expected " +
                       std::to_string(perPatch * size_t(n)));
    return v;
  };
  const std::vector<double> area = read("area", 1), centroid = read("centroid", 3), normal = read("normal", 3),
                            corners = read("corners", 12), face = read("face", 1),
                            reflectance = read("reflectance", 3), emission = read("emission", 3);
  // Physical values only: a negative reflectance or emission, or NaN anywhere, gave results before.
  auto refuse = [&](const char *name, size_t p, const char *why) {
    throw InputError(path_ + ": /patches/" + name + " of patch " + std::to_string(p) + " " + why);
  };
  for (size_t p = 0; p < size_t(n); ++p) {
    if (!(area[p] > 0) || !std::isfinite(area[p])) refuse("area", p, "is not a finite positive number");
    // A polygon number: converting inf or 1e300 to int is undefined (found by fuzzing).
    if (!(face[p] >= 0 && face[p] <= 2147483647.0) || face[p] != std::floor(face[p]))
      refuse("face", p, "is not a polygon number (an integer >= 0)");
    for (size_t c = 0; c < 3; ++c) {
      const double rho = reflectance[3 * p + c], e = emission[3 * p + c];
      if (!(rho >= 0 && rho <= 1)) refuse("reflectance", p, "is not in [0, 1]");
      if (!(e >= 0) || !std::isfinite(e)) refuse("emission", p, "is not a finite number >= 0");
      if (!std::isfinite(centroid[3 * p + c]) || !std::isfinite(normal[3 * p + c])) refuse("centroid", p, "or its normal is not finite");
    }
    for (size_t k = 0; k < 12; ++k)
      if (!std::isfinite(corners[12 * p + k])) refuse("corners", p, "are not finite");
  }
  std::vector<Patch> patches(static_cast<size_t>(n));
  for (size_t p = 0; p < patches.size(); ++p) {
    Patch &q = patches[p];
    q.area = area[p];
    q.face = q.polygon = int(face[p]);
    for (int c = 0; c < 3; ++c) {
      q.centroid[c] = centroid[3 * p + size_t(c)];
      q.normal[c] = normal[3 * p + size_t(c)];
      q.reflectance[c] = reflectance[3 * p + size_t(c)];
      q.emission[c] = emission[3 * p + size_t(c)];
      for (int k = 0; k < 4; ++k) q.corners[k][c] = corners[12 * p + 3 * size_t(k) + size_t(c)];
    }
    // CONTRACTS.md: a triangle repeats its third corner.
    const Vec3 d = q.corners[3] - q.corners[2];
    q.cornerCount = (d.x == 0 && d.y == 0 && d.z == 0) ? 3 : 4;
  }
  return patches;
}

std::string RadiosityFileReader::RootString(const std::string &name) const {
  return HasAttribute(file_, name) ? ReadStringAttribute(file_, name) : std::string();
}

}  // namespace rad
