#include "pipeline/backend.h"

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "util/rtcore.h"

#include "accel/bvh_builder.h"
#include "formfactor/embree_scene.h"
#include "formfactor/whole_row_rounds.h"
#include "pathtrace/path_trace_image.h"
#include "pipeline/path_trace_backend.h"
#include "util/agree.h"
#include "util/error.h"
#include "util/memory_budget.h"
// The GPU's entry points: cuda/*.cu in a build with CUDA, cuda/without_cuda.cpp (no device) in one without.
#include "cuda/device_info.h"
#include "cuda/device_select.h"
#include "cuda/gpu_form_factors.h"
#include "cuda/gpu_path_tracer.h"
#include "cuda/gpu_renderer.h"
#include "cuda/gpu_solver.h"

namespace rad {

namespace {

// The devices found or, in a build without CUDA, why there are none.
std::string WhyNoGpu() {
  if (!CudaCompiledIn()) return "this build has no CUDA backend (nvcc was not found when it was configured)";
  return DescribeCudaDevices();
}

}  // namespace

const char *BackendName(Backend backend) { return backend == Backend::kGpu ? "gpu" : "cpu"; }

Backend ResolveBackend(MPI_Comm comm, const std::string &requested) {
  if (requested == "cpu") return Backend::kCpu;
  if (requested != "auto" && requested != "gpu")
    throw InputError("--backend must be auto, cpu or gpu, not '" + requested + "'");
  const bool mine = CudaDeviceCount() > 0;
  const std::string why = WhyNoGpu();
  int all = 0;
  const int mineInt = mine ? 1 : 0;
  MPI_Allreduce(&mineInt, &all, 1, MPI_INT, MPI_MIN, comm);
  if (all == 1) return Backend::kGpu;
  if (requested == "gpu") {
    // The message of the lowest rank without a device, on every rank.
    AgreeOrThrow(comm, mine, "--backend gpu: no usable CUDA device on this rank (" + why + ")");
    throw InputError("--backend gpu: no usable CUDA device on some rank");  // not reached: some rank lacks one
  }
  return Backend::kCpu;
}

void AnnounceBackend(MPI_Comm comm, const std::string &requested, Backend backend, bool quiet) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0 || quiet || requested != "auto" || backend != Backend::kCpu) return;
  const std::string why = !CudaCompiledIn()  ? "this build has no CUDA backend"
                          : CudaDeviceCount() > 0 ? "not every rank has one"
                                           : WhyNoGpu();
  std::fprintf(stderr, "radiosity: notice: no CUDA device for every rank (%s); using the CPU backend\n", why.c_str());
}

std::string BackendsDescription() {
  std::string s = "backends: cpu (Embree " + std::to_string(RTC_VERSION_MAJOR) + "." +
                  std::to_string(RTC_VERSION_MINOR) + ")";
  if (CudaCompiledIn()) s += ", gpu (CUDA, compiled in); " + WhyNoGpu();
  else s += "; gpu: not compiled in (nvcc was not found at build time)";
  return s;
}

void SelectDevice(MPI_Comm comm, Backend backend) {
  if (backend == Backend::kGpu) SelectCudaDevice(comm);
}

double FormFactorStagingBytes(Backend backend, bool floatRows) {
  if (backend != Backend::kGpu || !floatRows) return 0;
  return double(kGpuStagingEntries) * sizeof(double);
}

namespace {

template <typename T>
void ComputeRows(Backend backend, const Scene &scene, const Meshing &meshing, FormFactorGeometry &geometry,
                 const std::vector<long long> &rows, const FormFactorOptions &options, const RowOwners &owners,
                 std::vector<T> &out, PhaseTimers &timers, FormFactorCounters &counters, bool showProgress,
                 const RowRounds *rounds) {
  if (backend == Backend::kGpu) {
    FlatBvh bvh;
    {
      ScopedPhase phase(timers, "acceleration");
      geometry = BuildFormFactorGeometry(scene, meshing);
      bvh = BuildBvh(SceneTriangles(scene));
    }
    {
      ScopedPhase phase(timers, "device memory");
      SelectDevice(owners.comm, backend);
    }
    if (rounds != nullptr)  // the device computes each row whole
      return ComputeWholeRowsInRounds(owners.comm, owners.patchCount, rows, *rounds, out, counters,
                                      [&](const std::vector<long long> &pick, std::vector<T> &part,
                                          FormFactorCounters &c) {
                                        ComputeRowsGpu(geometry, bvh, pick, options, part, timers, c, false);
                                      });
    // No MPI inside: a failed allocation on one rank is agreed on afterwards, so that all stop together.
    AllocateOnEveryRank(owners.comm, "the rank's rows of F", [&] {
      ComputeRowsGpu(geometry, bvh, rows, options, out, timers, counters, showProgress);
    });
    return;
  }
  std::unique_ptr<EmbreeScene> embree;
  {
    ScopedPhase phase(timers, "acceleration");
    geometry = BuildFormFactorGeometry(scene, meshing);
    embree = std::make_unique<EmbreeScene>(scene);
  }
  ComputeRowsCpu(geometry, *embree, rows, options, out, timers, counters, showProgress, &owners, rounds);
}

}  // namespace

void ComputeFormFactorRows(Backend backend, const Scene &scene, const Meshing &meshing, FormFactorGeometry &geometry,
                           const std::vector<long long> &rows, const FormFactorOptions &options,
                           const RowOwners &owners, std::vector<double> &out, PhaseTimers &timers,
                           FormFactorCounters &counters, bool showProgress, const RowRounds *rounds) {
  ComputeRows(backend, scene, meshing, geometry, rows, options, owners, out, timers, counters, showProgress, rounds);
}

void ComputeFormFactorRows(Backend backend, const Scene &scene, const Meshing &meshing, FormFactorGeometry &geometry,
                           const std::vector<long long> &rows, const FormFactorOptions &options,
                           const RowOwners &owners, std::vector<float> &out, PhaseTimers &timers,
                           FormFactorCounters &counters, bool showProgress, const RowRounds *rounds) {
  ComputeRows(backend, scene, meshing, geometry, rows, options, owners, out, timers, counters, showProgress, rounds);
}

SolverResult SolveRadiosityOn(Backend backend, MPI_Comm comm, const LocalSystem &system, const SolverOptions &options,
                              PhaseTimers &timers) {
  if (options.method == SolverMethod::kGmres) return SolveRadiosity(comm, system, options, timers);  // PETSc's, on the CPU
  if (backend == Backend::kGpu) return SolveRadiosityGpu(comm, system, options, timers);  // dense or CSR rows
  return SolveRadiosity(comm, system, options, timers);
}

Image RenderRadiosityOn(Backend backend, MPI_Comm comm, const std::vector<Patch> &patches,
                        const std::vector<double> &radiance, const Camera &camera, const RenderOptions &options) {
  // The device renderer does not read lightmaps: drawn from them, the image is the CPU renderer's.
  if (backend == Backend::kGpu && options.shading != Shading::kLightmap)
    return RenderRadiosityGpu(comm, patches, radiance, camera, options);
  return RenderRadiosity(comm, patches, radiance, camera, options);
}

// --- The path tracer of either backend (pipeline/path_trace_backend.h) -------------------------------------

struct PathTraceBackend::Tracers {
  std::unique_ptr<PathTracer> cpu;
  std::unique_ptr<GpuPathTracer> gpu;
};

PathTraceBackend::PathTraceBackend(Backend backend, const Scene &scene, const PathTraceSettings &settings,
                                   long long gpuPathsPerBatch)
    : tracers_(std::make_unique<Tracers>()), gpuPathsPerBatch_(gpuPathsPerBatch) {
  if (backend == Backend::kCpu) tracers_->cpu = std::make_unique<PathTracer>(scene, settings);
  else tracers_->gpu = std::make_unique<GpuPathTracer>(MPI_COMM_WORLD, scene, settings);
}

PathTraceBackend::~PathTraceBackend() = default;

Image PathTraceBackend::Render(MPI_Comm comm, const Camera &camera, int samplesPerPixel, uint64_t seed,
                               RayCounts *rays, bool showProgress) const {
  if (tracers_->cpu) return RenderPathTraced(comm, *tracers_->cpu, camera, samplesPerPixel, seed, rays, showProgress);
  return tracers_->gpu->Render(comm, camera, samplesPerPixel, seed, gpuPathsPerBatch_, rays, showProgress);
}

PatchEstimates PathTraceBackend::EstimatePatches(MPI_Comm comm, const std::vector<Patch> &patches, int pointsPerPatch,
                                                 uint64_t seed, RayCounts *rays, bool showProgress) const {
  if (tracers_->cpu)
    return rad::EstimatePatches(comm, *tracers_->cpu, patches, pointsPerPatch, seed, rays, showProgress);
  return 
      tracers_->gpu->EstimatePatches(comm, patches, pointsPerPatch, seed, gpuPathsPerBatch_, rays, showProgress);
}

const char *PathTraceBackend::Describe() const { return tracers_->cpu ? "CPU (Embree)" : "GPU (wavefront)"; }

}  // namespace rad
