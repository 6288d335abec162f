// A conservative test that no occluder can block any ray between two patches.
// The "shaft" is the convex hull of the two (mutually clipped) patches. An occluder polygon can only block a
// ray if it reaches into the hull's interior; it cannot if a plane separates them. The planes tried are the
// two patches' own planes, the hull's side faces (through an edge of one patch and a corner of the other),
// and the occluder's own plane. Touching counts as separated, so a wall meeting the floor along an edge does
// not block floor-to-ceiling rays. Not finding a plane only means rays will be traced: it is never unsafe.
#pragma once

#include "formfactor/convex_polygon.h"
#include "util/hd.h"
#include "util/vec3.h"

namespace rad {

struct Plane {
  Vec3 normal;  // hull on the side where Dot(normal, x) - offset <= 0
  double offset;
};

struct Shaft {
  static constexpr int kMaxPlanes = 40;
  Plane planes[kMaxPlanes];
  int planeCount = 0;
  Vec3 points[2 * ConvexPolygon::kCapacity];
  int pointCount = 0;
  Vec3 boxMin, boxMax;
  double tolerance = 0;  // distances below this count as touching
};

RAD_HD inline Shaft MakeShaft(const ConvexPolygon &a, Vec3 normalA, const ConvexPolygon &b, Vec3 normalB) {
  Shaft s;
  for (int k = 0; k < a.n; ++k) s.points[s.pointCount++] = a.v[k];
  for (int k = 0; k < b.n; ++k) s.points[s.pointCount++] = b.v[k];
  s.boxMin = s.boxMax = s.points[0];
  for (int k = 1; k < s.pointCount; ++k) {
    s.boxMin = Min(s.boxMin, s.points[k]);
    s.boxMax = Max(s.boxMax, s.points[k]);
  }
  const double size = Length(s.boxMax - s.boxMin);
  s.tolerance = 1e-9 * size;
  // Each patch lies on its own plane and in front of the other's: the hull is behind -normal planes.
  s.planes[s.planeCount++] = Plane{-normalA, Dot(-normalA, a.v[0])};
  s.planes[s.planeCount++] = Plane{-normalB, Dot(-normalB, b.v[0])};
  // Side faces: a plane through an edge of one patch and a corner of the other that has every point of
  // both patches on one side.
  auto trySides = [&](const ConvexPolygon &edges, const ConvexPolygon &corners) {
    for (int e = 0; e < edges.n; ++e) {
      const Vec3 p0 = edges.v[e], p1 = edges.v[(e + 1) % edges.n];
      for (int c = 0; c < corners.n && s.planeCount < Shaft::kMaxPlanes; ++c) {
        const Vec3 w = Cross(p1 - p0, corners.v[c] - p0);
        const double len = Length(w);
        if (len <= 1e-12 * size * size) continue;
        // Sides tested with the unnormalised normal (distances times len) and left at the first point found
        // on each side: most candidate planes cut the hull, and are dropped before any division.
        const double reach = s.tolerance * len;
        bool anyAbove = false, anyBelow = false;
        for (int k = 0; k < s.pointCount && !(anyAbove && anyBelow); ++k) {
          const double d = Dot(w, s.points[k] - p0);
          if (d > reach) anyAbove = true;
          if (d < -reach) anyBelow = true;
        }
        if (anyAbove && anyBelow) continue;
        if (!anyAbove && !anyBelow) continue;  // everything on the plane: degenerate
        const Vec3 m = w / len;
        const double off = Dot(m, p0);
        s.planes[s.planeCount++] = anyAbove ? Plane{-m, -off} : Plane{m, off};
      }
    }
  };
  trySides(a, b);
  trySides(b, a);
  return s;
}

// True if the occluder (a planar convex polygon with the given unit normal) may reach into the shaft.
RAD_HD inline bool ShaftMayBeBlockedBy(const Shaft &s, const Vec3 *occluder, int count, Vec3 occluderNormal) {
  Vec3 lo = occluder[0], hi = occluder[0];
  for (int k = 1; k < count; ++k) {
    lo = Min(lo, occluder[k]);
    hi = Max(hi, occluder[k]);
  }
  const double t = s.tolerance;
  if (lo.x >= s.boxMax.x - t || lo.y >= s.boxMax.y - t || lo.z >= s.boxMax.z - t) return false;
  if (hi.x <= s.boxMin.x + t || hi.y <= s.boxMin.y + t || hi.z <= s.boxMin.z + t) return false;
  for (int p = 0; p < s.planeCount; ++p) {
    bool allOutside = true;
    for (int k = 0; k < count && allOutside; ++k)
      allOutside = Dot(s.planes[p].normal, occluder[k]) - s.planes[p].offset >= -t;
    if (allOutside) return false;
  }
  const double off = Dot(occluderNormal, occluder[0]);
  bool anyAbove = false, anyBelow = false;
  for (int k = 0; k < s.pointCount; ++k) {
    const double d = Dot(occluderNormal, s.points[k]) - off;
    if (d > t) anyAbove = true;
    if (d < -t) anyBelow = true;
  }
  return anyAbove && anyBelow;
}

}  // namespace rad
