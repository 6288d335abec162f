// Far-field rules of the unoccluded cubature: the worst relative error of each fixed rule against the refined
// value over pairs of squares (emitter 1 x 1; receiver 0.3, 1 or 3 wide, 40 directions and tilts) at each
// separation ratio R (gap between bounding spheres over the emitter's diameter), next to the bound that
// FarFieldPoints (src/formfactor/cubature.h) assumes. Then the node-pair rules (point_pair_rule.h): for every
// pair of side rules, the worst error over the sum of both sides' bounds, over squares, rectangles and triangles
// facing each other in all orientations and sizes; and the checked rules on pairs that reach each other's
// planes, their worst error over what they were allowed. Every ratio printed must stay below 1.
// Usage: radiosity_bench_far_field
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <initializer_list>

#include "formfactor/point_pair_rule.h"
#include "formfactor/unoccluded.h"

using namespace rad;

namespace {

// The fixed rule of `points` points per map, alone (the cubature's own code).
double Fixed(const ClippedPair &cp, Vec3 normal, int points) {
  FarFieldPlan plan;
  plan.quadPoints = points;
  return FixedRuleIntegral(cp.emitter, plan, WholeReceiverFactor{&cp.receiver, normal}).integral;
}

// A test polygon centred at c in the plane spanned by unit u, v: a square, a 1 x 0.3 rectangle or a triangle, of
// size `size`, turned by `turn` in its plane.
ConvexPolygon Shape(int kind, Vec3 c, Vec3 u, Vec3 v, double size, double turn) {
  const Vec3 a = u * std::cos(turn) + v * std::sin(turn), b = v * std::cos(turn) - u * std::sin(turn);
  if (kind == 2) {
    const Vec3 t[3] = {c - a * (0.5 * size) - b * (0.4 * size), c + a * (0.5 * size) - b * (0.4 * size),
                       c + a * (0.1 * size) + b * (0.5 * size)};
    return MakeConvexPolygon(t, 3);
  }
  const Vec3 h = a * (size / 2), k = b * (size * (kind == 1 ? 0.3 : 1.0) / 2);
  const Vec3 q[4] = {c - h - k, c + h - k, c + h + k, c - h + k};
  return MakeConvexPolygon(q, 4);
}

// Every pair of side rules on pairs whose bounds apply (both gaps positive): the worst error over the summed bound
// (or over 1e-11 where the bound is smaller: the reference is refined to 1e-12 only).
void NodePairRules(const QuadratureSettings &strict) {
  const Vec3 normal{0, 0, 1};
  double worst[3][3][kMaxNodeRules][kMaxNodeRules] = {};  // by emitter kind, receiver kind, rule, rule
  int pairs = 0;
  for (int ek = 0; ek < 3; ++ek)
    for (int rk = 0; rk < 3; ++rk)
      for (double ratio : {0.3, 0.6, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0})
        for (int conf = 0; conf < 60; ++conf) {
          const double theta = 0.3 * conf, phi = 0.7 * conf;
          const double size = conf % 3 == 0 ? 1.0 : (conf % 3 == 1 ? 0.3 : 3.0);
          const Vec3 dir =
              Normalize(Vec3{std::sin(theta) * std::cos(phi) * 0.8, std::sin(theta) * std::sin(phi) * 0.8, 1});
          const Vec3 nr = Normalize(Vec3{-dir.x + 0.3 * std::cos(conf), -dir.y + 0.3 * std::sin(conf * 1.3), -dir.z});
          const Vec3 u = Normalize(Cross(nr, std::fabs(nr.x) < 0.9 ? Vec3{1, 0, 0} : Vec3{0, 1, 0})), v = Cross(nr, u);
          const ConvexPolygon e = Shape(ek, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, 1.0, 0.4 * conf);
          const Vec3 c = dir * (ratio * 2 * std::max(0.75, 0.75 * size) + 0.75 + 0.75 * size);
          const ClippedPair cp = ClipPair(e, normal, Shape(rk, c, u, v, size, 0.9 * conf), nr);
          if (cp.emitter.n != e.n || cp.receiver.n == 0) continue;
          const PairSeparation sep = SeparationOf(cp, normal, nr);
          if (!(sep.gap > 0)) continue;
          const double reference = UnoccludedFormFactor(cp, normal, 1, strict).formFactor;
          if (!(reference > 0)) continue;
          ++pairs;
          PointPairPlan plan;
          plan.emitterShape = NodeShapeOf(cp.emitter), plan.receiverShape = NodeShapeOf(cp.receiver);
          plan.applies = true;
          int pe[kMaxNodeRules], pr[kMaxNodeRules];
          double be[kMaxNodeRules], br[kMaxNodeRules];
          const int ne = NodeRuleOptions(plan.emitterShape, pe), nrules = NodeRuleOptions(plan.receiverShape, pr);
          NodeRuleBounds(plan.emitterShape, sep.gap / RuleLength(cp.emitter, plan.emitterShape, sep.emitterDiameter),
                         pe, ne, be);
          NodeRuleBounds(plan.receiverShape, sep.gap / RuleLength(cp.receiver, plan.receiverShape, sep.receiverDiameter),
                         pr, nrules, br);
          for (int a = 0; a < ne; ++a)
            for (int b = 0; b < nrules; ++b) {
              plan.emitterPoints = pe[a], plan.receiverPoints = pr[b];
              const double value = PointPairIntegral(cp.emitter, normal, cp.receiver, nr, plan);
              double &w = worst[ek][rk][a][b];
              // Bounds below 1e-11 are compared with 1e-11: the reference is refined to 1e-12 only.
              w = std::fmax(w, std::fabs(value / reference - 1) / std::fmax(be[a] + br[b], 1e-11));
            }
        }
  const char *kinds[3] = {"square", "rectangle", "triangle"};
  std::printf("\nnode-pair rules: worst error / (emitter bound + receiver bound) over %d pairs\n", pairs);
  for (int ek = 0; ek < 3; ++ek)
    for (int rk = 0; rk < 3; ++rk) {
      int pe[kMaxNodeRules], pr[kMaxNodeRules];
      const NodeShape se = ek == 2 ? NodeShape::kTriangle : NodeShape::kParallelogram;
      const NodeShape sr = rk == 2 ? NodeShape::kTriangle : NodeShape::kParallelogram;
      const int ne = NodeRuleOptions(se, pe), nrules = NodeRuleOptions(sr, pr);
      std::printf("%9s -> %-9s", kinds[ek], kinds[rk]);
      for (int a = 0; a < ne; ++a)
        for (int b = 0; b < nrules; ++b)
          if (a == b || ne != nrules) std::printf(" %2dx%-2d %5.3f", pe[a], pr[b], worst[ek][rk][a][b]);
      double all = 0;
      for (int a = 0; a < ne; ++a)
        for (int b = 0; b < nrules; ++b) all = std::fmax(all, worst[ek][rk][a][b]);
      std::printf("  all %5.3f\n", all);
    }
}

// Pairs that reach each other's planes (tiles of two walls along their corner, lifted and slid along it, tilted):
// the checked rules' worst error over the error they were allowed (kEstimateSafety times the tolerance), and how
// many pairs they took.
void CheckedNodePairs(const QuadratureSettings &strict) {
  double worst = 0;
  int taken = 0, tried = 0;
  for (double tolerance : {1e-4, 1e-5, 1e-6, 1e-8})
    for (int kind = 0; kind < 3; ++kind)
      for (double lift : {0.0, 0.1, 0.5, 1.0, 2.0})
        for (double offset : {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0})
          for (double tilt : {0.0, 0.3, -0.3}) {
            const Vec3 ne{0, 0, 1};
            const Vec3 nr = Normalize(Vec3{-std::cos(tilt), 0, std::sin(tilt)});
            const Vec3 along{0, 1, 0}, up = Cross(along, nr);  // in the receiver's plane, away from the line
            const ConvexPolygon e = Shape(kind, {-0.5, 0.5, 0}, {1, 0, 0}, {0, 1, 0}, 1.0, 0);
            const Vec3 c = Vec3{0, offset + 0.5, 0} + up * (lift + 0.5);
            const ClippedPair cp = ClipPair(e, ne, Shape(kind == 2 ? 0 : kind, c, up, along, 1.0, 0), nr);
            if (cp.emitter.n == 0) continue;
            const PairSeparation sep = SeparationOf(cp, ne, nr);
            if (sep.sphereGap < std::max(sep.emitterDiameter, sep.receiverDiameter)) continue;
            ++tried;
            const double reference = UnoccludedFormFactor(cp, ne, 1, strict).formFactor;
            double integral = 0;
            int nodePairs = 0;
            if (!CheckedPointPairIntegral(cp.emitter, ne, cp.receiver, nr, kEstimateSafety * tolerance, 0, integral,
                                          nodePairs))
              continue;
            ++taken;
            worst = std::fmax(worst, std::fabs(integral / reference - 1) / (kEstimateSafety * tolerance));
          }
  std::printf("\nchecked node-pair rules on pairs reaching each other's planes: %d of %d taken, worst error / "
              "(%.1f x tolerance) %.3f\n", taken, tried, kEstimateSafety, worst);
}

}  // namespace

int main() {
  QuadratureSettings strict;
  strict.relativeTolerance = 1e-12;
  strict.wellSeparatedRatio = 1e30;
  const Vec3 square[4] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
  const ConvexPolygon emitter = MakeConvexPolygon(square, 4);
  const Vec3 normal{0, 0, 1};
  const double ratios[] = {0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 7, 10, 15, 20};
  const int points[] = {4, 9, 17};
  std::printf("%6s %12s %12s %12s %12s %12s %12s\n", "R", "2x2 worst", "bound", "3x3 worst", "bound", "deg-7 worst",
              "bound");
  for (double ratio : ratios) {
    double worst[3] = {0, 0, 0};
    for (int conf = 0; conf < 120; ++conf) {
      const double theta = 0.3 * conf, phi = 0.7 * conf, size = conf % 3 == 0 ? 1.0 : (conf % 3 == 1 ? 0.3 : 3.0);
      const Vec3 dir = Normalize(Vec3{std::sin(theta) * std::cos(phi) * 0.8, std::sin(theta) * std::sin(phi) * 0.8, 1});
      const Vec3 nr = Normalize(Vec3{-dir.x + 0.3 * std::cos(conf), -dir.y + 0.3 * std::sin(conf * 1.3), -dir.z});
      const Vec3 u = Normalize(Cross(nr, std::fabs(nr.x) < 0.9 ? Vec3{1, 0, 0} : Vec3{0, 1, 0})), v = Cross(nr, u);
      const double re = std::sqrt(0.5), rr = size * std::sqrt(0.5);
      const Vec3 c = Vec3{0.5, 0.5, 0} + dir * (ratio * 2 * re + re + rr);
      const Vec3 h = u * (size / 2), k = v * (size / 2);
      const Vec3 corners[4] = {c - h - k, c + h - k, c + h + k, c - h + k};
      const ClippedPair cp = ClipPair(emitter, normal, MakeConvexPolygon(corners, 4), nr);
      if (cp.emitter.n != 4 || cp.receiver.n != 4) continue;  // only whole pairs: R is theirs
      const double reference = UnoccludedFormFactor(cp, normal, 1, strict).formFactor;
      if (!(reference > 0)) continue;
      for (int r = 0; r < 3; ++r)
        worst[r] = std::fmax(worst[r], std::fabs(Fixed(cp, normal, points[r]) / reference - 1));
    }
    std::printf("%6.1f %12.2e %12.2e %12.2e %12.2e %12.2e %12.2e\n", ratio, worst[0], 1.5e-3 * std::pow(ratio, -3.0),
                worst[1], 3e-5 * std::pow(ratio, -4.5), worst[2], 1e-6 * std::pow(ratio, -5.3));
  }
  // Triangles: their own 3- and 7-point rules on the affine map, and the largest error over the bound that
  // FarFieldPoints assumes for them, at the separation the cubature computes (must stay below 1).
  const Vec3 corners3[3] = {{0, 0, 0}, {1, 0, 0}, {0.2, 0.9, 0}};
  const ConvexPolygon triangle = MakeConvexPolygon(corners3, 3);
  std::printf("\ntriangle emitter (R as placed; error / bound at the cubature's own R)\n%6s %12s %12s %12s %12s\n", "R",
              "3-pt worst", "/ bound", "7-pt worst", "/ bound");
  for (double ratio : ratios) {
    double worst[2] = {0, 0}, overBound[2] = {0, 0};
    for (int conf = 0; conf < 120; ++conf) {
      const double theta = 0.3 * conf, phi = 0.7 * conf, size = conf % 3 == 0 ? 1.0 : (conf % 3 == 1 ? 0.3 : 3.0);
      const Vec3 dir =
          Normalize(Vec3{std::sin(theta) * std::cos(phi) * 0.8, std::sin(theta) * std::sin(phi) * 0.8, 1});
      const Vec3 nr = Normalize(Vec3{-dir.x + 0.3 * std::cos(conf), -dir.y + 0.3 * std::sin(conf * 1.3), -dir.z});
      const Vec3 u = Normalize(Cross(nr, std::fabs(nr.x) < 0.9 ? Vec3{1, 0, 0} : Vec3{0, 1, 0})), v = Cross(nr, u);
      const double re = 0.67, rr = size * std::sqrt(0.5);
      const Vec3 c = Vec3{0.4, 0.3, 0} + dir * (ratio * 2 * re + re + rr);
      const Vec3 h = u * (size / 2), k = v * (size / 2);
      const Vec3 corners[4] = {c - h - k, c + h - k, c + h + k, c - h + k};
      const ClippedPair cp = ClipPair(triangle, normal, MakeConvexPolygon(corners, 4), nr);
      if (cp.emitter.n != 3 || cp.receiver.n != 4) continue;
      const double reference = UnoccludedFormFactor(cp, normal, 1, strict).formFactor;
      if (!(reference > 0)) continue;
      const PairSeparation separation = SeparationOf(cp, normal, nr);
      const double actual = separation.gap / separation.emitterDiameter;
      const WholeReceiverFactor f{&cp.receiver, normal};
      for (int r = 0; r < 2; ++r) {
        const int points = r == 0 ? 3 : 7;
        QuadratureNodes triangleNodes;
        nodes::Triangle(cp.emitter.v[0], cp.emitter.v[1], cp.emitter.v[2], points, triangleNodes);
        const double value = NodeSum(triangleNodes, f);
        const double error = std::fabs(value / reference - 1);
        worst[r] = std::fmax(worst[r], error);
        if (actual > 0) overBound[r] = std::fmax(overBound[r], error / TriangleFarFieldBound(points, actual));
      }
    }
    std::printf("%6.1f %12.2e %12.2f %12.2e %12.2f\n", ratio, worst[0], overBound[0], worst[1], overBound[1]);
  }

  NodePairRules(strict);
  CheckedNodePairs(strict);
  return 0;
}
