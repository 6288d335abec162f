// The instant-radiosity job (`radiosity vpl`): an image of a scene lit by virtual point lights, an independent
// check of the radiosity pipeline's images, with the three published accelerations as options.
#pragma once

#include <string>

#include "pipeline/execution.h"
#include "pipeline/render_stage.h"
#include "pipeline/scene_input.h"
#include "vpl/vpl_renderer.h"

namespace rad {

struct VplJobOptions {
  SceneInput input;
  std::string timings;
  VplOptions vpl;
  RenderStepOptions step;
};

// Collective. Returns the exit code.
int RunVplJob(VplJobOptions o, Execution &exec);

}  // namespace rad
