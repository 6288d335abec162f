// The occluders that may block a pair, found by walking a BVH over the occluders with the pair's shaft: a subtree
// is skipped when its box lies outside the shaft's bounding box or outside one of its planes, and an occluder
// that survives is tested exactly (ShaftMayBeBlockedBy). Memory O(polygons) and no limit on their number, where
// the face-pair lists of geometry.cpp cost faces^2 memory and faces^3 time. Written once for host and device.
//
// The BVH holds the occluders as single-precision triangles (id = occluder index), whose boxes may fall short of
// the double-precision polygons by a rounding; the walk reads instead the boxes of its child slots in double
// precision, which hold the polygons exactly (FormFactorGeometry::occluderBvhBoxes), and culls them with the same
// tolerance as the exact test. So a run of tiles lying in the receiver's or the emitter's plane is dropped at
// the top of its subtree, where single-precision boxes had to be walked down to their leaves. The walk visits
// subtrees in a fixed order that depends only on the shaft, so a pair and its reverse, built on one canonical
// shaft, list the same occluders in the same order.
#pragma once

#include <cstdint>

#include "accel/bvh.h"
#include "accel/bvh_traversal.h"
#include "formfactor/geometry.h"
#include "formfactor/shaft.h"
#include "util/hd.h"

namespace rad {

namespace shaft_query_detail {

// True when a box cannot reach into the shaft: it lies beyond the shaft's bounding box or one of its planes
// (touching, within the shaft's tolerance, counts as beyond, as in ShaftMayBeBlockedBy).
RAD_HD RAD_INLINE bool BoxOutsideShaft(const SlotBox &b, const Shaft &s) {
  if (b.lo.x > b.hi.x) return true;  // an empty slot
  const double t = s.tolerance;
  if (b.lo.x >= s.boxMax.x - t || b.lo.y >= s.boxMax.y - t || b.lo.z >= s.boxMax.z - t) return true;
  if (b.hi.x <= s.boxMin.x + t || b.hi.y <= s.boxMin.y + t || b.hi.z <= s.boxMin.z + t) return true;
  for (int p = 0; p < s.planeCount; ++p) {
    const Vec3 m = s.planes[p].normal;
    // The box's corner deepest into the hull's side of the plane.
    const double nearest = m.x * (m.x > 0 ? b.lo.x : b.hi.x) + m.y * (m.y > 0 ? b.lo.y : b.hi.y) +
                           m.z * (m.z > 0 ? b.lo.z : b.hi.z);
    if (nearest - s.planes[p].offset >= -t) return true;
  }
  return false;
}

}  // namespace shaft_query_detail

// Appends to `out` the occluders (not of faces faceA or faceB) that may reach into the shaft; returns how many
// there are, counting stops at capacity + 1. `boxes`: the child slots' exact boxes (FormFactorGeometry).
RAD_HD inline int ShaftOccludersBvh(const BvhView &bvh, const SlotBox *boxes, const Occluder *occluders,
                                    const Shaft &s, int faceA, int faceB, int32_t *out, int capacity) {
  using shaft_query_detail::BoxOutsideShaft;
  if (bvh.nodeCount == 0) return 0;
  int32_t stack[kBvhStackSize];
  int size = 0, count = 0;
  int32_t node = 0;
  for (;;) {
    const BvhNode &n = bvh.nodes[node];
    int32_t next = -1;
    for (int k = 0; k < 2; ++k) {
      if (BoxOutsideShaft(boxes[2 * node + k], s)) continue;
      if (n.child[k] >= 0) {
        if (next < 0) next = n.child[k];
        else stack[size++] = n.child[k];
        continue;
      }
      const int32_t begin = ~n.child[k], end = begin + n.count[k];
      for (int32_t j = begin; j < end; ++j) {
        const int32_t id = bvh.triangles[j].id;
        const Occluder &o = occluders[id];
        if (o.face == faceA || o.face == faceB) continue;
        bool seen = false;  // an occluder is several triangles, and a spatial split may repeat one
        for (int c = 0; c < count && c < capacity && !seen; ++c) seen = out[c] == id;
        if (seen || !ShaftMayBeBlockedBy(s, o.polygon.v, o.polygon.n, o.normal)) continue;
        if (count < capacity) out[count] = id;
        if (++count > capacity) return count;
      }
    }
    if (next < 0) {
      if (size == 0) return count;
      next = stack[--size];
    }
    node = next;
  }
}

}  // namespace rad
