// Polygons as published (RepairPolygons through LoadScene): non-planar and concave polygons triangulated,
// zero-area ones skipped, duplicated faces dropped, each counted with its line; and what that does to F, checked
// against answers computed here (closed-box row sums, exact rectangle factors), never against earlier output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "formfactor/cpu_form_factors.h"
#include "formfactor/embree_scene.h"
#include "formfactor/geometry.h"
#include "formfactor/interpenetration.h"
#include "scene/patch.h"
#include "scene/polygon_repair.h"
#include "scene/scene.h"
#include "tests/exact_rectangles.h"
#include "tests/temp_file.h"
#include "tests/test_scenes.h"
#include "util/error.h"
#include "util/timers.h"

namespace rad {
namespace {

// Writes `text` as an OBJ of its own (no materials) and loads it.
Scene LoadText(const std::string &text, bool strict = false) {
  test::TempFile file(".obj");
  std::ofstream(file.path) << text;
  return LoadScene(file.path, SceneLoadOptions{strict});
}

std::string StrictError(const std::string &text) {
  try {
    LoadText(text, true);
  } catch (const InputError &e) {
    return e.what();
  }
  ADD_FAILURE() << "--strict accepted:\n" << text;
  return {};
}

std::vector<double> AllRows(const Scene &s, const FormFactorGeometry &g) {
  EmbreeScene embree(s);
  std::vector<long long> rows;
  for (long long i = 0; i < (long long)g.patches.size(); ++i) rows.push_back(i);
  std::vector<double> F;
  PhaseTimers timers;
  FormFactorCounters counters;
  ComputeRowsCpu(g, embree, rows, FormFactorOptions{}, F, timers, counters, false);
  return F;
}

// Every row of a closed scene sums to 1: the test that a mended surface neither leaks nor counts twice.
void ExpectClosedRows(const Scene &s, double tolerance) {
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
  const std::vector<double> F = AllRows(s, g);
  const size_t n = g.patches.size();
  for (size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (size_t j = 0; j < n; ++j) sum += F[i * n + j];
    EXPECT_NEAR(sum, 1, tolerance) << "row " << i << " (face " << g.patches[i].face << ")";
  }
}

// The unit cube's 8 corners (v 1-8) and its 6 inward-facing walls, with the floor's corner (1,1,0) raised by
// `lift`: the walls x = 1 and y = 1 stay planar (their corners keep x = 1 or y = 1), the floor does not.
std::string CubeWithLiftedFloorCorner(double lift, const std::string &floor = "f 1 2 3 4\n") {
  return "v 0 0 0\nv 1 0 0\nv 1 1 " + std::to_string(lift) +
         "\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n" + floor +
         "f 5 8 7 6\n"   // top, facing down
         "f 1 4 8 5\n"   // x = 0
         "f 2 6 7 3\n"   // x = 1
         "f 1 5 6 2\n"   // y = 0
         "f 4 3 7 8\n";  // y = 1
}

TEST(PolygonRepair, NonPlanarQuadIsTriangulatedAndTheBoxStaysClosed) {
  // 0.3 % of the floor's size off its plane: refused before, now two triangles along the better diagonal.
  const Scene s = LoadText(CubeWithLiftedFloorCorner(0.003));
  ASSERT_EQ(s.faces.size(), 7u);
  EXPECT_EQ(s.polygonCount, 6);
  EXPECT_EQ(s.repairs.nonPlanar.count, 1);
  ASSERT_EQ(s.repairs.nonPlanar.first.size(), 1u);
  EXPECT_EQ(s.repairs.nonPlanar.first[0], 9);  // the `f` line
  EXPECT_EQ(s.faces[0].polygon, 0);
  EXPECT_EQ(s.faces[1].polygon, 0);
  EXPECT_EQ(s.faces[2].polygon, 1);
  EXPECT_EQ(s.faces[0].line, 9);
  // Both triangles are made of the quad's own corners and share one of its diagonals.
  ASSERT_EQ(s.faces[0].corners.size(), 3u);
  ASSERT_EQ(s.faces[1].corners.size(), 3u);
  int shared = 0;
  for (Vec3 a : s.faces[0].corners)
    for (Vec3 b : s.faces[1].corners) shared += a.x == b.x && a.y == b.y && a.z == b.z;
  EXPECT_EQ(shared, 2);
  ASSERT_FALSE(s.warnings.empty());
  EXPECT_NE(s.warnings.back().find("1 non-planar polygon triangulated (line 9)"), std::string::npos) << s.warnings.back();
  ExpectClosedRows(s, 1e-6);
  EXPECT_NE(StrictError(CubeWithLiftedFloorCorner(0.003)).find(":9: non-planar polygon"), std::string::npos);
}

TEST(PolygonRepair, ConcaveLShapedFloorIsTriangulatedAndSeesTheLightExactly) {
  // An L: [0,2]x[0,1] and [0,1]x[1,2] in one hexagon at z = 0, under a unit light [0,1]^2 at z = 1 facing down.
  const std::string obj =
      "v 0 0 1\nv 0 1 1\nv 1 1 1\nv 1 0 1\n"
      "v 0 0 0\nv 2 0 0\nv 2 1 0\nv 1 1 0\nv 1 2 0\nv 0 2 0\n"
      "f 1 2 3 4\n"
      "f 5 6 7 8 9 10\n";
  const Scene s = LoadText(obj);
  EXPECT_EQ(s.repairs.concave.count, 1);
  ASSERT_EQ(s.faces.size(), 5u);  // the light, and the hexagon as 4 triangles
  double area = 0;
  for (size_t f = 1; f < s.faces.size(); ++f) {
    EXPECT_EQ(s.faces[f].polygon, 1);
    EXPECT_EQ(s.faces[f].corners.size(), 3u);
    const Vec3 n = NewellNormal(s.faces[f].corners.data(), 3);
    EXPECT_GT(n.z, 0) << "piece " << f << " keeps the hexagon's winding";
    area += 0.5 * Length(n);
  }
  EXPECT_NEAR(area, 3, 1e-14);
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
  const std::vector<double> F = AllRows(s, g);
  const size_t n = g.patches.size();
  double toL = 0;
  for (size_t j = 1; j < n; ++j) toL += F[j];
  const double exact = test::ParallelRectFF(0, 1, 0, 1, 1, 0, 2, 0, 1, 0) + test::ParallelRectFF(0, 1, 0, 1, 1, 0, 1, 1, 2, 0);
  EXPECT_NEAR(toL / exact - 1, 0, 1e-6) << toL << " vs " << exact;
  EXPECT_NE(StrictError(obj).find(":12: non-convex polygon"), std::string::npos);
}

TEST(PolygonRepair, TriangulationKeepsEveryPieceInsideTheOutline) {
  // A comb: ear clipping must not take an ear across a notch. Its pieces' areas add up to the comb's.
  const std::vector<Vec3> comb = {{0, 0, 0}, {5, 0, 0}, {5, 2, 0}, {4, 2, 0}, {4, 1, 0}, {3, 1, 0},
                                  {3, 2, 0}, {2, 2, 0}, {2, 1, 0}, {1, 1, 0}, {1, 2, 0}, {0, 2, 0}};
  std::vector<std::vector<Vec3>> pieces;
  ASSERT_TRUE(TriangulatePolygon(comb, Vec3(0, 0, 1), &pieces));
  EXPECT_EQ(pieces.size(), comb.size() - 2);
  double area = 0;
  for (const auto &t : pieces) {
    const Vec3 n = Cross(t[1] - t[0], t[2] - t[0]);
    EXPECT_GT(n.z, 0);
    area += 0.5 * n.z;
    // The centroid of every piece lies in the comb: below y = 1, or in one of its three teeth.
    const Vec3 c = (t[0] + t[1] + t[2]) / 3.0;
    const bool inTooth = (c.x < 1 || (c.x > 2 && c.x < 3) || c.x > 4);
    EXPECT_TRUE(c.y < 1 || inTooth) << c.x << " " << c.y;
  }
  EXPECT_NEAR(area, 8, 1e-14);  // the 5 x 1 base and three 1 x 1 teeth
  // A non-planar rhombus is split along its shorter diagonal (corners 1 and 3), which gives the fatter triangles.
  std::vector<std::vector<Vec3>> halves;
  const std::vector<Vec3> rhombus = {{0, 0, 0}, {2, 0, 0}, {3, 1, 0.01}, {1, 1, 0}};
  ASSERT_TRUE(TriangulatePolygon(rhombus, NewellNormal(rhombus.data(), 4), &halves));
  ASSERT_EQ(halves.size(), 2u);
  for (const auto &t : halves) {
    int ends = 0;
    for (Vec3 c : t) ends += (c.x == 2 && c.y == 0) || (c.x == 1 && c.y == 1);
    EXPECT_EQ(ends, 2);
  }
  // A bow tie seen along its normal is not simple: refused.
  std::vector<std::vector<Vec3>> none;
  EXPECT_FALSE(TriangulatePolygon({{0, 0, 0}, {1, 1, 0}, {1, 0, 0}, {0, 1, 0}}, Vec3(0, 0, 1), &none));
}

TEST(PolygonRepair, ZeroAreaAndDegeneratePolygonsAreSkippedWithTheirLines) {
  const std::string obj =
      "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 2 0 0\n"
      "f 1 2 3 4\n"   // line 6: kept
      "f 1 2 5\n"     // line 7: three collinear corners, zero area
      "f 1 2 2 3\n"   // line 8: a repeated corner, dropped: a triangle remains
      "f 1 5 2 4\n";  // line 9: it runs out to (2,0,0) and back along the same line: the spike is dropped
  const Scene s = LoadText(obj);
  EXPECT_EQ(s.repairs.zeroArea.count, 1);
  EXPECT_EQ(s.repairs.zeroArea.first, std::vector<int>{7});
  EXPECT_EQ(s.repairs.cornersDropped.count, 2);
  EXPECT_EQ(s.repairs.cornersDropped.first, (std::vector<int>{8, 9}));
  ASSERT_EQ(s.faces.size(), 3u);
  EXPECT_EQ(s.faces[1].corners.size(), 3u);
  EXPECT_EQ(s.faces[1].polygon, 2);
  EXPECT_EQ(s.faces[2].polygon, 3);
  EXPECT_NE(StrictError(obj).find(":7: zero-area polygon"), std::string::npos);
  // A scene of nothing but zero-area polygons is an error, not an empty result.
  try {
    LoadText("v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n");
    ADD_FAILURE() << "accepted a scene with no usable face";
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("no usable faces"), std::string::npos) << e.what();
  }
}

TEST(PolygonRepair, DuplicatedFaceIsDroppedAndTheBoxClosesAgain) {
  // The floor written twice, the second time starting at another corner: before, its rows summed to 2 there.
  const std::string obj = CubeWithLiftedFloorCorner(0, "f 1 2 3 4\nf 3 4 1 2\n");
  const Scene s = LoadText(obj);
  EXPECT_EQ(s.repairs.duplicates.count, 1);
  EXPECT_EQ(s.repairs.duplicates.first, std::vector<int>{10});
  ASSERT_EQ(s.faces.size(), 6u);
  EXPECT_EQ(s.faces[1].polygon, 2);  // numbers keep counting the input polygons
  ExpectClosedRows(s, 1e-6);
  EXPECT_NE(StrictError(obj).find(":10: duplicated face: the same polygon as line 9"), std::string::npos);
  // The same corners in the opposite winding are a plate's other side, not a duplicate.
  const Scene plate = LoadText("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\nf 4 3 2 1\n");
  EXPECT_EQ(plate.faces.size(), 2u);
  EXPECT_EQ(plate.repairs.duplicates.count, 0);
}

TEST(PolygonRepair, PlanarConvexPolygonsAreKeptAsWritten) {
  const Scene s = test::UnitCube();
  Scene copy = s;
  const PolygonRepairs r = RepairPolygons(&copy, false);
  EXPECT_EQ(r.nonPlanar.count + r.concave.count + r.zeroArea.count + r.degenerate.count + r.duplicates.count +
                r.cornersDropped.count,
            0);
  ASSERT_EQ(copy.faces.size(), s.faces.size());
  for (size_t f = 0; f < s.faces.size(); ++f) {
    ASSERT_EQ(copy.faces[f].corners.size(), s.faces[f].corners.size());
    for (size_t k = 0; k < s.faces[f].corners.size(); ++k) {
      EXPECT_EQ(copy.faces[f].corners[k].x, s.faces[f].corners[k].x);
      EXPECT_EQ(copy.faces[f].corners[k].y, s.faces[f].corners[k].y);
      EXPECT_EQ(copy.faces[f].corners[k].z, s.faces[f].corners[k].z);
    }
  }
}

TEST(PolygonRepair, OverlappingCoplanarFacesAreFoundButNotTouchingOrBackToBackOnes) {
  const auto a = test::RectZ(0, 1, 0, 1, 0, true);
  EXPECT_TRUE(CoplanarOverlap(a, test::RectZ(0.5, 1.5, 0.2, 0.8, 0, true)));
  EXPECT_TRUE(CoplanarOverlap(a, {{0.2, 0.2, 0}, {0.4, 0.2, 0}, {0.3, 0.4, 0}}));  // a triangle inside
  EXPECT_FALSE(CoplanarOverlap(a, test::RectZ(1, 2, 0, 1, 0, true)));   // touching along an edge
  EXPECT_FALSE(CoplanarOverlap(a, test::RectZ(0, 1, 0, 1, 0, false)));  // back to back: a plate's two sides
  EXPECT_FALSE(CoplanarOverlap(a, test::RectZ(0, 1, 0, 1, 1e-3, true)));  // parallel, apart
  // In a scene: the closed unit cube with half of its floor written again over the floor.
  Scene s = test::UnitCube();
  s.faces.push_back(test::SceneOf({test::RectZ(0, 0.5, 0, 1, 0, true)}).faces[0]);
  const Interpenetrations x = FindInterpenetrations(s);
  EXPECT_EQ(x.overlapPairCount, 1);
  ASSERT_EQ(x.firstOverlaps.size(), 1u);
  EXPECT_EQ(x.firstOverlaps[0], std::make_pair(0, 6));
  EXPECT_EQ(x.pairCount, 0);
  EXPECT_EQ(FindInterpenetrations(test::UnitCube()).overlapPairCount, 0);
}

// ---- Surface roles ------------------------------------------------------------------------------------------

// Unit squares: A at z = 0 facing up, B at z = 1 facing down, and a unit plate at z = 0.5 between them of the
// material `plate` (materials[1]).
Scene PlateBetweenSquares(Material plate) {
  Scene s = test::SceneOf({test::RectZ(0, 1, 0, 1, 0, true), test::RectZ(0, 1, 0, 1, 1, false),
                           test::RectZ(0, 1, 0, 1, 0.5, true)});
  s.materials.push_back(plate);
  s.faces[2].material = 1;
  for (size_t f = 0; f < s.faces.size(); ++f) s.faces[f].polygon = int(f);
  return s;
}

TEST(SurfaceRoles, TwoSidedPlateRadiatesFromBothSidesAsHowellSays) {
  Material plate;
  plate.twoSided = true;
  Scene s = PlateBetweenSquares(plate);
  EXPECT_EQ(AddSurfaceRoles(&s), 1);
  ASSERT_EQ(s.faces.size(), 4u);
  EXPECT_EQ(s.faces[3].polygon, 2);  // the back side keeps the plate's number
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
  ASSERT_EQ(g.patches.size(), 4u);
  EXPECT_GT(g.patches[2].normal.z, 0);
  EXPECT_LT(g.patches[3].normal.z, 0);
  const std::vector<double> F = AllRows(s, g);
  const double half = test::ParallelRectFF(0, 1, 0, 1, 0, 0, 1, 0, 1, 0.5);  // Howell C-11 at distance 0.5
  auto f = [&](int i, int j) { return F[size_t(i) * 4 + size_t(j)]; };
  EXPECT_NEAR(f(0, 3), half, 1e-6 * half);  // A sees the plate's lower side (its back side, facing down)
  EXPECT_NEAR(f(1, 2), half, 1e-6 * half);  // B sees its upper side
  EXPECT_NEAR(f(2, 1), half, 1e-6 * half);
  EXPECT_NEAR(f(3, 0), half, 1e-6 * half);
  EXPECT_EQ(f(0, 1), 0);  // the plate blocks A from B entirely
  EXPECT_EQ(f(0, 2), 0);  // and A never sees its upper side
  EXPECT_EQ(f(2, 3), 0);  // nor does one side see the other
}

TEST(SurfaceRoles, TwoSidedPlateInAClosedBoxClosesEveryRow) {
  Material plate;
  plate.twoSided = true;
  Scene s = test::UnitCube();
  s.materials.push_back(plate);
  s.faces.push_back(test::SceneOf({test::RectZ(0.25, 0.75, 0.3, 0.7, 0.4, true)}).faces[0]);
  s.faces.back().material = 1;
  AddSurfaceRoles(&s);
  ASSERT_EQ(s.faces.size(), 8u);
  ExpectClosedRows(s, 1e-6);
}

TEST(SurfaceRoles, ObstructionBlocksLikeTheSameSquareButHasNoRowOrColumn) {
  // The corner obstruction of tests/occluded_test.cpp: a 0.5 x 0.5 square over one corner, halfway between.
  auto scene = [](bool obstruction) {
    Scene s = test::SceneOf({test::RectZ(0, 1, 0, 1, 0, true), test::RectZ(0, 1, 0, 1, 1, false),
                             test::RectZ(0, 0.5, 0, 0.5, 0.5, true)});
    Material m;
    m.obstruction = obstruction;
    m.reflectance = Vec3(0.3, 0.3, 0.3);
    s.materials.push_back(m);
    s.faces[2].material = 1;
    AddSurfaceRoles(&s);
    return s;
  };
  const Scene blocked = scene(true), plain = scene(false);
  EXPECT_EQ(blocked.materials[1].reflectance.x, 0);  // black: what reaches it is absorbed, as F says
  const FormFactorGeometry gb = BuildFormFactorGeometry(blocked, 0), gp = BuildFormFactorGeometry(plain, 0);
  ASSERT_EQ(gb.patches.size(), 2u);
  ASSERT_EQ(gp.patches.size(), 3u);
  const std::vector<double> Fb = AllRows(blocked, gb), Fp = AllRows(plain, gp);
  EXPECT_EQ(Fb[0 * 2 + 1], Fp[0 * 3 + 1]);  // the same bits as the square in the scene
  EXPECT_EQ(Fb[1 * 2 + 0], Fp[1 * 3 + 0]);
  EXPECT_NEAR(Fb[1] / 0.1498686718 - 1, 0, 1e-6);  // the published exact value
  Scene onlyBlocker = test::SceneOf({test::RectZ(0, 1, 0, 1, 0, true)});
  onlyBlocker.materials[0].obstruction = true;
  EXPECT_THROW(ResolveMeshing(onlyBlocker, Meshing(0)), InputError);
}

TEST(SurfaceRoles, MaterialsFileGivesRolesToObjAndStlMaterials) {
  // An OBJ whose MTL material `plate` the materials file makes two-sided, and an STL square that it makes an
  // obstruction by its file's name.
  test::TempFile mtl(".mtl"), obj(".obj"), stl("_blocker.stl"), json(".json");
  std::ofstream(mtl.path) << "newmtl plate\nKd 0.3 0.4 0.5\n";
  std::ofstream(obj.path) << "mtllib " << std::filesystem::path(mtl.path).filename().string()
                          << "\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nusemtl plate\nf 1 2 3 4\n";
  std::ofstream(stl.path) << "solid s\nfacet normal 0 0 1\nouter loop\nvertex 0 0 1\nvertex 1 0 1\nvertex 0 1 1\n"
                             "endloop\nendfacet\nendsolid s\n";
  const std::string stlName = std::filesystem::path(stl.path).filename().string();
  std::ofstream(json.path) << "{\"plate\": {\"two_sided\": true}, \"" << stlName << "\": {\"obstruction\": true}}";
  const Scene s = LoadScene(std::vector<std::string>{obj.path, stl.path}, SceneLoadOptions{false, json.path});
  ASSERT_EQ(s.faces.size(), 3u);  // the plate, its back side, the blocker
  EXPECT_EQ(s.faces[1].polygon, 0);
  EXPECT_EQ(s.faces[2].polygon, 1);
  EXPECT_GT(NewellNormal(s.faces[0].corners.data(), 4).z, 0);  // the back side faces the other way
  EXPECT_LT(NewellNormal(s.faces[1].corners.data(), 4).z, 0);
  const Material &plate = s.materials[size_t(s.faces[0].material)];
  EXPECT_TRUE(plate.twoSided);
  EXPECT_EQ(plate.reflectance.y, 0.4);  // the MTL's values stay
  EXPECT_TRUE(s.materials[size_t(s.faces[2].material)].obstruction);
  EXPECT_EQ(CountPatches(s, Meshing(0)), 2);  // the blocker makes none
  std::ofstream(json.path) << "{\"plate\": {\"two_sided\": 1}}";
  EXPECT_THROW(LoadScene(std::vector<std::string>{obj.path}, SceneLoadOptions{false, json.path}), InputError);
}

// ---- Meshing by size -------------------------------------------------------------------------------------

double LongestPatchEdge(const Patch &p) {
  double longest = 0;
  for (int k = 0; k < p.cornerCount; ++k) longest = std::max(longest, Length(p.corners[(k + 1) % p.cornerCount] - p.corners[k]));
  return longest;
}

// A room of mixed scales: a 4 x 4 floor, a 10 x 0.1 strip, a 1 x 1 wall, and a "teapot" of 1500 triangles
// with edges of 0.05 (a fan of small right triangles over a 1.5 x 0.05 x ... band).
Scene MixedScales() {
  std::vector<std::vector<Vec3>> polygons = {test::RectZ(0, 4, 0, 4, 0, true), test::RectZ(0, 10, 5, 5.1, 0, true),
                                             test::RectXPlus(0, 0, 1, 0, 1)};
  for (int k = 0; k < 750; ++k) {
    const double x = 0.05 * (k % 30), y = 6 + 0.05 * (k / 30);
    polygons.push_back({{x, y, 1}, {x + 0.05, y, 1}, {x, y + 0.05, 1}});
    polygons.push_back({{x + 0.05, y, 1}, {x + 0.05, y + 0.05, 1}, {x, y + 0.05, 1}});
  }
  return test::SceneOf(polygons);
}

TEST(Meshing, PatchesAskedForGiveAboutThatManyOfOneSize) {
  const Scene s = MixedScales();
  Meshing asked;
  asked.patches = 3000;
  const Meshing m = ResolveMeshing(s, asked);
  ASSERT_GT(m.maxPatchSize, 0);
  const std::vector<Patch> patches = MakePatches(s, m);
  EXPECT_EQ((long long)patches.size(), CountPatches(s, m));
  EXPECT_GE(patches.size(), 2000u);
  EXPECT_LE(patches.size(), 4500u);
  EXPECT_LE((long long)patches.size(), 3000);
  // Counted here by hand: the finest size within 3000 is L = 1/9 (a hair finer and the floor alone takes
  // 37^2): floor 36^2 + strip 90 x 1 + wall 9^2 + 1500 whole triangles (edges under L).
  EXPECT_EQ(patches.size(), 1296u + 90u + 81u + 1500u);
  // No patch edge is over the size; every polygon the size split has patches within 2x of it, so the largest
  // patch edge is within 2x of the smallest patch of a split polygon.
  double largest = 0, smallestSplit = 1e300;
  std::vector<int> perFace(s.faces.size(), 0);
  for (const Patch &p : patches) ++perFace[size_t(p.face)];
  for (const Patch &p : patches) {
    const double edge = LongestPatchEdge(p);
    EXPECT_LE(edge, m.maxPatchSize * (1 + 1e-12));
    largest = std::max(largest, edge);
    if (perFace[size_t(p.face)] > 1) smallestSplit = std::min(smallestSplit, edge);
  }
  EXPECT_LE(largest, 2 * smallestSplit) << largest << " " << smallestSplit;
  // The strip is split along its length only: its patches are no longer than twice their width.
  for (const Patch &p : patches)
    if (p.face == 1) EXPECT_LE(Length(p.corners[1] - p.corners[0]), 2 * Length(p.corners[3] - p.corners[0]) + 1e-12);
  // The total area is kept.
  double area = 0;
  for (const Patch &p : patches) area += p.area;
  EXPECT_NEAR(area, 16 + 1 + 1 + 1500 * 0.00125, 1e-9);
  // Fewer patches than polygons cannot be asked for.
  asked.patches = 100;
  EXPECT_THROW(ResolveMeshing(s, asked), InputError);
}

TEST(Meshing, SizeLimitSplitsEachPolygonByItsOwnExtent) {
  Meshing m;
  m.maxPatchSize = 0.25;
  const Scene s = test::SceneOf({test::RectZ(0, 1, 0, 0.5, 0, true), {{0, 0, 1}, {0.6, 0, 1}, {0, 0.6, 1}}});
  const std::vector<Patch> patches = MakePatches(s, m);
  // The 1 x 0.5 rectangle: 4 x 2 squares of 0.25; the triangle (longest edge 0.6 sqrt 2 = 0.85): 4^2 triangles.
  ASSERT_EQ(patches.size(), 8u + 16u);
  for (int k = 0; k < 8; ++k) EXPECT_NEAR(patches[size_t(k)].area, 0.0625, 1e-15);
  // With subdiv the split is 4^K whatever the size, as before.
  EXPECT_EQ(CountPatches(s, Meshing(2)), 32);
}

}  // namespace
}  // namespace rad
