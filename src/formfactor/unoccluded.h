// The unoccluded form factor between two planar convex patches, computed semi-analytically:
//   F_ij = 1/A_i * integral over patch i of F(dx -> patch j) dA(x)
// with the inner point-to-polygon factor exact (contour formula) and the outer integral by globally adaptive
// cubature on triangles: Radon's degree-5 7-point rule on a triangle is compared with the same rule on its four
// midpoint children, and the triangle where they differ most is split until the differences add up to less
// than the tolerance. The inner factor is bounded and continuous even for patches sharing an edge (only its
// derivatives are singular, at the ends of the shared edge), so refinement settles quickly: this is what makes
// shared-edge pairs accurate, where point-pair sampling has infinite variance (notes/accuracy.md). The same
// cubature integrates the visible-region factor of occluded pairs (pair.h).
//
// Each patch is first clipped to the front half-space of the other's plane: light leaves i's front only
// and arrives on j's front only, and the contour formula needs j entirely in front of x.
#pragma once

#include "formfactor/convex_polygon.h"
#include "formfactor/point_polygon.h"
#include "util/hd.h"
#include "util/vec3.h"

namespace rad {

struct QuadratureSettings {
  double relativeTolerance = 1e-5;  // on each pair's value (the accepted, refined value is ~64x better)
  double absoluteTolerance = 1e-13; // floor, so that pairs with F ~ 0 do not refine forever
  int maxDepth = 14;                // refinement levels per emitter triangle (a safety bound)
  // Pairs farther apart than this many emitter diameters take the 7-point fan without refinement: the rule's
  // relative error falls like (size/distance)^6 and was measured below 3e-6 at a ratio of 2 (tests check it).
  double wellSeparatedRatio = 2.5;
};

// Triangles a pair's cubature may hold at once (each split turns one into four): the bound on its memory and,
// with maxDepth, on its work (about 28 * 4/3 evaluations per triangle). A pair that reaches it is counted.
constexpr int kMaxCubatureCells = 256;

struct UnoccludedResult {
  double formFactor = 0;  // F_ij without occlusion
  int evaluations = 0;    // point-to-polygon evaluations spent (for statistics)
  bool hitDepthLimit = false;
};

// Both polygons clipped against each other's planes; empty (n == 0) when the pair cannot exchange light.
struct ClippedPair {
  ConvexPolygon emitter, receiver;
};

RAD_HD RAD_INLINE ClippedPair ClipPair(const ConvexPolygon &emitter, Vec3 emitterNormal,
                                       const ConvexPolygon &receiver, Vec3 receiverNormal) {
  ClippedPair out;
  const double scale = fmax(PolygonDiameter(emitter), PolygonDiameter(receiver));
  const double tolerance = 1e-12 * scale;
  out.receiver = ClipToHalfSpace(receiver, emitterNormal, emitter.v[0], tolerance);
  out.emitter = ClipToHalfSpace(emitter, receiverNormal, receiver.v[0], tolerance);
  if (out.receiver.n == 0 || out.emitter.n == 0) out.receiver.n = out.emitter.n = 0;
  return out;
}

namespace detail {

struct Triangle {
  Vec3 a, b, c;
  double value;        // the 7-point rule's integral over this triangle (already multiplied by its area)
  double children[4];  // the same over its four midpoint children (corner a, b, c, then the middle one)
  double refined;      // their sum: the accepted value
  double error;        // |refined - value|: the error estimate that steers the refinement
  int depth;
};

RAD_HD RAD_INLINE double TriangleArea(Vec3 a, Vec3 b, Vec3 c) { return 0.5 * Length(Cross(b - a, c - a)); }

// Radon's 7-point degree-5 rule: integral of pointFactor(x) (the factor from dx to the receiver) over triangle abc.
template <class PointFactor>
RAD_HD RAD_INLINE double Radon7(Vec3 a, Vec3 b, Vec3 c, const PointFactor &pointFactor) {
  const double s15 = 3.872983346207417;  // sqrt(15)
  const double a1 = (6 - s15) / 21, b1 = (9 + 2 * s15) / 21, w1 = (155 - s15) / 1200;
  const double a2 = (6 + s15) / 21, b2 = (9 - 2 * s15) / 21, w2 = (155 + s15) / 1200;
  const double wc = 9.0 / 40;
  auto at = [&](double la, double lb, double lc) {
    return pointFactor(a * la + b * lb + c * lc);
  };
  const double mean = wc * at(1.0 / 3, 1.0 / 3, 1.0 / 3) +
                      w1 * (at(b1, a1, a1) + at(a1, b1, a1) + at(a1, a1, b1)) +
                      w2 * (at(b2, a2, a2) + at(a2, b2, a2) + at(a2, a2, b2));
  return mean * TriangleArea(a, b, c);
}

// Fills the children's values, the refined value and the error of a triangle; returns the evaluations spent.
template <class PointFactor>
RAD_HD RAD_INLINE int Refine(Triangle &t, const PointFactor &pointFactor) {
  const Vec3 ab = (t.a + t.b) * 0.5, bc = (t.b + t.c) * 0.5, ca = (t.c + t.a) * 0.5;
  t.children[0] = Radon7(t.a, ab, ca, pointFactor);
  t.children[1] = Radon7(ab, t.b, bc, pointFactor);
  t.children[2] = Radon7(ca, bc, t.c, pointFactor);
  t.children[3] = Radon7(ab, bc, ca, pointFactor);
  t.refined = t.children[0] + t.children[1] + t.children[2] + t.children[3];
  t.error = fabs(t.refined - t.value);
  return 28;
}

}  // namespace detail

// True when a lower bound of the distance between the two polygons (centre distance less both bounding radii)
// exceeds `ratio` times the emitter's diameter.
RAD_HD RAD_INLINE bool WellSeparated(const ClippedPair &pair, double ratio) {
  auto centre = [](const ConvexPolygon &p) {
    Vec3 c;
    for (int k = 0; k < p.n; ++k) c += p.v[k];
    return c / double(p.n);
  };
  auto radius = [](const ConvexPolygon &p, Vec3 c) {
    double r2 = 0;
    for (int k = 0; k < p.n; ++k) r2 = fmax(r2, LengthSquared(p.v[k] - c));
    return sqrt(r2);
  };
  const Vec3 ce = centre(pair.emitter), cr = centre(pair.receiver);
  const double re = radius(pair.emitter, ce), rr = radius(pair.receiver, cr);
  const double gap = Length(ce - cr) - re - rr;
  return gap >= ratio * 2 * re;
}

// The factor from a point of the emitter to the whole (clipped) receiver: the integrand of unoccluded pairs.
struct WholeReceiverFactor {
  const ConvexPolygon *receiver;
  Vec3 emitterNormal;
  RAD_HD double operator()(Vec3 x) const { return PointToPolygonFormFactor(x, emitterNormal, *receiver); }
};

// 1/A_i times the integral of pointFactor(x) over the clipped emitter of `pair`, globally adaptive: every
// triangle keeps its 7-point value and its four midpoint children's values, whose difference estimates its
// error; the triangle with the largest error is split until the errors add up to less than the tolerance.
// Refining where the error is, rather than every triangle to its share of the tolerance, is what keeps pairs
// with kinks along a line (shadow boundaries, occluders that nearly touch a patch) and corner singularities
// (shared edges) within a bounded number of evaluations. `emitterArea` is the full area of patch i (the
// clipped part may be smaller: light from the part behind j's plane never reaches j). `allowFarShortcut`:
// well-separated pairs keep the unrefined fan; only sound for smooth integrands (no occluders).
template <class PointFactor>
RAD_HD inline UnoccludedResult AdaptiveEmitterIntegral(const ClippedPair &pair, double emitterArea,
                                                       const QuadratureSettings &settings,
                                                       const PointFactor &pointFactor, bool allowFarShortcut) {
  UnoccludedResult result;
  if (pair.emitter.n == 0) return result;
  using detail::Radon7;
  using detail::Triangle;

  // The fan of the clipped emitter at depth 0.
  const double clippedArea = PolygonArea(pair.emitter);
  const int fanCount = pair.emitter.n - 2;
  Triangle cells[kMaxCubatureCells];
  double coarse = 0;
  for (int k = 0; k < fanCount; ++k) {
    Triangle &t = cells[k];
    t.a = pair.emitter.v[0], t.b = pair.emitter.v[k + 1], t.c = pair.emitter.v[k + 2];
    t.depth = 0;
    t.value = Radon7(t.a, t.b, t.c, pointFactor);
    coarse += t.value;
  }
  result.evaluations += 7 * fanCount;
  if (allowFarShortcut && WellSeparated(pair, settings.wellSeparatedRatio)) {
    result.formFactor = coarse / emitterArea;
    return result;
  }
  for (int k = 0; k < fanCount; ++k) result.evaluations += detail::Refine(cells[k], pointFactor);

  int count = fanCount;
  for (;;) {
    double integral = 0, error = 0, worstError = -1;
    int worst = -1;
    for (int k = 0; k < count; ++k) {
      integral += cells[k].refined;
      error += cells[k].error;
      if (cells[k].error > worstError) worstError = cells[k].error, worst = k;
    }
    const double budget = settings.relativeTolerance * fabs(integral) + settings.absoluteTolerance * clippedArea;
    if (error <= budget) {
      result.formFactor = integral / emitterArea;
      return result;
    }
    if (cells[worst].depth + 1 >= settings.maxDepth || count + 3 > kMaxCubatureCells) {
      result.hitDepthLimit = true;
      result.formFactor = integral / emitterArea;
      return result;
    }
    // The worst triangle gives way to its four children, whose values it already holds.
    const Triangle t = cells[worst];
    const Vec3 ab = (t.a + t.b) * 0.5, bc = (t.b + t.c) * 0.5, ca = (t.c + t.a) * 0.5;
    const Vec3 corners[4][3] = {{t.a, ab, ca}, {ab, t.b, bc}, {ca, bc, t.c}, {ab, bc, ca}};
    const int slots[4] = {worst, count, count + 1, count + 2};
    count += 3;
    for (int c = 0; c < 4; ++c) {
      Triangle &child = cells[slots[c]];
      child.a = corners[c][0], child.b = corners[c][1], child.c = corners[c][2];
      child.value = t.children[c];
      child.depth = t.depth + 1;
      result.evaluations += detail::Refine(child, pointFactor);
    }
  }
}

// F_ij (without occlusion) for a pair already clipped by ClipPair.
RAD_HD inline UnoccludedResult UnoccludedFormFactor(const ClippedPair &pair, Vec3 emitterNormal, double emitterArea,
                                                    const QuadratureSettings &settings) {
  return AdaptiveEmitterIntegral(pair, emitterArea, settings, WholeReceiverFactor{&pair.receiver, emitterNormal},
                                 true);
}

}  // namespace rad
