// Where on an occluded pair's emitter the occluders change what the receiver shows: a convex region outside of
// which they hide nothing (the penumbra's bound), and a convex region inside which one occluder hides all of
// the receiver (part of an umbra). The cubature is aimed with them (pair.h).
//
// Why: the cubature samples the emitter at a few points per cell and refines where its two rules disagree. An
// occluder close to the emitter's plane changes the receiver's visibility across a narrow band of the emitter
// only (a light panel 1 mm below a ceiling shadows the wall from the ceiling within about 1 mm of the panel's
// outline), and when no sample falls in the band both rules agree on a wrong value. In the Cornell box the pairs
// of ceiling and wall patches came out at their unoccluded value, 1 % too high, where a strip of ceiling next to
// the panel lost light, and 40 % too high where the panel hid a ceiling patch but for a strip along its edge.
// Cut along the bands' edges, the emitter's pieces have their samples where the light changes.
//
// How: x on the emitter's plane loses light to receiver point r when the segment x-r meets an occluder o, that
// is, when x is the central projection of o from r onto the emitter's plane. Every such o lies in front of both
// planes and nearer the emitter's plane than r. When every part of an occluder in front of both planes is
// nearer the emitter's plane than every corner of the receiver, the projection is projective in r and in o
// separately, so
//   - the points where the occluder hides something lie in the convex hull of the projections of the corners:
//     its extent along the outward normal of each emitter edge bounds the penumbra by a line parallel to that
//     edge (clipping by those keeps the emitter's own shape, with no extra corners for the rule to straddle);
//   - the points where it hides every corner of the receiver (the intersection of its projections from the
//     corners) see none of the receiver, which is convex: that is the umbra.
// An occluder reaching as far from the emitter as the receiver may shadow it from anywhere: then the whole
// emitter is kept and no umbra is used.
#pragma once

#include <cstdint>

#include "formfactor/convex_polygon.h"
#include "formfactor/geometry.h"
#include "formfactor/unoccluded.h"
#include "util/hd.h"
#include "util/vec3.h"

namespace rad {

struct ShadowRegions {
  ConvexPolygon penumbra;  // the emitter, or the part of it the occluders may shadow (n == 0: none of it)
  bool wholeEmitter = true;
  ConvexPolygon umbra;     // part of the emitter that sees none of the receiver (n == 0: none found)
};

namespace penumbra_detail {

// Polygons on the way: an occluder clipped by two planes, and the umbra while it is clipped by projections
// (the emitter's corners and those of every projection it is clipped by).
struct WidePolygon {
  static constexpr int kCapacity = 24;
  Vec3 v[kCapacity];
  int n = 0;
};

template <class Polygon>
RAD_HD RAD_INLINE Polygon KeepInFront(const Polygon &p, Vec3 normal, Vec3 point) {
  return ClipBySignedDistance(
      p, 0.0, [&](Vec3 x) { return Dot(normal, x - point); }, [](Vec3 a, Vec3 b, double t) { return a + (b - a) * t; });
}

// The part of the emitter `e` from which the segment to r meets occluder `o` (in front of both planes, nearer the
// emitter's plane than r): e clipped to the central projection of o from r.
RAD_HD inline WidePolygon ClipToProjection(const WidePolygon &e, Vec3 emitterNormal, Vec3 e0, const WidePolygon &o,
                                           Vec3 r) {
  Vec3 q[WidePolygon::kCapacity];
  const double heightR = Dot(emitterNormal, r - e0);
  for (int m = 0; m < o.n; ++m) q[m] = r + (o.v[m] - r) * (heightR / (heightR - Dot(emitterNormal, o.v[m] - e0)));
  Vec3 turn;  // the projection's orientation about the emitter's normal
  for (int m = 1; m + 1 < o.n; ++m) turn += Cross(q[m] - q[0], q[m + 1] - q[0]);
  const double orientation = Dot(turn, emitterNormal);
  WidePolygon out;
  if (!(fabs(orientation) > 0)) return out;  // seen edge-on from r: it hides nothing of positive area
  out = e;
  for (int m = 0; m < o.n && out.n > 0; ++m) {
    const Vec3 edge = q[(m + 1) % o.n] - q[m];
    Vec3 inward = Cross(emitterNormal, edge);  // left of the edge, inside when counter-clockwise
    if (orientation < 0) inward = -inward;
    if (!(LengthSquared(inward) > 0)) continue;
    out = KeepInFront(out, inward, q[m]);
  }
  return out;
}

}  // namespace penumbra_detail

RAD_HD inline ShadowRegions FindShadowRegions(const ClippedPair &cp, Vec3 emitterNormal, Vec3 receiverNormal,
                                              const Occluder *occluders, const int32_t *candidates, int count) {
  using penumbra_detail::WidePolygon;
  ShadowRegions out;
  out.penumbra = cp.emitter;
  const ConvexPolygon &E = cp.emitter, &R = cp.receiver;
  const Vec3 e0 = E.v[0];
  double receiverNearest = 1e300;
  for (int k = 0; k < R.n; ++k) receiverNearest = Smaller(receiverNearest, Dot(emitterNormal, R.v[k] - e0));
  if (!(receiverNearest > 0)) return out;  // the receiver touches the emitter's plane

  // Outward normals of the emitter's edges, in its plane, and the projections' extent along each.
  Vec3 centre;
  for (int k = 0; k < E.n; ++k) centre += E.v[k];
  centre = centre / double(E.n);
  Vec3 outward[ConvexPolygon::kCapacity];
  double extent[ConvexPolygon::kCapacity];
  for (int k = 0; k < E.n; ++k) {
    outward[k] = Normalize(Cross(E.v[(k + 1) % E.n] - E.v[k], emitterNormal));
    if (Dot(outward[k], centre - E.v[k]) > 0) outward[k] = -outward[k];
    extent[k] = -1e300;
  }
  WidePolygon emitter;
  for (int k = 0; k < E.n; ++k) emitter.v[k] = E.v[k];
  emitter.n = E.n;
  double umbraArea = 0;
  bool anyShadow = false;
  for (int c = 0; c < count; ++c) {
    const ConvexPolygon &o = occluders[candidates[c]].polygon;
    WidePolygon p;
    for (int k = 0; k < o.n; ++k) p.v[k] = o.v[k];
    p.n = o.n;
    p = penumbra_detail::KeepInFront(p, emitterNormal, e0);
    p = penumbra_detail::KeepInFront(p, receiverNormal, R.v[0]);
    if (p.n == 0) continue;  // no part of it lies where it could stand between the two
    anyShadow = true;
    for (int m = 0; m < p.n; ++m) {
      const double heightO = Dot(emitterNormal, p.v[m] - e0);
      // Projections from the nearest receiver corner stretch by receiverNearest / (receiverNearest - heightO):
      // beyond a millionfold the region is as good as unbounded.
      if (!(heightO < (1 - 1e-6) * receiverNearest)) {
        out.umbra.n = 0;
        return out;
      }
      for (int k = 0; k < R.n; ++k) {
        const double heightR = Dot(emitterNormal, R.v[k] - e0);
        const Vec3 onPlane = R.v[k] + (p.v[m] - R.v[k]) * (heightR / (heightR - heightO));
        for (int e = 0; e < E.n; ++e) extent[e] = Larger(extent[e], Dot(outward[e], onPlane));
      }
    }
    WidePolygon u = emitter;
    for (int k = 0; k < R.n && u.n > 0; ++k) u = penumbra_detail::ClipToProjection(u, emitterNormal, e0, p, R.v[k]);
    if (u.n >= 3 && u.n <= ConvexPolygon::kCapacity) {
      ConvexPolygon asConvex = MakeConvexPolygon(u.v, u.n);
      const double area = PolygonArea(asConvex);
      if (area > umbraArea) umbraArea = area, out.umbra = asConvex;
    }
  }
  out.wholeEmitter = false;
  if (!anyShadow) {
    out.penumbra.n = 0;
    return out;
  }
  // A margin for the rounding of the projections (stretched by at most 1e6), far below any cell the cubature
  // makes.
  const double margin = 1e-9 * PolygonDiameter(E);
  bool clipped = false;
  for (int e = 0; e < E.n && out.penumbra.n > 0; ++e) {
    double farthest = -1e300;
    for (int k = 0; k < out.penumbra.n; ++k) farthest = Larger(farthest, Dot(outward[e], out.penumbra.v[k]));
    const double bound = extent[e] + margin;
    if (!(bound < farthest) || out.penumbra.n + 1 > ConvexPolygon::kCapacity) continue;  // (a cut adds a corner)
    const Vec3 onLine = E.v[e] + outward[e] * (bound - Dot(outward[e], E.v[e]));
    out.penumbra = ClipToHalfSpace(out.penumbra, -outward[e], onLine, 0.0);
    clipped = true;
  }
  out.wholeEmitter = !clipped;
  return out;
}

}  // namespace rad
