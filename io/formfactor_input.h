// The patches and this rank's rows of F, read back from the files `formfactors` writes: the HDF5 file
// (parallel HDF5, one collective strided hyperslab read per row block) or the raw matrix (MPI I/O, with the
// patches made again from the scene). Rank 0 validates the file first, so a bad file fails on every rank alike.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "formfactor/distribution.h"
#include "scene/patch.h"

namespace rad {

struct FormFactorInput {
  std::vector<Patch> patches;
  std::vector<long long> rows;  // this rank's rows
  std::vector<double> f64;      // rows.size() x n, filled when F is stored as float64 (and for raw files)
  std::vector<float> f32;       // filled instead when F is stored as float32 (half the memory traffic)
  std::string scene;            // the input scene recorded in the file, if any
  long long PatchCount() const { return (long long)patches.size(); }
};

// True if `path` starts with the HDF5 signature (otherwise it is taken for a raw matrix file).
bool IsHdf5File(const std::string &path);

// Collective.
FormFactorInput ReadFormFactorsHdf5(MPI_Comm comm, const std::string &path, Distribution distribution);

// Collective. `patches` (made from the scene, identical on every rank) must match the file's N.
FormFactorInput ReadFormFactorsRaw(MPI_Comm comm, const std::string &path, std::vector<Patch> patches,
                                   Distribution distribution);

// Collective: rank 0's patches (and the length of the vector) to every rank.
void BroadcastPatches(MPI_Comm comm, std::vector<Patch> &patches);

// Collective: rank 0's text to every rank.
void BroadcastString(MPI_Comm comm, std::string &text);

}  // namespace rad
