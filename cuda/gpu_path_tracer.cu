#include "cuda/gpu_path_tracer.h"

#include <algorithm>

#include "accel/bvh_builder.h"
#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/device_bvh.h"
#include "cuda/device_select.h"
#include "pathtrace/path_scene.h"
#include "pathtrace/wavefront_driver.h"

namespace rad {

namespace {

// One thread per index of the stage. Each stage is its own kernel (StageKernel<kExtend>, ...), so a profile
// shows the time of each, and a warp never mixes tracing with shading.
template <WavefrontStage kStage>
__global__ void StageKernel(WavefrontJob job, int count) {
  const int i = int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x);
  if (i < count) RunStage(kStage, job, i);
}

template <WavefrontStage kStage>
void Launch(const WavefrontJob &job, int count) {
  constexpr int kBlock = 128;
  StageKernel<kStage><<<unsigned((count + kBlock - 1) / kBlock), kBlock>>>(job, count);
  RAD_CUDA_LAUNCH();
}

// The Backend of wavefront_driver.h on the device: buffers allocated once per call, a kernel per pass, the
// queues' two counters read back after each (the launch sizes of the next passes).
class GpuStages {
 public:
  WavefrontJob Allocate(const WavefrontJob &base, int paths, int items) {
    return buffers_.Attach(base, paths, items);
  }
  void Run(WavefrontStage stage, const WavefrontJob &job, int count) {
    if (count <= 0) return;
    switch (stage) {
      case WavefrontStage::kStart: Launch<WavefrontStage::kStart>(job, count); break;
      case WavefrontStage::kExtend: Launch<WavefrontStage::kExtend>(job, count); break;
      case WavefrontStage::kShade: Launch<WavefrontStage::kShade>(job, count); break;
      case WavefrontStage::kConnect: Launch<WavefrontStage::kConnect>(job, count); break;
      case WavefrontStage::kFinish: Launch<WavefrontStage::kFinish>(job, count); break;
      case WavefrontStage::kReduce: Launch<WavefrontStage::kReduce>(job, count); break;
    }
  }
  void ReadCounts(const WavefrontJob &job, int counts[2]) {
    RAD_CUDA(cudaMemcpy(counts, job.counts, 2 * sizeof(int), cudaMemcpyDeviceToHost));
  }
  void ClearCounts(const WavefrontJob &job) { RAD_CUDA(cudaMemset(job.counts, 0, 2 * sizeof(int))); }
  void ReadResults(const WavefrontJob &job, int items, double *out) {
    RAD_CUDA(cudaMemcpy(out, job.itemResults, 6 * size_t(items) * sizeof(double), cudaMemcpyDeviceToHost));
  }

 private:
  WavefrontBuffers<DeviceBuffer> buffers_;
};

}  // namespace

struct GpuPathTracer::Device {
  DeviceBuffer<Vec3> normal, planePoint, reflectance, emission;
  DeviceBuffer<double> areaPdf, emitterCdf;
  DeviceBuffer<EmitterTriangle> emitters;
  DeviceBvh bvh;
  WavefrontJob base;

  Device(const PathScene &s, const PathTraceSettings &settings, FlatBvh flat)
      : normal(s.normal), planePoint(s.planePoint), reflectance(s.reflectance), emission(s.emission),
        areaPdf(s.areaPdf), emitterCdf(s.emitterCdf), emitters(s.emitters), bvh(flat) {
    base.scene = ViewOfPathScene(*this);
    base.settings = settings;
    base.bvh = bvh.View();
  }
};

GpuPathTracer::GpuPathTracer(MPI_Comm comm, const Scene &scene, const PathTraceSettings &settings) {
  SelectCudaDevice(comm);  // once per rank (cached): the node-local rank's device
  device_ = std::make_unique<Device>(MakePathScene(scene), settings, BuildBvh(SceneTriangles(scene)));
}

GpuPathTracer::~GpuPathTracer() = default;

Image GpuPathTracer::Render(MPI_Comm comm, const Camera &camera, int samplesPerPixel, uint64_t seed,
                            long long pathsPerBatch, RayCounts *rays, bool showProgress) const {
  GpuStages stages;
  return RenderWavefront(comm, stages, device_->base, camera, samplesPerPixel, seed, pathsPerBatch, rays,
                         showProgress);
}

PatchEstimates GpuPathTracer::EstimatePatches(MPI_Comm comm, const std::vector<Patch> &patches, int pointsPerPatch,
                                              uint64_t seed, long long pathsPerBatch, RayCounts *rays,
                                              bool showProgress) const {
  CheckPatchEstimates((long long)patches.size(), pointsPerPatch);
  GpuStages stages;
  DeviceBuffer<Patch> devicePatches(patches);
  WavefrontJob base = device_->base;
  base.patches = devicePatches.data();
  return EstimatePatchesWavefront(comm, stages, base, (long long)patches.size(), pointsPerPatch, seed,
                                  pathsPerBatch, rays, showProgress);
}

}  // namespace rad
