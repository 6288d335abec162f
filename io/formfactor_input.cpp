#include "io/formfactor_input.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <type_traits>

#include "io/csr_hdf5.h"
#include "io/far_links_hdf5.h"
#include "io/hdf5_util.h"
#include "io/matrix_market.h"
#include "io/petsc_binary.h"
#include "io/radiosity_file.h"
#include "io/radiosity_file_reader.h"
#include "io/raw_matrix.h"
#include "util/agree.h"
#include "util/memory_budget.h"
#include "util/mpi_check.h"

namespace rad {

bool IsHdf5File(const std::string &path) {
  static const char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  char head[8] = {};
  std::ifstream in(path, std::ios::binary);
  return in.read(head, 8) && std::memcmp(head, kSignature, 8) == 0;
}

MatrixFileFormat DetectMatrixFileFormat(const std::string &path) {
  if (IsHdf5File(path)) return MatrixFileFormat::kHdf5;
  if (IsMatrixMarketFile(path)) return MatrixFileFormat::kMatrixMarket;
  if (IsPetscMatrixFile(path)) return MatrixFileFormat::kPetsc;
  return MatrixFileFormat::kRaw;
}

const char *MatrixFileFormatName(MatrixFileFormat format) {
  switch (format) {
    case MatrixFileFormat::kHdf5: return "HDF5";
    case MatrixFileFormat::kMatrixMarket: return "MatrixMarket";
    case MatrixFileFormat::kPetsc: return "PETSc binary";
    case MatrixFileFormat::kRaw: return "raw";
  }
  return "?";
}

void BroadcastPatches(MPI_Comm comm, std::vector<Patch> &patches) {
  static_assert(std::is_trivially_copyable_v<Patch>, "patches travel as bytes");
  long long count = (long long)patches.size();
  RAD_MPI(MPI_Bcast(&count, 1, MPI_LONG_LONG, 0, comm));
  patches.resize(size_t(count));
  // In pieces below 2 GiB: MPI counts are ints.
  char *bytes = reinterpret_cast<char *>(patches.data());
  const size_t total = size_t(count) * sizeof(Patch), piece = size_t(1) << 30;
  for (size_t offset = 0; offset < total; offset += piece)
    RAD_MPI(MPI_Bcast(bytes + offset, int(std::min(piece, total - offset)), MPI_BYTE, 0, comm));
}

void BroadcastString(MPI_Comm comm, std::string &text) {
  int length = int(text.size());
  RAD_MPI(MPI_Bcast(&length, 1, MPI_INT, 0, comm));
  text.resize(size_t(length));
  RAD_MPI(MPI_Bcast(text.data(), length, MPI_CHAR, 0, comm));
}

namespace {

// Reads this rank's rows of /formfactors/F (stored type T) in collective rounds of at most ~256 MiB.
template <typename T>
void ReadRows(MPI_Comm comm, hid_t dset, long long n, const std::vector<long long> &rows, std::vector<T> &out) {
  const hid_t memType = std::is_same_v<T, double> ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
  AllocateOnEveryRank(comm, "the rank's rows of F", [&] { out.resize(rows.size() * size_t(n)); });
  ForEachRowBlock(comm, dset, n, sizeof(T), rows,
                  [&](hid_t fileSpace, hid_t memSpace, hid_t dxpl, long long begin, long long count) {
                    T *data = count > 0 ? out.data() + size_t(begin) * size_t(n) : nullptr;
                    RAD_H5(H5Dread(dset, memType, memSpace, fileSpace, dxpl, data));
                  });
}

}  // namespace

FormFactorInput ReadFormFactorsHdf5(MPI_Comm comm, const std::string &path, Distribution distribution,
                                    const BeforeReadingRows &beforeReading, bool keepCsr, bool csrInBlocks) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  FormFactorInput in;
  int storedAsFloat = 0, sparse = 0;
  CsrLayout csr;
  OnRankZero(comm, [&] {
    RadiosityFileReader file(path);
    if (!file.Complete()) throw InputError(path + ": incomplete file (complete != 1): the writer did not finish");
    sparse = !file.Has("/formfactors/F") && file.Has("/formfactors/indptr");
    if (!file.Has("/formfactors/F") && !sparse)
      throw InputError(path + ": neither /formfactors/F (dense) nor /formfactors/indptr (CSR): not a form-factor file");
    in.patches = file.ReadPatches();
    in.scene = file.RootString("input");
    for (const char *key : {"scene_files_fnv1a", "meshing"}) {
      const std::string value = file.RootString(key);
      if (!value.empty()) in.stamp.emplace_back(key, value);
    }
    if (!in.stamp.empty()) in.stamp.emplace_back("patches", std::to_string(in.patches.size()));
    if (sparse) {
      csr = InspectCsr(file.File(), path, (long long)in.patches.size());
      storedAsFloat = csr.dataIsFloat ? 1 : 0;
      return;
    }
    if (in.scene.empty()) {
      for (const auto &[k, v] : file.DatasetAttributes("/formfactors/F"))
        if (k == "input") in.scene = v;
    }
    H5Handle dset(RAD_H5(H5Dopen2(file.File(), "/formfactors/F", H5P_DEFAULT)));
    H5Handle space(RAD_H5(H5Dget_space(dset)));
    hsize_t dims[2] = {0, 0};
    if (H5Sget_simple_extent_ndims(space) != 2) throw InputError(path + ": /formfactors/F is not a matrix");
    RAD_H5(H5Sget_simple_extent_dims(space, dims, nullptr));
    const hsize_t n = in.patches.size();
    if (dims[0] != n || dims[1] != n)
      throw InputError(path + ": /formfactors/F is " + std::to_string(dims[0]) + " x " + std::to_string(dims[1]) +
                       " but there are " + std::to_string(n) + " patches");
    H5Handle type(RAD_H5(H5Dget_type(dset)));
    if (H5Tget_class(type) != H5T_FLOAT) throw InputError(path + ": /formfactors/F is not floating point");
    storedAsFloat = H5Tget_size(type) <= 4 ? 1 : 0;
  });
  BroadcastPatches(comm, in.patches);
  int flags[2] = {storedAsFloat, sparse};
  RAD_MPI(MPI_Bcast(flags, 2, MPI_INT, 0, comm));
  storedAsFloat = flags[0];
  sparse = flags[1];
  BroadcastString(comm, in.scene);
  long long stampKeys = (long long)in.stamp.size();
  RAD_MPI(MPI_Bcast(&stampKeys, 1, MPI_LONG_LONG, 0, comm));
  in.stamp.resize(size_t(stampKeys));
  for (auto &[key, value] : in.stamp) {
    BroadcastString(comm, key);
    BroadcastString(comm, value);
  }
  const long long n = in.PatchCount();
  in.f.n = n;
  if (sparse && keepCsr && csrInBlocks) distribution = Distribution::kBlock;
  in.f.rows = OwnedRows(n, rank, size, distribution);
  in.f.precision = storedAsFloat ? Precision::kFloat : Precision::kDouble;
  RowsToRead read{n, storedAsFloat != 0, sparse != 0};
  if (sparse) {
    csr.dataIsFloat = storedAsFloat != 0;
    csr.indptr.resize(size_t(n) + 1);
    RAD_MPI(MPI_Bcast(csr.indptr.data(), int(csr.indptr.size()), MPI_LONG_LONG, 0, comm));
    int links = csr.linkPtr.empty() ? 0 : 1;
    RAD_MPI(MPI_Bcast(&links, 1, MPI_INT, 0, comm));
    if (links) {
      csr.linkPtr.resize(size_t(n) + 1);
      RAD_MPI(MPI_Bcast(csr.linkPtr.data(), int(csr.linkPtr.size()), MPI_LONG_LONG, 0, comm));
      if (!keepCsr)
        throw InputError(path + ": the hierarchical operator's F (CSR entries and far links) is read as CSR only "
                         "(`solve`; `export` to mtx, petsc or csr): its entries alone would leave out the far field");
    }
    if (keepCsr) {
      read.storedEntries = 0;
      for (long long i : in.f.rows) {
        read.storedEntries += csr.indptr[size_t(i) + 1] - csr.indptr[size_t(i)];
        if (links) read.farLinks += csr.linkPtr[size_t(i) + 1] - csr.linkPtr[size_t(i)];
      }
    }
  }
  if (beforeReading) beforeReading(read);

  H5Handle fapl(RAD_H5(H5Pcreate(H5P_FILE_ACCESS)));
  RAD_H5(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL));
  H5Handle file(RAD_H5(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl)));
  if (sparse) {
    in.layout = "HDF5 CSR";
    if (keepCsr) {
      ReadCsrRowsAsCsr(comm, file, path, csr, in.f);
      if (!csr.linkPtr.empty()) ReadFarLinks(comm, file, path, csr.linkPtr, in.patches, in.f);
    }
    else ReadCsrRows(comm, file, path, csr, n, in.f.rows, in.f.f64, in.f.f32);
    return in;
  }
  in.layout = "HDF5 dense";
  H5Handle dset(RAD_H5(H5Dopen2(file, "/formfactors/F", H5P_DEFAULT)));
  // Read in the stored precision, so that HDF5 converts nothing (conversion would break collective I/O).
  if (storedAsFloat) ReadRows(comm, dset, n, in.f.rows, in.f.f32);
  else ReadRows(comm, dset, n, in.f.rows, in.f.f64);
  return in;
}

FormFactorInput ReadFormFactorsRaw(MPI_Comm comm, const std::string &path, std::vector<Patch> patches,
                                   Distribution distribution) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  FormFactorInput in;
  in.patches = std::move(patches);
  const long long n = in.PatchCount();
  OnRankZero(comm, [&] {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw InputError(path + ": cannot open (missing or unreadable)");
    int32_t header = 0;
    if (!file.read(reinterpret_cast<char *>(&header), 4)) throw InputError(path + ": too short for a raw matrix file");
    if (header != n)
      throw InputError(path + ": the raw matrix is for N = " + std::to_string(header) + " patches, but --input and " +
                       "--subdiv give " + std::to_string(n));
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    const unsigned long long expected = 4ULL + 8ULL * (unsigned long long)n * (unsigned long long)n;
    if (ec || bytes != expected)
      throw InputError(path + ": " + std::to_string(bytes) + " bytes, expected " + std::to_string(expected) +
                       " (int32 N and N*N float64)");
  });
  in.f.n = n;
  in.f.rows = OwnedRows(n, rank, size, distribution);
  in.f.f64 = ReadRawMatrixRows(comm, path, n, in.f.rows);
  in.layout = "raw";
  return in;
}

namespace {

// A dense-rows input whose patches come from the scene: this rank's rows, read by `readRows(comm, path, n, rows)`.
template <typename ReadRows>
FormFactorInput ReadRowsForScene(MPI_Comm comm, const std::string &path, std::vector<Patch> patches,
                                 Distribution distribution, const char *layout, ReadRows &&readRows) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  FormFactorInput in;
  in.patches = std::move(patches);
  in.f.n = in.PatchCount();
  in.f.rows = OwnedRows(in.PatchCount(), rank, size, distribution);
  in.f.f64 = readRows(comm, path, in.PatchCount(), in.f.rows);
  in.layout = layout;
  return in;
}

}  // namespace

FormFactorInput ReadFormFactorsMatrixMarket(MPI_Comm comm, const std::string &path, std::vector<Patch> patches,
                                            Distribution distribution) {
  return ReadRowsForScene(comm, path, std::move(patches), distribution, "MatrixMarket", ReadMatrixMarketRows);
}

FormFactorInput ReadFormFactorsPetsc(MPI_Comm comm, const std::string &path, std::vector<Patch> patches,
                                     Distribution distribution) {
  return ReadRowsForScene(comm, path, std::move(patches), distribution, "PETSc binary", ReadPetscBinaryRows);
}

}  // namespace rad
