// Far-field rules of the unoccluded cubature: the worst relative error of each fixed rule against the refined
// value over pairs of squares (emitter 1 x 1; receiver 0.3, 1 or 3 wide, 40 directions and tilts) at each
// separation ratio R (gap between bounding spheres over the emitter's diameter), next to the bound that
// FarFieldPoints (src/formfactor/cubature.h) assumes. Usage: radiosity_bench_far_field
#include <cmath>
#include <cstdio>

#include "formfactor/unoccluded.h"

using namespace rad;

namespace {

// The fixed rule of `points` points per map, alone (the cubature's own code).
double Fixed(const ClippedPair &cp, Vec3 normal, int points) {
  FarFieldPlan plan;
  plan.quadPoints = points;
  return FixedRuleIntegral(cp.emitter, plan, WholeReceiverFactor{&cp.receiver, normal}).integral;
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
      const double actual = SeparationRatio(cp, normal, nr);
      const WholeReceiverFactor f{&cp.receiver, normal};
      for (int r = 0; r < 2; ++r) {
        const int points = r == 0 ? 3 : 7;
        const double value = cubature::TriangleRule(cp.emitter.v[0], cp.emitter.v[1], cp.emitter.v[2], points, f);
        const double error = std::fabs(value / reference - 1);
        worst[r] = std::fmax(worst[r], error);
        if (actual > 0) overBound[r] = std::fmax(overBound[r], error / TriangleFarFieldBound(points, actual));
      }
    }
    std::printf("%6.1f %12.2e %12.2f %12.2e %12.2f\n", ratio, worst[0], overBound[0], worst[1], overBound[1]);
  }
  return 0;
}
