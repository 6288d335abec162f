// The form factors named by a command's --formfactors option, in any format `solve` takes (detected from the
// file's first bytes): HDF5 (dense or CSR), raw, MatrixMarket, PETSc binary. The last three hold no patches;
// they are made again from --input and --subdiv.
#pragma once

#include <string>

#include "cli/commands.h"
#include "formfactor/distribution.h"
#include "formfactor_input.h"

namespace rad {

// Collective (MPI_COMM_WORLD). InputError naming the file for a missing or malformed file, or a non-HDF5 file
// without `scene` files.
FormFactorInput ReadFormFactorFile(const std::string &path, const SceneInput &scene, int subdiv,
                                   Distribution distribution);

}  // namespace rad
