// What CUDA devices this process can see. Safe to call on machines without a GPU or driver.
#pragma once

#include <string>

namespace rad {

bool CudaCompiledIn();              // false in a build without CUDA (cuda/without_cuda.cpp)
int CudaDeviceCount();               // 0 when there is no usable device or driver
std::string DescribeCudaDevices();  // one line: "devices: 0 (reason)" or "devices: 1 (NVIDIA H200, ...)"

}  // namespace rad
