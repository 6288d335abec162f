#include "pipeline/formfactor_source.h"

#include <algorithm>
#include <fstream>

#include "io/sparse_rows.h"
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
    // The patches and the solver's vectors; a sparse file's row pointers and the blocks it is read in.
    request.model.bytesPerPatch += double(sizeof(Patch)) + 16 * sizeof(double) + (read.sparse ? 16 : 0);
    if (read.sparse) request.model.fixedBytes = std::max(request.model.fixedBytes, double(kExportBlockEntries) * 16);
    if (!read.storedAsFloat) request.floatHint = "a float32 matrix (formfactors --precision float)";
    budget = CheckMemory(MPI_COMM_WORLD, request, memoryLimit);
  };
}

FormFactorInput ReadFormFactorFile(const std::string &path, const SceneInput &scene, const Meshing &meshing,
                                   Distribution distribution, const BeforeReadingRows &beforeReading) {
  int format = 0;
  OnRankZero(MPI_COMM_WORLD, [&] {
    if (!std::ifstream(path).good()) throw InputError(path + ": cannot open (missing or unreadable)");
    format = int(DetectMatrixFileFormat(path));
  });
  RAD_MPI(MPI_Bcast(&format, 1, MPI_INT, 0, MPI_COMM_WORLD));
  const MatrixFileFormat f = MatrixFileFormat(format);
  if (f == MatrixFileFormat::kHdf5) return ReadFormFactorsHdf5(MPI_COMM_WORLD, path, distribution, beforeReading);

  if (scene.files.empty())
    throw InputError(path + ": a " + std::string(MatrixFileFormatName(f)) + " matrix file" +
                     (f == MatrixFileFormat::kRaw ? " (not HDF5, MatrixMarket or PETSc, so read as raw)" : "") +
                     " holds no patches: give --input (and --subdiv) for the scene it was computed for");
  const Scene loaded = LoadSceneInput(scene);  // every rank; a bad scene fails alike
  std::vector<Patch> patches = MakePatches(loaded, ResolveMeshing(loaded, meshing));
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
  return in;
}

}  // namespace rad
