// The thermal job (`radiosity thermal`): gray-body radiative exchange by the net-radiation method
// (solver/gray_body.h) on a form-factor file: per material an emissivity and a fixed temperature, a fixed net
// flux or no net flux (thermal_properties.h); the radiosity J solved with the distributed solvers; per patch the
// irradiation G, the net flux q = J - G and the temperature; per material the heat rate; the energy balance.
#pragma once

#include <string>

#include "pipeline/execution.h"
#include "pipeline/scene_input.h"
#include "pipeline/solve_stage.h"
#include "scene/patch.h"
#include "util/decomposition.h"

namespace rad {

struct ThermalJobOptions {
  std::string formfactors, properties, output, timings, groupsCsv;
  Distribution distribution = Distribution::kCyclic;
  bool distributionGiven = false;  // not given: a CSR file's rows in blocks, as SolveJobOptions's
  SceneInput input;  // the scene F was computed for: its materials
  Meshing meshing;
  std::string memoryLimit;
  SolveStepOptions step;
};

// Collective. Returns the exit code.
int RunThermalJob(ThermalJobOptions o, Execution &exec);

}  // namespace rad
