#include "cli/path_trace_backend.h"

#include "pathtrace/path_trace_image.h"
#include "util/error.h"

#ifdef RAD_HAVE_CUDA
#include "gpu_path_tracer.h"
#endif

namespace rad {

struct PathTraceBackend::Tracers {
  std::unique_ptr<PathTracer> cpu;
#ifdef RAD_HAVE_CUDA
  std::unique_ptr<GpuPathTracer> gpu;
#endif
};

PathTraceBackend::PathTraceBackend(Backend backend, const Scene &scene, const PathTraceSettings &settings,
                                   long long gpuPathsPerBatch)
    : tracers_(std::make_unique<Tracers>()), gpuPathsPerBatch_(gpuPathsPerBatch) {
  if (backend == Backend::kCpu) {
    tracers_->cpu = std::make_unique<PathTracer>(scene, settings);
    return;
  }
#ifdef RAD_HAVE_CUDA
  tracers_->gpu = std::make_unique<GpuPathTracer>(MPI_COMM_WORLD, scene, settings);
#else
  RAD_FATAL("PathTraceBackend: the GPU backend was resolved in a build without CUDA");
#endif
}

PathTraceBackend::~PathTraceBackend() = default;

Image PathTraceBackend::Render(MPI_Comm comm, const Camera &camera, int samplesPerPixel, uint64_t seed,
                               RayCounts *rays, bool showProgress) const {
  if (tracers_->cpu) return RenderPathTraced(comm, *tracers_->cpu, camera, samplesPerPixel, seed, rays, showProgress);
#ifdef RAD_HAVE_CUDA
  return tracers_->gpu->Render(comm, camera, samplesPerPixel, seed, gpuPathsPerBatch_, rays, showProgress);
#else
  RAD_FATAL("PathTraceBackend: no tracer");
#endif
}

PatchEstimates PathTraceBackend::EstimatePatches(MPI_Comm comm, const std::vector<Patch> &patches, int pointsPerPatch,
                                                 uint64_t seed, RayCounts *rays, bool showProgress) const {
  if (tracers_->cpu)
    return rad::EstimatePatches(comm, *tracers_->cpu, patches, pointsPerPatch, seed, rays, showProgress);
#ifdef RAD_HAVE_CUDA
  return tracers_->gpu->EstimatePatches(comm, patches, pointsPerPatch, seed, gpuPathsPerBatch_, rays, showProgress);
#else
  RAD_FATAL("PathTraceBackend: no tracer");
#endif
}

const char *PathTraceBackend::Describe() const { return tracers_->cpu ? "CPU (Embree)" : "GPU (wavefront)"; }

}  // namespace rad
