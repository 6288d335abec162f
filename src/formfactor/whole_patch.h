// What the unoccluded kernel (unoccluded.h) derives from one patch alone: its spread, bounding sphere, unit
// normal, and its shape and length for the node-pair rules (point_pair_rule.h). The geometry makes one
// WholePatch (80 bytes) per patch (FormFactorGeometry::wholePatches), and a pair of whole patches reads both
// instead of making them again.
#pragma once

#include "formfactor/convex_polygon.h"
#include "formfactor/point_pair_rule.h"
#include "util/hd.h"
#include "util/vec3.h"

namespace rad {

// The largest squared distance from the first corner: at least a quarter of the squared diameter.
RAD_HD RAD_INLINE double SpreadSquared(const ConvexPolygon &p) {
  double m = 0;
  for (int k = 1; k < p.n; ++k) m = Larger(m, LengthSquared(p.v[k] - p.v[0]));
  return m;
}

// The bounding sphere about the corners' mean (PolygonCentre), which SeparationOf measures gaps between.
struct BoundingSphere {
  Vec3 centre;
  double radius = 0;
};
RAD_HD RAD_INLINE BoundingSphere BoundingSphereOf(const ConvexPolygon &p) {
  BoundingSphere s;
  s.centre = PolygonCentre(p);
  double r2 = 0;
  for (int k = 0; k < p.n; ++k) r2 = Larger(r2, LengthSquared(p.v[k] - s.centre));
  s.radius = sqrt(r2);
  return s;
}

// Read by the pairs whose ClippedPair is whole; made by the same code as the pair would use, so either way gives
// the same bits.
struct WholePatch {
  double spread2 = 0;  // SpreadSquared
  BoundingSphere sphere;
  Vec3 unitNormal;  // Normalize(PolygonNormal(p))
  RuleSide rules;   // shape and rule length for the node-pair rules
};

RAD_HD inline void DescribeWholePatch(const ConvexPolygon &p, WholePatch &out) {
  out.spread2 = SpreadSquared(p);
  out.sphere = BoundingSphereOf(p);
  out.unitNormal = Normalize(PolygonNormal(p));
  out.rules = RuleSideOf(p, 2 * out.sphere.radius);
}

}  // namespace rad
