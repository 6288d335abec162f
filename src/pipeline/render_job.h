// The render job (`radiosity render`): /patches and /radiosity/B from a file -> image (PNG, EXR) and PLY mesh.
#pragma once

#include <string>

#include "pipeline/execution.h"
#include "pipeline/render_stage.h"

namespace rad {

struct RenderJobOptions {
  std::string radiosity, timings;
  RenderStepOptions step;
};

// Collective. Returns the exit code.
int RunRenderJob(RenderJobOptions o, Execution &exec);

}  // namespace rad
