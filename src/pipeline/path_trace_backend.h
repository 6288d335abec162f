// The path tracer of the chosen backend behind one interface, for `pathtrace` and `validate`: the CPU path
// tracer (Embree, threads) or the GPU's wavefront (cuda/gpu_path_tracer.h). Both keep the contracts of
// RenderPathTraced and EstimatePatches. Implemented in the backend dispatch (backend.cpp).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "pathtrace/patch_estimates.h"
#include "pathtrace/path_tracer.h"
#include "pipeline/backend.h"
#include "render/camera.h"
#include "render/image.h"
#include "scene/patch.h"
#include "scene/scene.h"

namespace rad {

// GPU paths in flight per batch, unless the user says otherwise: each holds a WavefrontPath (about 250 bytes),
// its value and three queue entries, so 2^21 paths take about 0.6 GB of device memory, enough to fill a GPU
// many times over.
constexpr long long kGpuPathsPerBatch = 1LL << 21;

class PathTraceBackend {
 public:
  // Collective with the GPU backend (device selection). `gpuPathsPerBatch`: paths in flight on the GPU.
  PathTraceBackend(Backend backend, const Scene &scene, const PathTraceSettings &settings,
                   long long gpuPathsPerBatch);
  ~PathTraceBackend();

  Image Render(MPI_Comm comm, const Camera &camera, int samplesPerPixel, uint64_t seed, RayCounts *rays,
               bool showProgress) const;
  PatchEstimates EstimatePatches(MPI_Comm comm, const std::vector<Patch> &patches, int pointsPerPatch,
                                 uint64_t seed, RayCounts *rays, bool showProgress) const;
  // For the log: "CPU (Embree)" or "GPU (wavefront)".
  const char *Describe() const;

 private:
  struct Tracers;
  std::unique_ptr<Tracers> tracers_;
  long long gpuPathsPerBatch_;
};

}  // namespace rad
