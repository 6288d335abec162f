#include "cuda/gpu_renderer.h"

#include <cmath>

#include "accel/bvh_builder.h"
#include "accel/bvh_traversal.h"
#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/device_bvh.h"
#include "cuda/device_select.h"
#include "render/bvh_pixel.h"
#include "render/smooth_mesh.h"
#include "util/decomposition.h"

namespace rad {

namespace {

// One thread per pixel of this rank's rows (y = rank, rank + ranks, ...).
__global__ void PixelKernel(BvhPixelJob job, int rank, int ranks, int rows, float *rgb) {
  const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int width = job.frame.width;
  if (k >= (long long)rows * width) return;
  const int y = CyclicItem(int(k / width), rank, ranks), x = int(k % width);
  RenderPixelOnBvh(job, x, y, rgb + 3 * (size_t(y) * size_t(width) + size_t(x)));
}

}  // namespace

Image RenderRadiosityGpu(MPI_Comm comm, const std::vector<Patch> &patches, const std::vector<double> &radiance,
                         const Camera &camera, const RenderOptions &options) {
  CheckRenderInputs(patches, radiance, camera, options);
  SelectCudaDevice(comm);  // once per rank (cached): the node-local rank's device
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);

  const std::vector<BvhTriangle> triangles = PatchTriangles(patches, camera.position);
  const DeviceBvh bvh(BuildBvh(triangles));
  DeviceBuffer<uint8_t> dSecondHalf(SecondHalves(triangles));

  DeviceBuffer<Patch> dPatches(patches);
  DeviceBuffer<double> dRadiance(radiance);
  SmoothMesh mesh;
  DeviceBuffer<int> dCorners, dCornerCount;
  DeviceBuffer<double> dVertexRadiance;
  BvhPixelJob job;
  job.shading.patches = dPatches.data();
  job.shading.radiance = dRadiance.data();
  if (options.shading == Shading::kSmooth) {
    mesh = BuildSmoothMesh(patches, radiance);
    dCorners.Upload(mesh.patchCorners.data(), mesh.patchCorners.size());
    dCornerCount.Upload(mesh.cornerCount.data(), mesh.cornerCount.size());
    dVertexRadiance.Upload(mesh.vertexRadiance.data(), mesh.vertexRadiance.size());
    job.shading.patchCorners = dCorners.data();
    job.shading.cornerCount = dCornerCount.data();
    job.shading.vertexRadiance = dVertexRadiance.data();
  }
  job.frame = MakeCameraFrame(camera);
  job.bvh = bvh.View();
  job.secondHalf = dSecondHalf.data();
  job.seed = options.seed;
  job.samples = options.samplesPerPixel;
  job.strata = int(std::lround(std::sqrt(double(job.samples))));
  const int rows = CyclicCount(camera.height, rank, ranks);

  const size_t values = 3 * size_t(camera.width) * size_t(camera.height);
  DeviceBuffer<float> dRgb(values);
  RAD_CUDA(cudaMemset(dRgb.data(), 0, values * sizeof(float)));
  const long long pixels = (long long)rows * camera.width;
  if (pixels > 0) {
    const int block = 128;
    PixelKernel<<<unsigned((pixels + block - 1) / block), block>>>(job, rank, ranks, rows, dRgb.data());
    RAD_CUDA_LAUNCH();
  }
  std::vector<float> rgb(values);
  dRgb.Download(rgb.data(), values);
  return ReduceImage(comm, camera.width, camera.height, std::move(rgb));
}

}  // namespace rad
