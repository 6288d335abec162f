// The wavefront path tracer (pathtrace/wavefront_stages.h) on the rank's GPU: one kernel per stage over path
// buffers in device memory, the scene's polygons in the project's BVH. Same contracts, sample positions and
// random numbers as the CPU path tracer (RenderPathTraced, EstimatePatches). Includable without CUDA.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "pathtrace/patch_estimates.h"
#include "pathtrace/path_tracer.h"
#include "render/camera.h"
#include "render/image.h"
#include "scene/patch.h"
#include "scene/scene.h"

namespace rad {

class GpuPathTracer {
 public:
  // Selects the rank's device (SelectCudaDevice) and uploads the scene's physics arrays and BVH.
  GpuPathTracer(MPI_Comm comm, const Scene &scene, const PathTraceSettings &settings);
  ~GpuPathTracer();
  GpuPathTracer(const GpuPathTracer &) = delete;
  GpuPathTracer &operator=(const GpuPathTracer &) = delete;

  // `pathsPerBatch` bounds the paths in flight (device memory: about 280 bytes each).
  Image Render(MPI_Comm comm, const Camera &camera, int samplesPerPixel, uint64_t seed, long long pathsPerBatch,
               RayCounts *rays, bool showProgress) const;
  PatchEstimates EstimatePatches(MPI_Comm comm, const std::vector<Patch> &patches, int pointsPerPatch,
                                 uint64_t seed, long long pathsPerBatch, RayCounts *rays, bool showProgress) const;

 private:
  struct Device;
  std::unique_ptr<Device> device_;
};

}  // namespace rad
