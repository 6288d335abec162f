// The form factors named by a command's --formfactors option, in any format `solve` takes (detected from the
// file's first bytes): HDF5 (dense or CSR), raw, MatrixMarket, PETSc binary. The last three hold no patches;
// they are made again from --input and --subdiv.
#pragma once

#include <string>

#include "io/formfactor_input.h"
#include "pipeline/scene_input.h"
#include "scene/patch.h"
#include "util/decomposition.h"
#include "util/memory_budget.h"

namespace rad {

// Collective (MPI_COMM_WORLD). InputError naming the file for a missing or malformed file, or a non-HDF5 file
// without `scene` files (whose patches are made as `meshing` says). `beforeReading` is called on every rank once N
// and the stored precision are known, before the rows are allocated. With `keepCsr`, an HDF5 CSR file's rows
// stay CSR (the solver's choice); other files, and all files without it, are read into dense rows.
// `csrInBlocks`: as ReadFormFactorsHdf5's.
FormFactorInput ReadFormFactorFile(const std::string &path, const SceneInput &scene, const Meshing &meshing,
                                   Distribution distribution, const BeforeReadingRows &beforeReading = {},
                                   bool keepCsr = false, bool csrInBlocks = false);

// The memory check of a command that reads F into memory (`solve`, `export`): what a rank holds for the rows
// it reads, plus `extra` (the command's own buffers), against --memory-limit `memoryLimit` (memory_budget.h).
// Returns the outcome for the progress line through `budget`.
BeforeReadingRows CheckMemoryBeforeReading(const std::string &path, const std::string &memoryLimit,
                                           Distribution distribution, MemoryModel extra, MemoryBudget &budget);

// Collective. The hierarchical operator's far links of `f` spread into its CSR entries (ExpandFarLinks: the same
// operator the solver applies, entries plus far field), for what reads F as a matrix (`export`, `thermal`,
// `--solver gmres`); float entries widened to double first. Checked against --memory-limit `memoryLimit` before
// anything grows: InputError naming `source` when a rank would not have the room. Returns this rank's links (0,
// and nothing done, without links).
long long SpreadFarLinks(FormFactorRows &f, const std::string &source, const std::string &memoryLimit);

}  // namespace rad
