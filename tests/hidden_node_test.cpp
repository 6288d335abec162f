// Far links proved hidden without their rays (formfactor/hidden_node.h, formfactor/occluder_bodies.h): which
// occluders make a convex body, the body's proof against segments the test draws and crosses itself, and a
// proved link against the rays it no longer traces.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "formfactor/embree_scene.h"
#include "formfactor/far_field.h"
#include "formfactor/full_occlusion.h"
#include "formfactor/geometry.h"
#include "formfactor/hidden_node.h"
#include "formfactor/occluder_bodies.h"
#include "formfactor/patch_tree.h"
#include "tests/segment_checks.h"
#include "tests/test_scenes.h"

namespace rad {
namespace {

using test::BoxFaces;
using test::CrossesInside;
using test::PointIn;
using test::PolygonOf;
using test::RandomQuad;
using test::RectZ;
using test::SceneOf;

// A building of 4 x 4 x 6 standing on a ground of 30 x 30 (walls and roof, no floor: the ground polygon runs
// under it, its edges meeting the walls' feet nowhere), as the generated cities build them.
std::vector<std::vector<Vec3>> BuildingOnGround() {
  std::vector<std::vector<Vec3>> polygons = {RectZ(-10, 20, -10, 20, 0, true)};
  const std::vector<std::vector<Vec3>> box = BoxFaces({0, 0, 0}, {4, 4, 6}, true);
  polygons.insert(polygons.end(), box.begin() + 1, box.end());  // all but the floor
  return polygons;
}

// Whether the segment from x to y crosses any of `polygons`, each with its own unit normal.
bool CrossesAny(const std::vector<std::vector<Vec3>> &polygons, Vec3 x, Vec3 y) {
  for (const std::vector<Vec3> &p : polygons) {
    const ConvexPolygon o = PolygonOf(p);
    if (CrossesInside(o, Normalize(Cross(o.v[1] - o.v[0], o.v[2] - o.v[0])), x, y)) return true;
  }
  return false;
}

TEST(OccluderBodies, ABuildingIsABodyCappedAtItsFootAndNeitherTheGroundNorAnLShapeIs) {
  std::vector<std::vector<Vec3>> polygons = BuildingOnGround();
  const size_t buildingFirst = 1, cubeFirst = polygons.size();
  const std::vector<std::vector<Vec3>> cube = BoxFaces({10, 10, 2}, {12, 12, 4}, true);  // closed, floating
  polygons.insert(polygons.end(), cube.begin(), cube.end());
  // An L-shaped building: six walls over the footprint (14,0) (18,0) (18,2) (16,2) (16,4) (14,4), two roof quads.
  const size_t lFirst = polygons.size();
  const std::vector<Vec3> foot = {{14, 0, 0}, {18, 0, 0}, {18, 2, 0}, {16, 2, 0}, {16, 4, 0}, {14, 4, 0}};
  for (size_t k = 0; k < foot.size(); ++k) {
    const Vec3 a = foot[k], b = foot[(k + 1) % foot.size()];
    polygons.push_back({a, b, b + Vec3{0, 0, 3}, a + Vec3{0, 0, 3}});  // counter-clockwise foot: fronts outward
  }
  polygons.push_back(RectZ(14, 18, 0, 2, 3, true));
  polygons.push_back(RectZ(14, 16, 2, 4, 3, true));
  const Scene scene = SceneOf(polygons);
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, 0);
  const OccluderBodies &b = g.bodies;
  auto bodyOfFace = [&](size_t face) { return b.bodyOf[size_t(g.occludersOfFace[face][0])]; };

  EXPECT_EQ(bodyOfFace(0), -1) << "the ground";
  const int32_t building = bodyOfFace(buildingFirst);
  ASSERT_GE(building, 0);
  for (size_t f = buildingFirst; f < buildingFirst + 5; ++f) EXPECT_EQ(bodyOfFace(f), building) << "face " << f;
  const OccluderBody &body = b.bodies[size_t(building)];
  EXPECT_EQ(body.normal.size(), 5u);
  ASSERT_TRUE(body.capped);
  EXPECT_NEAR(body.capNormal.z, -1, 1e-12);
  EXPECT_NEAR(body.capOffset, 0, 1e-12);

  const int32_t closed = bodyOfFace(cubeFirst);
  ASSERT_GE(closed, 0);
  EXPECT_NE(closed, building);
  EXPECT_FALSE(b.bodies[size_t(closed)].capped);
  EXPECT_EQ(b.bodies[size_t(closed)].normal.size(), 6u);

  for (size_t f = lFirst; f < polygons.size(); ++f) EXPECT_EQ(bodyOfFace(f), -1) << "L-shaped building, face " << f;
}

TEST(OccluderBodies, EveryDrawnSegmentOfAProvedPairCrossesTheBuilding) {
  // Random quads about the building, some lying on the street: wherever the body's proof says hidden, thousands
  // of segments between random points of the two all cross a wall or the roof; the proof does not depend on
  // which quad comes first; and both answers occur.
  const std::vector<std::vector<Vec3>> polygons = BuildingOnGround();
  const Scene scene = SceneOf(polygons);
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, 0);
  const OccluderBody &body = g.bodies.bodies.at(size_t(g.bodies.bodyOf[size_t(g.occludersOfFace[1][0])]));
  const std::vector<std::vector<Vec3>> building(polygons.begin() + 1, polygons.end());
  std::mt19937_64 rng(20261203);
  std::uniform_real_distribution<double> u(-1, 1), along(-6, 10), up(0.3, 9);
  int proved = 0, refused = 0;
  for (int trial = 0; trial < 600; ++trial) {
    auto quad = [&] {
      const bool street = u(rng) > 0.4;  // flat on the ground, where the buildings stand
      const Vec3 centre{along(rng), along(rng), street ? 0.0 : up(rng)};
      std::vector<Vec3> q = RandomQuad(centre, street ? Vec3{0, 0, 1} : Vec3{u(rng), u(rng), u(rng)}, 1.0, rng);
      if (street)
        for (Vec3 &c : q) c.z = 0;
      return PolygonOf(q);
    };
    const ConvexPolygon a = quad(), c = quad();
    const bool hidden = BodyHidesEverySegment(body, a.v, a.n, c.v, c.n);
    EXPECT_EQ(BodyHidesEverySegment(body, c.v, c.n, a.v, a.n), hidden) << "trial " << trial;
    if (!hidden) {
      ++refused;
      continue;
    }
    ++proved;
    bool allCross = true;
    for (int s = 0; s < 2000 && allCross; ++s) allCross = CrossesAny(building, PointIn(a, rng), PointIn(c, rng));
    EXPECT_TRUE(allCross) << "trial " << trial;
  }
  EXPECT_GT(proved, 20);
  EXPECT_GT(refused, 20);
}

TEST(OccluderBodies, TheBuildingHidesWhatNoOneOfItsWallsHides) {
  // Two facades facing each other across the building's diagonal: segments on one side of the diagonal pass
  // through the walls x = 0 and y = 4, those on the other through y = 0 and x = 4, so no one polygon hides
  // them all, and the body does. Moved aside, the far facade is seen past the building's corner.
  const std::vector<std::vector<Vec3>> polygons = BuildingOnGround();
  const Scene scene = SceneOf(polygons);
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, 0);
  const OccluderBody &body = g.bodies.bodies.at(size_t(g.bodies.bodyOf[size_t(g.occludersOfFace[1][0])]));
  auto facade = [](Vec3 centre, Vec3 along, double z0, double z1) {  // vertical, 1 wide
    const Vec3 h = Normalize(along) * 0.5;
    return PolygonOf({Vec3{centre.x, centre.y, z0} - h, Vec3{centre.x, centre.y, z0} + h,
                      Vec3{centre.x, centre.y, z1} + h, Vec3{centre.x, centre.y, z1} - h});
  };
  const Vec3 across{1, -1, 0};
  const ConvexPolygon near = facade({-2, -2, 0}, across, 1, 2), far = facade({6, 6, 0}, across, 1, 2);
  for (const Occluder &o : g.occluders)
    EXPECT_FALSE(HidesEverySegment(o.polygon, o.normal, near, far)) << "face " << o.face;
  EXPECT_TRUE(BodyHidesEverySegment(body, near.v, near.n, far.v, far.n));
  const ConvexPolygon aside = facade({2, 12, 0}, Vec3{1, 0, 0}, 1, 2);
  EXPECT_FALSE(BodyHidesEverySegment(body, near.v, near.n, aside.v, aside.n));
  std::mt19937_64 rng(7);
  const std::vector<std::vector<Vec3>> building(polygons.begin() + 1, polygons.end());
  for (int s = 0; s < 2000; ++s) ASSERT_TRUE(CrossesAny(building, PointIn(near, rng), PointIn(far, rng)));
  bool anyPasses = false;
  for (int s = 0; s < 2000 && !anyPasses; ++s) anyPasses = !CrossesAny(building, PointIn(near, rng), PointIn(aside, rng));
  EXPECT_TRUE(anyPasses);
}

TEST(HiddenNodes, AProvedLinkIsWhatItsRaysSayWithFewerRays) {
  // Every ground patch's link to every tree node of a street with two buildings, traced as an element's verdict
  // (every ray must agree): with the prover, the links it proves come out hidden whole after one packet, which
  // is what all their rays say without it; every other link is the same to the bit, ray for ray.
  std::vector<std::vector<Vec3>> polygons = BuildingOnGround();
  const std::vector<std::vector<Vec3>> tall = BoxFaces({8, -2, 0}, {10, 6, 8}, true);
  polygons.insert(polygons.end(), tall.begin() + 1, tall.end());
  const Scene scene = SceneOf(polygons);
  Meshing meshing;
  meshing.maxPatchSize = 1.5;
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, meshing);
  const PatchTree tree = BuildPatchTree(g.patches);
  const EmbreeScene embree(scene);
  const EmbreeShadowRays occluded{embree};
  long long proved = 0, links = 0, savedRays = 0;
  for (int32_t i = 0; i < int32_t(g.patches.size()); i += 3) {
    const Patch &p = g.patches[size_t(i)];
    if (p.face != 0) continue;  // the ground's patches
    HiddenNodeProof prover(g, embree);
    prover.SetReceivers(p.corners, p.cornerCount);
    long long provedHere = 0;
    for (const PatchTreeNode &node : tree.nodes) {
      if (node.count > kMostNodeVisibilitySamples) continue;
      uint32_t withoutRays = 0, withRays = 0;
      const VisibleShareResult without = VisibleShare(g.patches, &i, 1, tree, node, 1, occluded, withoutRays, 400, true);
      const VisibleShareResult with =
          VisibleShare(g.patches, &i, 1, tree, node, 1, occluded, withRays, 400, true, nullptr, &prover);
      ++links;
      if (with.proved) {
        ++proved, ++provedHere;
        EXPECT_TRUE(without.unanimous);
        EXPECT_EQ(without.share, 0.0);
        EXPECT_EQ(with.share, 0.0);
        EXPECT_LE(withRays, uint32_t(EmbreeScene::kSegmentPacket));
        EXPECT_LT(withRays, withoutRays);
        savedRays += withoutRays - withRays;
      } else {
        EXPECT_EQ(with.share, without.share);
        EXPECT_EQ(with.unanimous, without.unanimous);
        EXPECT_EQ(withRays, withoutRays);
      }
    }
    EXPECT_EQ(prover.proved, provedHere);  // counted once per proof
  }
  std::printf("links %lld, proved hidden %lld, rays saved %lld\n", links, proved, savedRays);
  EXPECT_GT(proved, 10);
}

}  // namespace
}  // namespace rad
