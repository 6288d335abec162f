#include <cuda_runtime.h>

#include <string>

#include "cuda/cuda_check.h"
#include "cuda/device_info.h"
#include "cuda/unoccluded_batch.h"
#include "util/error.h"

namespace rad {

namespace {

__global__ void UnoccludedKernel(const DevicePair *pairs, int count, QuadratureSettings settings, double *out) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const DevicePair &p = pairs[k];
  const ClippedPair cp = ClipPair(p.emitter, p.emitterNormal, p.receiver, p.receiverNormal);
  out[k] = UnoccludedFormFactor(cp, p.emitterNormal, p.emitterArea, settings).formFactor;
}

}  // namespace

bool UnoccludedBatchOnDevice(const std::vector<DevicePair> &pairs, const QuadratureSettings &settings,
                             std::vector<double> &out) {
  out.clear();
  if (CudaDeviceCount() == 0) return false;
  const int count = int(pairs.size());
  DevicePair *dPairs = nullptr;
  double *dOut = nullptr;
  RAD_CUDA(cudaMalloc(&dPairs, sizeof(DevicePair) * size_t(std::max(count, 1))));
  RAD_CUDA(cudaMalloc(&dOut, sizeof(double) * size_t(std::max(count, 1))));
  RAD_CUDA(cudaMemcpy(dPairs, pairs.data(), sizeof(DevicePair) * size_t(count), cudaMemcpyHostToDevice));
  const int block = 128;
  if (count > 0) {
    UnoccludedKernel<<<(count + block - 1) / block, block>>>(dPairs, count, settings, dOut);
    RAD_CUDA_LAUNCH();
  }
  out.resize(size_t(count));
  RAD_CUDA(cudaMemcpy(out.data(), dOut, sizeof(double) * size_t(count), cudaMemcpyDeviceToHost));
  RAD_CUDA(cudaFree(dPairs));
  RAD_CUDA(cudaFree(dOut));
  return true;
}

}  // namespace rad
