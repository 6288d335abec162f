// A typed array in device memory (cudaMalloc, never managed memory), freed with the object. For .cu files.
// resize, data and size are named as std::vector's, so that code written for either (wavefront_driver.h's
// batch buffers) takes both; resize does not keep the contents.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "cuda/cuda_check.h"

namespace rad {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) { resize(count); }
  explicit DeviceBuffer(const std::vector<T> &host) { Upload(host.data(), host.size()); }
  ~DeviceBuffer() { Release(); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  // Contents are not kept.
  void resize(size_t count) {
    if (count == count_) return;
    Release();
    if (count > 0) RAD_CUDA(cudaMalloc(&data_, count * sizeof(T)));
    count_ = count;
  }
  void Upload(const T *host, size_t count) {
    resize(count);
    if (count > 0) RAD_CUDA(cudaMemcpy(data_, host, count * sizeof(T), cudaMemcpyHostToDevice));
  }
  void Download(T *host, size_t count) const {
    if (count > 0) RAD_CUDA(cudaMemcpy(host, data_, count * sizeof(T), cudaMemcpyDeviceToHost));
  }
  T *data() { return data_; }
  const T *data() const { return data_; }
  size_t size() const { return count_; }

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
