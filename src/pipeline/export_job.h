// The export job (`radiosity export`): F from any file `solve` reads to MatrixMarket, PETSc binary, raw or CSR
// HDF5, written by all ranks together.
#pragma once

#include <string>

#include "pipeline/scene_input.h"
#include "scene/patch.h"

namespace rad {

struct ExportJobOptions {
  std::string formfactors, format, output, precision;
  std::string groups = "polygon", zone;  // --format groups|energyplus
  SceneInput input;
  Meshing meshing;
  double dropBelow = 0;
  bool quiet = false;
  std::string memoryLimit;
};

// Collective. Returns the exit code.
int RunExportJob(const ExportJobOptions &o);

}  // namespace rad
