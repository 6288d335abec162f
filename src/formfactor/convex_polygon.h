// A small convex polygon of fixed capacity (no heap), usable on host and device.
#pragma once

#include <type_traits>

#include "util/hd.h"
#include "util/vec3.h"

namespace rad {

struct ConvexPolygon {
  static constexpr int kCapacity = 8;  // a quad clipped by two planes has at most 6 corners
  Vec3 v[kCapacity];
  int n = 0;
};

RAD_HD RAD_INLINE ConvexPolygon MakeConvexPolygon(const Vec3 *corners, int count) {
  ConvexPolygon p;
  for (int k = 0; k < count; ++k) p.v[k] = corners[k];
  p.n = count;
  return p;
}

// Sutherland-Hodgman against one line or plane, for any fixed-capacity polygon (members v, n, kCapacity; the
// 3-D patches here, the 2-D shadows of visible_region.h), in place: keeps the part where distance(corner) >= 0.
// Distances within `tolerance` of 0 count as 0, so that a polygon touching the line or plane along an edge is
// kept whole instead of gaining slivers. lerp(a, b, t) is the point a + (b - a) t. A polygon wholly on the kept
// side is left as it is without a copy: the exact kernel clips every shadow by every receiver edge at every
// cubature point, and most clips keep everything.
template <class Polygon, class Distance, class Lerp>
RAD_HD RAD_INLINE void ClipBySignedDistanceInPlace(Polygon &poly, double tolerance, const Distance &distance,
                                                   const Lerp &lerp) {
  double d[Polygon::kCapacity];
  bool allInside = true, allOutside = true;
  for (int k = 0; k < poly.n; ++k) {
    d[k] = distance(poly.v[k]);
    if (fabs(d[k]) <= tolerance) d[k] = 0;
    if (d[k] < 0) allInside = false;
    if (d[k] > 0) allOutside = false;
  }
  if (allOutside) {  // on or behind (coplanar too, or empty): nothing of positive area in front
    poly.n = 0;
    return;
  }
  if (allInside) return;
  std::decay_t<decltype(poly.v[0])> out[Polygon::kCapacity];  // corners left uninitialised when they are 2-D
  int count = 0;
  for (int k = 0; k < poly.n; ++k) {
    const int next = (k + 1) % poly.n;
    if (d[k] >= 0 && count < Polygon::kCapacity) out[count++] = poly.v[k];
    if ((d[k] > 0 && d[next] < 0) || (d[k] < 0 && d[next] > 0)) {
      const double t = d[k] / (d[k] - d[next]);
      if (count < Polygon::kCapacity) out[count++] = lerp(poly.v[k], poly.v[next], t);
    }
  }
  for (int k = 0; k < count; ++k) poly.v[k] = out[k];
  poly.n = count < 3 ? 0 : count;
}

// The same, returning the clipped copy.
template <class Polygon, class Distance, class Lerp>
RAD_HD RAD_INLINE Polygon ClipBySignedDistance(const Polygon &poly, double tolerance, const Distance &distance,
                                               const Lerp &lerp) {
  Polygon out = poly;
  ClipBySignedDistanceInPlace(out, tolerance, distance, lerp);
  return out;
}

// Keeps the part of `poly` (any 3-D polygon type: ConvexPolygon, or the wider ones of penumbra.h) where
// Dot(planeNormal, x - planePoint) >= 0, in place.
template <class Polygon>
RAD_HD RAD_INLINE void ClipToHalfSpaceInPlace(Polygon &poly, Vec3 planeNormal, Vec3 planePoint, double tolerance) {
  ClipBySignedDistanceInPlace(
      poly, tolerance, [&](Vec3 x) { return Dot(planeNormal, x - planePoint); },
      [](Vec3 a, Vec3 b, double t) { return a + (b - a) * t; });
}

// Keeps the part of `poly` where Dot(planeNormal, x - planePoint) >= 0.
RAD_HD RAD_INLINE ConvexPolygon ClipToHalfSpace(const ConvexPolygon &poly, Vec3 planeNormal, Vec3 planePoint,
                                                double tolerance) {
  ConvexPolygon out = poly;
  ClipToHalfSpaceInPlace(out, planeNormal, planePoint, tolerance);
  return out;
}

// Which sides of a plane the corners of `p` reach, farther than `tolerance` from it: kAhead (where
// Dot(planeNormal, x - planePoint) > 0), kBehind, both (the plane crosses p) or neither (p lies in it).
enum PlaneSide { kOnPlane = 0, kAhead = 1, kBehind = 2, kAcross = 3 };
RAD_HD RAD_INLINE int PlaneSides(const ConvexPolygon &p, Vec3 planeNormal, Vec3 planePoint, double tolerance) {
  int sides = kOnPlane;
  for (int k = 0; k < p.n; ++k) {
    const double d = Dot(planeNormal, p.v[k] - planePoint);
    if (d > tolerance) sides |= kAhead;
    if (d < -tolerance) sides |= kBehind;
  }
  return sides;
}

// The mean of the corners: a point inside, for telling the sides of an edge apart.
RAD_HD RAD_INLINE Vec3 PolygonCentre(const ConvexPolygon &p) {
  Vec3 c;
  for (int k = 0; k < p.n; ++k) c += p.v[k];
  return c / double(p.n);
}

// A normal of edge k (corner k to k + 1) in the polygon's plane (unit normal `planeNormal`), pointing away from
// `centre` (PolygonCentre): |edge| long.
RAD_HD RAD_INLINE Vec3 OutwardEdgeNormal(const ConvexPolygon &p, int k, Vec3 planeNormal, Vec3 centre) {
  const Vec3 outward = Cross(p.v[(k + 1) % p.n] - p.v[k], planeNormal);
  return Dot(outward, centre - p.v[k]) > 0 ? -outward : outward;
}

// Twice the area times the unit normal about which the corners run counter-clockwise.
RAD_HD RAD_INLINE Vec3 PolygonNormal(const ConvexPolygon &p) {
  Vec3 s;
  for (int k = 1; k + 1 < p.n; ++k) s += Cross(p.v[k] - p.v[0], p.v[k + 1] - p.v[0]);
  return s;
}

RAD_HD RAD_INLINE double PolygonArea(const ConvexPolygon &p) { return 0.5 * Length(PolygonNormal(p)); }

// The distance from p to a convex polygon (unit normal `normal`): to its plane when p stands over it, else to
// its nearest edge.
RAD_HD inline double PointToPolygonDistance(Vec3 p, const ConvexPolygon &poly, Vec3 normal) {
  const double height = Dot(normal, p - poly.v[0]);
  const Vec3 foot = p - normal * height;
  bool over = true;
  double nearest2 = 1e300;
  for (int k = 0; k < poly.n; ++k) {
    const Vec3 a = poly.v[k], edge = poly.v[(k + 1) % poly.n] - a;
    if (Dot(Cross(edge, foot - a), normal) < 0) over = false;
    const double length2 = LengthSquared(edge);
    const double t = length2 > 0 ? Smaller(Larger(Dot(foot - a, edge) / length2, 0.0), 1.0) : 0.0;
    nearest2 = Smaller(nearest2, LengthSquared(p - (a + edge * t)));
  }
  return over ? fabs(height) : sqrt(nearest2);
}

RAD_HD RAD_INLINE double PolygonDiameter(const ConvexPolygon &p) {
  double d2 = 0;
  for (int a = 0; a < p.n; ++a)
    for (int b = a + 1; b < p.n; ++b) d2 = Larger(d2, LengthSquared(p.v[a] - p.v[b]));
  return sqrt(d2);
}

}  // namespace rad
