// Runs of consecutive coplanar patches (the tiles of a wall, the patches of one subdivided polygon), each with
// the convex hull of its patches. A shaft from a patch to a cluster's hull contains the shaft to every patch of
// the cluster, so one walk of the occluder BVH that finds nothing clears all of the cluster's pairs at once:
// on a box of 2400 tiles, the walks were three quarters of the form-factor time.
#pragma once

#include <cstdint>
#include <vector>

#include "formfactor/convex_polygon.h"
#include "scene/patch.h"

namespace rad {

struct PatchCluster {
  long long first = 0, count = 0;  // patches [first, first + count)
  ConvexPolygon hull;              // their convex hull, counter-clockwise about `normal`
  Vec3 normal;
};

// Consecutive patches are grouped while they are coplanar, at most `maxPatches` of them, and their hull has
// room for clipping (at most ConvexPolygon::kCapacity - 2 corners); of such a run, the longest start whose
// hull covers at most 1.25 times its patches' area is a cluster (a hull much larger than its patches would
// find occluders its patches' shafts do not reach). A wall of n x n tiles in row order becomes one cluster.
std::vector<PatchCluster> ClusterPatches(const std::vector<Patch> &patches, int maxPatches = 1024);

// A rectangle in cluster c's plane holding patches ids[0, count) of it (counter-clockwise about c.normal,
// widened by a billionth of its size so that rounding leaves no corner outside): the region a row's walk
// needs when it pairs with a few of a cluster's patches only. The cluster's hull where that is no larger.
ConvexPolygon RegionOfPatches(const PatchCluster &c, const std::vector<Patch> &patches, const int32_t *ids,
                              long long count);

}  // namespace rad
