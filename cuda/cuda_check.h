// Checked CUDA runtime and cuBLAS calls, for code that calls them (the .cu files; host benchmarks). A failing
// call is fatal: rad::FatalAt prints "radiosity: fatal: rank R: file:line: ..." with the call's text and the
// error's name and description, then calls MPI_Abort (one rank stopping alone would leave the others waiting
// in a collective).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "util/error.h"

namespace rad::detail {

[[noreturn]] inline void CudaFailed(const char *file, int line, const char *call, cudaError_t status) {
  FatalAt(file, line,
          std::string("CUDA error in ") + call + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
              ")");
}

[[noreturn]] inline void CublasFailed(const char *file, int line, const char *call, cublasStatus_t status) {
  FatalAt(file, line,
          std::string("cuBLAS error in ") + call + ": " + cublasGetStatusName(status) + " (" +
              cublasGetStatusString(status) + ")");
}

}  // namespace rad::detail

#define RAD_CUDA(call)                                                                               \
  do {                                                                                               \
    const cudaError_t radCudaStatus_ = (call);                                                       \
    if (radCudaStatus_ != cudaSuccess) ::rad::detail::CudaFailed(__FILE__, __LINE__, #call, radCudaStatus_); \
  } while (0)

#define RAD_CUBLAS(call)                                                                                 \
  do {                                                                                                   \
    const cublasStatus_t radCublasStatus_ = (call);                                                      \
    if (radCublasStatus_ != CUBLAS_STATUS_SUCCESS)                                                       \
      ::rad::detail::CublasFailed(__FILE__, __LINE__, #call, radCublasStatus_);                          \
  } while (0)

// After a kernel launch: a bad configuration shows up in cudaGetLastError. Errors inside the kernel surface at
// the next synchronising call; define RAD_CUDA_SYNC_LAUNCHES to synchronise here and catch them at the launch.
#ifdef RAD_CUDA_SYNC_LAUNCHES
#define RAD_CUDA_LAUNCH()                                                             \
  do {                                                                                \
    RAD_CUDA(cudaGetLastError());                                                     \
    RAD_CUDA(cudaDeviceSynchronize());                                                \
  } while (0)
#else
#define RAD_CUDA_LAUNCH() RAD_CUDA(cudaGetLastError())
#endif
