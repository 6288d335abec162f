// Typed arrays in device memory (cudaMalloc, never managed memory) and in page-locked host memory, freed with
// the object: the one home of the .cu files' buffers. resize, data and size are named as std::vector's, so that
// code written for either (wavefront_driver.h's batch buffers) takes both; resize does not keep the contents.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <memory>
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

// A device buffer of at least one element, so that its pointer is never null (a rank without rows still
// passes valid pointers to its kernels and cuBLAS calls).
template <typename T>
std::unique_ptr<DeviceBuffer<T>> MakeDeviceBuffer(size_t count) {
  return std::make_unique<DeviceBuffer<T>>(std::max<size_t>(count, 1));
}

// Page-locked host memory: staging areas of fast, asynchronous copies. At least one element, as above.
template <typename T>
class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t count) { RAD_CUDA(cudaMallocHost(&data_, std::max<size_t>(count, 1) * sizeof(T))); }
  ~PinnedBuffer() { cudaFreeHost(data_); }  // unchecked: may run while an exception unwinds
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;
  T *data() const { return data_; }

 private:
  T *data_ = nullptr;
};

}  // namespace rad
