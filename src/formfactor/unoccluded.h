// The unoccluded form factor between two planar convex patches, computed semi-analytically:
//   F_ij = 1/A_i * integral over patch i of F(dx -> patch j) dA(x)
// with the inner point-to-polygon factor exact (contour formula) and the outer integral by globally adaptive
// cubature (cubature.h): the emitter is mapped from unit squares, each square cell carries Genz and Malik's
// degree-7 rule with its embedded degree-5 rule as error estimate, and the cell with the largest error is
// halved along the axis where the integrand bends most, until the errors add up to less than the tolerance.
// The inner factor is bounded and continuous even for patches sharing an edge (only its derivatives are
// singular, at the ends of the shared edge), so refinement settles quickly: this is what makes shared-edge
// pairs accurate, where point-pair sampling has infinite variance (notes/accuracy.md). The same cubature
// integrates the visible-region factor of occluded pairs (pair.h).
//
// Each patch is first clipped to the front half-space of the other's plane: light leaves i's front only
// and arrives on j's front only, and the contour formula needs j entirely in front of x.
#pragma once

#include "formfactor/convex_polygon.h"
#include "formfactor/cubature.h"
#include "formfactor/point_polygon.h"
#include "util/hd.h"
#include "util/vec3.h"

namespace rad {

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

struct UnoccludedResult {
  double formFactor = 0;  // F_ij without occlusion
  int evaluations = 0;    // point-to-polygon evaluations spent (for statistics)
  bool hitDepthLimit = false;
};

// 1/A_i times the integral of pointFactor(x) over the clipped emitter of `pair` (cubature.h). `emitterArea` is
// the full area of patch i (the clipped part may be smaller: light from the part behind j's plane never
// reaches j). `allowFarShortcut`: well-separated pairs keep the unrefined rule; only sound for smooth
// integrands (no occluders).
template <class PointFactor>
RAD_HD inline UnoccludedResult AdaptiveEmitterIntegral(const ClippedPair &pair, double emitterArea,
                                                       const QuadratureSettings &settings,
                                                       const PointFactor &pointFactor, bool allowFarShortcut) {
  UnoccludedResult result;
  if (pair.emitter.n == 0) return result;
  const bool refine = !(allowFarShortcut && WellSeparated(pair, settings.wellSeparatedRatio));
  const CubatureResult c = AdaptivePolygonIntegral(pair.emitter, pair.receiver, settings, pointFactor, refine);
  result.formFactor = c.integral / emitterArea;
  result.evaluations = c.evaluations;
  result.hitDepthLimit = c.hitDepthLimit;
  return result;
}

// F_ij (without occlusion) for a pair already clipped by ClipPair.
RAD_HD inline UnoccludedResult UnoccludedFormFactor(const ClippedPair &pair, Vec3 emitterNormal, double emitterArea,
                                                    const QuadratureSettings &settings) {
  return AdaptiveEmitterIntegral(pair, emitterArea, settings, WholeReceiverFactor{&pair.receiver, emitterNormal},
                                 true);
}

}  // namespace rad
