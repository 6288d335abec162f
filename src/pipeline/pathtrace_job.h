// The path-tracing job (`radiosity pathtrace`): a reference image (PNG, EXR) by unbiased path tracing and/or a
// Monte Carlo estimate of every patch's outgoing radiance (HDF5, /pathtrace/B and /pathtrace/stderr), in the
// radiance units of the radiosity solution, to check it against.
#pragma once

#include <string>

#include "pipeline/execution.h"
#include "pipeline/path_trace_backend.h"
#include "pipeline/render_stage.h"
#include "pipeline/scene_input.h"
#include "scene/patch.h"

namespace rad {

struct PathTraceJobOptions {
  SceneInput input;
  std::string png, exr, patchEstimates, timings;
  CameraOptions camera;
  int samplesPerPixel = 64;
  int maxDepth = 64;
  int rouletteDepth = 3;
  double rouletteThreshold = 0.1;
  int patchSamples = 64;
  Meshing meshing;
  unsigned long long seed = 1;
  double exposure = 0;
  long long gpuBatch = kGpuPathsPerBatch;
};

// Collective. Returns the exit code.
int RunPathTraceJob(const PathTraceJobOptions &o, Execution &exec);

}  // namespace rad
