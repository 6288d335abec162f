#include <gtest/gtest.h>

#include "scene/patch.h"
#include "tests/test_scenes.h"
#include "util/error.h"

namespace rad {
namespace {

TEST(Patches, EachPolygonSplitsIntoFourToTheK) {
  const Scene s = test::SceneOf({test::RectZ(0, 2, 0, 1, 0, true), {{0, 0, 1}, {1, 0, 1}, {0, 1, 1}}});
  for (int k = 0; k <= 3; ++k) {
    const auto p = MakePatches(s, k);
    EXPECT_EQ(p.size(), size_t(2) << (2 * k));
    EXPECT_EQ((long long)p.size(), CountPatches(s, k));
  }
}

TEST(Patches, AreasAddUpAndOrientationIsKept) {
  const Scene s = test::SceneOf({test::RectZ(0, 2, 0, 1, 0, false), {{0, 0, 1}, {1, 0, 1}, {0, 1, 1}}});
  const auto p = MakePatches(s, 3);
  double area[2] = {0, 0};
  for (const Patch &q : p) {
    area[q.face] += q.area;
    // Each patch's own winding agrees with its face's normal.
    EXPECT_GT(Dot(NewellNormal(q.corners, q.cornerCount), q.normal), 0);
    EXPECT_NEAR(Length(q.normal), 1.0, 1e-14);
  }
  EXPECT_NEAR(area[0], 2.0, 1e-12);
  EXPECT_NEAR(area[1], 0.5, 1e-12);
  EXPECT_NEAR(p[0].normal.z, -1.0, 1e-14);
  EXPECT_NEAR(p.back().normal.z, 1.0, 1e-14);
}

TEST(Patches, TrianglesRepeatTheirThirdCorner) {
  const Scene s = test::SceneOf({{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}});
  const auto p = MakePatches(s, 1);
  for (const Patch &q : p) {
    EXPECT_EQ(q.cornerCount, 3);
    EXPECT_EQ(q.corners[3].x, q.corners[2].x);
  }
}

TEST(Patches, PentagonIsFanSplit) {
  const Scene s = test::SceneOf({{{0, 0, 0}, {2, 0, 0}, {3, 1, 0}, {1, 2, 0}, {-1, 1, 0}}});
  EXPECT_EQ(MakePatches(s, 1).size(), 3u * 4u);
}

TEST(Patches, RejectsSubdivisionOutOfRange) { EXPECT_THROW(MakePatches(test::UnitCube(), -1), InputError); }

}  // namespace
}  // namespace rad
