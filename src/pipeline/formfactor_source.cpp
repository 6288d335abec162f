#include "pipeline/formfactor_source.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "formfactor/far_links.h"
#include "io/sparse_rows.h"
#include "pipeline/scene_stamp.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "util/agree.h"
#include "util/error.h"
#include "util/mpi_check.h"

namespace rad {

BeforeReadingRows CheckMemoryBeforeReading(const std::string &path, const std::string &memoryLimit,
                                           Distribution distribution, MemoryModel extra, MemoryBudget &budget) {
  return [=, &budget](const RowsToRead &read) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MemoryRequest request;
    request.what = path;
    request.patches = read.patches;
    request.rows = OwnedCount(read.patches, rank, size, distribution);
    request.model = extra;
    request.model.bytesPerEntry = read.storedAsFloat ? 4 : 8;
    if (read.storedEntries >= 0) {  // kept as CSR: the stored entries, their columns and the blocks read
      // Per entry its value and column, the column both as read (int32) and as held (16 bits: ReadCsrRowsAsCsr);
      // one block of columns and values as read (16 bytes an entry), and one row's entries being sorted (at most
      // N, 16 bytes each). Per far link, its target and value as read (int32, float) and its value in binary16,
      // beside its name and value as held (ReadFarLinks).
      const double entries = double(read.storedEntries);
      const double need = entries * (request.model.bytesPerEntry + 4 + 2) + double(read.farLinks) * (4 + 4 + 2 + 4) +
                          double(request.rows) * 8 +
                          double(read.patches) * (double(sizeof(Patch)) + 16 * sizeof(double)) + extra.fixedBytes +
                          16 * std::min(entries, double(kExportBlockEntries)) + 16 * std::min(entries, double(read.patches));
      budget = CheckMemoryNeed(MPI_COMM_WORLD, need, memoryLimit, [&](double worst, double limit, const std::string &source) {
        return path + ": not enough memory for the rank's rows of F (CSR): a rank needs " + FormatBytes(worst) +
               " but may use " + FormatBytes(limit) + " (" + source + "); use more ranks or give each rank more memory";
      });
      return;
    }
    // The patches and the solver's vectors; a sparse file's row pointers and the blocks it is read in.
    request.model.bytesPerPatch += double(sizeof(Patch)) + 16 * sizeof(double) + (read.sparse ? 16 : 0);
    if (read.sparse) request.model.fixedBytes = std::max(request.model.fixedBytes, double(kExportBlockEntries) * 16);
    if (!read.storedAsFloat) request.floatHint = "a float32 matrix (formfactors --precision float)";
    budget = CheckMemory(MPI_COMM_WORLD, request, memoryLimit);
  };
}

namespace {

// Every stored entry of F is a share of light: finite and not below 0 by more than rounding (the contour
// integrals of touching or grazing pairs give entries like -1.4e-13, within the cubature's tolerance). The first
// one that is not, on the lowest rank that holds one, is named (a negative or NaN entry gave a solve, and B,
// of no meaning).
constexpr double kLeastEntry = -1e-9;

void CheckEntries(MPI_Comm comm, const std::string &path, const FormFactorRows &f) {
  std::string bad;
  const long long stored = f.StoredEntries();
  for (long long k = 0; k < stored; ++k) {
    const double v = f.Value(size_t(k));
    if (std::isfinite(v) && v >= kLeastEntry) continue;
    size_t r = 0;
    long long j = 0;
    if (f.IsDense()) {
      r = size_t(k / f.n);
      j = k % f.n;
    } else {
      r = size_t(std::upper_bound(f.indptr.begin(), f.indptr.end(), k) - f.indptr.begin() - 1);
      j = f.ColumnOf(r, k);
    }
    char text[160];
    std::snprintf(text, sizeof text, ": F[%lld][%lld] is %g; form factors are finite and >= 0 (to %g)", f.rows[r], j,
                  v, kLeastEntry);
    bad = path + text;
    break;
  }
  AgreeOrThrow(comm, bad.empty(), bad);
}

}  // namespace

FormFactorInput ReadFormFactorFile(const std::string &path, const SceneInput &scene, const Meshing &meshing,
                                   Distribution distribution, const BeforeReadingRows &beforeReading, bool keepCsr,
                                   bool csrInBlocks) {
  int format = 0;
  OnRankZero(MPI_COMM_WORLD, [&] {
    if (!std::ifstream(path).good()) throw InputError(path + ": cannot open (missing or unreadable)");
    format = int(DetectMatrixFileFormat(path));
  });
  RAD_MPI(MPI_Bcast(&format, 1, MPI_INT, 0, MPI_COMM_WORLD));
  const MatrixFileFormat f = MatrixFileFormat(format);
  if (f == MatrixFileFormat::kHdf5) {
    FormFactorInput in = ReadFormFactorsHdf5(MPI_COMM_WORLD, path, distribution, beforeReading, keepCsr, csrInBlocks);
    CheckEntries(MPI_COMM_WORLD, path, in.f);
    return in;
  }

  if (scene.files.empty())
    throw InputError(path + ": a " + std::string(MatrixFileFormatName(f)) + " matrix file" +
                     (f == MatrixFileFormat::kRaw ? " (not HDF5, MatrixMarket or PETSc, so read as raw)" : "") +
                     " holds no patches: give --input (and --subdiv) for the scene it was computed for");
  const Scene loaded = LoadSceneInput(scene);  // every rank; a bad scene fails alike
  const Meshing resolved = ResolveMeshing(loaded, meshing);
  std::vector<Patch> patches = MakePatches(loaded, resolved);
  // The file holds no patches: its stamp, where it has one, must name this scene and meshing.
  const KeyValues stamp = MakeSceneStamp(scene, resolved, (long long)patches.size());
  CheckSceneStamp(MPI_COMM_WORLD, path, stamp);
  if (beforeReading) beforeReading(RowsToRead{(long long)patches.size(), false, f != MatrixFileFormat::kRaw});
  FormFactorInput in;
  switch (f) {
    case MatrixFileFormat::kMatrixMarket:
      in = ReadFormFactorsMatrixMarket(MPI_COMM_WORLD, path, std::move(patches), distribution);
      break;
    case MatrixFileFormat::kPetsc:
      in = ReadFormFactorsPetsc(MPI_COMM_WORLD, path, std::move(patches), distribution);
      break;
    default:
      in = ReadFormFactorsRaw(MPI_COMM_WORLD, path, std::move(patches), distribution);
      break;
  }
  in.scene = scene.Attribute();
  in.stamp = stamp;
  CheckEntries(MPI_COMM_WORLD, path, in.f);
  return in;
}

long long SpreadFarLinks(FormFactorRows &f, const std::string &source, const std::string &memoryLimit) {
  if (f.links.Empty()) return 0;
  const long long links = f.links.LinkCount();
  double bound = 0;
  for (long long b : ExpandedEntryBounds(f)) bound += double(b);
  const double need = f.StoredBytes() + double(links) * 12 + bound * 12 + double(f.n) * 13;
  CheckMemoryNeed(MPI_COMM_WORLD, need, memoryLimit, [&](double worst, double limit, const std::string &from) {
    return source + ": not enough memory to spread the hierarchical operator's far links into entries: a rank "
           "needs up to " + FormatBytes(worst) + " but may use " + FormatBytes(limit) + " (" + from +
           "); use more ranks or give each rank more memory";
  });
  if (f.precision == Precision::kFloat) {
    f.f64.assign(f.f32.begin(), f.f32.end());
    f.f32 = {};
    f.precision = Precision::kDouble;
  }
  ExpandFarLinks(f);
  return links;
}

}  // namespace rad
