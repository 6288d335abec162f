#include <cuda_runtime.h>

#include "cuda/device_info.h"

namespace rad {

bool CudaCompiledIn() { return true; }

int CudaDeviceCount() {
  int count = 0;  // cudaGetDeviceCount leaves it untouched when there is no driver
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later calls are not confused by it
    return 0;
  }
  return count;
}

std::string DescribeCudaDevices() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return std::string("devices: 0 (") + cudaGetErrorString(status) + ")";
  }
  std::string s = "devices: " + std::to_string(count);
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) continue;
    s += std::string(d == 0 ? " (" : ", ") + prop.name + ", sm_" + std::to_string(prop.major) +
         std::to_string(prop.minor) + ", " + std::to_string(prop.totalGlobalMem >> 30) + " GiB";
  }
  if (count > 0) s += ")";
  return s;
}

}  // namespace rad
