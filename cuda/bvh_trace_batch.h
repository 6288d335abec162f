// Traces a batch of rays through the project's BVH on the device, with the traversal code the host tests run
// (accel/bvh_traversal.h): for tests that compare device and host ray by ray, and for the ray benchmark.
#pragma once

#include <cstdint>
#include <vector>

#include "accel/bvh.h"
#include "accel/bvh_traversal.h"

namespace rad {

struct DeviceTraceTimes {
  double anyHitSeconds = 0;      // kernel time of AnyHit over the batch (no transfers)
  double closestHitSeconds = 0;  // kernel time of ClosestHit over the batch (no transfers)
};

// For every ray: occluded[k] = AnyHit, hits[k] = ClosestHit. Returns false, leaving the outputs empty, when no
// CUDA device is usable; CUDA failures after that are fatal.
bool TraceBatchOnDevice(const FlatBvh &bvh, const std::vector<BvhRay> &rays, std::vector<uint8_t> &occluded,
                        std::vector<BvhHit> &hits, DeviceTraceTimes *times = nullptr);

}  // namespace rad
