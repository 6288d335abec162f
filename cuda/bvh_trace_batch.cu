#include <cuda_runtime.h>

#include "cuda/bvh_trace_batch.h"
#include "cuda/cuda_check.h"
#include "cuda/device_bvh.h"
#include "cuda/device_info.h"

namespace rad {

namespace {

__global__ void AnyHitKernel(BvhView bvh, const BvhRay *rays, int count, uint8_t *occluded) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const BvhRay r = rays[k];
  occluded[k] = AnyHit(bvh, r.org, r.dir, r.tnear, r.tfar) ? 1 : 0;
}

__global__ void ClosestHitKernel(BvhView bvh, const BvhRay *rays, int count, BvhHit *hits) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const BvhRay r = rays[k];
  hits[k] = ClosestHit(bvh, r.org, r.dir, r.tnear, r.tfar);
}

// Device memory for n elements of T, freed on scope exit.
template <class T>
struct DeviceArray {
  T *ptr = nullptr;
  explicit DeviceArray(size_t n) { RAD_CUDA(cudaMalloc(&ptr, sizeof(T) * (n > 0 ? n : 1))); }
  ~DeviceArray() { RAD_CUDA(cudaFree(ptr)); }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;
};

// Runs `launch` between two events and returns the elapsed seconds.
template <class Launch>
double Timed(Launch &&launch) {
  cudaEvent_t start, stop;
  RAD_CUDA(cudaEventCreate(&start));
  RAD_CUDA(cudaEventCreate(&stop));
  RAD_CUDA(cudaEventRecord(start));
  launch();
  RAD_CUDA(cudaGetLastError());
  RAD_CUDA(cudaEventRecord(stop));
  RAD_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  RAD_CUDA(cudaEventElapsedTime(&ms, start, stop));
  RAD_CUDA(cudaEventDestroy(start));
  RAD_CUDA(cudaEventDestroy(stop));
  return ms * 1e-3;
}

}  // namespace

bool TraceBatchOnDevice(const FlatBvh &bvh, const std::vector<BvhRay> &rays, std::vector<uint8_t> &occluded,
                        std::vector<BvhHit> &hits, DeviceTraceTimes *times) {
  occluded.clear();
  hits.clear();
  if (CudaDeviceCount() == 0) return false;
  const size_t n = rays.size();
  RAD_CHECK(n <= size_t(1) << 30, "TraceBatchOnDevice: batch too large for one launch");
  const DeviceBvh device(bvh);
  DeviceArray<BvhRay> dRays(n);
  DeviceArray<uint8_t> dOccluded(n);
  DeviceArray<BvhHit> dHits(n);
  if (n > 0) RAD_CUDA(cudaMemcpy(dRays.ptr, rays.data(), sizeof(BvhRay) * n, cudaMemcpyHostToDevice));
  const int count = int(n), block = 128, grid = (count + block - 1) / block;
  DeviceTraceTimes t;
  if (count > 0) {
    t.anyHitSeconds =
        Timed([&] { AnyHitKernel<<<grid, block>>>(device.View(), dRays.ptr, count, dOccluded.ptr); });
    t.closestHitSeconds =
        Timed([&] { ClosestHitKernel<<<grid, block>>>(device.View(), dRays.ptr, count, dHits.ptr); });
  }
  occluded.resize(n);
  hits.resize(n);
  if (n > 0) {
    RAD_CUDA(cudaMemcpy(occluded.data(), dOccluded.ptr, n, cudaMemcpyDeviceToHost));
    RAD_CUDA(cudaMemcpy(hits.data(), dHits.ptr, sizeof(BvhHit) * n, cudaMemcpyDeviceToHost));
  }
  if (times) *times = t;
  return true;
}

}  // namespace rad
