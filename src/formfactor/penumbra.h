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

// The part of occluder `o` that can stand between emitter and receiver: in front of both planes (n == 0: none).
RAD_HD inline WidePolygon PartBetween(const ConvexPolygon &o, Vec3 emitterNormal, Vec3 e0, Vec3 receiverNormal,
                                      Vec3 r0) {
  WidePolygon p;
  for (int k = 0; k < o.n; ++k) p.v[k] = o.v[k];
  p.n = o.n;
  ClipToHalfSpaceInPlace(p, emitterNormal, e0, 0.0);
  ClipToHalfSpaceInPlace(p, receiverNormal, r0, 0.0);
  return p;
}

// Whether every corner of `p` is nearer the emitter's plane than the receiver's nearest corner, with room to
// spare: projections from the receiver stretch by receiverNearest / (receiverNearest - height), and beyond a
// millionfold the region they bound is as good as unbounded.
RAD_HD RAD_INLINE bool NearerThanReceiver(const WidePolygon &p, Vec3 emitterNormal, Vec3 e0, double receiverNearest) {
  for (int m = 0; m < p.n; ++m)
    if (!(Dot(emitterNormal, p.v[m] - e0) < (1 - 1e-6) * receiverNearest)) return false;
  return true;
}

// The central projection of o from r onto the emitter's plane (o nearer that plane than r).
RAD_HD RAD_INLINE Vec3 ProjectFrom(Vec3 r, Vec3 o, Vec3 emitterNormal, Vec3 e0) {
  const double heightR = Dot(emitterNormal, r - e0);
  return r + (o - r) * (heightR / (heightR - Dot(emitterNormal, o - e0)));
}

RAD_HD RAD_INLINE double ReceiverNearest(const ConvexPolygon &R, Vec3 emitterNormal, Vec3 e0) {
  double nearest = 1e300;
  for (int k = 0; k < R.n; ++k) nearest = Smaller(nearest, Dot(emitterNormal, R.v[k] - e0));
  return nearest;
}

// The part of the emitter `e` from which the segment to r meets occluder `o` (in front of both planes, nearer the
// emitter's plane than r): e clipped to the central projection of o from r.
RAD_HD inline WidePolygon ClipToProjection(const WidePolygon &e, Vec3 emitterNormal, Vec3 e0, const WidePolygon &o,
                                           Vec3 r) {
  Vec3 q[WidePolygon::kCapacity];
  for (int m = 0; m < o.n; ++m) q[m] = ProjectFrom(r, o.v[m], emitterNormal, e0);
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
    ClipToHalfSpaceInPlace(out, inward, q[m], 0.0);
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
  const double receiverNearest = penumbra_detail::ReceiverNearest(R, emitterNormal, e0);
  if (!(receiverNearest > 0)) return out;  // the receiver touches the emitter's plane

  // Outward normals of the emitter's edges, in its plane, and the projections' extent along each.
  const Vec3 centre = PolygonCentre(E);
  Vec3 outward[ConvexPolygon::kCapacity];
  double extent[ConvexPolygon::kCapacity];
  for (int k = 0; k < E.n; ++k) {
    outward[k] = Normalize(OutwardEdgeNormal(E, k, emitterNormal, centre));
    extent[k] = -1e300;
  }
  WidePolygon emitter;
  for (int k = 0; k < E.n; ++k) emitter.v[k] = E.v[k];
  emitter.n = E.n;
  double umbraArea = 0;
  bool anyShadow = false;
  for (int c = 0; c < count; ++c) {
    const WidePolygon p =
        penumbra_detail::PartBetween(occluders[candidates[c]].polygon, emitterNormal, e0, receiverNormal, R.v[0]);
    if (p.n == 0) continue;  // no part of it lies where it could stand between the two
    anyShadow = true;
    if (!penumbra_detail::NearerThanReceiver(p, emitterNormal, e0, receiverNearest)) {
      out.umbra.n = 0;
      return out;
    }
    for (int m = 0; m < p.n; ++m)
      for (int k = 0; k < R.n; ++k) {
        const Vec3 onPlane = penumbra_detail::ProjectFrom(R.v[k], p.v[m], emitterNormal, e0);
        for (int e = 0; e < E.n; ++e) extent[e] = Larger(extent[e], Dot(outward[e], onPlane));
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

namespace penumbra_detail {

// The image on the emitter's plane of segment q0-q1 under central projection, from `apex` (a receiver corner,
// q on an occluder edge) or through `apex` (an occluder corner, q on a receiver edge), over the part where
// the occluder point is nearer the emitter's plane than the receiver point (g0, g1: that margin at the ends;
// linear along the segment). A part reaching margin 0 projects to infinity: its image is a ray, cut off at
// `reach`. Calls cut(a, b) unless no part has a positive margin.
template <class Cut>
RAD_HD inline void EventImage(Vec3 apex, bool apexIsReceiver, Vec3 q0, Vec3 q1, double g0, double g1, Vec3 emitterNormal,
                              Vec3 e0, double reach, const Cut &cut) {
  if (!(g0 > 0) && !(g1 > 0)) return;
  auto project = [&](double s) {
    const Vec3 q = q0 + (q1 - q0) * s;
    return apexIsReceiver ? ProjectFrom(apex, q, emitterNormal, e0) : ProjectFrom(q, apex, emitterNormal, e0);
  };
  if (g0 > 0 && g1 > 0) {
    cut(project(0), project(1));
    return;
  }
  const double valid = g0 > 0 ? 0 : 1, limit = g0 / (g0 - g1);
  const Vec3 a = project(valid), towards = project(0.5 * (valid + limit)) - a;
  if (LengthSquared(towards) > 0) cut(a, a + Normalize(towards) * reach);
}

RAD_HD RAD_INLINE bool SameCorners(const WidePolygon &p, const ConvexPolygon &o) {
  if (p.n != o.n) return false;
  for (int k = 0; k < o.n; ++k)
    if (!(p.v[k].x == o.v[k].x && p.v[k].y == o.v[k].y && p.v[k].z == o.v[k].z)) return false;
  return true;
}

// Whether edge m of occluder o is no outline of the shadows seen from r: its neighbour across the edge
// (Occluder::across) faces r the same way as o does, so that the two lie on opposite sides of the edge seen
// from r. Then a point that sees r exactly behind the edge sees it hidden on both sides of the line: no event.
RAD_HD RAD_INLINE bool EdgeInsideShadows(const Occluder *occluders, const Occluder &o, int m, Vec3 r) {
  if (o.across[m] < 0) return false;
  const Occluder &other = occluders[o.across[m]];
  const double mine = Dot(o.normal, r - o.polygon.v[0]), theirs = Dot(other.normal, r - other.polygon.v[0]);
  return (mine > 0 && theirs > 0) || (mine < 0 && theirs < 0);
}

// Whether corner m of occluder o is no corner of the shadows seen from any point of segment r0-r1: every
// polygon around it (walked across its edges, Occluder::across) faces both ends, and so every point of the
// segment, the same way. Seen from there, consecutive polygons of the fan lie on opposite sides of their shared
// edge and turn the same way, so together they wind around the corner: it is hidden on all sides.
RAD_HD RAD_INLINE bool CornerInsideShadows(const Occluder *occluders, const Occluder &o, int m, Vec3 r0, Vec3 r1) {
  constexpr int kMaxFan = 32;
  const Vec3 v = o.polygon.v[m];
  auto side = [](const Occluder &f, Vec3 r) {
    const double d = Dot(f.normal, r - f.polygon.v[0]);
    return d > 0 ? 1 : d < 0 ? -1 : 0;
  };
  const int sign = side(o, r0);
  if (sign == 0) return false;
  const Occluder *f = &o;
  int corner = m;
  for (int step = 0; step < kMaxFan; ++step) {
    if (side(*f, r0) != sign || side(*f, r1) != sign) return false;
    const int next = f->across[corner];  // across the edge leaving v
    if (next < 0) return false;
    f = &occluders[next];
    corner = -1;
    for (int k = 0; k < f->polygon.n; ++k) {
      const Vec3 c = f->polygon.v[k];
      if (c.x == v.x && c.y == v.y && c.z == v.z) corner = k;
    }
    if (corner < 0) return false;
    if (f == &o) return true;
  }
  return false;
}

}  // namespace penumbra_detail

// The segments of the emitter's plane across which what the receiver shows changes form (the EV and VE
// events of discontinuity meshing): x sees a receiver corner exactly behind an occluder edge (the edges of
// the occluder's projection from that corner) or an occluder corner exactly in front of a receiver edge (the
// projection of that edge through the corner). Across such a segment the visible region gains or loses a
// corner, and the integrand's second derivative jumps: a rule straddling it converges slowly (two thirds of
// the cubature's evaluations in the Cornell box went to cells along such lines, and a ceiling patch beside
// the light panel was 3e-4 of its unoccluded factor off where they were not cut), a cut along it costs one
// more piece. Only the parts of the occluders in front of both planes count, and of each event only the part
// where the occluder point is nearer the emitter's plane than the receiver point (elsewhere x, o and r are
// not in that order); `cut(a, b)` is called for each segment.
template <class Cut>
RAD_HD inline void ForEachShadowEvent(const ClippedPair &cp, Vec3 emitterNormal, Vec3 receiverNormal,
                                      const Occluder *occluders, const int32_t *candidates, int count,
                                      const Cut &cut) {
  using penumbra_detail::WidePolygon;
  const ConvexPolygon &R = cp.receiver;
  const Vec3 e0 = cp.emitter.v[0];
  const double reach = 1e3 * PolygonDiameter(cp.emitter);
  const double keep = 1 - 1e-6;  // margins within a millionth of the receiver point's height count as none
  auto height = [&](Vec3 p) { return Dot(emitterNormal, p - e0); };
  for (int c = 0; c < count; ++c) {
    const Occluder &occluder = occluders[candidates[c]];
    const WidePolygon p = penumbra_detail::PartBetween(occluder.polygon, emitterNormal, e0, receiverNormal, R.v[0]);
    const bool whole = penumbra_detail::SameCorners(p, occluder.polygon);  // its edges are the occluder's
    for (int k = 0; k < R.n; ++k)  // occluder edges seen from receiver corners
      for (int m = 0; m < p.n; ++m) {
        if (whole && penumbra_detail::EdgeInsideShadows(occluders, occluder, m, R.v[k])) continue;
        const Vec3 o0 = p.v[m], o1 = p.v[(m + 1) % p.n];
        const double limit = keep * height(R.v[k]);
        penumbra_detail::EventImage(R.v[k], true, o0, o1, limit - height(o0), limit - height(o1), emitterNormal,
                                    e0, reach, cut);
      }
    for (int m = 0; m < p.n; ++m)  // receiver edges seen through occluder corners
      for (int k = 0; k < R.n; ++k) {
        const Vec3 r0 = R.v[k], r1 = R.v[(k + 1) % R.n];
        if (whole && penumbra_detail::CornerInsideShadows(occluders, occluder, m, r0, r1)) continue;
        const double o = height(p.v[m]);
        penumbra_detail::EventImage(p.v[m], false, r0, r1, keep * height(r0) - o, keep * height(r1) - o,
                                    emitterNormal, e0, reach, cut);
      }
  }
}

// Whether segment a-b passes through the interior of convex polygon `p` (both in the plane with normal
// `normal`) over more than `minimum` of its length.
RAD_HD inline bool SegmentPassesThrough(const ConvexPolygon &p, Vec3 normal, Vec3 a, Vec3 b, double minimum) {
  const Vec3 centre = PolygonCentre(p);
  const Vec3 d = b - a;
  double t0 = 0, t1 = 1;
  for (int k = 0; k < p.n && t0 < t1; ++k) {
    const Vec3 inward = -OutwardEdgeNormal(p, k, normal, centre);
    const double along = Dot(inward, d), at = Dot(inward, a - p.v[k]);
    if (along == 0) {
      if (at <= 0) return false;
      continue;
    }
    const double t = -at / along;
    if (along > 0) t0 = Larger(t0, t);
    else t1 = Smaller(t1, t);
  }
  return (t1 - t0) * Length(d) > minimum;
}

}  // namespace rad
