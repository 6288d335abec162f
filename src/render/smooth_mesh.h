// Radiosity at patch corners, for smooth shading and for the PLY export. A corner's value is the
// area-weighted mean of the B of the patches that share that corner point AND lie in the same plane (same
// input polygon, or a coplanar neighbour), so colour is interpolated across patch edges but never bleeds
// across a crease (e.g. from a red wall onto the white floor). A corner that lies inside a neighbour's edge
// (a T-junction beside a patch split finer) takes instead the value that edge interpolates there, so shading
// has no seam along it.
#pragma once

#include <vector>

#include "scene/patch.h"
#include "util/vec3.h"

namespace rad {

struct SmoothMesh {
  std::vector<Vec3> vertices;            // shared corner points (one per point and plane)
  std::vector<double> vertexRadiance;    // 3 per vertex (R, G, B): the smoothed B at that vertex
  std::vector<int> patchCorners;         // 4 per patch: vertex indices; a triangle repeats its third
  std::vector<int> cornerCount;          // 3 or 4 per patch
};

// `radiance` holds 3 values per patch (B, [N][3] flattened).
SmoothMesh BuildSmoothMesh(const std::vector<Patch> &patches, const std::vector<double> &radiance);

}  // namespace rad
