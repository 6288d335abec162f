// Runs of consecutive coplanar patches (the tiles of a wall, the patches of one subdivided polygon), each with
// the convex hull of its patches. A shaft from a patch to a cluster's hull contains the shaft to every patch of
// the cluster, so one walk of the occluder BVH that finds nothing clears all of the cluster's pairs at once:
// on a box of 2400 tiles, the walks were three quarters of the form-factor time.
#pragma once

#include <vector>

#include "formfactor/convex_polygon.h"
#include "scene/patch.h"

namespace rad {

struct PatchCluster {
  long long first = 0, count = 0;  // patches [first, first + count)
  ConvexPolygon hull;              // their convex hull, counter-clockwise about `normal`
  Vec3 normal;
};

// Consecutive patches are grouped while they are coplanar, at most `maxPatches` of them, their hull has room
// for clipping (at most ConvexPolygon::kCapacity - 2 corners) and covers at most 1.25 times their area (a
// hull much larger than its patches would find occluders its patches' shafts do not reach).
std::vector<PatchCluster> ClusterPatches(const std::vector<Patch> &patches, int maxPatches = 64);

}  // namespace rad
