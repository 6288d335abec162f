#include "io/radiosity_file.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <sstream>

#include "util/agree.h"

namespace rad {

RowSequence AsSequence(const std::vector<long long> &rows) {
  RowSequence s;
  s.count = (long long)rows.size();
  if (s.count > 0) s.first = rows[0];
  if (s.count > 1) s.step = rows[1] - rows[0];
  for (long long k = 1; k < s.count; ++k)
    RAD_CHECK(rows[k] - rows[k - 1] == s.step, "a rank's rows must be evenly spaced");
  return s;
}

RadiosityFileWriter::RadiosityFileWriter(MPI_Comm comm, const std::string &path)
    : comm_(comm), partial_(comm, path) {
  H5Handle fapl(RAD_H5(H5Pcreate(H5P_FILE_ACCESS)));
  RAD_H5(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL));
  hid_t file;
  {
    H5QuietErrors quiet;
    file = H5Fcreate(partial_.Partial().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  }
  // Every rank sees the same outcome (the create is collective), so every rank throws together.
  if (file < 0) throw InputError(path + ": cannot create the output file (does its folder exist and is it writable?)");
  file_ = H5Handle(file);
  WriteStringAttribute(file_, "format", "radiosity");
  WriteIntAttribute(file_, "format_version", 1);
  WriteIntAttribute(file_, "complete", 0);
}

// Closes the file before partial_ (uncommitted) removes it.
RadiosityFileWriter::~RadiosityFileWriter() { file_.Reset(); }

namespace {

// Collective write of a [rows x columns] block of a dataset from rank 0 only (others select nothing).
void WriteFromRankZero(hid_t group, const char *name, hid_t fileType, const std::vector<hsize_t> &dims,
                       const void *data, hid_t memType, bool isRankZero) {
  H5Handle space(RAD_H5(H5Screate_simple(int(dims.size()), dims.data(), nullptr)));
  H5Handle dset(RAD_H5(H5Dcreate2(group, name, fileType, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  H5Handle memSpace(RAD_H5(H5Screate_simple(int(dims.size()), dims.data(), nullptr)));
  H5Handle fileSpace(RAD_H5(H5Dget_space(dset)));
  if (!isRankZero) {
    RAD_H5(H5Sselect_none(memSpace));
    RAD_H5(H5Sselect_none(fileSpace));
  }
  // An empty dataset (e.g. the residual history of a solve that needed no iteration) has no storage to write.
  hsize_t elements = 1;
  for (hsize_t d : dims) elements *= d;
  if (elements == 0) return;
  H5Handle dxpl(RAD_H5(H5Pcreate(H5P_DATASET_XFER)));
  RAD_H5(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
  RAD_H5(H5Dwrite(dset, memType, memSpace, fileSpace, dxpl, data));
}

}  // namespace

void RadiosityFileWriter::WritePatches(const std::vector<Patch> &patches) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  const hsize_t n = patches.size();
  std::vector<double> area(n), centroid(3 * n), normal(3 * n), corners(12 * n), reflectance(3 * n),
      emission(3 * n);
  std::vector<long long> face(n);
  for (size_t p = 0; p < n; ++p) {
    const Patch &q = patches[p];
    area[p] = q.area;
    face[p] = q.polygon >= 0 ? q.polygon : q.face;  // the input polygon (CONTRACTS), not the mended piece
    for (int c = 0; c < 3; ++c) {
      centroid[3 * p + c] = q.centroid[c];
      normal[3 * p + c] = q.normal[c];
      reflectance[3 * p + c] = q.reflectance[c];
      emission[3 * p + c] = q.emission[c];
      for (int k = 0; k < 4; ++k) corners[12 * p + 3 * k + c] = q.corners[k][c];
    }
  }
  H5Handle group(RAD_H5(H5Gcreate2(file_, "patches", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  const bool r0 = rank == 0;
  WriteFromRankZero(group, "area", H5T_IEEE_F64LE, {n}, area.data(), H5T_NATIVE_DOUBLE, r0);
  WriteFromRankZero(group, "centroid", H5T_IEEE_F64LE, {n, 3}, centroid.data(), H5T_NATIVE_DOUBLE, r0);
  WriteFromRankZero(group, "normal", H5T_IEEE_F64LE, {n, 3}, normal.data(), H5T_NATIVE_DOUBLE, r0);
  WriteFromRankZero(group, "corners", H5T_IEEE_F64LE, {n, 4, 3}, corners.data(), H5T_NATIVE_DOUBLE, r0);
  WriteFromRankZero(group, "face", H5T_STD_I64LE, {n}, face.data(), H5T_NATIVE_LLONG, r0);
  WriteFromRankZero(group, "reflectance", H5T_IEEE_F64LE, {n, 3}, reflectance.data(), H5T_NATIVE_DOUBLE, r0);
  WriteFromRankZero(group, "emission", H5T_IEEE_F64LE, {n, 3}, emission.data(), H5T_NATIVE_DOUBLE, r0);
  // For XDMF readers, which take points and cells as flat arrays: each patch's four corners as points (a
  // triangle's third twice), and the patch as the quadrilateral of its own four points.
  std::vector<long long> cells(4 * n);
  for (size_t k = 0; k < cells.size(); ++k) cells[k] = (long long)k;
  H5Handle xdmf(RAD_H5(H5Gcreate2(file_, "xdmf", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  WriteFromRankZero(xdmf, "points", H5T_IEEE_F64LE, {4 * n, 3}, corners.data(), H5T_NATIVE_DOUBLE, r0);
  WriteFromRankZero(xdmf, "cells", H5T_STD_I64LE, {n, 4}, cells.data(), H5T_NATIVE_LLONG, r0);
  patchCount_ = (long long)n;
  cellFields_.push_back({"/patches/area", 1});
  cellFields_.push_back({"/patches/face", 1});
  cellFields_.push_back({"/patches/reflectance", 3});
  cellFields_.push_back({"/patches/emission", 3});
}

void ForEachRowBlock(MPI_Comm comm, hid_t dset, long long n, size_t bytesPerValue, const std::vector<long long> &rows,
                     const std::function<void(hid_t, hid_t, hid_t, long long, long long)> &io) {
  const RowSequence seq = AsSequence(rows);
  const size_t bytesPerRow = size_t(n) * bytesPerValue;
  const long long rowsPerCall = std::max<long long>(1, (256LL << 20) / (long long)std::max<size_t>(bytesPerRow, 1));
  long long rounds = (seq.count + rowsPerCall - 1) / rowsPerCall, maxRounds = 0;
  MPI_Allreduce(&rounds, &maxRounds, 1, MPI_LONG_LONG, MPI_MAX, comm);
  H5Handle dxpl(RAD_H5(H5Pcreate(H5P_DATASET_XFER)));
  RAD_H5(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
  for (long long round = 0; round < maxRounds; ++round) {
    const long long begin = std::min(seq.count, round * rowsPerCall);
    const long long count = std::min(seq.count, begin + rowsPerCall) - begin;
    H5Handle fileSpace(RAD_H5(H5Dget_space(dset)));
    const hsize_t memDims[2] = {hsize_t(std::max<long long>(count, 1)), hsize_t(n)};
    H5Handle memSpace(RAD_H5(H5Screate_simple(2, memDims, nullptr)));
    if (count > 0) {
      const hsize_t start[2] = {hsize_t(seq.first + begin * seq.step), 0};
      const hsize_t stride[2] = {hsize_t(seq.step), 1};
      const hsize_t blocks[2] = {hsize_t(count), 1};
      const hsize_t block[2] = {1, hsize_t(n)};
      RAD_H5(H5Sselect_hyperslab(fileSpace, H5S_SELECT_SET, start, stride, blocks, block));
    } else {
      RAD_H5(H5Sselect_none(fileSpace));
      RAD_H5(H5Sselect_none(memSpace));
    }
    io(fileSpace, memSpace, dxpl, begin, count);
  }
}

namespace {

// /formfactors/F [n, n] stored as `fileType`, with its attributes; `write(dset)` writes the rows.
void WriteFormFactorDataset(hid_t file, long long n, hid_t fileType, const Attributes &attributes,
                            const std::function<void(hid_t)> &write) {
  H5Handle group(RAD_H5(H5Gcreate2(file, "formfactors", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  const hsize_t dims[2] = {hsize_t(n), hsize_t(n)};
  H5Handle space(RAD_H5(H5Screate_simple(2, dims, nullptr)));
  H5Handle dset(RAD_H5(H5Dcreate2(group, "F", fileType, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  write(dset);
  for (const auto &[k, v] : attributes.strings) WriteStringAttribute(dset, k, v);
  for (const auto &[k, v] : attributes.numbers) WriteDoubleAttribute(dset, k, v);
}

}  // namespace

void RadiosityFileWriter::WriteFormFactors(const FormFactorRows &f, const Attributes &attributes) {
  RAD_CHECK(f.IsDense(), "WriteFormFactors: CSR rows are written by WriteCsrFormFactors");
  // Stored as held, so that HDF5 converts nothing (a type conversion would break collective I/O).
  const bool narrow = f.precision == Precision::kFloat;
  const long long n = f.n;
  WriteFormFactorDataset(file_, n, narrow ? H5T_IEEE_F32LE : H5T_IEEE_F64LE, attributes, [&](hid_t dset) {
    ForEachRowBlock(comm_, dset, n, narrow ? 4 : 8, f.rows,
                    [&](hid_t fileSpace, hid_t memSpace, hid_t dxpl, long long begin, long long count) {
                      const size_t first = size_t(begin) * size_t(n);
                      if (narrow)
                        RAD_H5(H5Dwrite(dset, H5T_NATIVE_FLOAT, memSpace, fileSpace, dxpl,
                                        count > 0 ? f.f32.data() + first : nullptr));
                      else
                        RAD_H5(H5Dwrite(dset, H5T_NATIVE_DOUBLE, memSpace, fileSpace, dxpl,
                                        count > 0 ? f.f64.data() + first : nullptr));
                    });
  });
}

void RadiosityFileWriter::WriteRadiosity(const std::vector<double> &radiance, const std::vector<double> &residuals,
                                         const Attributes &attributes) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  H5Handle group(RAD_H5(H5Gcreate2(file_, "radiosity", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  const hsize_t n = radiance.size() / 3;
  WriteFromRankZero(group, "B", H5T_IEEE_F64LE, {n, 3}, radiance.data(), H5T_NATIVE_DOUBLE, rank == 0);
  WriteFromRankZero(group, "residual", H5T_IEEE_F64LE, {hsize_t(residuals.size())}, residuals.data(),
                    H5T_NATIVE_DOUBLE, rank == 0);
  for (const auto &[k, v] : attributes.strings) WriteStringAttribute(group, k, v);
  for (const auto &[k, v] : attributes.numbers) WriteDoubleAttribute(group, k, v);
  cellFields_.push_back({"/radiosity/B", 3});
}

void RadiosityFileWriter::WriteLightmapTexels(const std::vector<int32_t> &pageColumnRow, const std::vector<float> &uv,
                                              const Attributes &attributes) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  H5Handle group(RAD_H5(H5Gcreate2(file_, "lightmap", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  WriteFromRankZero(group, "texel", H5T_STD_I32LE, {hsize_t(pageColumnRow.size() / 3), 3}, pageColumnRow.data(),
                    H5T_NATIVE_INT32, rank == 0);
  WriteFromRankZero(group, "uv", H5T_IEEE_F32LE, {hsize_t(uv.size() / 8), 4, 2}, uv.data(), H5T_NATIVE_FLOAT,
                    rank == 0);
  for (const auto &[k, v] : attributes.strings) WriteStringAttribute(group, k, v);
  for (const auto &[k, v] : attributes.numbers) WriteDoubleAttribute(group, k, v);
}

void RadiosityFileWriter::WritePathTrace(const std::vector<double> &radiance, const std::vector<double> &standardError,
                                         const Attributes &attributes) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  RAD_CHECK(rank != 0 || radiance.size() == standardError.size(), "WritePathTrace: B and stderr differ in size");
  H5Handle group(RAD_H5(H5Gcreate2(file_, "pathtrace", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  // Every rank must create the datasets with the same shape; only rank 0 holds the data.
  unsigned long long n = radiance.size() / 3;
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm_);
  WriteFromRankZero(group, "B", H5T_IEEE_F64LE, {hsize_t(n), 3}, radiance.data(), H5T_NATIVE_DOUBLE, rank == 0);
  WriteFromRankZero(group, "stderr", H5T_IEEE_F64LE, {hsize_t(n), 3}, standardError.data(), H5T_NATIVE_DOUBLE,
                    rank == 0);
  for (const auto &[k, v] : attributes.strings) WriteStringAttribute(group, k, v);
  for (const auto &[k, v] : attributes.numbers) WriteDoubleAttribute(group, k, v);
}

void RadiosityFileWriter::WritePatchValues(const std::string &group,
                                           const std::vector<std::pair<std::string, std::vector<double>>> &values,
                                           const Attributes &attributes) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  const bool exists = H5Lexists(file_, group.c_str(), H5P_DEFAULT) > 0;  // e.g. /formfactors, with F in it
  H5Handle g(exists ? RAD_H5(H5Gopen2(file_, group.c_str(), H5P_DEFAULT))
                    : RAD_H5(H5Gcreate2(file_, group.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  for (const auto &[name, v] : values) {
    unsigned long long n = v.size();  // every rank creates the dataset with rank 0's shape
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm_);
    WriteFromRankZero(g, name.c_str(), H5T_IEEE_F64LE, {hsize_t(n)}, v.data(), H5T_NATIVE_DOUBLE, rank == 0);
    cellFields_.push_back({"/" + group + "/" + name, 1});
  }
  for (const auto &[k, v] : attributes.strings) WriteStringAttribute(g, k, v);
  for (const auto &[k, v] : attributes.numbers) WriteDoubleAttribute(g, k, v);
}

void RadiosityFileWriter::WriteFileAttributes(const Attributes &attributes) {
  for (const auto &[k, v] : attributes.strings) WriteStringAttribute(file_, k, v);
  for (const auto &[k, v] : attributes.numbers) WriteDoubleAttribute(file_, k, v);
}

void RadiosityFileWriter::Commit() {
  // `complete` only after every rank's writes went through, and the rename only after they reached the disk.
  std::string failed;
  const auto refuse = [&] {
    // HDF5 1.10 cannot close a file whose writes failed: H5Fclose fails, and the next close of it (ours, or
    // the library's own at MPI_Finalize) crashes. The file is left open, its temporary removed now, and the
    // process ends without finalizing the library (main, H5LibraryUnusable).
    file_.Release();
    MarkH5LibraryUnusable();
    int rank = 0;
    MPI_Comm_rank(comm_, &rank);
    if (rank == 0) std::remove(partial_.Partial().c_str());
    throw InputError(partial_.Path() + ": cannot write the HDF5 file (" + failed +
                     " failed; is the disk full?); nothing was written under that name");
  };
  if (guard_.AnyFailed(comm_, &failed)) refuse();
  {
    H5Handle attr(RAD_H5(H5Aopen(file_, "complete", H5P_DEFAULT)));
    const long long one = 1;
    RAD_H5(H5Awrite(attr, H5T_NATIVE_LLONG, &one));
  }
  RAD_H5(H5Fflush(file_, H5F_SCOPE_GLOBAL));
  if (guard_.AnyFailed(comm_, &failed)) refuse();
  file_.Reset();
  H5garbage_collect();
  partial_.Commit();
  if (patchCount_ >= 0) WriteXdmf();
}

std::string XdmfPath(const std::string &hdf5Path) {
  const std::filesystem::path path(hdf5Path);
  if (path.extension() == ".h5" || path.extension() == ".hdf5") return std::filesystem::path(path).replace_extension(".xmf").string();
  return hdf5Path + ".xmf";
}

void RadiosityFileWriter::WriteXdmf() const {
  const std::string file = std::filesystem::path(partial_.Path()).filename().string();  // beside it: relative
  const long long n = patchCount_;
  auto item = [&](const std::string &dims, const char *type, const std::string &path) {
    return "<DataItem Dimensions=\"" + dims + "\" NumberType=\"" + type + "\" Precision=\"8\" Format=\"HDF\">" + file +
           ":" + path + "</DataItem>";
  };
  std::ostringstream x;
  x << "<?xml version=\"1.0\" ?>\n"
    << "<!-- The patches of " << file << " for ParaView and VisIt (XDMF 3): each patch a quadrilateral of its four "
       "corners (a triangle repeats its third), per-patch datasets as cell data. -->\n"
    << "<Xdmf Version=\"3.0\">\n <Domain>\n  <Grid Name=\"patches\" GridType=\"Uniform\">\n"
    << "   <Topology TopologyType=\"Quadrilateral\" NumberOfElements=\"" << n << "\">\n    "
    << item(std::to_string(n) + " 4", "Int", "/xdmf/cells") << "\n   </Topology>\n"
    << "   <Geometry GeometryType=\"XYZ\">\n    " << item(std::to_string(4 * n) + " 3", "Float", "/xdmf/points")
    << "\n   </Geometry>\n";
  for (const CellField &field : cellFields_) {
    std::string name = field.path.substr(1);
    std::replace(name.begin(), name.end(), '/', '_');  // "radiosity_B", "thermal_heat_flux"
    const bool integer = field.path == "/patches/face";
    x << "   <Attribute Name=\"" << name << "\" AttributeType=\"" << (field.components == 3 ? "Vector" : "Scalar")
      << "\" Center=\"Cell\">\n    "
      << item(std::to_string(n) + (field.components == 3 ? " 3" : ""), integer ? "Int" : "Float", field.path)
      << "\n   </Attribute>\n";
  }
  x << "  </Grid>\n </Domain>\n</Xdmf>\n";
  OnRankZero(comm_, [&] { WriteFileAtomically(XdmfPath(partial_.Path()), x.str(), "the XDMF description"); });
}

}  // namespace rad
