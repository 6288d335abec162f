// The GPU backend of a build without CUDA: CMake compiles this file instead of the .cu files when nvcc is not
// found, so that the rest of the program and the tests are the same code in either build, and this is the one
// place that is different. It has no device: CudaDeviceCount() is 0, so `--backend auto` takes the CPU,
// `--backend gpu` is refused by ResolveBackend, and the GPU tests skip saying why. The entry points that need a
// device are never reached through the command line; called directly, they fail as on a machine without one.
#include <string>

#include "cuda/bvh_trace_batch.h"
#include "cuda/device_info.h"
#include "cuda/device_select.h"
#include "cuda/gpu_form_factors.h"
#include "cuda/gpu_hemicube.h"
#include "cuda/gpu_path_tracer.h"
#include "cuda/gpu_renderer.h"
#include "cuda/gpu_solver.h"
#include "cuda/unoccluded_batch.h"
#include "util/error.h"

namespace rad {

namespace {

const char *const kWhy = "this build has no CUDA backend (nvcc was not found when it was configured)";

[[noreturn]] void NoDevice(const std::string &what) {
  throw InputError(what + ": no usable CUDA device (" + std::string(kWhy) + ")");
}

}  // namespace

bool CudaCompiledIn() { return false; }
int CudaDeviceCount() { return 0; }
std::string DescribeCudaDevices() { return std::string("devices: 0 (") + kWhy + ")"; }

int SelectCudaDevice(MPI_Comm) { NoDevice("the GPU backend"); }

void ComputeRowsGpu(const FormFactorGeometry &, const FlatBvh &, const std::vector<long long> &,
                    const FormFactorOptions &, std::vector<double> &, PhaseTimers &, FormFactorCounters &, bool) {
  NoDevice("form factors on the GPU");
}
void ComputeRowsGpu(const FormFactorGeometry &, const FlatBvh &, const std::vector<long long> &,
                    const FormFactorOptions &, std::vector<float> &, PhaseTimers &, FormFactorCounters &, bool) {
  NoDevice("form factors on the GPU");
}

SolverResult SolveRadiosityGpu(MPI_Comm, const LocalSystem &, const SolverOptions &, PhaseTimers &,
                               const GpuSolverSettings &) {
  NoDevice("the GPU solver");
}

void ComputeHemicubeRowsGpu(const Scene &, const std::vector<Patch> &, const std::vector<long long> &,
                            const HemicubeOptions &, FormFactorRows &, long long &) {
  NoDevice("hemicube rows on the GPU");
}

Image RenderRadiosityGpu(MPI_Comm, const std::vector<Patch> &, const std::vector<double> &, const Camera &,
                         const RenderOptions &) {
  NoDevice("the GPU renderer");
}

struct GpuPathTracer::Device {};
GpuPathTracer::GpuPathTracer(MPI_Comm, const Scene &, const PathTraceSettings &) { NoDevice("the GPU path tracer"); }
GpuPathTracer::~GpuPathTracer() = default;
Image GpuPathTracer::Render(MPI_Comm, const Camera &, int, uint64_t, long long, RayCounts *, bool) const {
  NoDevice("the GPU path tracer");
}
PatchEstimates GpuPathTracer::EstimatePatches(MPI_Comm, const std::vector<Patch> &, int, uint64_t, long long,
                                              RayCounts *, bool) const {
  NoDevice("the GPU path tracer");
}

bool TraceBatchOnDevice(const FlatBvh &, const std::vector<BvhRay> &, std::vector<uint8_t> &,
                        std::vector<BvhHit> &, DeviceTraceTimes *) {
  return false;  // no usable device, as the header says
}

bool UnoccludedBatchOnDevice(const std::vector<DevicePair> &, const QuadratureSettings &, std::vector<double> &) {
  return false;
}

}  // namespace rad
