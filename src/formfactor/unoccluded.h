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
#include "formfactor/point_pair_rule.h"
#include "formfactor/point_polygon.h"
#include "formfactor/whole_patch.h"
#include "util/hd.h"
#include "util/vec3.h"

namespace rad {

// Both polygons clipped against each other's planes; empty (n == 0) when the pair cannot exchange light.
// `whole`: both are the polygons given, unclipped (so a WholePatch of each describes them).
struct ClippedPair {
  ConvexPolygon emitter, receiver;
  bool whole = false;
};

namespace clip_pair {
// Whether every corner of p is in front of the plane by more than sqrt(bound2).
RAD_HD RAD_INLINE bool ClearlyInFront(const ConvexPolygon &p, Vec3 normal, Vec3 point, double bound2) {
  for (int k = 0; k < p.n; ++k) {
    const double d = Dot(normal, p.v[k] - point);
    if (!(d > 0 && d * d > bound2)) return false;
  }
  return true;
}
}  // namespace clip_pair

// `emitterWhole`, `receiverWhole`: the WholePatch of each polygon, or null.
RAD_HD RAD_INLINE ClippedPair ClipPair(const ConvexPolygon &emitter, Vec3 emitterNormal,
                                       const ConvexPolygon &receiver, Vec3 receiverNormal,
                                       const WholePatch *emitterWhole = nullptr,
                                       const WholePatch *receiverWhole = nullptr) {
  // Most pairs are whole: each corner in front of the other's plane by more than the tolerance below, which is
  // at most 2e-12 times the square root of the larger spread. Those are returned as they are, without the
  // diameters or the clipping (a tenth of the time on a box of 2400 tiles), and with the same bits.
  const double bound2 =
      4e-24 * Larger(emitterWhole ? emitterWhole->spread2 : SpreadSquared(emitter),
                     receiverWhole ? receiverWhole->spread2 : SpreadSquared(receiver));
  if (clip_pair::ClearlyInFront(receiver, emitterNormal, emitter.v[0], bound2) &&
      clip_pair::ClearlyInFront(emitter, receiverNormal, receiver.v[0], bound2))
    return ClippedPair{emitter, receiver, true};
  ClippedPair out;
  const double scale = Larger(PolygonDiameter(emitter), PolygonDiameter(receiver));
  const double tolerance = 1e-12 * scale;
  out.receiver = ClipToHalfSpace(receiver, emitterNormal, emitter.v[0], tolerance);
  out.emitter = ClipToHalfSpace(emitter, receiverNormal, receiver.v[0], tolerance);
  if (out.receiver.n == 0 || out.emitter.n == 0) out.receiver.n = out.emitter.n = 0;
  return out;
}

// How far apart the pair is, for the far-field rules: the gap between the bounding spheres, but no more than
// each polygon's distance from the other's plane. Near the other's plane the cosines change fast relative to
// their small values: perpendicular tiles whose planes meet along a line through both were 1.3e-5 off with the
// degree-7 rule at 1.2 diameters, where facing ones are 6e-7 off.
struct PairSeparation {
  double gap = 0;
  double sphereGap = 0;  // the gap between the bounding spheres alone
  double emitterDiameter = 0, receiverDiameter = 0;  // of the bounding spheres about the corners' mean
};

// `emitterWhole`, `receiverWhole`: as for UnoccludedFormFactor.
RAD_HD RAD_INLINE PairSeparation SeparationOf(const ClippedPair &pair, Vec3 emitterNormal, Vec3 receiverNormal,
                                              const WholePatch *emitterWhole = nullptr,
                                              const WholePatch *receiverWhole = nullptr) {
  // Both are clipped to the other's front, so these distances are >= 0 (up to rounding).
  auto planeDistance = [](const ConvexPolygon &p, Vec3 normal, Vec3 point) {
    double d = 1e300;
    for (int k = 0; k < p.n; ++k) d = Smaller(d, Dot(normal, p.v[k] - point));
    return d;
  };
  const BoundingSphere e = emitterWhole ? emitterWhole->sphere : BoundingSphereOf(pair.emitter);
  const BoundingSphere r = receiverWhole ? receiverWhole->sphere : BoundingSphereOf(pair.receiver);
  const double re = e.radius, rr = r.radius;
  PairSeparation s;
  s.sphereGap = Length(e.centre - r.centre) - re - rr;
  s.gap = Smaller(s.sphereGap, Smaller(planeDistance(pair.emitter, receiverNormal, pair.receiver.v[0]),
                                                     planeDistance(pair.receiver, emitterNormal, pair.emitter.v[0])));
  s.emitterDiameter = 2 * re, s.receiverDiameter = 2 * rr;
  return s;
}

// The factor from a point of the emitter to the whole (clipped) receiver: the integrand of unoccluded pairs.
struct WholeReceiverFactor {
  const ConvexPolygon *receiver;
  Vec3 emitterNormal;
  RAD_HD double operator()(Vec3 x) const { return PointToPolygonFormFactor(x, emitterNormal, *receiver); }
};

// At a cubature cell's or a rule's points all at once (quadrature_nodes.h): the same values, vectorised.
RAD_HD RAD_INLINE void EvaluatePoints(const WholeReceiverFactor &f, const double *px, const double *py,
                                      const double *pz, int count, double *out) {
  PointToPolygonFormFactors(px, py, pz, count, f.emitterNormal, *f.receiver, out);
}

struct UnoccludedResult {
  double formFactor = 0;  // F_ij without occlusion
  int evaluations = 0;    // point-to-polygon evaluations spent (for statistics)
  int nodePairs = 0;      // point-to-point kernel evaluations of the node-pair rules (point_pair_rule.h)
  bool hitDepthLimit = false;
  bool abandoned = false;  // a cubature reached QuadratureSettings::maxEvaluations: no result
};

// 1/A_i times the integral of pointFactor(x) over the clipped emitter of `pair` (cubature.h). `emitterArea` is
// the full area of patch i (the clipped part may be smaller: light from the part behind j's plane never
// reaches j). `farFieldRatio`: the pair's separation in emitter diameters (SeparationOf) when well-separated
// pairs may take the cheapest fixed rule that meets the tolerance there (FarFieldPoints), only sound for smooth
// integrands (no occluders); kNoFarField otherwise.
constexpr double kNoFarField = -1;
template <class PointFactor>
RAD_HD inline UnoccludedResult AdaptiveEmitterIntegral(const ClippedPair &pair, double emitterArea,
                                                       const QuadratureSettings &settings,
                                                       const PointFactor &pointFactor, double farFieldRatio) {
  UnoccludedResult result;
  if (pair.emitter.n == 0) return result;
  FarFieldPlan plan;
  if (farFieldRatio != kNoFarField && farFieldRatio >= settings.wellSeparatedRatio)
    plan = PlanFarField(pair.emitter, farFieldRatio, settings.relativeTolerance, kEstimateSafety);
  const CubatureResult c = plan.applies
                               ? FixedRuleIntegral(pair.emitter, plan, pointFactor)
                               : AdaptivePolygonIntegral(pair.emitter, pair.receiver, settings, pointFactor);
  result.formFactor = c.integral / emitterArea;
  result.evaluations = c.evaluations;
  result.hitDepthLimit = c.hitDepthLimit;
  result.abandoned = c.abandoned;
  return result;
}

// F_ij (without occlusion) for a pair already clipped by ClipPair. A well-separated pair takes the node-pair rule
// (point_pair_rule.h) when one meets the tolerance, otherwise the emitter-side rules or the adaptive cubature.
// `emitterWhole`, `receiverWhole`: the patches' WholePatch, read when the pair is whole (null: made here).
RAD_HD RAD_DEVICE_NOINLINE inline UnoccludedResult UnoccludedFormFactor(const ClippedPair &pair, Vec3 emitterNormal,
                                                                        double emitterArea,
                                                                        const QuadratureSettings &settings,
                                                                        const WholePatch *emitterWhole = nullptr,
                                                                        const WholePatch *receiverWhole = nullptr) {
  if (!pair.whole) emitterWhole = receiverWhole = nullptr;
  const Vec3 receiverNormal = receiverWhole ? receiverWhole->unitNormal : Normalize(PolygonNormal(pair.receiver));
  const RuleSide *emitterSide = emitterWhole ? &emitterWhole->rules : nullptr;
  const RuleSide *receiverSide = receiverWhole ? &receiverWhole->rules : nullptr;
  if (pair.emitter.n != 0) {
    const PairSeparation s = SeparationOf(pair, emitterNormal, receiverNormal, emitterWhole, receiverWhole);
    if (s.gap >= settings.wellSeparatedRatio * s.emitterDiameter) {
      const PointPairPlan plan =
          PlanPointPair(pair.emitter, pair.receiver, s.gap, s.emitterDiameter, s.receiverDiameter,
                        settings.relativeTolerance, kEstimateSafety, emitterSide, receiverSide);
      if (plan.applies) {
        UnoccludedResult result;
        result.formFactor =
            PointPairIntegral(pair.emitter, emitterNormal, pair.receiver, receiverNormal, plan) / emitterArea;
        result.nodePairs = NodeCount(plan.emitterShape, plan.emitterPoints) *
                           NodeCount(plan.receiverShape, plan.receiverPoints);
        return result;
      }
    }
    // Apart by more than either diameter, but one of them reaches the other's plane: rules checked one against
    // the next (point_pair_rule.h).
    double integral = 0;
    int nodePairs = 0;
    const bool apart = s.sphereGap >= settings.wellSeparatedRatio * Larger(s.emitterDiameter, s.receiverDiameter);
    if (apart && CheckedPointPairIntegral(pair.emitter, emitterNormal, pair.receiver, receiverNormal,
                                          kEstimateSafety * settings.relativeTolerance,
                                          kEstimateSafety * settings.absoluteTolerance * PolygonArea(pair.emitter),
                                          integral, nodePairs, emitterSide, receiverSide)) {
      UnoccludedResult result;
      result.formFactor = integral / emitterArea;
      result.nodePairs = nodePairs;
      return result;
    }
    UnoccludedResult result = AdaptiveEmitterIntegral(pair, emitterArea, settings,
                                                      WholeReceiverFactor{&pair.receiver, emitterNormal},
                                                      s.gap / s.emitterDiameter);
    result.nodePairs = nodePairs;  // spent on rules that did not agree
    return result;
  }
  return UnoccludedResult{};
}

}  // namespace rad
