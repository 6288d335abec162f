// Lightmap texels as patches (scene/texel_charts.h): the texels of a polygon tile it exactly, none reaches outside
// it or outside its own texel, and the charts are what a lightmap needs (one plane, a grid that fits).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include "scene/patch.h"
#include "scene/texel_charts.h"
#include "tests/temp_file.h"
#include "tests/test_scenes.h"
#include "util/error.h"

namespace rad {
namespace {

// Each polygon its own input polygon (test::SceneOf numbers them all 0).
Scene PolygonsOf(const std::vector<std::vector<Vec3>> &polygons) {
  Scene s = test::SceneOf(polygons);
  for (size_t f = 0; f < s.faces.size(); ++f) s.faces[f].polygon = int(f);
  return s;
}

Scene LoadObj(const std::string &text) {
  test::TempFile file(".obj");
  std::ofstream(file.path) << text;
  return LoadScene(file.path, SceneLoadOptions{});
}

// Rotates p about the axis (1, 2, 3) by 0.7 rad and moves it: no chart is aligned with the scene's axes.
Vec3 Tilted(Vec3 p) {
  const Vec3 k = Normalize(Vec3{1, 2, 3});
  const double c = std::cos(0.7), s = std::sin(0.7);
  return p * c + Cross(k, p) * s + k * (Dot(k, p) * (1 - c)) + Vec3{0.3, -1.1, 2.0};
}

std::vector<Vec3> TiltedAll(std::vector<Vec3> corners) {
  for (Vec3 &c : corners) c = Tilted(c);
  return corners;
}

double PolygonArea(const std::vector<Vec3> &corners) {
  return 0.5 * Length(NewellNormal(corners.data(), int(corners.size())));
}

// The exact-tiling checks for every polygon of `scene` at texel size `size`.
void ExpectTexelsTile(const Scene &scene, double size) {
  const std::vector<TexelChart> charts = MakeTexelCharts(scene, size);
  std::vector<Patch> patches;
  std::vector<TexelOf> texels;
  MakeTexelPatches(scene, charts, &patches, &texels);
  ASSERT_EQ(patches.size(), texels.size());
  EXPECT_EQ((long long)patches.size(), CountTexelPatches(scene, charts));
  EXPECT_LE(TexelPatchFloor(scene, charts), double(patches.size()));
  std::map<int, double> areaOfPolygon;
  for (const Face &f : scene.faces) areaOfPolygon[f.polygon] += PolygonArea(f.corners);
  std::map<int, double> tiled;
  for (size_t k = 0; k < patches.size(); ++k) {
    const Patch &p = patches[k];
    const TexelChart &chart = charts[size_t(texels[k].chart)];
    const Face &face = scene.faces[size_t(p.face)];
    tiled[p.polygon] += p.area;
    ASSERT_TRUE(p.cornerCount == 3 || p.cornerCount == 4);
    EXPECT_GT(p.area, 0);
    EXPECT_GT(Dot(NewellNormal(p.corners, p.cornerCount), p.normal), 0);  // wound as its face
    const double scale = std::max(chart.du, chart.dv);
    for (int c = 0; c < p.cornerCount; ++c) {
      const Vec3 x = p.corners[c];
      // In its face: on its plane, and inside each edge (the face is convex, counter-clockwise about its normal).
      EXPECT_NEAR(Dot(x - face.corners[0], p.normal), 0, 1e-12 * scale);
      for (size_t e = 0; e < face.corners.size(); ++e) {
        const Vec3 a = face.corners[e], b = face.corners[(e + 1) % face.corners.size()];
        EXPECT_GE(Dot(Cross(b - a, x - a), p.normal), -1e-12 * scale * Length(b - a));
      }
      // In its own texel (the grid's outer texels reach past it only where the polygon does not).
      const double u = Dot(x - chart.origin, chart.axisU) / chart.du, v = Dot(x - chart.origin, chart.axisV) / chart.dv;
      EXPECT_GE(u, texels[k].x - 1e-9);
      EXPECT_LE(u, texels[k].x + 1 + 1e-9);
      EXPECT_GE(v, texels[k].y - 1e-9);
      EXPECT_LE(v, texels[k].y + 1 + 1e-9);
    }
  }
  for (const auto &[polygon, area] : areaOfPolygon) EXPECT_NEAR(tiled[polygon] / area, 1.0, 1e-12) << polygon;
}

TEST(TexelCharts, TexelsOfTiltedPolygonsTileThemExactly) {
  const Scene s = PolygonsOf({TiltedAll({{0, 0, 0}, {1, 0, 0}, {1, 0.7, 0}, {0, 0.7, 0}}),
                              TiltedAll({{2, 0, 0}, {3.3, 0.2, 0}, {2.4, 1.9, 0}}),
                              TiltedAll({{0, 2, 0}, {1, 2, 0}, {1.5, 2.6, 0}, {0.8, 3.4, 0}, {-0.2, 2.9, 0}, {-0.4, 2.4, 0}})});
  for (double size : {0.5, 0.13, 0.031}) ExpectTexelsTile(s, size);
}

TEST(TexelCharts, AConcavePolygonsPiecesShareOneChart) {
  // An L: the loader triangulates it, and its triangles tile one chart together.
  const Scene s = LoadObj("v 0 0 0\nv 2 0 0\nv 2 1 0\nv 1 1 0\nv 1 2 0\nv 0 2 0\nf 1 2 3 4 5 6\n");
  ASSERT_GT(s.faces.size(), 1u);
  const std::vector<TexelChart> charts = MakeTexelCharts(s, 0.3);
  ASSERT_EQ(charts.size(), 1u);
  EXPECT_EQ(charts[0].faces.size(), s.faces.size());
  ExpectTexelsTile(s, 0.3);
  ExpectTexelsTile(s, 0.25);
}

TEST(TexelCharts, ARectanglesTexelsAreWholeAndTheGridFitsIt) {
  const Scene s = PolygonsOf({TiltedAll({{0, 0, 0}, {2, 0, 0}, {2, 1, 0}, {0, 1, 0}})});
  const std::vector<TexelChart> charts = MakeTexelCharts(s, 0.3);
  ASSERT_EQ(charts.size(), 1u);
  // ceil(2 / 0.3) = 7 by ceil(1 / 0.3) = 4 texels, each 2/7 by 1/4: the grid ends with the rectangle.
  EXPECT_EQ(charts[0].width * charts[0].height, 28);
  EXPECT_NEAR(charts[0].du * charts[0].dv, 2.0 / 28, 1e-14);
  std::vector<Patch> patches;
  MakeTexelPatches(s, charts, &patches, nullptr);
  ASSERT_EQ(patches.size(), 28u);
  for (const Patch &p : patches) {
    EXPECT_EQ(p.cornerCount, 4);
    EXPECT_NEAR(p.area, 2.0 / 28, 1e-13);
  }
}

TEST(TexelCharts, ATwoSidedPolygonsBackIsItsOwnChart) {
  Scene s = PolygonsOf({test::RectZ(0, 1, 0, 1, 0, true), test::RectZ(0, 1, 0, 1, 0, false)});
  s.faces[1].polygon = 0;  // back to back, as AddSurfaceRoles makes a two-sided polygon
  const std::vector<TexelChart> charts = MakeTexelCharts(s, 0.25);
  ASSERT_EQ(charts.size(), 2u);
  EXPECT_GT(Dot(Cross(charts[0].axisU, charts[0].axisV), Vec3{0, 0, 1}), 0.999);
  EXPECT_LT(Dot(Cross(charts[1].axisU, charts[1].axisV), Vec3{0, 0, 1}), -0.999);
  ExpectTexelsTile(s, 0.25);
}

TEST(TexelCharts, ANonPlanarPolygonIsRefusedWithItsLine) {
  // The loader triangulates a bent quad into two planes; a chart cannot lie in both.
  const Scene s = LoadObj("v 0 0 0\nv 1 0 0\nv 1 1 0.2\nv 0 1 0\nf 1 2 3 4\n");
  try {
    MakeTexelCharts(s, 0.25);
    FAIL() << "a bent quad was given a chart";
  } catch (const InputError &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("line 5"), std::string::npos) << what;
    EXPECT_NE(what.find("not planar"), std::string::npos) << what;
  }
}

TEST(TexelCharts, TooManyTexelsAreRefusedBeforeAnyIsMade) {
  const Scene s = PolygonsOf({test::RectZ(0, 1000, 0, 1000, 0, true)});
  EXPECT_THROW(MakeTexelCharts(s, 1e-3), InputError);  // 1e12 texels
  EXPECT_THROW(MakeTexelCharts(s, 0), InputError);
}

TEST(TexelCharts, MeshingByTexelsGivesTheTexelPatches) {
  const Scene s = PolygonsOf({test::RectZ(0, 1, 0, 1, 0, true), {{2, 0, 0}, {3, 0, 0}, {2, 1, 0}}});
  Meshing m;
  m.texelSize = 0.1;
  EXPECT_EQ(ResolveMeshing(s, m).texelSize, 0.1);
  EXPECT_EQ(MakePatches(s, m).size(), size_t(CountPatches(s, m)));
  EXPECT_EQ(m.Describe(), "texel size 0.1");
}

}  // namespace
}  // namespace rad
