// The shadow of a convex closed surface (Occluder::convexSurface) seen from a point outside it: the convex
// hull of its corners' shadows, one polygon where casting its faces one by one gives one per face.
//
// Why: the visible-region sum (visible_region.h) costs about (edges of all shadows) x (shadows), and a sphere
// of 40 faces casts 4 to 20 overlapping shadows whose shared edges all cancel. Seen from x outside a convex
// body B, the points of the receiver's plane whose segment to x meets B form the central projection of B's
// part between the two (the slab of CastSlabCorners), a convex set: the hull of the projections of that part's
// corners. Only the body's faces in the pair's candidate list are at hand, not all of them; their slab
// corners are points of B, so their hull lies inside the body's shadow, and any point of the receiver in that
// shadow is hidden by a face of B facing x whose shadow reaches the receiver, which is therefore a candidate:
// inside the receiver the hull of the candidate faces toward x and the true shadow agree.
#pragma once

#include <cstdint>

#include "formfactor/geometry.h"
#include "formfactor/visible_region.h"
#include "util/hd.h"

namespace rad {

// Corners gathered for one body's hull at one point; more fall back to casting faces one by one.
constexpr int kMaxConvexBodyCorners = 96;

// The shadow of convex surface `body` from x, through its faces among `candidates`, written to `shadow`
// (n == 0: none on the receiver). Returns false when the hull cannot be built within fixed memory (too many
// corners, or a hull of more corners than a Polygon2 holds): the caller then casts the body's faces one by one.
RAD_HD inline bool ConvexBodyShadow(const ReceiverFrame &f, Vec3 x, double h, const Occluder *occluders,
                                    const int32_t *candidates, int count, int body, Polygon2 &shadow) {
  using namespace visible_detail;
  shadow.n = 0;
  Point2 points[kMaxConvexBodyCorners];
  int n = 0;
  bool facing = false;  // x is outside the body when it is in front of one of its faces
  for (int c = 0; c < count; ++c) {
    const Occluder &o = occluders[candidates[c]];
    // Faces turned away from x: a segment from x that meets the body enters it through a face toward x, so
    // those faces' shadows already make up the body's (as for any closed surface, geometry.h).
    if (o.convexSurface != body || !(Dot(o.normal, x - o.polygon.v[0]) > 0)) continue;
    facing = true;
    if (n + ConvexPolygon::kCapacity > kMaxConvexBodyCorners) return false;  // (a slab clip adds two corners)
    n += CastSlabCorners(f, x, h, o.polygon, points + n);
  }
  if (!facing || n < 3) return true;  // no face toward x: the body hides nothing it does not already
  // Andrew's monotone chain: sort by x then y (insertion sort: a few dozen points), then the lower and the
  // upper chains, turning left only (collinear and repeated corners dropped): counter-clockwise.
  for (int i = 1; i < n; ++i) {
    const Point2 p = points[i];
    int j = i - 1;
    while (j >= 0 && (points[j].x > p.x || (points[j].x == p.x && points[j].y > p.y))) {
      points[j + 1] = points[j];
      --j;
    }
    points[j + 1] = p;
  }
  Point2 hull[2 * kMaxConvexBodyCorners];
  int m = 0;
  for (int i = 0; i < n; ++i) {
    while (m >= 2 && Cross2(Sub2(hull[m - 1], hull[m - 2]), Sub2(points[i], hull[m - 2])) <= 0) --m;
    hull[m++] = points[i];
  }
  for (int i = n - 2, lower = m + 1; i >= 0; --i) {
    while (m >= lower && Cross2(Sub2(hull[m - 1], hull[m - 2]), Sub2(points[i], hull[m - 2])) <= 0) --m;
    hull[m++] = points[i];
  }
  --m;  // the first point again
  if (m > Polygon2::kCapacity) return false;
  if (m < 3) return true;
  for (int k = 0; k < m; ++k) shadow.v[k] = hull[k];
  shadow.n = m;
  ClipShadowToReceiver(f, shadow);
  return true;
}

}  // namespace rad
