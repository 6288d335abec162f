// Adaptive refinement (refine/): splitting a patch, finding its neighbours, and choosing where to split, on
// scenes whose answers are known by construction.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "refine/patch_neighbours.h"
#include "refine/refinement.h"
#include "scene/patch.h"
#include "tests/test_scenes.h"

namespace rad {
namespace {

// Patches in a canonical order (by centroid), to compare sets made in different orders.
std::vector<Patch> ByCentroid(std::vector<Patch> p) {
  std::sort(p.begin(), p.end(), [](const Patch &a, const Patch &b) {
    return std::tie(a.centroid.x, a.centroid.y, a.centroid.z) < std::tie(b.centroid.x, b.centroid.y, b.centroid.z);
  });
  return p;
}

TEST(Refinement, SplittingEveryPatchIsTheNextUniformLevel) {
  // A quad, a skewed quad and a triangle: splitting each patch of level k in four gives level k + 1.
  const Scene s = test::SceneOf({test::RectZ(0, 2, 0, 1, 0, true),
                                 {{0, 0, 1}, {2, 0.5, 1}, {2.5, 2, 1}, {0.2, 1.5, 1}},
                                 {{0, 0, 2}, {1, 0, 2}, {0.3, 1, 2}}});
  for (int k = 0; k <= 2; ++k) {
    std::vector<Patch> split;
    for (const Patch &p : MakePatches(s, k)) SplitPatch(p, split);
    const std::vector<Patch> a = ByCentroid(split), b = ByCentroid(MakePatches(s, k + 1));
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(Length(a[i].centroid - b[i].centroid), 0, 1e-12);
      EXPECT_NEAR(a[i].area, b[i].area, 1e-12);
      EXPECT_EQ(a[i].cornerCount, b[i].cornerCount);
      EXPECT_EQ(a[i].face, b[i].face);
      EXPECT_GT(Dot(NewellNormal(a[i].corners, a[i].cornerCount), a[i].normal), 0);  // winding kept
    }
  }
}

TEST(Refinement, NeighboursTouchInOnePlaneWithOneMaterial) {
  // A floor of 4 x 4 patches; a wall meeting it along y = 0; a second floor polygon beside it at x in [1, 2].
  Scene s = test::SceneOf({test::RectZ(0, 1, 0, 1, 0, true), {{0, 0, 0}, {0, 0, 1}, {1, 0, 1}, {1, 0, 0}},
                           test::RectZ(1, 2, 0, 1, 0, true)});
  std::vector<Patch> p = MakePatches(s, 2);  // 16 per face: floor 0..15, wall 16..31, floor 32..47
  auto n = PatchNeighbours(p);
  // Floor patch a + 4 b sits at column a, row b. Its corner has 3 neighbours, an edge patch 5, an inner one 8.
  EXPECT_EQ(n[0].size(), 3u);  // (0, 0): on the crease with the wall, which is no neighbour
  EXPECT_EQ(n[1].size(), 5u);
  EXPECT_EQ(n[5].size(), 8u);
  EXPECT_EQ(n[3].size(), 5u);  // (3, 0): three of its own floor and two of the floor beside it
  EXPECT_EQ(std::count_if(n[3].begin(), n[3].end(), [](int32_t j) { return j >= 32; }), 2);
  for (int32_t j : n[0]) EXPECT_LT(j, 16);
  // Another material beside it: not a neighbour.
  for (size_t k = 32; k < 48; ++k) p[k].reflectance = {0.9, 0.1, 0.1};
  n = PatchNeighbours(p);
  EXPECT_EQ(n[3].size(), 3u);
  // A T-junction: patch 5 split in four; its neighbour 6 now touches two of the children, and the children of
  // 5 touch each other.
  std::vector<Patch> t;
  for (size_t k = 0; k < 16; ++k) {
    if (k == 5) SplitPatch(p[k], t);
    else t.push_back(p[k]);
  }
  n = PatchNeighbours(t);  // children are 5..8, patch 6 is now 9
  int children = 0;
  for (int32_t j : n[9]) children += (j >= 5 && j <= 8);
  EXPECT_EQ(children, 2);
  for (int c = 5; c <= 8; ++c) EXPECT_EQ(std::count_if(n[size_t(c)].begin(), n[size_t(c)].end(),
                                                       [](int32_t j) { return j >= 5 && j <= 8; }), 3);
}

TEST(Refinement, EvenRadianceSplitsNothing) {
  // A white furnace: every patch the same B, whatever it is; nothing to split.
  const std::vector<Patch> p = MakePatches(test::UnitCube(), 2);
  std::vector<double> b(3 * p.size(), 2.5);
  RefinementOptions o;
  o.contrast = 1e-9;
  RefinementPass pass;
  const std::vector<Patch> r = RefineWhereRadianceVaries(p, b, o, pass);
  EXPECT_EQ(pass.split, 0);
  EXPECT_EQ(r.size(), p.size());
  EXPECT_EQ(pass.largestStep, 0.0);
  // A step across every wall's creases changes nothing either: creases are no neighbours.
  for (size_t i = 0; i < p.size(); ++i) b[3 * i] = b[3 * i + 1] = b[3 * i + 2] = 1.0 + p[i].face;
  RefineWhereRadianceVaries(p, b, o, pass);
  EXPECT_EQ(pass.split, 0);
}

TEST(Refinement, AStepSplitsTheTwoColumnsBesideIt) {
  // A floor of 8 x 8 patches, B 1 for x < 0.5 and 0.2 beyond: the columns at x in [0.375, 0.625] see the
  // step; the mean is 0.6, so the step is 4/3 of it.
  const Scene s = test::SceneOf({test::RectZ(0, 1, 0, 1, 0, true)});
  const std::vector<Patch> p = MakePatches(s, 3);
  std::vector<double> b(3 * p.size());
  for (size_t i = 0; i < p.size(); ++i) b[3 * i] = b[3 * i + 1] = b[3 * i + 2] = p[i].centroid.x < 0.5 ? 1.0 : 0.2;
  RefinementOptions o;
  o.contrast = 0.5;
  RefinementPass pass;
  const std::vector<Patch> r = RefineWhereRadianceVaries(p, b, o, pass);
  EXPECT_NEAR(pass.largestStep, 0.8 / 0.6, 1e-12);
  EXPECT_EQ(pass.split, 16);
  EXPECT_EQ(r.size(), p.size() + 3 * 16);
  double area = 0;
  for (const Patch &q : r) {
    area += q.area;
    const bool small = q.area < 0.5 / 64;
    EXPECT_EQ(small, std::abs(q.centroid.x - 0.5) < 0.125) << q.centroid.x;
  }
  EXPECT_NEAR(area, 1.0, 1e-12);
  // Above the step's size, nothing splits; at a minimum size of the patches' own, nothing splits and the
  // patches that would have are counted.
  o.contrast = 1.4;
  RefineWhereRadianceVaries(p, b, o, pass);
  EXPECT_EQ(pass.split, 0);
  o.contrast = 0.5;
  o.minSize = 0.1;  // the children's edges would be 1/16
  RefineWhereRadianceVaries(p, b, o, pass);
  EXPECT_EQ(pass.split, 0);
  EXPECT_EQ(pass.tooSmall, 16);
  // Only the reflected light sets the scale: an emitter elsewhere does not raise it.
  std::vector<Patch> lit = p;
  lit[0].emission = {100, 100, 100};
  std::vector<double> bl = b;
  bl[0] = bl[1] = bl[2] = 100;
  const Vec3 mean = MeanReflectedRadiance(lit, bl);
  EXPECT_NEAR(mean.x, (31 * 1.0 + 32 * 0.2) / 63, 1e-12);
}

}  // namespace
}  // namespace rad
