#include "cuda/gpu_hemicube.h"

#include <algorithm>

#include "accel/bvh_builder.h"
#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/device_bvh.h"
#include "formfactor/hemicube_bvh.h"

namespace rad {

namespace {

// One thread per pixel of the batch's rows.
__global__ void HemicubeKernel(HemicubeBvhJob job, long long rows, int pixels, int32_t *hits) {
  const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= rows * pixels) return;
  hits[k] = HemicubePixelHit(job, k / pixels, int(k % pixels));
}

// Rows per batch: their hits (4 bytes a pixel) in at most 256 MiB of device memory.
constexpr long long kBatchHitBytes = 256LL << 20;

}  // namespace

void ComputeHemicubeRowsGpu(const Scene &scene, const std::vector<Patch> &patches, const std::vector<long long> &rows,
                            const HemicubeOptions &options, FormFactorRows &f, long long &rays) {
  const std::vector<BvhTriangle> triangles = HemicubeTriangles(scene, patches);
  const DeviceBvh bvh(BuildBvh(triangles));
  DeviceBuffer<Patch> dPatches(patches);
  DeviceBuffer<long long> dRows(rows);
  const int pixels = HemicubePixels(options.resolution);
  const long long batch = std::max(1LL, kBatchHitBytes / (4LL * pixels));
  DeviceBuffer<int32_t> dHits(size_t(std::min<long long>(batch, (long long)rows.size())) * size_t(pixels));
  std::vector<int32_t> hits(dHits.size());
  const std::vector<double> weight = HemicubeWeights(options.resolution);
  HemicubeBvhJob job = MakeHemicubeBvhJob(bvh.View(), dPatches.data(), patches.size(), triangles, options);
  StartCsrRows(f);
  for (long long first = 0; first < (long long)rows.size(); first += batch) {
    const long long count = std::min<long long>(batch, (long long)rows.size() - first);
    job.rows = dRows.data() + first;
    const long long threads = count * pixels;
    const int block = 128;
    HemicubeKernel<<<unsigned((threads + block - 1) / block), block>>>(job, count, pixels, dHits.data());
    RAD_CUDA_LAUNCH();
    dHits.Download(hits.data(), size_t(threads));
    AppendHemicubeRows(hits.data(), size_t(count), options.resolution, weight, patches.size(), f);
  }
  rays = (long long)rows.size() * pixels;
}

}  // namespace rad
