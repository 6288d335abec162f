// The unoccluded form factor between two planar convex patches, computed semi-analytically:
//   F_ij = 1/A_i * integral over patch i of F(dx -> patch j) dA(x)
// with the inner point-to-polygon factor exact (contour formula) and the outer integral by adaptive cubature
// on triangles: Radon's degree-5 7-point rule on a triangle is compared with the same rule on its four
// midpoint children; where they differ by more than the triangle's share of the tolerance, each child is
// refined in turn (its own value is already known, so each level costs 28 evaluations per split triangle).
// The inner factor is bounded and continuous even for patches sharing an edge (only its derivatives are
// singular, at the ends of the shared edge), so refinement settles quickly: this is what makes shared-edge
// pairs accurate, where point-pair sampling has infinite variance (notes/accuracy.md).
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
  double value;  // the 7-point rule's integral over this triangle (already multiplied by its area)
  int depth;
};

RAD_HD RAD_INLINE double TriangleArea(Vec3 a, Vec3 b, Vec3 c) { return 0.5 * Length(Cross(b - a, c - a)); }

// Radon's 7-point degree-5 rule: integral of F(dx -> receiver) over triangle abc.
RAD_HD RAD_INLINE double Radon7(Vec3 a, Vec3 b, Vec3 c, Vec3 nx, const ConvexPolygon &receiver) {
  const double s15 = 3.872983346207417;  // sqrt(15)
  const double a1 = (6 - s15) / 21, b1 = (9 + 2 * s15) / 21, w1 = (155 - s15) / 1200;
  const double a2 = (6 + s15) / 21, b2 = (9 - 2 * s15) / 21, w2 = (155 + s15) / 1200;
  const double wc = 9.0 / 40;
  auto at = [&](double la, double lb, double lc) {
    return PointToPolygonFormFactor(a * la + b * lb + c * lc, nx, receiver);
  };
  const double mean = wc * at(1.0 / 3, 1.0 / 3, 1.0 / 3) +
                      w1 * (at(b1, a1, a1) + at(a1, b1, a1) + at(a1, a1, b1)) +
                      w2 * (at(b2, a2, a2) + at(a2, b2, a2) + at(a2, a2, b2));
  return mean * TriangleArea(a, b, c);
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

// F_ij (without occlusion) for a pair already clipped by ClipPair. `emitterArea` is the full area of patch i
// (the clipped part may be smaller: light from the part behind j's plane never reaches j).
RAD_HD inline UnoccludedResult UnoccludedFormFactor(const ClippedPair &pair, Vec3 emitterNormal, double emitterArea,
                                                    const QuadratureSettings &settings) {
  UnoccludedResult result;
  if (pair.emitter.n == 0) return result;
  using detail::Radon7;
  using detail::Triangle;
  constexpr int kStack = 3 * 24 + 8;  // depth-first: at most 3 siblings wait per level
  Triangle stack[kStack];
  int top = 0;
  const ConvexPolygon &rx = pair.receiver;
  const Vec3 n = emitterNormal;

  // The fan of the clipped emitter at depth 0; its sum sets the tolerance on the integral (F * A_i).
  const double clippedArea = PolygonArea(pair.emitter);
  double fan[ConvexPolygon::kCapacity];
  double coarse = 0;
  for (int k = 1; k + 1 < pair.emitter.n; ++k) {
    fan[k] = Radon7(pair.emitter.v[0], pair.emitter.v[k], pair.emitter.v[k + 1], n, rx);
    coarse += fan[k];
  }
  result.evaluations += 7 * (pair.emitter.n - 2);
  if (WellSeparated(pair, settings.wellSeparatedRatio)) {
    result.formFactor = coarse / emitterArea;
    return result;
  }
  const double budget = settings.relativeTolerance * fabs(coarse) + settings.absoluteTolerance * clippedArea;

  double integral = 0;
  for (int k = 1; k + 1 < pair.emitter.n; ++k) {
    const Vec3 a0 = pair.emitter.v[0], b0 = pair.emitter.v[k], c0 = pair.emitter.v[k + 1];
    stack[top++] = Triangle{a0, b0, c0, fan[k], 0};
    while (top > 0) {
      const Triangle t = stack[--top];
      const Vec3 ab = (t.a + t.b) * 0.5, bc = (t.b + t.c) * 0.5, ca = (t.c + t.a) * 0.5;
      const int d = t.depth + 1;
      const Triangle children[4] = {{t.a, ab, ca, Radon7(t.a, ab, ca, n, rx), d},
                                    {ab, t.b, bc, Radon7(ab, t.b, bc, n, rx), d},
                                    {ca, bc, t.c, Radon7(ca, bc, t.c, n, rx), d},
                                    {ab, bc, ca, Radon7(ab, bc, ca, n, rx), d}};
      result.evaluations += 28;
      const double refined = children[0].value + children[1].value + children[2].value + children[3].value;
      const double area = detail::TriangleArea(t.a, t.b, t.c);
      const double allowed = budget * (area / clippedArea);
      if (fabs(refined - t.value) <= allowed) {
        integral += refined;
      } else if (d >= settings.maxDepth || top + 4 > kStack) {
        result.hitDepthLimit = true;
        integral += refined;
      } else {
        for (const Triangle &c : children) stack[top++] = c;
      }
    }
  }
  result.formFactor = integral / emitterArea;
  return result;
}

}  // namespace rad
