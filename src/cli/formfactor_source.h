// The form factors named by a command's --formfactors option, in any format `solve` takes (detected from the
// file's first bytes): HDF5 (dense or CSR), raw, MatrixMarket, PETSc binary. The last three hold no patches;
// they are made again from --input and --subdiv.
#pragma once

#include <string>

#include "formfactor/distribution.h"
#include "formfactor_input.h"
#include "scene/patch.h"

namespace rad {

// Collective (MPI_COMM_WORLD). InputError naming the file for a missing or malformed file, or a non-HDF5 file
// without `scene`.
FormFactorInput ReadFormFactorFile(const std::string &path, const std::string &scene, const Meshing &meshing, bool strict,
                                   Distribution distribution);

}  // namespace rad
