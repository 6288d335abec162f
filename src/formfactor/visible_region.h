// The exact form factor from a point x to the part of a receiver polygon that occluders leave visible.
//
// Seen from x, each occluder casts a shadow on the receiver's plane: its central projection from x, after the
// occluder is clipped to the slab between x and that plane (only that part can stand between them), clipped
// to the receiver. What x sees of the receiver is the receiver less the union of the shadows. The contour
// formula (point_polygon.h) is a sum over the edges of a region's boundary, so the factor to the visible region
// is the sum over its boundary's edges, with no need to build the region itself (Stokes): the boundary
// consists of the pieces of the receiver's edges that no shadow covers and the pieces of shadow edges that lie
// inside the receiver and outside every other shadow, the latter run backwards (the visible side is their
// outside). Each edge is cut into the intervals where other polygons cover it; an interval counts when the
// side of the edge the region lies on is visible and the other side is not.
//
// Coincident edges (two shadows of the triangles of one quad, a shadow that reaches the receiver's edge, a
// face and its duplicate) are decided once: collinearity is a symmetric test, and an interval shared by
// collinear edges of several polygons is counted only by the lowest-numbered one (the receiver is number 0),
// which sees on which side each of the others lies. So touching shadows leave no sliver of light between them
// and a fully covered receiver gives exactly 0.
//
// Memory is fixed (no heap) and the work per point is O(E K) for E shadow edges and K shadows: the same code
// runs on the host and in GPU kernels.
#pragma once

#include "formfactor/convex_polygon.h"
#include "formfactor/point_polygon.h"
#include "util/hd.h"
#include "util/vec3.h"

namespace rad {

// Occluders a pair may have; a pair with more is counted and left to shadow rays.
constexpr int kMaxPairOccluders = 64;

struct Point2 {
  double x, y;  // left uninitialised: arrays of polygons live on the stack of every cubature point
};

// A convex polygon in the receiver's plane, counter-clockwise. An occluder (at most 8 corners after its two
// slab clips) clipped to a receiver of at most 8 edges has at most 16 corners.
// Left uninitialised like Point2 (the integrand holds an array of them per cubature point): set n first.
struct Polygon2 {
  static constexpr int kCapacity = 16;
  Point2 v[kCapacity];
  int n;
  Point2 lo, hi;  // bounding box
};

// The receiver's plane: an orthonormal frame whose third axis is the receiver's front normal, so that a
// polygon counter-clockwise from the front is counter-clockwise in (e1, e2) coordinates.
struct ReceiverFrame {
  Vec3 origin, e1, e2, normal;
  Polygon2 polygon;   // the receiver itself
  double tolerance;   // plane lengths below this count as zero (collinearity, empty shadows)
  double edgeTolerance[Polygon2::kCapacity];  // the tolerance times each edge's length (ClipLeftOf)
};

namespace visible_detail {

RAD_HD RAD_INLINE double Cross2(Point2 a, Point2 b) { return a.x * b.y - a.y * b.x; }
RAD_HD RAD_INLINE Point2 Sub2(Point2 a, Point2 b) { return {a.x - b.x, a.y - b.y}; }
RAD_HD RAD_INLINE double Length2(Point2 a) { return sqrt(a.x * a.x + a.y * a.y); }

RAD_HD RAD_INLINE void UpdateBounds(Polygon2 &p) {
  p.lo = p.hi = p.v[0];
  for (int k = 1; k < p.n; ++k) {
    p.lo.x = Smaller(p.lo.x, p.v[k].x), p.lo.y = Smaller(p.lo.y, p.v[k].y);
    p.hi.x = Larger(p.hi.x, p.v[k].x), p.hi.y = Larger(p.hi.y, p.v[k].y);
  }
}

RAD_HD RAD_INLINE double SignedArea2(const Polygon2 &p) {
  double s = 0;
  for (int k = 0; k < p.n; ++k) s += Cross2(p.v[k], p.v[(k + 1) % p.n]);
  return 0.5 * s;
}

// Keeps the part of `p` on the left of the directed line a -> b (Sutherland-Hodgman), in place; corners
// within `tolerance` of the line count as on it. `lengthTolerance` is the tolerance times |b - a|: distances
// are kept as cross products (a distance times the line's length). A crossing is placed by its parameter along
// the clip line, not along the polygon's edge: shadows cast from near the occluder's level reach 1e9 times the
// receiver's size, and interpolating along such an edge put the crossing 2e-11 off the receiver's edge,
// tilted enough that the shadow's edge no longer counted as lying on the receiver's edge (a point of a tile
// beside a sunk block saw 0.5 % too little).
RAD_HD RAD_INLINE void ClipLeftOf(Polygon2 &p, Point2 a, Point2 b, double lengthTolerance) {
  const Point2 e = Sub2(b, a);
  ClipBySignedDistanceInPlace(p, lengthTolerance, [&](Point2 x) { return Cross2(e, Sub2(x, a)); },
                              [&](Point2 from, Point2 to, double) {
                                const Point2 edge = Sub2(to, from);
                                const double s = Cross2(Sub2(from, a), edge) / Cross2(e, edge);
                                return Point2{a.x + e.x * s, a.y + e.y * s};
                              });
}

// Which sides of an edge a polygon covers over an interval of the edge's parameter.
enum Cover { kNone = 0, kLeft = 1, kRight = 2, kBoth = 3 };

struct Coverage {
  double t0 = 0, t1 = 0;  // the covered interval of the edge, in [0, 1]
  int cover = kNone;
  bool collinear = false;  // one of the polygon's edges lies on the edge's line
};

// How polygon `b` covers the edge p -> q. Collinearity of two edges is decided by the same four distances
// whichever edge is asked about, so both polygons of a coincident pair agree on it. Distances are kept as
// cross products (a distance times its line's length) and compared with the tolerance squared, so that the
// innermost loop of the exact kernel takes no square root and no division but where an edge is cut.
RAD_HD RAD_INLINE Coverage CoverageOfEdge(Point2 p, Point2 q, const Polygon2 &b, double tolerance) {
  Coverage c;
  const Point2 d = Sub2(q, p);
  const double len2 = d.x * d.x + d.y * d.y, tol2 = tolerance * tolerance;
  if (Larger(p.x, q.x) < b.lo.x - tolerance || Smaller(p.x, q.x) > b.hi.x + tolerance ||
      Larger(p.y, q.y) < b.lo.y - tolerance || Smaller(p.y, q.y) > b.hi.y + tolerance)
    return c;
  double t0 = 0, t1 = 1;
  bool sameDirection = false;
  for (int k = 0; k < b.n; ++k) {
    const Point2 b0 = b.v[k], b1 = b.v[(k + 1) % b.n];
    const Point2 eb = Sub2(b1, b0);
    const double lb2 = eb.x * eb.x + eb.y * eb.y;
    if (!(lb2 > tol2)) continue;
    // |eb| times the signed distances of p and q from b's edge line (positive on its left).
    const double fp = Cross2(eb, Sub2(p, b0)), fq = Cross2(eb, Sub2(q, b0));
    const double near2 = tol2 * lb2;
    if (fp * fp <= near2 && fq * fq <= near2) {
      const double gb0 = Cross2(d, Sub2(b0, p)), gb1 = Cross2(d, Sub2(b1, p));
      if (gb0 * gb0 <= tol2 * len2 && gb1 * gb1 <= tol2 * len2) {
        c.collinear = true;
        sameDirection = d.x * eb.x + d.y * eb.y > 0;
        continue;  // this edge's half-plane is the side the polygon covers, not a cut of the interval
      }
    }
    if (fp < 0 && fq < 0) return Coverage{};
    if (fp >= 0 && fq >= 0) continue;
    const double tc = fp / (fp - fq);
    if (fp < 0) t0 = Larger(t0, tc);
    else t1 = Smaller(t1, tc);
  }
  if (!((t1 - t0) * (t1 - t0) * len2 > tol2) || !(t1 > t0)) return Coverage{};
  c.t0 = t0;
  c.t1 = t1;
  c.cover = c.collinear ? (sameDirection ? kLeft : kRight) : kBoth;
  return c;
}

struct Interval {
  double lo, hi;
};

}  // namespace visible_detail

RAD_HD inline ReceiverFrame MakeReceiverFrame(const ConvexPolygon &receiver, Vec3 normal) {
  ReceiverFrame f;
  f.origin = receiver.v[0];
  f.normal = normal;
  f.e1 = Normalize(receiver.v[1] - receiver.v[0]);
  f.e2 = Cross(normal, f.e1);
  f.tolerance = 1e-10 * PolygonDiameter(receiver);
  f.polygon.n = receiver.n;
  for (int k = 0; k < receiver.n; ++k) {
    const Vec3 r = receiver.v[k] - f.origin;
    f.polygon.v[k] = Point2{Dot(r, f.e1), Dot(r, f.e2)};
  }
  visible_detail::UpdateBounds(f.polygon);
  for (int k = 0; k < receiver.n; ++k)
    f.edgeTolerance[k] =
        f.tolerance * visible_detail::Length2(visible_detail::Sub2(f.polygon.v[(k + 1) % receiver.n], f.polygon.v[k]));
  return f;
}

// The central projection from x (h = distance of x in front of the receiver's plane) of a point at `height`
// above that plane (below x's level), in the plane's coordinates.
RAD_HD RAD_INLINE Point2 CastPoint(const ReceiverFrame &f, Vec3 x, double h, Vec3 point, double height) {
  const Vec3 p = (x - f.origin) + (point - x) * (h / (h - height));
  return Point2{Dot(p, f.e1), Dot(p, f.e2)};
}

// Casts points from x onto the receiver's plane (h = distance of x in front of that plane, > 0) when every one
// lies inside the slab of CastSlabCorners (beyond its tolerances), and returns true; false when one does not,
// and then `out` holds nothing of use. The heights of the points above the plane do not depend on x, but
// testing them here costs no more than the projection needs anyway.
RAD_HD RAD_INLINE bool CastPointsInSlab(const ReceiverFrame &f, Vec3 x, double h, const Vec3 *points, int count,
                                        Point2 *out) {
  const double top = h * (1 - 1e-9) - f.tolerance;
  for (int k = 0; k < count; ++k) {
    const double height = Dot(f.normal, points[k] - f.origin);
    if (!(height > f.tolerance && height < top)) return false;
    out[k] = CastPoint(f, x, h, points[k], height);
  }
  return true;
}

// The corners of the part of `occluder` that can stand between x and the receiver, cast from x onto the
// receiver's plane (h = distance of x in front of that plane, > 0): written to `out`, their count returned (0
// when no part can). The part is the slab between the receiver's plane and x: parts at or behind the plane
// cannot block, and parts level with x would project to infinity (a part within 1e-9 h of x's level blocks a
// solid angle of that order). Most occluders lie wholly inside the slab and are cast as they are.
RAD_HD inline int CastSlabCorners(const ReceiverFrame &f, Vec3 x, double h, const ConvexPolygon &occluder,
                                  Point2 *out) {
  if (CastPointsInSlab(f, x, h, occluder.v, occluder.n, out)) return occluder.n;
  ConvexPolygon slab = occluder;
  ClipToHalfSpaceInPlace(slab, f.normal, f.origin, f.tolerance);
  ClipToHalfSpaceInPlace(slab, -f.normal, f.origin + f.normal * (h * (1 - 1e-9)), f.tolerance);
  if (slab.n < 3) return 0;
  for (int k = 0; k < slab.n; ++k) out[k] = CastPoint(f, x, h, slab.v[k], Dot(f.normal, slab.v[k] - f.origin));
  return slab.n;
}

// A counter-clockwise shadow clipped to the receiver, in place; n == 0 when nothing of it falls there, or
// when it is narrower than the tolerance (an occluder seen edge-on hides nothing).
RAD_HD inline void ClipShadowToReceiver(const ReceiverFrame &f, Polygon2 &shadow) {
  using namespace visible_detail;
  for (int k = 0; k < f.polygon.n && shadow.n > 0; ++k)
    ClipLeftOf(shadow, f.polygon.v[k], f.polygon.v[(k + 1) % f.polygon.n], f.edgeTolerance[k]);
  if (shadow.n > 0) {
    UpdateBounds(shadow);
    const double extent = Larger(shadow.hi.x - shadow.lo.x, shadow.hi.y - shadow.lo.y);
    if (!(SignedArea2(shadow) > f.tolerance * extent)) shadow.n = 0;
  }
}

// The shadow of `occluder` on the receiver as seen from x (height h = distance of x in front of the receiver's
// plane, > 0), clipped to the receiver, written to `shadow`; n == 0 when it casts none there.
RAD_HD inline void ShadowOnReceiver(const ReceiverFrame &f, Vec3 x, double h, const ConvexPolygon &occluder,
                                    Polygon2 &shadow) {
  using namespace visible_detail;
  shadow.n = CastSlabCorners(f, x, h, occluder, shadow.v);
  if (shadow.n == 0) return;
  if (SignedArea2(shadow) < 0)  // an occluder seen from its back: make it counter-clockwise
    for (int a = 0, b = shadow.n - 1; a < b; ++a, --b) {
      const Point2 tmp = shadow.v[a];
      shadow.v[a] = shadow.v[b];
      shadow.v[b] = tmp;
    }
  ClipShadowToReceiver(f, shadow);
}

// A point of the emitter as the contour sums over the receiver's plane see it: its coordinates in the receiver's
// frame (h > 0: in front of the plane) and its unit normal in the same frame.
struct FramePoint {
  double u, v, h;
  Vec3 normal;
};

RAD_HD RAD_INLINE FramePoint InFrame(const ReceiverFrame &f, Vec3 x, Vec3 nx) {
  const Vec3 r = x - f.origin;
  const Vec3 normal{Dot(nx, f.e1), Dot(nx, f.e2), Dot(nx, f.normal)};
  return FramePoint{Dot(r, f.e1), Dot(r, f.e2), Dot(r, f.normal), normal};
}

// ContourEdgeTerm (point_polygon.h) for an edge a -> b of the receiver's plane, in frame coordinates: the same
// term with the corners' height fixed at 0, so that the differences and the cross product take a third of the
// work (the frame is right-handed: e1 x e2 = normal, so cross products keep their frame coordinates).
RAD_HD RAD_INLINE double PlaneEdgeTerm(const FramePoint &x, Point2 a, Point2 b) {
  const double ax = a.x - x.u, ay = a.y - x.v, bx = b.x - x.u, by = b.y - x.v;
  const double cx = x.h * (ay - by), cy = x.h * (bx - ax), cz = bx * ay - by * ax;  // (b - x) x (a - x)
  const double s = sqrt(cx * cx + cy * cy + cz * cz);
  if (!(s > 0)) return 0;
  const double beta = AngleFromSineCosine(s, ax * bx + ay * by + x.h * x.h);
  return beta * (x.normal.x * cx + x.normal.y * cy + x.normal.z * cz) / s;
}

// The form factor from x to a polygon of the receiver's plane (Lambert's contour sum, PointToPolygonFormFactor).
RAD_HD RAD_INLINE double PlanePolygonFactor(const FramePoint &x, const Polygon2 &p) {
  double sum = 0;
  for (int k = 0; k < p.n; ++k) sum += PlaneEdgeTerm(x, p.v[k == 0 ? p.n - 1 : k - 1], p.v[k]);
  return sum / (2 * kPi);
}

// The form factor from x (unit normal nx) to the shadows (each made by ShadowOnReceiver, so inside the receiver)
// when no two of them meet: their bounding boxes lie more than the tolerance apart. Returns false when two may
// meet. The part of the receiver x sees then has the receiver's factor less this: each shadow's contour is
// summed on its own, with none of the edge-against-polygon work of PointToVisibleReceiver (most points see
// one shadow, a convex body's or one polygon's).
RAD_HD inline bool DisjointShadowsFactor(const FramePoint &x, const ReceiverFrame &f, const Polygon2 *shadows,
                                         int shadowCount, double &hidden) {
  const double tol = f.tolerance;
  for (int a = 0; a < shadowCount; ++a)
    for (int b = a + 1; b < shadowCount; ++b) {
      const Polygon2 &A = shadows[a], &B = shadows[b];
      if (!(A.hi.x + tol < B.lo.x || B.hi.x + tol < A.lo.x || A.hi.y + tol < B.lo.y || B.hi.y + tol < A.lo.y))
        return false;
    }
  hidden = 0;
  for (int a = 0; a < shadowCount; ++a) hidden += PlanePolygonFactor(x, shadows[a]);
  return true;
}

// The form factor from x (unit normal nx) to the receiver less the shadows (each made by ShadowOnReceiver).
RAD_HD inline double PointToVisibleReceiver(const FramePoint &x, const ReceiverFrame &f, const Polygon2 *shadows,
                                            int shadowCount) {
  using namespace visible_detail;
  const double tol = f.tolerance;
  auto polygon = [&](int k) -> const Polygon2 & { return k == 0 ? f.polygon : shadows[k - 1]; };
  Interval minus[kMaxPairOccluders + 1];
  double sum = 0;
  for (int a = 0; a <= shadowCount; ++a) {
    const Polygon2 &A = polygon(a);
    for (int k = 0; k < A.n; ++k) {
      const Point2 p = A.v[k], q = A.v[(k + 1) % A.n];
      if (!(Length2(Sub2(q, p)) > tol)) continue;
      // The receiver's edges bound the region on their left; a shadow's edges bound it on their right, and
      // only where the receiver covers that side.
      double plusLo = 0, plusHi = 1;
      int minusCount = 0;
      for (int b = 0; b <= shadowCount; ++b) {
        if (b == a) continue;
        const Coverage c = CoverageOfEdge(p, q, polygon(b), tol);
        if (c.cover == kNone) {
          if (b == 0) plusHi = plusLo;  // a shadow edge outside the receiver bounds nothing
          continue;
        }
        if (c.collinear && b < a) {  // counted by the lower-numbered polygon
          minus[minusCount++] = Interval{c.t0, c.t1};
          if (b == 0 && c.cover != kBoth) plusHi = plusLo;
          continue;
        }
        if (a == 0) {
          if (c.cover & kLeft) minus[minusCount++] = Interval{c.t0, c.t1};
        } else if (b == 0) {
          if (c.cover & kRight) {
            plusLo = c.t0;
            plusHi = c.t1;
          } else {
            plusHi = plusLo;
          }
        } else if (c.cover & kRight) {
          minus[minusCount++] = Interval{c.t0, c.t1};
        }
      }
      if (!(plusHi > plusLo)) continue;
      // Insertion sort by start (few intervals), then walk the gaps of their union inside [plusLo, plusHi].
      for (int m = 1; m < minusCount; ++m) {
        const Interval v = minus[m];
        int w = m - 1;
        while (w >= 0 && minus[w].lo > v.lo) {
          minus[w + 1] = minus[w];
          --w;
        }
        minus[w + 1] = v;
      }
      const Point2 d = Sub2(q, p);
      const double minimum = tol / Length2(d);  // pieces shorter than the tolerance are rounding, not light
      auto emit = [&](double s0, double s1) {
        if (!(s1 - s0 > minimum)) return;
        const Point2 u{p.x + d.x * s0, p.y + d.y * s0}, v{p.x + d.x * s1, p.y + d.y * s1};
        sum += a == 0 ? PlaneEdgeTerm(x, u, v) : PlaneEdgeTerm(x, v, u);
      };
      double cursor = plusLo;
      for (int m = 0; m < minusCount && cursor < plusHi; ++m) {
        if (minus[m].lo > cursor) emit(cursor, Smaller(minus[m].lo, plusHi));
        cursor = Larger(cursor, minus[m].hi);
      }
      if (cursor < plusHi) emit(cursor, plusHi);
    }
  }
  return sum / (2 * kPi);
}

}  // namespace rad
