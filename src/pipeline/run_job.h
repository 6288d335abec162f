// The whole job (`radiosity run`): the form-factor matrix kept in memory (each rank its own rows): scene -> F ->
// distributed solve -> image. With --refine, F and the solve are done again on patches split where the last
// solve's B varies (refinement.h), and the image and files come from the last. Writes radiosity.h5, image.png, image.exr, timings.json and summary.txt into the
// output folder.
#pragma once

#include <string>

#include "pipeline/execution.h"
#include "pipeline/form_factor_stage.h"
#include "pipeline/render_stage.h"
#include "pipeline/solve_stage.h"
#include "refine/refinement.h"

namespace rad {

struct RunJobOptions {
  std::string outputDir;
  bool saveFormFactors = false, raw = false, ply = false;
  FormFactorJobOptions formFactors;
  SolveStepOptions solve;
  RenderStepOptions render;
  RefinementOptions refine;  // --refine: solve, split where B varies, and again
};

// Collective. Returns the exit code.
int RunWholeJob(RunJobOptions o, Execution &exec);

}  // namespace rad
