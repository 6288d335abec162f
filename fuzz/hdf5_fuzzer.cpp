// libFuzzer target: the radiosity HDF5 reader (io/radiosity_file_reader.h) on hostile files, as `info`, `solve`
// and `render` use it: the file's marks, its patches, the shape and first rows of F, its attributes, B.
//
// Structure-aware: the fuzzer's bytes are a recipe, and the file is built from it through the HDF5 library
// (root attributes of any type; /patches, /formfactors/F and /radiosity/B of any rank, shape, type and values,
// NaN and negatives included; soft and external links; datasets declaring far more values than they hold), so
// that what is fuzzed is our reader's logic on every file HDF5 itself can describe. Mutating the file's bytes
// instead mostly fuzzes HDF5's own parser, which crashes on damaged metadata (HDF5 1.10: a SEGV in H5A__close
// under H5Aiterate2 within seconds) and is not ours to fix. A file refused with InputError is a correct answer;
// a crash, a sanitizer report, another exception or a leak is a finding.
#include <fuzzer/FuzzedDataProvider.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/radiosity_file_reader.h"
#include "util/error.h"

namespace {

// The run's file, in a plain array: the exit handler that removes it runs after static strings are destroyed.
char file[64];

std::string File() {
  if (file[0] == '\0') std::snprintf(file, sizeof file, "/tmp/radiosity_fuzz_hdf5_%d.h5", int(getpid()));
  return file;
}

double Value(FuzzedDataProvider &in) {
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0: return -in.ConsumeFloatingPoint<double>();
    case 1: return 0.0 / 0.0;
    case 2: return 1.0 / 0.0;
    case 3: return 0;
    default: return in.ConsumeProbability<double>() * 2;
  }
}

void StringAttribute(hid_t object, const char *name, const std::string &value) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, value.size() + 1);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attr, type, value.c_str());
  H5Aclose(attr);
  H5Sclose(space);
  H5Tclose(type);
}

void NumberAttribute(hid_t object, const char *name, double value) {
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(object, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attr, H5T_NATIVE_DOUBLE, &value);
  H5Aclose(attr);
  H5Sclose(space);
}

// An attribute `name` of a type and value the recipe picks (mostly what radiosity writes).
void Attribute(FuzzedDataProvider &in, hid_t object, const char *name, const std::string &usual) {
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0: return StringAttribute(object, name, in.ConsumeRandomLengthString(32));
    case 1: return NumberAttribute(object, name, Value(in));
    case 2: return;  // missing
    default:
      if (usual.empty()) NumberAttribute(object, name, 1);
      else StringAttribute(object, name, usual);
  }
}

// A dataset at `path` of the rank, shape, type and values the recipe picks, near the usual shape `dims`; or a
// link in its place.
void Dataset(FuzzedDataProvider &in, hid_t file, const std::string &path, std::vector<hsize_t> dims) {
  const int kind = in.ConsumeIntegralInRange(0, 15);
  if (kind == 0) return;  // missing
  if (kind == 1) {
    H5Lcreate_soft("/patches/area", file, path.c_str(), H5P_DEFAULT, H5P_DEFAULT);
    return;
  }
  if (kind == 2) {
    H5Lcreate_external("/etc/passwd", "/x", file, path.c_str(), H5P_DEFAULT, H5P_DEFAULT);
    return;
  }
  if (kind == 3) dims.resize(size_t(in.ConsumeIntegralInRange(0, 3)), hsize_t(in.ConsumeIntegralInRange(0, 4)));
  if (kind == 4 && !dims.empty()) dims[0] += hsize_t(in.ConsumeIntegralInRange(-1, 1));
  const bool declaredOnly = kind == 5;  // chunked, never written: declares a huge extent, holds nothing
  if (declaredOnly && !dims.empty()) dims[0] = hsize_t(1) << in.ConsumeIntegralInRange(20, 36);
  const hid_t type = kind == 6 ? H5T_NATIVE_INT : kind == 7 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  const hid_t space = dims.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  const hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
  if (declaredOnly && !dims.empty()) {
    std::vector<hsize_t> chunk(dims.size(), 1);
    H5Pset_chunk(plist, int(chunk.size()), chunk.data());
  }
  const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  const hid_t d = H5Dcreate2(file, path.c_str(), type, space, lcpl, plist, H5P_DEFAULT);
  if (d >= 0 && !declaredOnly) {
    hssize_t points = H5Sget_simple_extent_npoints(space);
    std::vector<double> values(size_t(std::max<hssize_t>(points, 0)));
    for (double &v : values) v = Value(in);
    if (!values.empty()) H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  }
  if (d >= 0 && in.ConsumeBool()) Attribute(in, d, "input", "scene.obj");
  if (d >= 0) H5Dclose(d);
  H5Pclose(lcpl);
  H5Pclose(plist);
  H5Sclose(space);
}

void BuildFile(FuzzedDataProvider &in) {
  const hid_t file = H5Fcreate(File().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  Attribute(in, file, "format", "radiosity");
  Attribute(in, file, "complete", "");
  Attribute(in, file, "format_version", "");
  Attribute(in, file, "input", "scene.obj");
  const hsize_t n = hsize_t(in.ConsumeIntegralInRange(0, 6));
  Dataset(in, file, "/patches/area", {n});
  for (const char *name : {"centroid", "normal", "reflectance", "emission"}) Dataset(in, file, std::string("/patches/") + name, {n, 3});
  Dataset(in, file, "/patches/corners", {n, 4, 3});
  Dataset(in, file, "/patches/face", {n});
  Dataset(in, file, "/formfactors/F", {n, n});
  Dataset(in, file, "/radiosity/B", {n, 3});
  H5Fclose(file);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // No MPI_Init: the reader opens files with HDF5's default (serial) driver, and Open MPI's start-up leaks what
  // LeakSanitizer would report on every run.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // the recipe makes impossible files; the reader says why
  File();
  std::atexit([] { std::remove(file); });  // libFuzzer ends with exit()
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  BuildFile(in);
  try {
    rad::RadiosityFileReader file(File());
    (void)file.Complete();
    (void)file.FormatVersion();
    (void)file.RootString("input");
    const std::vector<rad::Patch> patches = file.ReadPatches();
    if (file.Has("/formfactors/F")) {
      (void)file.Shape("/formfactors/F");
      (void)file.DatasetAttributes("/formfactors/F");
      (void)file.ReadFormFactorRows(0, std::min<long long>((long long)patches.size(), 8));
    }
    if (file.Has("/radiosity/B")) (void)file.ReadDoubles("/radiosity/B");
  } catch (const rad::InputError &) {
    // refused with a message: what hostile input should get
  }
  return 0;
}
