#include "cli/formfactor_source.h"

#include <fstream>

#include "scene/patch.h"
#include "scene/scene.h"
#include "util/agree.h"
#include "util/error.h"
#include "util/mpi_check.h"

namespace rad {

FormFactorInput ReadFormFactorFile(const std::string &path, const SceneInput &scene, int subdiv,
                                   Distribution distribution) {
  int format = 0;
  OnRankZero(MPI_COMM_WORLD, [&] {
    if (!std::ifstream(path).good()) throw InputError(path + ": cannot open (missing or unreadable)");
    format = int(DetectMatrixFileFormat(path));
  });
  RAD_MPI(MPI_Bcast(&format, 1, MPI_INT, 0, MPI_COMM_WORLD));
  const MatrixFileFormat f = MatrixFileFormat(format);
  if (f == MatrixFileFormat::kHdf5) return ReadFormFactorsHdf5(MPI_COMM_WORLD, path, distribution);

  if (scene.files.empty())
    throw InputError(path + ": a " + std::string(MatrixFileFormatName(f)) + " matrix file" +
                     (f == MatrixFileFormat::kRaw ? " (not HDF5, MatrixMarket or PETSc, so read as raw)" : "") +
                     " holds no patches: give --input (and --subdiv) for the scene it was computed for");
  std::vector<Patch> patches = MakePatches(LoadSceneInput(scene), subdiv);  // every rank; a bad scene fails alike
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
