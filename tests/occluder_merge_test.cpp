// Coplanar occluders joined where their union is convex (formfactor/occluder_merge.h): a blocker tiled 4 x 4 is
// one occluder and hides exactly what one square hides; an L of three tiles never becomes a polygon covering
// more than the L; overlapping coplanar squares stay apart.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "formfactor/pair.h"
#include "formfactor/geometry.h"
#include "tests/test_scenes.h"

namespace {

using rad::FormFactorGeometry;
using rad::test::RectZ;
using rad::test::SceneOf;

double OccluderArea(const rad::Occluder &o) {
  rad::Vec3 twice(0, 0, 0);
  for (int k = 0; k < o.polygon.n; ++k) twice = twice + rad::Cross(o.polygon.v[k], o.polygon.v[(k + 1) % o.polygon.n]);
  return 0.5 * rad::Length(twice);
}

// Two facing unit squares 2 apart and, halfway, a blocker over [0.25, 0.75]^2 facing down: whole, or in n x n tiles.
rad::Scene BlockedSquares(int n) {
  std::vector<std::vector<rad::Vec3>> polygons = {RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 2, false)};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      polygons.push_back(RectZ(0.25 + 0.5 * i / n, 0.25 + 0.5 * (i + 1) / n, 0.25 + 0.5 * j / n,
                               0.25 + 0.5 * (j + 1) / n, 1, false));
  return SceneOf(polygons);
}

double BlockedFactor(const rad::Scene &s) {
  const FormFactorGeometry g = rad::BuildFormFactorGeometry(s, 0);
  rad::QuadratureSettings q;
  q.relativeTolerance = 1e-9;
  return rad::FormFactorPair(g, 0, 1, rad::PairSettings{q}).value;
}

TEST(OccluderMerge, TiledBlockerIsOneOccluderHidingWhatTheSquareHides) {
  const FormFactorGeometry tiled = rad::BuildFormFactorGeometry(BlockedSquares(4), 0);
  ASSERT_EQ(tiled.occluders.size(), 3u);  // the two squares and the joined blocker
  EXPECT_NEAR(OccluderArea(tiled.occluders[2]), 0.25, 1e-15);
  EXPECT_EQ(tiled.occluders[2].polygon.n, 4);
  for (int face = 2; face < 18; ++face) EXPECT_EQ(tiled.occludersOfFace[size_t(face)], std::vector<int>{2});
  const double whole = BlockedFactor(BlockedSquares(1)), inTiles = BlockedFactor(BlockedSquares(4));
  EXPECT_GT(whole, 0.02);  // part of the light passes around the blocker (0.0698 without it)
  EXPECT_NEAR(inTiles, whole, 1e-12);
}

TEST(OccluderMerge, AnLIsNeverCoveredByMoreThanItself) {
  // Three unit tiles in an L at z = 1 and a far square: no joined polygon may reach into the L's notch.
  const FormFactorGeometry g = rad::BuildFormFactorGeometry(
      SceneOf({RectZ(0, 1, 0, 1, 1, false), RectZ(1, 2, 0, 1, 1, false), RectZ(0, 1, 1, 2, 1, false),
               RectZ(0, 2, 0, 2, 3, false)}),
      0);
  double area = 0;
  int inPlane = 0;
  for (const rad::Occluder &o : g.occluders)
    if (o.polygon.v[0].z == 1) area += OccluderArea(o), ++inPlane;
  EXPECT_EQ(inPlane, 2);  // two tiles joined into a strip, the third left alone
  EXPECT_NEAR(area, 3.0, 1e-15);
}

TEST(OccluderMerge, OverlappingCoplanarSquaresStayApart) {
  // Two squares of one plane sharing an edge's line but overlapping: their hull's area is not their sum.
  const FormFactorGeometry g = rad::BuildFormFactorGeometry(
      SceneOf({RectZ(0, 1, 0, 1, 1, false), RectZ(0.5, 1.5, 0, 1, 1, false), RectZ(0, 2, 0, 2, 3, false)}), 0);
  EXPECT_EQ(g.occluders.size(), 3u);
}

}  // namespace
