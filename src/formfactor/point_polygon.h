// The form factor from a differential area at x (unit normal nx) to a polygon, by Lambert's contour formula:
//   F = 1/(2 pi) * sum over edges k of  beta_k * (nx . unit(R_{k+1} x R_k)),  R_k = v_k - x,
// where beta_k is the angle the edge subtends at x. Exact for any polygon that lies entirely in front of
// x's tangent plane; callers clip the polygon to that half-space first. The polygon's corners must run
// counter-clockwise seen from its front and x must be in front of it (otherwise the sum changes sign,
// which the callers rule out by clipping as well).
#pragma once

#include "formfactor/convex_polygon.h"
#include "util/angle.h"
#include "util/hd.h"
#include "util/math_constants.h"
#include "util/vec3.h"

namespace rad {

// One edge's term of the contour sum, from corner a to corner b (the region on the left seen from the front):
// the angle the edge subtends at x times the cosine between nx and the normal of the plane through x and the
// edge. Without the 1/(2 pi). Shared by the whole-polygon sum below and the visible-region sum (visible_region.h).
RAD_HD RAD_INLINE double ContourEdgeTerm(Vec3 x, Vec3 nx, Vec3 a, Vec3 b) {
  const Vec3 r0 = a - x, r1 = b - x;
  const Vec3 c = Cross(r1, r0);
  const double s = Length(c);
  // From sine and cosine (not acos of the cosine): full accuracy for tiny and near-pi angles.
  const double beta = AngleFromSineCosine(s, Dot(r0, r1));
  const double term = beta * Dot(nx, c) / s;
  // An edge through x (s = 0) subtends no solid angle with a defined plane: it contributes nothing. (Selected
  // rather than returned early, so that loops over points vectorise.)
  return s > 0 ? term : 0.0;
}

RAD_HD RAD_INLINE double PointToPolygonFormFactor(Vec3 x, Vec3 nx, const ConvexPolygon &poly) {
  double sum = 0;
  for (int k = 0; k < poly.n; ++k) sum += ContourEdgeTerm(x, nx, poly.v[k == 0 ? poly.n - 1 : k - 1], poly.v[k]);
  return sum / (2 * kPi);
}

// PointToPolygonFormFactor at `count` points (coordinates px, py, pz), bitwise the same values: edge by edge over
// all the points, a loop the compiler vectorises, where one point at a time leaves the arc tangent's divisions
// and square root waiting on each other. On the host it runs through PointToPolygonFormFactorsHost (compiled
// for several instruction sets, host_kernels.cpp); the device runs the loop itself.
RAD_HD RAD_ALWAYS_INLINE void PointToPolygonFormFactorsLoop(const double *px, const double *py, const double *pz,
                                                           int count, Vec3 nx, const ConvexPolygon &poly,
                                                           double *out) {
  for (int p = 0; p < count; ++p) out[p] = 0;
  for (int k = 0; k < poly.n; ++k) {
    const Vec3 a = poly.v[k == 0 ? poly.n - 1 : k - 1], b = poly.v[k];
    for (int p = 0; p < count; ++p) out[p] += ContourEdgeTerm(Vec3{px[p], py[p], pz[p]}, nx, a, b);
  }
  for (int p = 0; p < count; ++p) out[p] /= 2 * kPi;
}

void PointToPolygonFormFactorsHost(const double *px, const double *py, const double *pz, int count, Vec3 nx,
                                   const ConvexPolygon &poly, double *out);

RAD_HD RAD_INLINE void PointToPolygonFormFactors(const double *px, const double *py, const double *pz, int count,
                                                 Vec3 nx, const ConvexPolygon &poly, double *out) {
#if defined(__CUDA_ARCH__)
  PointToPolygonFormFactorsLoop(px, py, pz, count, nx, poly, out);
#else
  PointToPolygonFormFactorsHost(px, py, pz, count, nx, poly, out);
#endif
}

}  // namespace rad
