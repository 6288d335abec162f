// A typed array in device memory (cudaMalloc, never managed memory), freed with the object. For .cu files.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "cuda_check.h"

namespace rad {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) { Resize(count); }
  explicit DeviceBuffer(const std::vector<T> &host) { Upload(host.data(), host.size()); }
  ~DeviceBuffer() { Release(); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  // Contents are not kept.
  void Resize(size_t count) {
    if (count == count_) return;
    Release();
    if (count > 0) RAD_CUDA(cudaMalloc(&data_, count * sizeof(T)));
    count_ = count;
  }
  void Upload(const T *host, size_t count) {
    Resize(count);
    if (count > 0) RAD_CUDA(cudaMemcpy(data_, host, count * sizeof(T), cudaMemcpyHostToDevice));
  }
  void Download(T *host, size_t count) const {
    if (count > 0) RAD_CUDA(cudaMemcpy(host, data_, count * sizeof(T), cudaMemcpyDeviceToHost));
  }
  T *Data() { return data_; }
  const T *Data() const { return data_; }
  size_t Count() const { return count_; }

 private:
  void Release() {
    if (data_) cudaFree(data_);  // not checked: may run during teardown after a fatal error
    data_ = nullptr;
    count_ = 0;
  }
  T *data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace rad
