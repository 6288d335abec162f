// The validation stage (`radiosity validate`): one scene, one camera (ChooseCamera, once), three renderers in
// this process: the radiosity pipeline (form factors, solve, render, as `run` does), the path tracer and the VPL
// renderer. The path-traced image is the reference for the other two; the path tracer is also checked against
// itself (MSE against a longer render, which must fall like 1/spp). Everything lands in one folder with
// report.html.
#pragma once

#include <string>

#include "pipeline/execution.h"
#include "pipeline/form_factor_stage.h"
#include "pipeline/render_stage.h"
#include "pipeline/solve_stage.h"

namespace rad {

struct ValidateOptions {
  std::string outputDir;
  FormFactorJobOptions formFactors;
  SolveStepOptions solve;
  RenderStepOptions render;  // the radiosity image; its camera options are everyone's
  int samplesPerPixel = 64;  // path tracer
  int referenceSpp = 0;      // 0: 4 x samplesPerPixel
  long long vpls = 1024;
  std::string python = "/usr/bin/python3";
};

// Collective. Returns the exit code: 0, or kExitNotConverged when the solve did not converge (then the
// report is still written) or diverged (then nothing is).
int RunValidation(ValidateOptions o, Execution &exec);

}  // namespace rad
