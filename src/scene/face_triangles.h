// The one triangulation of input polygons used by every ray tracer of the project (Embree for shadow rays, the
// project's own BVH for the GPU): a fan from the first corner, faces in order. Triangle k of face f has the
// corners (0, k + 1, k + 2), so the t-th triangle over all faces is Embree's primitive t in EmbreeScene.
#pragma once

#include <cstddef>

#include "scene/scene.h"

namespace rad {

inline size_t FaceTriangleCount(const Face &f) { return f.corners.size() - 2; }

// Corner indices of triangle k (0 <= k < FaceTriangleCount) of a face.
inline void FaceTriangleCorners(size_t k, size_t corners[3]) {
  corners[0] = 0;
  corners[1] = k + 1;
  corners[2] = k + 2;
}

}  // namespace rad
