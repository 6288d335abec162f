// One pixel of the radiosity image traced on the project's BVH (accel/) instead of Embree: what the GPU
// renderer runs per thread (cuda/gpu_renderer.cu), written once (RAD_HD) so that the host tests can check it
// against the CPU renderer.
#pragma once

#include <cstdint>
#include <vector>

#include "accel/bvh.h"
#include "accel/bvh_traversal.h"
#include "render/pixel_kernels.h"
#include "util/hd.h"

namespace rad {

struct BvhPixelJob {
  ShadingView shading;
  CameraFrame frame;
  BvhView bvh;                // PatchTriangles(patches, camera position): id = patch
  const uint8_t *secondHalf;  // per BVH input triangle: 1 for the (v2, v3, v1) half of a quad
  uint64_t seed;
  int samples, strata;
};

// Marks the second triangle of each quad made by PatchTriangles (the two halves of a patch are consecutive).
inline std::vector<uint8_t> SecondHalves(const std::vector<BvhTriangle> &triangles) {
  std::vector<uint8_t> second(triangles.size(), 0);
  for (size_t t = 1; t < triangles.size(); ++t) second[t] = triangles[t].id == triangles[t - 1].id ? 1 : 0;
  return second;
}

// The mean radiance of pixel (x, y) over the job's samples: the same sample positions, rays and shading as the
// CPU renderer.
RAD_HD inline void RenderPixelOnBvh(const BvhPixelJob &job, int x, int y, float rgb[3]) {
  AveragePixel(job.frame, job.seed, job.samples, job.strata, x, y, [&](const CameraRay &ray, double value[3]) {
    // The scene is stored relative to the camera: rays start at 0.
    const BvhHit hit = ClosestHit(job.bvh, Float3{0, 0, 0}, ToFloat3(ray.direction), 0.0f, INFINITY);
    if (hit.id >= 0) {
      // The halves are those Embree intersects a quad as; the second half's barycentrics run from v2.
      const bool second = job.secondHalf[hit.input] != 0;
      const double u = second ? 1.0 - hit.u : hit.u, v = second ? 1.0 - hit.v : hit.v;
      ShadeHit(job.shading, ray.direction, hit.id, u, v, value);
    }
  }, rgb);
}

}  // namespace rad
