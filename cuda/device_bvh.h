// The project's BVH (accel/bvh.h) in device memory: uploaded once with cudaMalloc + cudaMemcpy (no managed
// memory), freed with the object. Includable without CUDA: kernels get the BvhView of device pointers.
#pragma once

#include <cstddef>

#include "accel/bvh.h"

namespace rad {

class DeviceBvh {
 public:
  // Uploads to the current device. CUDA failures are fatal (RAD_CUDA).
  explicit DeviceBvh(const FlatBvh &bvh);
  ~DeviceBvh();
  DeviceBvh(const DeviceBvh &) = delete;
  DeviceBvh &operator=(const DeviceBvh &) = delete;
  DeviceBvh(DeviceBvh &&other) noexcept;
  DeviceBvh &operator=(DeviceBvh &&other) noexcept;

  // Device pointers: to be passed to kernels by value, never dereferenced on the host.
  BvhView View() const { return view_; }
  size_t Bytes() const;

 private:
  void Release();

  BvhNode *nodes_ = nullptr;
  BvhPackedTriangle *triangles_ = nullptr;
  BvhView view_;
};

}  // namespace rad
