// Builds the project's BVH (bvh.h) on the host with Embree's rtcBuildBVH and makes the triangle lists it is
// built over.
#pragma once

#include <vector>

#include "accel/bvh.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "util/vec3.h"

namespace rad {

enum class BvhQuality {
  kMedium,  // binned SAH
  kHigh,    // binned SAH with spatial splits (a triangle may be referenced by several leaves): fewer rays
            // test boxes that a long thin triangle's box would make large
};

// Deterministic for a given input: the same arrays for any number of threads. Fatal (RAD_FATAL) if the tree
// would be deeper than traversal's stack allows, which SAH does not produce for any scene of sane size.
FlatBvh BuildBvh(const std::vector<BvhTriangle> &triangles, BvhQuality quality = BvhQuality::kHigh);

// The input polygons as triangles, id = polygon index: the same triangles, in the same order and with the same
// single-precision vertices, as the EmbreeScene of the shadow rays (its primitive t is element t here).
std::vector<BvhTriangle> SceneTriangles(const Scene &scene);

// The patches as triangles, id = patch index, with `origin` subtracted (in double precision, before rounding to
// float) like the renderer's Embree scene, which stores the scene relative to the camera. A quad (c0 c1 c2 c3)
// becomes (c0 c1 c3) and (c2 c3 c1), the halves Embree's quads are intersected as; a triangle stays one.
std::vector<BvhTriangle> PatchTriangles(const std::vector<Patch> &patches, Vec3 origin = Vec3());

}  // namespace rad
