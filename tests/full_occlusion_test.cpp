// Pairs proved hidden by one occluder (formfactor/full_occlusion.h): the proof is checked against segments the
// test draws itself, and a proved pair against the shadow rays it no longer traces.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "formfactor/embree_scene.h"
#include "formfactor/full_occlusion.h"
#include "formfactor/pair.h"
#include "formfactor/visibility.h"
#include "tests/segment_checks.h"
#include "tests/test_scenes.h"

namespace rad {
namespace {

using test::CrossesInside;
using test::PointIn;
using test::PolygonOf;
using test::RandomQuad;
using test::RectZ;
using test::SceneOf;

TEST(FullOcclusion, EveryDrawnSegmentOfAProvedPairCrossesTheOccluder) {
  // Random pairs of quads on either side of a random wall: wherever the proof says hidden, thousands of
  // segments between random points of the two quads all cross the wall inside it; and some configurations
  // are proved (the test is not empty) while others are not.
  std::mt19937_64 rng(20261127);
  std::uniform_real_distribution<double> u(-1, 1);
  int proved = 0, refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const Vec3 wallNormal = Normalize(Vec3{u(rng), u(rng), u(rng)});
    const std::vector<Vec3> wallCorners = RandomQuad(Vec3{0, 0, 0}, wallNormal, 4.0, rng);
    const ConvexPolygon wall = PolygonOf(wallCorners);
    const Vec3 n = Normalize(Cross(wall.v[1] - wall.v[0], wall.v[2] - wall.v[0]));
    const Vec3 ca = n * (1 + 3 * std::fabs(u(rng))) + Vec3{u(rng), u(rng), u(rng)} * 2.0;
    const Vec3 cb = n * -(1 + 3 * std::fabs(u(rng))) + Vec3{u(rng), u(rng), u(rng)} * 2.0;
    const ConvexPolygon a = PolygonOf(RandomQuad(ca, Vec3{u(rng), u(rng), u(rng)}, 0.7, rng));
    const ConvexPolygon b = PolygonOf(RandomQuad(cb, Vec3{u(rng), u(rng), u(rng)}, 0.7, rng));
    const bool hidden = HidesEverySegment(wall, n, a, b);
    bool allCross = true;
    for (int s = 0; s < 2000 && allCross; ++s) allCross = CrossesInside(wall, n, PointIn(a, rng), PointIn(b, rng));
    if (hidden) {
      ++proved;
      EXPECT_TRUE(allCross) << "trial " << trial;
    } else {
      ++refused;
    }
    // The proof does not depend on the occluder's normal's sign or on which polygon comes first.
    EXPECT_EQ(HidesEverySegment(wall, n * -1.0, a, b), hidden) << "trial " << trial;
    EXPECT_EQ(HidesEverySegment(wall, n, b, a), hidden) << "trial " << trial;
  }
  EXPECT_GT(proved, 40);
  EXPECT_GT(refused, 40);
}

TEST(FullOcclusion, NoRoomToSpareIsNoProof) {
  // Two unit squares one above the other, with a wall between them: wider than the squares, it hides them;
  // exactly as wide, every crossing near its edges lies on them, and single-precision rays could slip past.
  const ConvexPolygon bottom = PolygonOf(RectZ(0, 1, 0, 1, 0, true)), top = PolygonOf(RectZ(0, 1, 0, 1, 1, false));
  const Vec3 up{0, 0, 1};
  EXPECT_TRUE(HidesEverySegment(PolygonOf(RectZ(-0.1, 1.1, -0.1, 1.1, 0.5, true)), up, bottom, top));
  EXPECT_FALSE(HidesEverySegment(PolygonOf(RectZ(0, 1, 0, 1, 0.5, true)), up, bottom, top));
  // Narrower on one side: some segment passes by.
  EXPECT_FALSE(HidesEverySegment(PolygonOf(RectZ(-0.1, 0.9, -0.1, 1.1, 0.5, true)), up, bottom, top));
  // A wall flush with one of the squares' planes, or across one of them, is not between them.
  EXPECT_FALSE(HidesEverySegment(PolygonOf(RectZ(-1, 2, -1, 2, 0, true)), up, bottom, top));
  EXPECT_FALSE(HidesEverySegment(PolygonOf({{0.5, -1, -1}, {0.5, 2, -1}, {0.5, 2, 2}, {0.5, -1, 2}}), Vec3{1, 0, 0},
                                 bottom, top));
  // So close to one square that rays trimmed at their ends could start past it.
  EXPECT_FALSE(HidesEverySegment(PolygonOf(RectZ(-1, 2, -1, 2, 1e-6, true)), up, bottom, top));
}

TEST(FullOcclusion, AProvedPairIsZeroWithoutRaysAndEveryRayAgrees) {
  // Two squares 4 m apart with a wider wall between them, given as the only nearby occluder (as a cluster's
  // walk lists it): the pair is proved hidden, both entries are exactly 0 and nothing is left to rays; the
  // rays the proof saved are all blocked when traced. A wall that covers half the gap proves nothing.
  const Scene s = SceneOf({RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 4, false), RectZ(-1, 2, -1, 2, 2, true),
                           RectZ(-5, 0.5, -5, 6, 3, true)});
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
  ASSERT_EQ(g.patches.size(), 4u);
  const PairSettings rays{QuadratureSettings{}, VisibilityMethod::kRays};
  const int32_t wall[] = {int32_t(g.occludersOfFace[2][0])}, half[] = {int32_t(g.occludersOfFace[3][0])};
  const PairResult hidden = FormFactorPair(ViewOf(g), 0, 1, rays, false, NearbyOccluders{wall, 1});
  EXPECT_TRUE(hidden.hidden);
  EXPECT_FALSE(hidden.needsRays);
  EXPECT_EQ(hidden.value, 0.0);
  EXPECT_EQ(hidden.reverse, 0.0);
  const PairResult partial = FormFactorPair(ViewOf(g), 0, 1, rays, false, NearbyOccluders{half, 1});
  EXPECT_FALSE(partial.hidden);
  EXPECT_TRUE(partial.needsRays);
  EXPECT_GT(partial.value, 0.0);

  EmbreeScene embree(SceneOf({RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 4, false), RectZ(-1, 2, -1, 2, 2, true)}));
  const EmbreeShadowRays occluded{embree};
  uint32_t traced = 0;
  EXPECT_EQ(VisibleFraction(g.patches[0], g.patches[1], 0, 1, 7, 1024, occluded, traced), 0.0);
  EXPECT_EQ(traced, 1024u);
}

// A block standing on the ground (z = 0): four walls and a roof, facing out.
void AddBlock(std::vector<std::vector<Vec3>> &polygons, double x0, double x1, double y0, double y1, double h) {
  polygons.push_back({{x0, y0, 0}, {x0, y0, h}, {x0, y1, h}, {x0, y1, 0}});  // -x
  polygons.push_back({{x1, y0, 0}, {x1, y1, 0}, {x1, y1, h}, {x1, y0, h}});  // +x
  polygons.push_back({{x0, y0, 0}, {x1, y0, 0}, {x1, y0, h}, {x0, y0, h}});  // -y
  polygons.push_back({{x0, y1, 0}, {x0, y1, h}, {x1, y1, h}, {x1, y1, 0}});  // +y
  polygons.push_back(RectZ(x0, x1, y0, y1, h, true));
}

// Every one of the 64 shadow rays of pair (i, j) is blocked.
void ExpectEveryRayBlocked(const FormFactorGeometry &g, const EmbreeShadowRays &occluded, int i, int j) {
  uint32_t traced = 0;
  EXPECT_EQ(VisibleFraction(g.patches[size_t(i)], g.patches[size_t(j)], uint32_t(i), uint32_t(j), 3, 64, occluded,
                            traced),
            0.0)
      << i << " " << j;
}

// A street between three blocks on a ground plane.
Scene StreetOfBlocks() {
  std::vector<std::vector<Vec3>> polygons = {RectZ(-20, 20, -20, 20, 0, true)};
  AddBlock(polygons, -15, -5, -4, 4, 8);
  AddBlock(polygons, 5, 15, -4, 4, 12);
  AddBlock(polygons, -4, 4, 8, 16, 6);
  return SceneOf(polygons);
}

TEST(FullOcclusion, ProvedPairsAmongManyAreThoseTheRaysFindBlocked) {
  // A street between two rows of blocks, patches on the ground and the walls: every pair proved hidden by one of
  // the scene's occluders traces 64 rays that are all blocked, and some pairs are proved.
  const Scene s = StreetOfBlocks();
  Meshing m;
  m.maxPatchSize = 4.0;
  const FormFactorGeometry g = BuildFormFactorGeometry(s, m);
  EmbreeScene embree(s);
  const EmbreeShadowRays occluded{embree};
  std::vector<int32_t> all(g.occluders.size());
  for (size_t k = 0; k < all.size(); ++k) all[k] = int32_t(k);
  const PairSettings rays{QuadratureSettings{}, VisibilityMethod::kRays};
  int proved = 0;
  for (int i = 0; i < int(g.patches.size()); ++i)
    for (int j = i + 1; j < int(g.patches.size()); ++j) {
      const PairResult p = FormFactorPair(ViewOf(g), i, j, rays, false, NearbyOccluders{all.data(), int(all.size())});
      if (!p.hidden) continue;
      ++proved;
      ExpectEveryRayBlocked(g, occluded, i, j);
    }
  EXPECT_GT(proved, 100);
}

TEST(FullOcclusion, AClusterProvedHiddenHidesEachOfItsPairs) {
  // WalkCluster proves once, for a patch and a run of coplanar patches, what FormFactorPair would prove for each
  // pair (ClusterWalk::hidden). Checked pair by pair: each such pair is proved hidden on its own, from all the
  // scene's occluders, its 64 shadow rays are all blocked, and the shortcut gives FormFactorPair's result.
  // 7 x 8 blocks on a ground plane: more polygons than kMaxFacesForFacePairCulling, so the geometry has the
  // occluder BVH and the clusters.
  std::vector<std::vector<Vec3>> polygons = {RectZ(0, 56, 0, 64, 0, true)};
  for (int a = 0; a < 7; ++a)
    for (int b = 0; b < 8; ++b) {
      const double x0 = 2.5 + 8 * a, y0 = 2.5 + 8 * b;
      AddBlock(polygons, x0, x0 + 3, y0, y0 + 3, 4 + 2 * ((a * 8 + b) * 5 % 4));
    }
  const Scene s = SceneOf(polygons);
  Meshing m;
  m.maxPatchSize = 2.0;
  const FormFactorGeometry g = BuildFormFactorGeometry(s, m);
  ASSERT_GT(int(polygons.size()), kMaxFacesForFacePairCulling);
  ASSERT_FALSE(g.clusters.empty());
  const GeometryView view = ViewOf(g);
  EmbreeScene embree(s);
  const EmbreeShadowRays occluded{embree};
  std::vector<int32_t> all(g.occluders.size());
  for (size_t k = 0; k < all.size(); ++k) all[k] = int32_t(k);
  const PairSettings rays{QuadratureSettings{}, VisibilityMethod::kRays};
  int walksHidden = 0, pairsChecked = 0;
  for (int i = 0; i < int(g.patches.size()) && pairsChecked < 20000; i += 3)
    for (const PatchCluster &c : g.clusters) {
      std::vector<int32_t> ids;
      const ClusterWalk walk = WalkCluster(view, g.patches[size_t(i)], c, true, ids);
      if (!walk.hidden) continue;
      ++walksHidden;
      const NearbyOccluders listed{ids.data() + walk.at, walk.count};  // the same list, without the walk's proof
      for (long long j = c.first; j < c.first + c.count; ++j) {
        const PairResult shortcut = FormFactorPair(view, i, int(j), rays, false, walk.Nearby(ids));
        const PairResult own = FormFactorPair(view, i, int(j), rays, false, listed);
        const PairResult fromAll = FormFactorPair(view, i, int(j), rays, false, NearbyOccluders{all.data(), int(all.size())});
        EXPECT_EQ(shortcut.hidden, own.hidden) << i << " " << j;
        EXPECT_EQ(shortcut.value, own.value) << i << " " << j;
        EXPECT_EQ(shortcut.reverse, own.reverse) << i << " " << j;
        EXPECT_EQ(shortcut.needsRays, own.needsRays) << i << " " << j;
        EXPECT_EQ(fromAll.value, 0.0) << i << " " << j;
        EXPECT_FALSE(fromAll.needsRays) << i << " " << j;
        if (!own.hidden) continue;  // facing away from i, or on its face: 0 before any proof
        ++pairsChecked;
        ExpectEveryRayBlocked(g, occluded, i, j);
      }
    }
  EXPECT_GT(walksHidden, 100);
  EXPECT_GT(pairsChecked, 1000);
  std::printf("%d cluster walks proved hidden, %d of their pairs checked\n", walksHidden, pairsChecked);
}

}  // namespace
}  // namespace rad
