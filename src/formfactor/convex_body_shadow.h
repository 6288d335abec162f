// The shadow of a convex closed surface (Occluder::convexSurface) seen from a point outside it: the convex
// hull of its corners' shadows, one polygon where casting its faces one by one gives one per face.
//
// Why: the visible-region sum (visible_region.h) costs about (edges of all shadows) x (shadows), and a sphere
// of 40 faces casts 4 to 20 overlapping shadows whose shared edges all cancel. Seen from x outside a convex
// body B, the points of the receiver's plane whose segment to x meets B form the central projection of B's
// part between the two (the slab of CastSlabCorners), a convex set: the hull of the projections of that part's
// corners. Only the body's faces in the pair's candidate list are cast, clipped to the slab: their slab corners
// are points of B, so their hull lies inside the body's shadow, and any point of the receiver in that shadow
// is hidden by a face of B facing x whose shadow reaches the receiver, which is therefore a candidate: inside
// the receiver the hull of the candidate faces toward x and the true shadow agree.
//
// Over a piece of the emitter from which the whole body lies inside the slab and whose points all see the
// same faces of it, the hull's corners are the same corners of the body in the same order (its silhouette):
// FixedSilhouette finds them once per piece and each point casts only those.
#pragma once

#include <cstdint>

#include "formfactor/geometry.h"
#include "formfactor/geometry_view.h"
#include "formfactor/visible_region.h"
#include "util/hd.h"

namespace rad {

// Drops from ids[0..n) the points strictly inside the polygon of the extreme points in eight directions (Akl
// and Toussaint's filter), which cannot be corners of the hull; returns how many are left, in their order.
// The hull is the same (the monotone chain drops inner points anyway), but the sort before it is quadratic,
// and a body's shadow has most of its corners' shadows inside it.
RAD_HD inline int DropInnerPoints(const Point2 *points, int *ids, int n) {
  using namespace visible_detail;
  // The extremes in the directions counter-clockwise from +x, 45 degrees apart: the maxima of x, x + y, y and
  // y - x, then their minima, found in one pass (the first point to reach each, in the order given).
  int extreme[8];
  double best[8];
  for (int d = 0; d < 8; ++d) extreme[d] = ids[0];
  {
    const Point2 p = points[ids[0]];
    const double forms[4] = {p.x, p.x + p.y, p.y, p.y - p.x};
    for (int f = 0; f < 4; ++f) best[f] = forms[f], best[f + 4] = forms[f];
  }
  for (int i = 1; i < n; ++i) {
    const Point2 p = points[ids[i]];
    const double forms[4] = {p.x, p.x + p.y, p.y, p.y - p.x};
    for (int f = 0; f < 4; ++f) {
      if (forms[f] > best[f]) best[f] = forms[f], extreme[f] = ids[i];
      if (forms[f] < best[f + 4]) best[f + 4] = forms[f], extreme[f + 4] = ids[i];
    }
  }
  int kept = 0;
  for (int i = 0; i < n; ++i) {
    bool inside = true;
    for (int d = 0; d < 8 && inside; ++d) {
      const Point2 p = points[extreme[d]], q = points[extreme[(d + 1) % 8]];
      if (p.x == q.x && p.y == q.y) continue;  // two directions share their extreme point
      inside = Cross2(Sub2(q, p), Sub2(points[ids[i]], p)) > 0;
    }
    if (!inside) ids[kept++] = ids[i];
  }
  return kept;
}

constexpr int kFilterAbove = 32;

// The corners of the convex hull of the points ids[0..n) of `points`, counter-clockwise from the lowest of the
// leftmost, as indices into `points` written to `hull` (room for n + 1); returns their count. Andrew's
// monotone chain: sort by x then y (insertion sort: a few dozen points), then the lower and the upper chains,
// turning left only (collinear and repeated points dropped). `ids` is reordered.
RAD_HD inline int ConvexHull(const Point2 *points, int *ids, int n, int *hull) {
  using namespace visible_detail;
  // The filter pays only for many points: timed on points around a circle with shared corners (as the faces
  // of a body cast them), the hull of 10 took 550 ns with it and 220 ns without, of 24 1250 and 860 ns, and of
  // 40 about the same either way. The reference scene's hulls have 10 points on average.
  if (n > kFilterAbove) n = DropInnerPoints(points, ids, n);
  auto before = [&](int a, int b) {
    return points[a].x < points[b].x || (points[a].x == points[b].x && points[a].y < points[b].y);
  };
  for (int i = 1; i < n; ++i) {
    const int id = ids[i];
    int j = i - 1;
    while (j >= 0 && before(id, ids[j])) {
      ids[j + 1] = ids[j];
      --j;
    }
    ids[j + 1] = id;
  }
  auto turnsLeft = [&](int a, int b, int c) {
    return Cross2(Sub2(points[b], points[a]), Sub2(points[c], points[a])) > 0;
  };
  int m = 0;
  for (int i = 0; i < n; ++i) {
    while (m >= 2 && !turnsLeft(hull[m - 2], hull[m - 1], ids[i])) --m;
    hull[m++] = ids[i];
  }
  for (int i = n - 2, lower = m + 1; i >= 0; --i) {
    while (m >= lower && !turnsLeft(hull[m - 2], hull[m - 1], ids[i])) --m;
    hull[m++] = ids[i];
  }
  return m > 1 ? m - 1 : m;  // the last is the first again
}

// The shadow of convex surface `body` from x, written to `shadow` (n == 0: none on the receiver): the hull of
// the shadows of its faces among `candidates` that face x, each clipped to the slab. Returns false when the
// hull cannot be built within fixed memory (too many corners, or a hull that clipped to the receiver could
// outgrow a Polygon2): the caller then casts the body's faces one by one.
RAD_HD inline bool ConvexBodyShadow(const ReceiverFrame &f, Vec3 x, double h, const Occluder *occluders,
                                    const int32_t *candidates, int count, int body, Polygon2 &shadow) {
  shadow.n = 0;
  // x is outside the body when it is in front of one of its faces. Faces turned away from x need no casting:
  // a segment from x that meets the body enters it through a face toward x, so those faces' shadows already
  // make up the body's (as for any closed surface, geometry.h).
  auto facesX = [&](const Occluder &o) { return o.convexSurface == body && Dot(o.normal, x - o.polygon.v[0]) > 0; };
  bool facing = false;
  for (int c = 0; c < count && !facing; ++c) facing = facesX(occluders[candidates[c]]);
  if (!facing) return true;  // no face toward x: the body hides nothing it does not already
  Point2 points[kMaxConvexBodyCorners];
  int n = 0;
  for (int c = 0; c < count; ++c) {
    const Occluder &o = occluders[candidates[c]];
    if (!facesX(o)) continue;
    if (n + ConvexPolygon::kCapacity > kMaxConvexBodyCorners) return false;  // (a slab clip adds two corners)
    n += CastSlabCorners(f, x, h, o.polygon, points + n);
  }
  if (n < 3) return true;
  int ids[kMaxConvexBodyCorners], hull[kMaxConvexBodyCorners + 1];
  for (int i = 0; i < n; ++i) ids[i] = i;
  const int m = ConvexHull(points, ids, n, hull);
  if (m + f.polygon.n > Polygon2::kCapacity) return false;  // each clip to a receiver edge may add a corner
  if (m < 3) return true;
  for (int k = 0; k < m; ++k) shadow.v[k] = points[hull[k]];
  shadow.n = m;
  ClipShadowToReceiver(f, shadow);
  return true;
}

// A convex body's silhouette over a whole piece of the emitter. Seen from outside, the outline of a convex
// body's shadow is the shadow of its silhouette, the edges between its faces turned toward the point and those
// turned away, and that set changes only where the point crosses the plane of one of its faces. Over a piece
// that no face's plane crosses, and from which the whole body lies inside the slab of CastSlabCorners, the
// shadow's corners are therefore the same corners of the body in the same order: found once, at the piece's
// centre, then only those are cast at each cubature point, with no hull to build.
struct FixedSilhouette {
  int body = -1;
  const Vec3 *corners = nullptr;          // the body's corner list (GeometryView::convexCorners)
  int n = 0;                              // 0: no face of the body turns toward the piece, so it casts nothing
  int corner[Polygon2::kCapacity];        // indices into `corners`, counter-clockwise
};

// Convex bodies per piece of the emitter whose silhouettes are looked for.
constexpr int kMaxPieceSilhouettes = 4;

// Finds the silhouette of convex surface `body` over `piece` (a piece of the emitter); false when it is not the
// same over the whole piece, when the body keeps no corner list, or when its shadow could outgrow a Polygon2
// once clipped to the receiver. `tolerance` is the emitter's length tolerance: a plane passing within it of a
// corner of the piece does not cross it.
RAD_HD inline bool FindFixedSilhouette(const ReceiverFrame &f, const ConvexPolygon &piece, const GeometryView &g,
                                       int body, double tolerance, FixedSilhouette &out) {
  int cornerCount, faceCount;
  const Vec3 *corners = ConvexCorners(g, body, cornerCount);
  const int32_t *faces = ConvexFaces(g, body, faceCount);
  const Occluder *occluders = g.occluders;
  out.body = body;
  out.corners = corners;
  out.n = 0;
  if (cornerCount < 3 || piece.n < 3) return false;
  // The piece's lowest corner above the receiver's plane (heights are linear over the piece).
  Vec3 lowPoint = piece.v[0];
  double lowest = Dot(f.normal, piece.v[0] - f.origin);
  for (int k = 1; k < piece.n; ++k) {
    const double height = Dot(f.normal, piece.v[k] - f.origin);
    if (height < lowest) lowest = height, lowPoint = piece.v[k];
  }
  if (!(lowest > 0)) return false;
  bool facing = false;
  for (int c = 0; c < faceCount; ++c) {
    const Occluder &o = occluders[faces[c]];
    const int sides = PlaneSides(piece, o.normal, o.polygon.v[0], tolerance);
    if (sides == kAcross || sides == kOnPlane) return false;  // crossed by the plane, or lying in it
    facing = facing || sides == kAhead;
  }
  if (!facing) return true;
  // All corners inside the slab from the lowest point of the piece are inside it from every point.
  Point2 points[kMaxConvexBodyCorners];
  if (cornerCount > kMaxConvexBodyCorners || !CastPointsInSlab(f, lowPoint, lowest, corners, cornerCount, points))
    return false;
  const Vec3 centre = PolygonCentre(piece);
  CastPointsInSlab(f, centre, Dot(f.normal, centre - f.origin), corners, cornerCount, points);
  int ids[kMaxConvexBodyCorners], hull[kMaxConvexBodyCorners + 1];
  for (int i = 0; i < cornerCount; ++i) ids[i] = i;
  const int m = ConvexHull(points, ids, cornerCount, hull);
  if (m < 3 || m + f.polygon.n > Polygon2::kCapacity) return false;
  for (int k = 0; k < m; ++k) out.corner[k] = hull[k];
  out.n = m;
  return true;
}

// The silhouettes, fixed over `piece`, of the convex bodies among its occluders (at most kMaxPieceSilhouettes
// bodies are looked at), written to `out`; returns how many were found.
RAD_HD inline int FindPieceSilhouettes(const ReceiverFrame &f, const ConvexPolygon &piece, const GeometryView &g,
                                       const int32_t *candidates, int count, double tolerance,
                                       FixedSilhouette *out) {
  int found = 0;
  for (int c = 0; c < count && found < kMaxPieceSilhouettes; ++c) {
    const int body = g.occluders[candidates[c]].convexSurface;
    bool seen = false;
    for (int s = 0; s < found; ++s) seen = seen || out[s].body == body;
    if (body >= 0 && !seen && FindFixedSilhouette(f, piece, g, body, tolerance, out[found])) ++found;
  }
  return found;
}

// The shadow of a body from x through its fixed silhouette over the piece x lies in, clipped to the receiver.
RAD_HD inline void CastFixedSilhouette(const ReceiverFrame &f, Vec3 x, double h, const FixedSilhouette &s,
                                       Polygon2 &shadow) {
  for (int k = 0; k < s.n; ++k) {
    const Vec3 c = s.corners[s.corner[k]];
    shadow.v[k] = CastPoint(f, x, h, c, Dot(f.normal, c - f.origin));
  }
  shadow.n = s.n;
  ClipShadowToReceiver(f, shadow);
}

}  // namespace rad
