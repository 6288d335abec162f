// The solve job (`radiosity solve`): patches and rows of F from a file -> distributed solve -> /patches and
// /radiosity.
#pragma once

#include <string>

#include "util/decomposition.h"
#include "pipeline/execution.h"
#include "pipeline/scene_input.h"
#include "pipeline/solve_stage.h"
#include "scene/patch.h"

namespace rad {

struct SolveJobOptions {
  std::string formfactors, output, timings;
  Distribution distribution = Distribution::kCyclic;
  // --distribution not given: a CSR file's rows go in blocks (as the form-factor stage splits them, so that the
  // sweeps' node sums lie with their patches: solver/read_exchange.h), dense rows cyclically.
  bool distributionGiven = false;
  SceneInput input;
  Meshing meshing;
  std::string memoryLimit;
  SolveStepOptions step;
};

// Collective. Returns the exit code.
int RunSolveJob(SolveJobOptions o, Execution &exec);

}  // namespace rad
