// Form-factor physics against exact answers (Howell's catalogue), closure and reciprocity.
#include <gtest/gtest.h>

#include <cmath>

#include "formfactor/pair.h"
#include "formfactor/point_polygon.h"
#include "formfactor/unoccluded.h"
#include "tests/exact_rectangles.h"
#include "tests/test_scenes.h"

namespace rad {
namespace {

using test::RectXPlus;
using test::RectZ;
using test::SceneOf;

// Howell C-11: parallel, directly opposed rectangles a x b at distance c.
double ParallelRectangles(double a, double b, double c) {
  const double X = a / c, Y = b / c;
  return 2 / (kPi * X * Y) *
         (std::log(std::sqrt((1 + X * X) * (1 + Y * Y) / (1 + X * X + Y * Y))) +
          X * std::sqrt(1 + Y * Y) * std::atan(X / std::sqrt(1 + Y * Y)) +
          Y * std::sqrt(1 + X * X) * std::atan(Y / std::sqrt(1 + X * X)) - X * std::atan(X) - Y * std::atan(Y));
}

// Howell C-14: perpendicular rectangles with a common edge of length l; from the rectangle of width w to the
// one of height h.
double PerpendicularRectangles(double l, double w, double h) {
  const double H = h / l, W = w / l;
  const double A = (1 + W * W) * (1 + H * H) / (1 + W * W + H * H);
  const double B = std::pow(W * W * (1 + W * W + H * H) / ((1 + W * W) * (W * W + H * H)), W * W);
  const double C = std::pow(H * H * (1 + H * H + W * W) / ((1 + H * H) * (H * H + W * W)), H * H);
  return 1 / (kPi * W) *
         (W * std::atan(1 / W) + H * std::atan(1 / H) - std::sqrt(H * H + W * W) * std::atan(1 / std::sqrt(H * H + W * W)) +
          0.25 * std::log(A * B * C));
}

// Howell B-3: differential element below one corner of a parallel rectangle a x b at distance c.
double ElementToParallelRectangle(double a, double b, double c) {
  const double A = a / c, B = b / c;
  return 1 / (2 * kPi) *
         (A / std::sqrt(1 + A * A) * std::atan(B / std::sqrt(1 + A * A)) +
          B / std::sqrt(1 + B * B) * std::atan(A / std::sqrt(1 + B * B)));
}

// Sum over patches of face `from` and `to` of A_i F_ij, divided by the area of `from`: the face-to-face factor.
double FaceToFace(const Scene &scene, int subdiv, int from, int to, double tolerance = 1e-5) {
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, subdiv);
  QuadratureSettings q;
  q.relativeTolerance = tolerance;
  double sum = 0, area = 0;
  for (size_t i = 0; i < g.patches.size(); ++i) {
    if (g.patches[i].face != from) continue;
    area += g.patches[i].area;
    for (size_t j = 0; j < g.patches.size(); ++j)
      if (g.patches[j].face == to) sum += g.patches[i].area * FormFactorPair(g, int(i), int(j), PairSettings{q}).value;
  }
  return sum / area;
}

TEST(Howell, ReferenceValuesMatchTheNotes) {
  EXPECT_NEAR(ParallelRectangles(1, 1, 1), 0.199825, 1e-6);
  EXPECT_NEAR(PerpendicularRectangles(1, 1, 1), 0.200044, 1e-6);
}

TEST(PointToPolygon, ElementBelowCornerOfParallelRectangle) {
  for (double c : {0.1, 1.0, 3.0}) {
    const auto r = RectZ(0, 2, 0, 0.5, c, false);
    const ConvexPolygon p = MakeConvexPolygon(r.data(), 4);
    EXPECT_NEAR(PointToPolygonFormFactor({0, 0, 0}, {0, 0, 1}, p), ElementToParallelRectangle(2, 0.5, c), 1e-13);
  }
}

TEST(PointToPolygon, HemisphereSeenByElementIsOne) {
  // A huge square close above the point covers almost the whole hemisphere.
  const auto r = RectZ(-1e4, 1e4, -1e4, 1e4, 1, false);
  EXPECT_NEAR(PointToPolygonFormFactor({0, 0, 0}, {0, 0, 1}, MakeConvexPolygon(r.data(), 4)), 1.0, 1e-4);
}

TEST(Unoccluded, OpposedUnitSquaresSubdiv3) {
  const Scene s = SceneOf({RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 1, false)});
  const double exact = ParallelRectangles(1, 1, 1);
  EXPECT_NEAR(FaceToFace(s, 3, 0, 1) / exact - 1, 0, 1e-4);
  EXPECT_NEAR(FaceToFace(s, 3, 1, 0) / exact - 1, 0, 1e-4);
}

TEST(Unoccluded, PerpendicularUnitSquaresSharingAnEdgeSubdiv3) {
  const Scene s = SceneOf({RectZ(0, 1, 0, 1, 0, true), RectXPlus(0, 0, 1, 0, 1)});
  const double exact = PerpendicularRectangles(1, 1, 1);
  EXPECT_NEAR(FaceToFace(s, 3, 0, 1) / exact - 1, 0, 1e-4);
  EXPECT_NEAR(FaceToFace(s, 3, 1, 0) / exact - 1, 0, 1e-4);
}

TEST(Unoccluded, ParallelRectanglesOfOtherProportions) {
  // Howell C-11 with a = 2, b = 0.5, c = 0.3: close and elongated.
  const Scene s = SceneOf({RectZ(0, 2, 0, 0.5, 0, true), RectZ(0, 2, 0, 0.5, 0.3, false)});
  EXPECT_NEAR(FaceToFace(s, 2, 0, 1) / ParallelRectangles(2, 0.5, 0.3) - 1, 0, 1e-4);
}

TEST(Unoccluded, PerpendicularRectanglesOfOtherProportions) {
  // Howell C-14: common edge 1.5 along y, floor width 0.4 (x), wall height 2 (z).
  const Scene s = SceneOf({RectZ(0, 0.4, 0, 1.5, 0, true), RectXPlus(0, 0, 1.5, 0, 2)});
  EXPECT_NEAR(FaceToFace(s, 2, 0, 1) / PerpendicularRectangles(1.5, 0.4, 2) - 1, 0, 1e-4);
  // Reciprocity at the face level: A_floor F_fw = A_wall F_wf.
  EXPECT_NEAR(0.4 * 1.5 * FaceToFace(s, 2, 0, 1), 2 * 1.5 * FaceToFace(s, 2, 1, 0), 1e-6);
}

// One pair of input polygons as patches (subdiv 0): F from polygon 0 to polygon 1 and the evaluations spent.
PairResult SinglePair(const Scene &s, double tolerance = 1e-5) {
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
  QuadratureSettings q;
  q.relativeTolerance = tolerance;
  return FormFactorPair(g, 0, 1, PairSettings{q});
}

TEST(Slivers, OpposedStripsOfAnyAspectMatchHowellC11) {
  // L x 1 strips at distance 1: the cubature must see the ends of a strip 1e4 long (a rule sampling only its
  // middle returns the infinite-strip value, 7e-5 off at L = 1e4 and 7e-4 at L = 1000).
  for (double L : {1.0, 100.0, 1000.0, 1e4}) {
    const PairResult r = SinglePair(SceneOf({RectZ(0, L, 0, 1, 0, true), RectZ(0, L, 0, 1, 1, false)}));
    EXPECT_NEAR(r.value / ParallelRectangles(L, 1, 1) - 1, 0, 1e-5) << "aspect " << L;
    EXPECT_FALSE(r.hitDepthLimit) << "aspect " << L;
    EXPECT_LT(r.evaluations, 10000) << "aspect " << L;
  }
}

TEST(Slivers, StripsSharingTheirLongEdgeMatchHowellC14) {
  // L x 1 floor and L x 1 wall meeting at a right angle along their length L: the factor's derivative is
  // singular along the whole shared edge and its limit depends on direction at the edge's two ends.
  for (double L : {1.0, 100.0, 1000.0, 1e4}) {
    const PairResult r = SinglePair(SceneOf({RectZ(0, 1, 0, L, 0, true), RectXPlus(0, 0, L, 0, 1)}));
    EXPECT_NEAR(r.value / PerpendicularRectangles(L, 1, 1) - 1, 0, 1e-5) << "aspect " << L;
    EXPECT_FALSE(r.hitDepthLimit) << "aspect " << L;
    EXPECT_LT(r.evaluations, 10000) << "aspect " << L;
  }
}

TEST(Slivers, StripsAcrossEachOtherAtRightAnglesMatchTheExactValue) {
  // Two 100 x 1 strips crossing like a plus sign, 1 apart: the receiver's only nearby features are its long
  // edges, which cross the emitter's length, so the middle of the emitter must be resolved, not its ends.
  const Scene s = SceneOf({RectZ(-50, 50, -0.5, 0.5, 0, true), RectZ(-0.5, 0.5, -50, 50, 1, false)});
  const double exact = test::ParallelRectFF<long double>(-50, 50, -0.5, 0.5, 0, -0.5, 0.5, -50, 50, 1);
  const PairResult r = SinglePair(s);
  EXPECT_NEAR(r.value / exact - 1, 0, 1e-5);
  EXPECT_LT(r.evaluations, 10000);
}

TEST(Slivers, SliverTrianglesOfAStripSumToTheStrip) {
  // The emitter strip of the C-11 pair cut along its diagonal, as STL files do: two triangles of aspect L.
  for (double L : {100.0, 1e4}) {
    const Scene s = SceneOf({{{0, 0, 0}, {L, 0, 0}, {L, 1, 0}}, {{0, 0, 0}, {L, 1, 0}, {0, 1, 0}},
                             RectZ(0, L, 0, 1, 1, false)});
    const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
    const PairResult lower = FormFactorPair(g, 0, 2, PairSettings{}), upper = FormFactorPair(g, 1, 2, PairSettings{});
    EXPECT_NEAR((lower.value + upper.value) / 2 / ParallelRectangles(L, 1, 1) - 1, 0, 1e-5) << "aspect " << L;
    EXPECT_LT(lower.evaluations + upper.evaluations, 20000) << "aspect " << L;
  }
}

TEST(Slivers, APairThatCannotMeetTheToleranceSaysSo) {
  // 1e-12 relative on a shared edge is beyond any cell budget: the limit must be reported, not hidden.
  const PairResult r = SinglePair(SceneOf({RectZ(0, 1, 0, 100, 0, true), RectXPlus(0, 0, 100, 0, 1)}), 1e-12);
  EXPECT_TRUE(r.hitDepthLimit);
  EXPECT_NEAR(r.value / PerpendicularRectangles(100, 1, 1) - 1, 0, 1e-6);
}

TEST(Unoccluded, TrianglesAgreeWithTheQuadTheyTile) {
  // The same opposed squares, the receiver written as two triangles: the sum must not change.
  const Scene s = SceneOf({RectZ(0, 1, 0, 1, 0, true), {{0, 0, 1}, {0, 1, 1}, {1, 1, 1}}, {{0, 0, 1}, {1, 1, 1}, {1, 0, 1}}});
  EXPECT_NEAR((FaceToFace(s, 2, 0, 1) + FaceToFace(s, 2, 0, 2)) / ParallelRectangles(1, 1, 1) - 1, 0, 1e-4);
}

TEST(Unoccluded, ClosedCubeRowsSumToOne) {
  const FormFactorGeometry g = BuildFormFactorGeometry(test::UnitCube(), 3);
  QuadratureSettings q;
  double worst = 0;
  for (size_t i = 0; i < g.patches.size(); i += 7) {  // every 7th row keeps the test quick
    double sum = 0;
    for (size_t j = 0; j < g.patches.size(); ++j) sum += FormFactorPair(g, int(i), int(j), PairSettings{q}).value;
    worst = std::max(worst, std::fabs(sum - 1));
  }
  EXPECT_LT(worst, 1e-4);
}

TEST(Unoccluded, ReciprocityOnTheCube) {
  const FormFactorGeometry g = BuildFormFactorGeometry(test::UnitCube(), 2);
  QuadratureSettings q;
  double worst = 0;
  for (size_t i = 0; i < g.patches.size(); ++i)
    for (size_t j = i + 1; j < g.patches.size(); ++j) {
      const double a = g.patches[i].area * FormFactorPair(g, int(i), int(j), PairSettings{q}).value;
      const double b = g.patches[j].area * FormFactorPair(g, int(j), int(i), PairSettings{q}).value;
      if (std::max(a, b) > 0) worst = std::max(worst, std::fabs(a - b) / std::max(a, b));
    }
  EXPECT_LT(worst, 1e-3);
}

TEST(Unoccluded, BackFacingAndCoplanarPairsAreExactlyZero) {
  // Two squares facing away from each other, and two coplanar squares.
  const Scene s = SceneOf({RectZ(0, 1, 0, 1, 0, false), RectZ(0, 1, 0, 1, 1, true), RectZ(2, 3, 0, 1, 0, false)});
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
  QuadratureSettings q;
  EXPECT_EQ(FormFactorPair(g, 0, 1, PairSettings{q}).value, 0.0);
  EXPECT_EQ(FormFactorPair(g, 1, 0, PairSettings{q}).value, 0.0);
  EXPECT_EQ(FormFactorPair(g, 0, 2, PairSettings{q}).value, 0.0);
}

TEST(Unoccluded, FarFieldRulesHonourTheTolerance) {
  // Pairs from touching-close to 20 emitter diameters apart, squares and triangles, tilted every way: whichever
  // fixed rule (or none) the separation allows for a tolerance, the factor is within it of the refined value,
  // and the cheaper rules are taken where they may (the node-pair rules of 2 x 2 points far away at 1e-4; a
  // triangle's 3 points). Triangles take their own rules: on their collapsed maps the degree-7 rule was 1.2e-5
  // off at 1.2 diameters and 1e-5 at 9.
  QuadratureSettings strict;
  strict.relativeTolerance = 1e-12;
  strict.wellSeparatedRatio = 1e30;  // never a fixed rule
  const Vec3 square[4] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
  const Vec3 triangle[3] = {{0, 0, 0}, {1, 0, 0}, {0.2, 0.9, 0}};
  // A long rectangle: the node-pair rules' errors grow with its length, not its diameter (point_pair_rule.h).
  const Vec3 strip[4] = {{0, 0, 0}, {1, 0, 0}, {1, 0.2, 0}, {0, 0.2, 0}};
  int cheapest = 1 << 30, cheapestTriangle = 1 << 30;
  for (const ConvexPolygon &emitter :
       {MakeConvexPolygon(square, 4), MakeConvexPolygon(triangle, 3), MakeConvexPolygon(strip, 4)})
    for (double ratio : {0.5, 1.0, 1.7, 2.5, 4.0, 8.0, 20.0})
      for (int conf = 0; conf < 12; ++conf) {
        const double theta = 0.5 * conf, phi = 1.1 * conf, size = conf % 2 == 0 ? 0.4 : 2.5;
        const Vec3 dir =
            Normalize(Vec3{std::sin(theta) * std::cos(phi) * 0.8, std::sin(theta) * std::sin(phi) * 0.8, 1});
        const Vec3 nr = Normalize(Vec3{-dir.x + 0.4 * std::cos(conf), -dir.y, -dir.z});
        const Vec3 u = Normalize(Cross(nr, Vec3{1, 0, 0})), v = Cross(nr, u);
        const Vec3 c = Vec3{0.5, 0.5, 0} + dir * (ratio * 2 * 0.75 + 0.75 + size * 0.75);
        const Vec3 h = u * (size / 2), k = v * (size / 2);
        const Vec3 corners[4] = {c - h - k, c + h - k, c + h + k, c - h + k};
        const ClippedPair cp = ClipPair(emitter, {0, 0, 1}, MakeConvexPolygon(corners, 4), nr);
        if (cp.emitter.n == 0) continue;
        const double reference = UnoccludedFormFactor(cp, {0, 0, 1}, 1, strict).formFactor;
        for (double tolerance : {1e-4, 1e-5, 1e-6, 1e-8}) {
          QuadratureSettings q;
          q.relativeTolerance = tolerance;
          const UnoccludedResult r = UnoccludedFormFactor(cp, {0, 0, 1}, 1, q);
          EXPECT_NEAR(r.formFactor / reference - 1, 0, tolerance)
              << "ratio " << ratio << " conf " << conf << " corners " << emitter.n;
          // The node-pair rules need no contour evaluation. Their bounds are kept within a tenth of the tolerance
          // (kEstimateSafety): hold them to it. Count the node pairs of the pairs they took.
          if (r.evaluations == 0)
            EXPECT_NEAR(r.formFactor / reference - 1, 0, kEstimateSafety * tolerance)
                << "node pairs " << r.nodePairs << ", ratio " << ratio << " conf " << conf << " corners " << emitter.n;
          int &fewest = emitter.n == 3 ? cheapestTriangle : cheapest;
          if (r.evaluations == 0) fewest = std::min(fewest, r.nodePairs);
        }
      }
  // Perpendicular squares whose planes meet along a line through both (tiles of two walls of a room, a few
  // tiles apart along the corner): small factors, whose relative error a fixed rule would not meet.
  for (double offset : {1.5, 2.0, 3.0, 5.0, 10.0}) {
    const ClippedPair cp = ClipPair(MakeConvexPolygon(square, 4), {0, 0, 1},
                                    MakeConvexPolygon(std::vector<Vec3>{{1, offset, 0}, {1, offset, 1},
                                                                        {1, offset + 1, 1}, {1, offset + 1, 0}}
                                                          .data(), 4),
                                    {-1, 0, 0});
    const double reference = UnoccludedFormFactor(cp, {0, 0, 1}, 1, strict).formFactor;
    for (double tolerance : {1e-4, 1e-5, 1e-6}) {
      QuadratureSettings q;
      q.relativeTolerance = tolerance;
      const UnoccludedResult r = UnoccludedFormFactor(cp, {0, 0, 1}, 1, q);
      EXPECT_NEAR(r.formFactor / reference - 1, 0, tolerance) << "offset " << offset;
      // Far along the corner the checked node-pair rules agree and take the pair without a contour evaluation.
      if (offset >= 10) EXPECT_TRUE(r.evaluations == 0 && r.nodePairs > 0) << r.evaluations << " " << r.nodePairs;
    }
  }
  EXPECT_EQ(cheapest, 4 * 4);        // Gauss 2 x 2 on both squares
  EXPECT_EQ(cheapestTriangle, 3 * 4);  // the triangle's 3 points, the square's 4
}

}  // namespace
}  // namespace rad
