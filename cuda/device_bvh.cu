#include "cuda/device_bvh.h"

#include <utility>

#include "cuda/cuda_check.h"

namespace rad {

DeviceBvh::DeviceBvh(const FlatBvh &bvh) {
  view_.nodeCount = int32_t(bvh.nodes.size());
  view_.triangleCount = int32_t(bvh.triangles.size());
  if (!bvh.nodes.empty()) {
    RAD_CUDA(cudaMalloc(&nodes_, sizeof(BvhNode) * bvh.nodes.size()));
    RAD_CUDA(cudaMemcpy(nodes_, bvh.nodes.data(), sizeof(BvhNode) * bvh.nodes.size(), cudaMemcpyHostToDevice));
  }
  if (!bvh.triangles.empty()) {
    RAD_CUDA(cudaMalloc(&triangles_, sizeof(BvhPackedTriangle) * bvh.triangles.size()));
    RAD_CUDA(cudaMemcpy(triangles_, bvh.triangles.data(), sizeof(BvhPackedTriangle) * bvh.triangles.size(),
                        cudaMemcpyHostToDevice));
  }
  view_.nodes = nodes_;
  view_.triangles = triangles_;
}

DeviceBvh::~DeviceBvh() { Release(); }

DeviceBvh::DeviceBvh(DeviceBvh &&other) noexcept
    : nodes_(std::exchange(other.nodes_, nullptr)),
      triangles_(std::exchange(other.triangles_, nullptr)),
      view_(std::exchange(other.view_, BvhView())) {}

DeviceBvh &DeviceBvh::operator=(DeviceBvh &&other) noexcept {
  if (this != &other) {
    Release();
    nodes_ = std::exchange(other.nodes_, nullptr);
    triangles_ = std::exchange(other.triangles_, nullptr);
    view_ = std::exchange(other.view_, BvhView());
  }
  return *this;
}

size_t DeviceBvh::Bytes() const {
  return sizeof(BvhNode) * size_t(view_.nodeCount) + sizeof(BvhPackedTriangle) * size_t(view_.triangleCount);
}

void DeviceBvh::Release() {
  if (nodes_) RAD_CUDA(cudaFree(nodes_));
  if (triangles_) RAD_CUDA(cudaFree(triangles_));
  nodes_ = nullptr;
  triangles_ = nullptr;
  view_ = BvhView();
}

}  // namespace rad
