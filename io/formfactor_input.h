// The patches and this rank's rows of F, read back from the files `formfactors` and `export` write: the HDF5
// file with dense /formfactors/F (parallel HDF5, one collective strided hyperslab read per row block) or CSR
// /formfactors/indptr, indices, data; or, with the patches made again from the scene, the raw matrix (MPI I/O),
// a MatrixMarket file or a PETSc binary matrix. Rank 0 validates the file first, so a bad file fails on every
// rank alike. Sparse files are expanded into the rank's dense rows (the solver works on dense rows).
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "formfactor/form_factor_rows.h"
#include "scene/patch.h"
#include "util/decomposition.h"

namespace rad {

struct FormFactorInput {
  std::vector<Patch> patches;
  // This rank's rows, in the stored precision (float32 stays float32: half the memory traffic; raw,
  // MatrixMarket and PETSc files are float64).
  FormFactorRows f;
  std::string scene;            // the input scene recorded in the file, if any
  // What F was computed for (pipeline/scene_stamp.h), from the HDF5 file's attributes: the scene files' hash,
  // the meshing, the patch count (empty if the file does not say).
  std::vector<std::pair<std::string, std::string>> stamp;
  std::string layout;           // how F was stored, for messages ("HDF5 dense", "HDF5 CSR", "MatrixMarket", ...)
  long long PatchCount() const { return (long long)patches.size(); }
};

// True if `path` starts with the HDF5 signature (otherwise it is taken for a raw matrix file).
bool IsHdf5File(const std::string &path);

// A form-factor file's format, from its first bytes: the HDF5 signature, "%%MatrixMarket", PETSc's big-endian
// MAT_FILE_CLASSID; anything else is taken for a raw matrix (whose size is then checked).
enum class MatrixFileFormat { kHdf5, kMatrixMarket, kPetsc, kRaw };
MatrixFileFormat DetectMatrixFileFormat(const std::string &path);
const char *MatrixFileFormatName(MatrixFileFormat format);

// Called collectively, on every rank, once a file's N and stored precision are known and before any rows are
// allocated or read: the memory check of the commands that hold F (memory_budget.h) throws from here.
struct RowsToRead {
  long long patches = 0;
  bool storedAsFloat = false;  // read as float32 (HDF5 dense or CSR with 4-byte data); otherwise float64
  bool sparse = false;         // CSR, MatrixMarket or PETSc: read in blocks and scattered into dense rows
  long long storedEntries = -1;  // an HDF5 CSR file kept as CSR: this rank's stored entries (else -1)
  long long farLinks = 0;        // and its rows' far links (the hierarchical operator's)
};
using BeforeReadingRows = std::function<void(const RowsToRead &)>;

// Collective. With `keepCsr`, a CSR file's rows stay CSR (FormFactorRows::IsCsr), for the solver; else every
// file is read into dense rows. `csrInBlocks`: rows kept as CSR are split in blocks whatever `distribution`
// says, as the form-factor stage splits them (so that a tree node's patches lie on few ranks).
FormFactorInput ReadFormFactorsHdf5(MPI_Comm comm, const std::string &path, Distribution distribution,
                                    const BeforeReadingRows &beforeReading = {}, bool keepCsr = false,
                                    bool csrInBlocks = false);

// Collective. `patches` (made from the scene, identical on every rank) must match the file's N.
FormFactorInput ReadFormFactorsRaw(MPI_Comm comm, const std::string &path, std::vector<Patch> patches,
                                   Distribution distribution);
FormFactorInput ReadFormFactorsMatrixMarket(MPI_Comm comm, const std::string &path, std::vector<Patch> patches,
                                            Distribution distribution);
FormFactorInput ReadFormFactorsPetsc(MPI_Comm comm, const std::string &path, std::vector<Patch> patches,
                                     Distribution distribution);

// Collective: rank 0's patches (and the length of the vector) to every rank.
void BroadcastPatches(MPI_Comm comm, std::vector<Patch> &patches);

// Collective: rank 0's text to every rank.
void BroadcastString(MPI_Comm comm, std::string &text);

}  // namespace rad
