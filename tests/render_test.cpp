#include "util/rtcore.h"
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "render/camera.h"
#include "render/radiosity_renderer.h"
#include "render/smooth_mesh.h"
#include "scene/patch.h"
#include "tests/test_scenes.h"
#include "util/embree_util.h"
#include "util/error.h"
#include "util/thread_limit.h"

namespace rad {
namespace {

constexpr double kPi = 3.14159265358979323846;

// A file in the test's temporary folder, unique per process so parallel test runs do not collide.
std::string WriteTemp(const std::string &name, const std::string &text) {
  const std::string path = ::testing::TempDir() + "render_test_" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

// Runs `f`, expects an InputError whose message contains every one of `parts`.
void ExpectInputError(const std::function<void()> &f, const std::vector<std::string> &parts) {
  try {
    f();
    ADD_FAILURE() << "no InputError; expected one mentioning " << parts.front();
  } catch (const InputError &e) {
    for (const std::string &p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

double AngleBetween(Vec3 a, Vec3 b) { return std::atan2(Length(Cross(a, b)), Dot(a, b)); }

// ---------------------------------------------------------------------------------------------------------
// Camera

TEST(Camera, JsonRoundTrip) {
  Camera c;
  c.position = {1.25, -2, 3e3};
  c.target = {4, 5.5, -6};
  c.up = {0.1, 0.2, 1};
  c.fovYDeg = 39.3077;
  c.width = 320;
  c.height = 200;
  nlohmann::json j = {{"position", {c.position.x, c.position.y, c.position.z}},
                      {"target", {c.target.x, c.target.y, c.target.z}},
                      {"up", {c.up.x, c.up.y, c.up.z}},
                      {"fov_y_deg", c.fovYDeg},
                      {"width", c.width},
                      {"height", c.height}};
  const Camera back = LoadCameraJson(WriteTemp("round.json", j.dump()));
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(back.position[k], c.position[k]);
    EXPECT_EQ(back.target[k], c.target[k]);
    EXPECT_EQ(back.up[k], c.up[k]);
  }
  EXPECT_EQ(back.fovYDeg, c.fovYDeg);
  EXPECT_EQ(back.width, 320);
  EXPECT_EQ(back.height, 200);

  // Width and height are optional: the given defaults stay.
  j.erase("width");
  j.erase("height");
  Camera defaults;
  defaults.width = 64;
  defaults.height = 48;
  const Camera sized = LoadCameraJson(WriteTemp("nosize.json", j.dump()), defaults);
  EXPECT_EQ(sized.width, 64);
  EXPECT_EQ(sized.height, 48);
  EXPECT_EQ(sized.fovYDeg, c.fovYDeg);
}

TEST(Camera, BundledCameraFilesLoad) {
  const Camera c = LoadCameraJson(std::string(RAD_SOURCE_DIR) + "/meshes/cornell_box.camera.json");
  EXPECT_EQ(c.position.z, -800);
  EXPECT_EQ(c.width, 512);
  EXPECT_NEAR(c.fovYDeg, 39.3077, 1e-12);
}

TEST(Camera, BadFilesAreInputErrors) {
  const std::string good = R"("target":[0,0,0],"up":[0,1,0],"fov_y_deg":40)";
  struct Case {
    std::string name, text;
    std::vector<std::string> expect;  // besides the file name
  };
  const std::vector<Case> cases = {
      {"badjson.json", R"({"position": [0, 0, 1], )", {"JSON"}},
      {"notobject.json", "[1, 2, 3]", {"object"}},
      {"nopos.json", "{" + good + "}", {"\"position\""}},
      {"notarget.json", R"({"position":[0,0,1],"up":[0,1,0],"fov_y_deg":40})", {"\"target\""}},
      {"noup.json", R"({"position":[0,0,1],"target":[0,0,0],"fov_y_deg":40})", {"\"up\""}},
      {"nofov.json", R"({"position":[0,0,1],"target":[0,0,0],"up":[0,1,0]})", {"\"fov_y_deg\""}},
      {"short.json", R"({"position":[0,1],)" + good + "}", {"\"position\" must be an array of 3 numbers"}},
      {"long.json", R"({"position":[0,1,2,3],)" + good + "}", {"\"position\" must be an array of 3 numbers"}},
      {"string.json", R"({"position":[0,"1",2],)" + good + "}", {"\"position\" must be an array of 3 numbers"}},
      {"scalar.json", R"({"position":5,)" + good + "}", {"\"position\""}},
      {"fovtype.json", R"({"position":[0,0,1],"target":[0,0,0],"up":[0,1,0],"fov_y_deg":"40"})", {"\"fov_y_deg\""}},
      {"same.json", R"({"position":[0,0,0],)" + good + "}", {"position and target"}},
      {"parallel.json", R"({"position":[0,3,0],)" + good + "}", {"parallel"}},
      {"antiparallel.json", R"({"position":[0,0,1],"target":[0,0,0],"up":[0,0,2],"fov_y_deg":40})", {"parallel"}},
      {"zeroup.json", R"({"position":[0,0,1],"target":[0,0,0],"up":[0,0,0],"fov_y_deg":40})", {"up"}},
      {"fov0.json", R"({"position":[0,0,1],"target":[0,0,0],"up":[0,1,0],"fov_y_deg":0})", {"fov_y_deg"}},
      {"fov180.json", R"({"position":[0,0,1],"target":[0,0,0],"up":[0,1,0],"fov_y_deg":180})", {"fov_y_deg"}},
      {"width0.json", R"({"position":[0,0,1],)" + good + R"(,"width":0})", {"\"width\""}},
      {"widthneg.json", R"({"position":[0,0,1],)" + good + R"(,"width":-4})", {"\"width\""}},
      {"widthfrac.json", R"({"position":[0,0,1],)" + good + R"(,"width":10.5})", {"\"width\""}},
      {"heighthuge.json", R"({"position":[0,0,1],)" + good + R"(,"height":99999999999999999999})", {"\"height\""}},
      {"unknown.json", R"({"position":[0,0,1],)" + good + R"(,"heigth":10})", {"\"heigth\""}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = WriteTemp(c.name, c.text);
    std::vector<std::string> expect = c.expect;
    expect.push_back(path);
    ExpectInputError([&] { LoadCameraJson(path); }, expect);
  }
  const std::string missing = ::testing::TempDir() + "render_test_no_such_camera.json";
  ExpectInputError([&] { LoadCameraJson(missing); }, {missing, "cannot open"});
}

TEST(Camera, ValidateCameraNamesTheOption) {
  Camera c;
  EXPECT_NO_THROW(ValidateCamera(c, "--camera-position"));
  c.position = c.target;
  ExpectInputError([&] { ValidateCamera(c, "--camera-position"); }, {"--camera-position", "position and target"});
  c = Camera();
  c.up = {0, 0, -1};
  ExpectInputError([&] { ValidateCamera(c, "--camera-up"); }, {"--camera-up", "parallel"});
  c = Camera();
  c.width = 0;
  ExpectInputError([&] { ValidateCamera(c, "--size"); }, {"--size", "width"});
  c = Camera();
  c.fovYDeg = std::numeric_limits<double>::quiet_NaN();
  ExpectInputError([&] { ValidateCamera(c, "--fov"); }, {"--fov", "fov_y_deg"});
}

TEST(Camera, CentreRayPointsAtTargetAndEdgesSpanTheFieldOfView) {
  Camera c;
  c.position = {1, 2, 3};
  c.target = {4, -1, 7};
  c.up = {0, 1, 0};
  c.fovYDeg = 50;
  c.width = 64;
  c.height = 32;
  const Vec3 forward = Normalize(c.target - c.position);
  const CameraRay centre = GenerateRay(c, 32, 16);
  EXPECT_EQ(centre.origin.x, 1);
  EXPECT_NEAR(Length(centre.direction - forward), 0, 1e-14);

  // Top edge (row 0 is the top): up by half the vertical field of view, towards +y.
  const CameraRay top = GenerateRay(c, 32, 0);
  EXPECT_NEAR(Length(top.direction), 1, 1e-14);
  EXPECT_NEAR(AngleBetween(top.direction, forward), 25 * kPi / 180, 1e-12);
  EXPECT_GT(top.direction.y, centre.direction.y);
  const CameraRay bottom = GenerateRay(c, 32, 32);
  EXPECT_LT(bottom.direction.y, centre.direction.y);

  // Left edge: the horizontal field of view follows from the aspect ratio 2:1.
  const double halfX = std::atan(2 * std::tan(25 * kPi / 180));
  const CameraRay left = GenerateRay(c, 0, 16);
  EXPECT_NEAR(AngleBetween(left.direction, forward), halfX, 1e-12);
  const Vec3 right = Normalize(Cross(forward, c.up));
  EXPECT_LT(Dot(left.direction, right), 0);
  EXPECT_GT(Dot(GenerateRay(c, 64, 16).direction, right), 0);
  // Looking along -z with up +y, image right is world +x.
  Camera d;
  EXPECT_GT(GenerateRay(d, d.width, d.height / 2.0).direction.x, 0);
}

// Pixel coordinates of a world point, by projecting it with the camera's basis (independent of GenerateRay).
bool Project(const Camera &c, Vec3 p, double &px, double &py) {
  const Vec3 f = Normalize(c.target - c.position);
  const Vec3 r = Normalize(Cross(f, c.up));
  const Vec3 u = Cross(r, f);
  const Vec3 d = p - c.position;
  const double depth = Dot(d, f);
  if (!(depth > 0)) return false;
  const double tanY = std::tan(0.5 * c.fovYDeg * kPi / 180), tanX = tanY * c.width / c.height;
  px = 0.5 * c.width * (1 + Dot(d, r) / depth / tanX);
  py = 0.5 * c.height * (1 - Dot(d, u) / depth / tanY);
  return true;
}

TEST(Camera, FrameSceneSeesEveryCorner) {
  const Scene s = test::SceneOf({test::RectZ(-3, 5, 0, 1, -2, true), test::RectXPlus(5, 0, 4, -2, 10),
                                 {{-3, 0, 10}, {0, 2, 10}, {-1, 4, 9}}});
  const auto patches = MakePatches(s, 1);
  for (const auto &size : std::vector<std::pair<int, int>>{{64, 64}, {200, 50}, {50, 200}}) {
    SCOPED_TRACE(std::to_string(size.first) + " x " + std::to_string(size.second));
    const Camera c = FrameScene(patches, size.first, size.second);
    EXPECT_NO_THROW(ValidateCamera(c, "FrameScene"));
    EXPECT_EQ(c.width, size.first);
    EXPECT_EQ(c.height, size.second);
    EXPECT_EQ(c.fovYDeg, 40);
    EXPECT_EQ(c.up.y, 1);
    EXPECT_NEAR(c.target.x, 1, 1e-12);  // box [-3,5] x [0,4] x [-2,10]
    EXPECT_NEAR(c.target.y, 2, 1e-12);
    EXPECT_NEAR(c.target.z, 4, 1e-12);
    EXPECT_GT(c.position.z, 10);
    double border = 0;  // how close the outermost corner comes to the image border, 1 = on it
    for (const Patch &p : patches) {
      for (const Vec3 &q : p.corners) {
        double px, py;
        ASSERT_TRUE(Project(c, q, px, py));
        EXPECT_GE(px, 0);
        EXPECT_LE(px, c.width);
        EXPECT_GE(py, 0);
        EXPECT_LE(py, c.height);
        border = std::max({border, std::fabs(2 * px / c.width - 1), std::fabs(2 * py / c.height - 1)});
      }
    }
    EXPECT_GT(border, 0.8);  // framed, not lost in the middle of the image
  }
}

// ---------------------------------------------------------------------------------------------------------
// SmoothMesh

// 3 values per patch from a function of its centroid.
std::vector<double> RadianceOf(const std::vector<Patch> &patches, const std::function<Vec3(Vec3)> &f) {
  std::vector<double> b;
  for (const Patch &p : patches) {
    const Vec3 v = f(p.centroid);
    b.insert(b.end(), {v.x, v.y, v.z});
  }
  return b;
}

// The vertex at `p`, or -1; fails the test if there are several.
int VertexAt(const SmoothMesh &m, Vec3 p) {
  int found = -1, count = 0;
  for (size_t v = 0; v < m.vertices.size(); ++v) {
    if (Length(m.vertices[v] - p) < 1e-9) found = int(v), ++count;
  }
  EXPECT_LE(count, 1) << "several vertices at " << p.x << " " << p.y << " " << p.z;
  return found;
}

void ExpectCornersMatchPatches(const SmoothMesh &m, const std::vector<Patch> &patches) {
  ASSERT_EQ(m.patchCorners.size(), 4 * patches.size());
  ASSERT_EQ(m.cornerCount.size(), patches.size());
  ASSERT_EQ(m.vertexRadiance.size(), 3 * m.vertices.size());
  for (size_t i = 0; i < patches.size(); ++i) {
    EXPECT_EQ(m.cornerCount[i], patches[i].cornerCount);
    for (int k = 0; k < 4; ++k) {
      EXPECT_LT(Length(m.vertices[size_t(m.patchCorners[4 * i + size_t(k)])] - patches[i].corners[k]), 1e-9);
    }
  }
}

TEST(SmoothMesh, FourPatchesOfAQuadAverageAtSharedCorners) {
  const auto patches = MakePatches(test::SceneOf({test::RectZ(0, 2, 0, 2, 0, true)}), 1);
  // B = 1, 2, 3, 4 by position (lower left, lower right, upper left, upper right), 10x and 100x in G and B.
  const auto b = RadianceOf(patches, [](Vec3 c) {
    const double v = 1 + (c.x > 1 ? 1 : 0) + (c.y > 1 ? 2 : 0);
    return Vec3(v, 10 * v, 100 * v);
  });
  const SmoothMesh m = BuildSmoothMesh(patches, b);
  ASSERT_EQ(m.vertices.size(), 9u);
  ExpectCornersMatchPatches(m, patches);
  const struct {
    Vec3 at;
    double value;
  } expected[] = {{{1, 1, 0}, 2.5}, {{1, 0, 0}, 1.5}, {{0, 1, 0}, 2}, {{2, 1, 0}, 3}, {{1, 2, 0}, 3.5},
                  {{0, 0, 0}, 1},   {{2, 0, 0}, 2},   {{0, 2, 0}, 3}, {{2, 2, 0}, 4}};
  for (const auto &e : expected) {
    const int v = VertexAt(m, e.at);
    ASSERT_GE(v, 0);
    EXPECT_DOUBLE_EQ(m.vertexRadiance[3 * size_t(v) + 0], e.value);
    EXPECT_DOUBLE_EQ(m.vertexRadiance[3 * size_t(v) + 1], 10 * e.value);
    EXPECT_DOUBLE_EQ(m.vertexRadiance[3 * size_t(v) + 2], 100 * e.value);
  }
}

TEST(SmoothMesh, CoplanarNeighboursShareVerticesWithAreaWeights) {
  // Areas 1 and 3 with B 1 and 2: the shared edge gets (1 * 1 + 3 * 2) / 4.
  const auto patches = MakePatches(test::SceneOf({test::RectZ(0, 1, 0, 1, 0, true), test::RectZ(1, 4, 0, 1, 0, true)}),
                                   0);
  const SmoothMesh m = BuildSmoothMesh(patches, {1, 1, 1, 2, 2, 2});
  ASSERT_EQ(m.vertices.size(), 6u);
  ExpectCornersMatchPatches(m, patches);
  for (Vec3 p : {Vec3(1, 0, 0), Vec3(1, 1, 0)}) {
    const int v = VertexAt(m, p);
    ASSERT_GE(v, 0);
    EXPECT_DOUBLE_EQ(m.vertexRadiance[3 * size_t(v)], 1.75);
  }
  EXPECT_DOUBLE_EQ(m.vertexRadiance[3 * size_t(VertexAt(m, {0, 0, 0}))], 1);
  EXPECT_DOUBLE_EQ(m.vertexRadiance[3 * size_t(VertexAt(m, {4, 1, 0}))], 2);
}

TEST(SmoothMesh, CornersInsideANeighboursEdgeTakeTheEdgesValue) {
  // A floor of 2 x 1 patches; the right one split in four, and its lower left child again: corners of the
  // children lie inside the left patch's edge x = 1 at y = 0.5 (its midpoint) and y = 0.25 (a quarter). Shading
  // is continuous across the edge when they take the value the edge interpolates between its ends.
  const std::vector<Patch> coarse = MakePatches(test::SceneOf({test::RectZ(0, 2, 0, 1, 0, true)}), 0);
  std::vector<Patch> halves;
  Patch left = coarse[0], right = coarse[0];
  const Vec3 l[4] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}}, r[4] = {{1, 0, 0}, {2, 0, 0}, {2, 1, 0}, {1, 1, 0}};
  for (int k = 0; k < 4; ++k) left.corners[k] = l[k], right.corners[k] = r[k];
  left.centroid = {0.5, 0.5, 0}, right.centroid = {1.5, 0.5, 0};
  left.area = right.area = 1;
  std::vector<Patch> children, patches{left};
  SplitPatch(right, children);
  SplitPatch(children[0], patches);  // the lower left child, at [1, 1.5] x [0, 0.5], in four
  patches.insert(patches.end(), children.begin() + 1, children.end());
  const auto b = RadianceOf(patches, [](Vec3 c) { return Vec3(c.x * c.x, 1, 0); });
  const SmoothMesh m = BuildSmoothMesh(patches, b);
  ExpectCornersMatchPatches(m, patches);
  auto at = [&](Vec3 p) { return m.vertexRadiance[3 * size_t(VertexAt(m, p))]; };
  const double low = at({1, 0, 0}), high = at({1, 1, 0});
  EXPECT_DOUBLE_EQ(at({1, 0.5, 0}), 0.5 * (low + high));
  EXPECT_DOUBLE_EQ(at({1, 0.25, 0}), 0.75 * low + 0.25 * high);
  // The corners' own mean there would differ: the left patch's B is 0.25, the children's above 1.
  EXPECT_GT(std::abs(at({1, 0.25, 0}) - (b[3 * 1] + b[3 * 3]) / 2), 0.1);
  // A corner shared by whole patches only keeps the area-weighted mean: the right half's centre.
  const double centre = (b[3 * 5] + b[3 * 6] + b[3 * 7] + 0.25 * b[3 * 4]) / 3.25;
  EXPECT_NEAR(at({1.5, 0.5, 0}), centre, 1e-12);
}

TEST(SmoothMesh, RoundingDoesNotSplitAVertexButRealGapsDo) {
  for (double gap : {1e-12, 3e-10, 1e-4}) {
    SCOPED_TRACE(gap);
    // The right quad's left edge is off by `gap` in x, and its plane by gap / 10 in z.
    const std::vector<Vec3> right = {{1 + gap, 0, gap / 10}, {4, 0, 0}, {4, 1, 0}, {1 - gap, 1, gap / 10}};
    const auto patches = MakePatches(test::SceneOf({test::RectZ(0, 1, 0, 1, 0, true), right}), 0);
    const SmoothMesh m = BuildSmoothMesh(patches, {1, 1, 1, 2, 2, 2});
    EXPECT_EQ(m.vertices.size(), gap < 1e-8 ? 6u : 8u);
  }
}

TEST(SmoothMesh, PointsWithinToleranceMergeWhereverTheyLie) {
  // Tolerance here is 1e-7 of the diagonal sqrt(17), about 4.1e-7. An offset of 2e-7 lands the two copies of
  // the shared edge in different tolerance-sized bins for about half the edge positions tried.
  for (int t = 0; t < 20; ++t) {
    const double x = 1 + 0.0137 * t, e = 2e-7;
    const std::vector<Vec3> right = {{x + e, 0, 0}, {4, 0, 0}, {4, 1, 0}, {x + e, 1, 0}};
    const auto patches = MakePatches(test::SceneOf({test::RectZ(0, x, 0, 1, 0, true), right}), 0);
    EXPECT_EQ(BuildSmoothMesh(patches, {1, 1, 1, 2, 2, 2}).vertices.size(), 6u) << "edge at x = " << x;
  }
}

TEST(SmoothMesh, FloorAndWallDoNotShareTheirEdge) {
  // Floor z = 0 (front +z) and wall x = 0 (front +x) meet along the y axis.
  const auto patches =
      MakePatches(test::SceneOf({test::RectZ(0, 1, 0, 1, 0, true), test::RectXPlus(0, 0, 1, 0, 1)}), 1);
  const auto b = RadianceOf(patches, [](Vec3 c) { return c.z < 1e-12 ? Vec3(0, 0, 0) : Vec3(1, 1, 1); });
  const SmoothMesh m = BuildSmoothMesh(patches, b);
  ASSERT_EQ(m.vertices.size(), 18u);  // 9 per face, the 3 on the common edge twice
  ExpectCornersMatchPatches(m, patches);
  for (size_t i = 0; i < patches.size(); ++i) {
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(m.vertexRadiance[3 * size_t(m.patchCorners[4 * i + size_t(k)])], b[3 * i]) << "colour bled";
    }
  }
}

TEST(SmoothMesh, BackToBackQuadsDoNotShare) {
  const auto patches =
      MakePatches(test::SceneOf({test::RectZ(0, 1, 0, 1, 0, true), test::RectZ(0, 1, 0, 1, 0, false)}), 0);
  const SmoothMesh m = BuildSmoothMesh(patches, {1, 1, 1, 0, 0, 0});
  EXPECT_EQ(m.vertices.size(), 8u);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(m.vertexRadiance[3 * size_t(m.patchCorners[size_t(k)])], 1);
}

TEST(SmoothMesh, TrianglesRepeatTheirThirdCorner) {
  const auto patches = MakePatches(test::SceneOf({{{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}}), 1);
  ASSERT_EQ(patches.size(), 4u);
  // Corner triangles 1, 2, 8 (at x, at y), middle 4: each midpoint is shared by two corner ones and the middle.
  const auto b = RadianceOf(patches, [](Vec3 c) {
    const double v = c.x > 1 ? 2 : c.y > 1 ? 8 : (c.x + c.y < 1 ? 1 : 4);
    return Vec3(v, v, v);
  });
  const SmoothMesh m = BuildSmoothMesh(patches, b);
  ASSERT_EQ(m.vertices.size(), 6u);
  ExpectCornersMatchPatches(m, patches);
  for (size_t i = 0; i < patches.size(); ++i) {
    EXPECT_EQ(m.cornerCount[i], 3);
    EXPECT_EQ(m.patchCorners[4 * i + 3], m.patchCorners[4 * i + 2]);
  }
  EXPECT_DOUBLE_EQ(m.vertexRadiance[3 * size_t(VertexAt(m, {1, 0, 0}))], 7.0 / 3);
  EXPECT_DOUBLE_EQ(m.vertexRadiance[3 * size_t(VertexAt(m, {0, 1, 0}))], 13.0 / 3);
  EXPECT_DOUBLE_EQ(m.vertexRadiance[3 * size_t(VertexAt(m, {1, 1, 0}))], 14.0 / 3);
  EXPECT_DOUBLE_EQ(m.vertexRadiance[3 * size_t(VertexAt(m, {0, 0, 0}))], 1);
}

TEST(SmoothMesh, VerticesAreNumberedInOrderOfFirstUse) {
  const auto patches = MakePatches(test::UnitCube(), 2);
  const auto b = RadianceOf(patches, [](Vec3 c) { return c; });
  const SmoothMesh m = BuildSmoothMesh(patches, b);
  EXPECT_EQ(m.vertices.size(), 6u * 25u);  // 5 x 5 per face, none shared across the cube's edges
  int next = 0;
  for (size_t i = 0; i < patches.size(); ++i) {
    for (int k = 0; k < patches[i].cornerCount; ++k) {
      const int v = m.patchCorners[4 * i + size_t(k)];
      EXPECT_LE(v, next);
      if (v == next) ++next;
    }
  }
  EXPECT_EQ(next, int(m.vertices.size()));
  const SmoothMesh again = BuildSmoothMesh(patches, b);
  EXPECT_EQ(again.patchCorners, m.patchCorners);
  EXPECT_EQ(again.vertexRadiance, m.vertexRadiance);
}

// ---------------------------------------------------------------------------------------------------------
// Render

TEST(Render, ParseShading) {
  EXPECT_EQ(ParseShading("flat"), Shading::kFlat);
  EXPECT_EQ(ParseShading("smooth"), Shading::kSmooth);
  ExpectInputError([] { ParseShading("gouraud"); }, {"gouraud", "flat", "smooth"});
}

// Shoots one ray straight down (-z) at (x, y) onto a scene of quads in the plane z = 0.
RTCRayHit HitFromAbove(RTCScene scene, double x, double y) {
  RTCRayHit rh = MakeRayHit(Vec3(x, y, 1), Vec3(0, 0, -1), 0, std::numeric_limits<float>::infinity());
  Intersect1(scene, nullptr, &rh);
  return rh;
}

// The convention the smooth shading relies on (Embree 3 RTC_GEOMETRY_TYPE_QUAD): the quad is split into the
// triangles (v0,v1,v3) and (v2,v3,v1); in the first the hit is (1-u-v) v0 + u v1 + v v3, in the second
// (1-u'-v') v2 + u' v3 + v' v1 with u = 1-u', v = 1-v'. For a parallelogram that is exactly the bilinear map
// (1-u)(1-v) v0 + u(1-v) v1 + uv v2 + (1-u)v v3, and a quad (v0, v1, v2, v2) is the triangle with barycentric
// (u, v) on v1, v2.
TEST(Render, EmbreeQuadUvConvention) {
  RTCScene scene = rtcNewScene(EmbreeDevice());
  const float vertices[][3] = {
      {0, 0, 0},   {2, 0.5f, 0},  {2.3f, 1.5f, 0}, {0.3f, 1, 0},  // parallelogram
      {3, 0, 0},   {5, 0.2f, 0},  {5.5f, 2, 0},    {3.2f, 1, 0},  // general convex quad
      {6, 0, 0},   {8, 0.5f, 0},  {6.5f, 2, 0},    {6.5f, 2, 0},  // triangle, third corner repeated
  };
  RTCGeometry geom = rtcNewGeometry(EmbreeDevice(), RTC_GEOMETRY_TYPE_QUAD);
  auto *vb = static_cast<float *>(
      rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), 12));
  auto *ib = static_cast<unsigned *>(
      rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT4, 4 * sizeof(unsigned), 3));
  std::memcpy(vb, vertices, sizeof vertices);
  for (unsigned k = 0; k < 12; ++k) ib[k] = k;
  rtcCommitGeometry(geom);
  rtcAttachGeometry(scene, geom);
  rtcReleaseGeometry(geom);
  rtcCommitScene(scene);

  auto V = [&](int quad, int k) {
    const float *p = vertices[4 * quad + k];
    return Vec3(p[0], p[1], p[2]);
  };
  // Parallelogram: points at known bilinear parameters (s, t), on both sides of the diagonal v1-v3.
  for (const auto &st : std::vector<std::pair<double, double>>{{0.2, 0.3}, {0.7, 0.8}, {0.9, 0.25}, {0.1, 0.85}}) {
    const double s = st.first, t = st.second;
    const Vec3 p =
        V(0, 0) * ((1 - s) * (1 - t)) + V(0, 1) * (s * (1 - t)) + V(0, 2) * (s * t) + V(0, 3) * ((1 - s) * t);
    const RTCRayHit h = HitFromAbove(scene, p.x, p.y);
    ASSERT_EQ(h.hit.primID, 0u);
    EXPECT_NEAR(h.hit.u, s, 1e-5);
    EXPECT_NEAR(h.hit.v, t, 1e-5);
  }
  // General quad: each half is affine in its own barycentrics.
  {
    const Vec3 p = V(1, 0) * 0.5 + V(1, 1) * 0.2 + V(1, 3) * 0.3;  // in (v0, v1, v3)
    const RTCRayHit h = HitFromAbove(scene, p.x, p.y);
    ASSERT_EQ(h.hit.primID, 1u);
    EXPECT_NEAR(h.hit.u, 0.2, 1e-5);
    EXPECT_NEAR(h.hit.v, 0.3, 1e-5);
    const Vec3 q = V(1, 2) * 0.4 + V(1, 3) * 0.25 + V(1, 1) * 0.35;  // in (v2, v3, v1): u' = 0.25, v' = 0.35
    const RTCRayHit g = HitFromAbove(scene, q.x, q.y);
    ASSERT_EQ(g.hit.primID, 1u);
    EXPECT_NEAR(g.hit.u, 0.75, 1e-5);
    EXPECT_NEAR(g.hit.v, 0.65, 1e-5);
  }
  // Triangle stored as (v0, v1, v2, v2): barycentric.
  {
    const Vec3 p = V(2, 0) * 0.3 + V(2, 1) * 0.5 + V(2, 2) * 0.2;
    const RTCRayHit h = HitFromAbove(scene, p.x, p.y);
    ASSERT_EQ(h.hit.primID, 2u);
    EXPECT_NEAR(h.hit.u, 0.5, 1e-5);
    EXPECT_NEAR(h.hit.v, 0.2, 1e-5);
  }
  rtcReleaseScene(scene);
}

Camera LookAt(Vec3 from, Vec3 to, double fovYDeg, int width, int height) {
  Camera c;
  c.position = from;
  c.target = to;
  c.up = {0, 1, 0};
  c.fovYDeg = fovYDeg;
  c.width = width;
  c.height = height;
  return c;
}

Image Render(const std::vector<Patch> &patches, const std::vector<double> &b, const Camera &c, Shading shading,
             int samples, unsigned long long seed = 1) {
  RenderOptions o;
  o.shading = shading;
  o.samplesPerPixel = samples;
  o.seed = seed;
  return RenderRadiosity(MPI_COMM_WORLD, patches, b, c, o);
}

TEST(Render, UniformClosedBoxSeenFromInsideIsUniform) {
  const auto patches = MakePatches(test::UnitCube(), 1);
  const auto b = RadianceOf(patches, [](Vec3) { return Vec3(0.25, 0.5, 0.75); });
  // Looking into a corner, wide angle: the image crosses several of the cube's edges and corners.
  const Camera c = LookAt({0.3, 0.4, 0.6}, {0.95, 0.1, 0.05}, 100, 24, 16);
  for (Shading shading : {Shading::kFlat, Shading::kSmooth}) {
    for (int samples : {1, 4, 3}) {
      const Image img = Render(patches, b, c, shading, samples);
      ASSERT_EQ(img.width, 24);
      ASSERT_EQ(img.height, 16);
      ASSERT_EQ(img.rgb.size(), 3u * 24 * 16);
      for (int y = 0; y < img.height; ++y) {
        for (int x = 0; x < img.width; ++x) {
          ASSERT_EQ(img.At(x, y, 0), 0.25f) << x << " " << y;
          ASSERT_EQ(img.At(x, y, 1), 0.5f) << x << " " << y;
          ASSERT_EQ(img.At(x, y, 2), 0.75f) << x << " " << y;
        }
      }
    }
  }
}

TEST(Render, BackSidesAndMissesAreBlack) {
  const auto patches = MakePatches(test::SceneOf({test::RectZ(-5, 5, -5, 5, 0, true)}), 1);
  const auto b = RadianceOf(patches, [](Vec3) { return Vec3(1, 2, 3); });
  const struct {
    Camera camera;
    float expected;
  } cases[] = {
      {LookAt({0, 0, 1}, {0, 0, 0}, 40, 8, 6), 1},   // front: every pixel sees the quad
      {LookAt({0, 0, -1}, {0, 0, 0}, 40, 8, 6), 0},  // back side
      {LookAt({0, 0, 1}, {0, 0, 2}, 40, 8, 6), 0},   // looking away: nothing hit
  };
  for (const auto &k : cases) {
    for (Shading shading : {Shading::kFlat, Shading::kSmooth}) {
      const Image img = Render(patches, b, k.camera, shading, 4);
      for (int y = 0; y < img.height; ++y) {
        for (int x = 0; x < img.width; ++x) {
          for (int ch = 0; ch < 3; ++ch) ASSERT_EQ(img.At(x, y, ch), k.expected * float(ch + 1)) << x << " " << y;
        }
      }
    }
  }
}

TEST(Render, HalfAndHalfIsAntialiasedOnlyAtTheBoundary) {
  // Left half B = 1, right half B = 0, boundary x = 0 through the middle of column 7 of 15.
  const auto patches =
      MakePatches(test::SceneOf({test::RectZ(-10, 0, -10, 10, 0, true), test::RectZ(0, 10, -10, 10, 0, true)}), 0);
  const std::vector<double> b = {1, 1, 1, 0, 0, 0};
  const Camera c = LookAt({0, 0, 1}, {0, 0, 0}, 40, 15, 9);
  for (int samples : {16, 5}) {
    SCOPED_TRACE(samples);
    const Image img = Render(patches, b, c, Shading::kFlat, samples);
    for (int y = 0; y < img.height; ++y) {
      for (int x = 0; x < img.width; ++x) {
        const float v = img.At(x, y, 0);
        if (x < 7) EXPECT_EQ(v, 1.0f) << x << " " << y;
        if (x > 7) EXPECT_EQ(v, 0.0f) << x << " " << y;
        if (x == 7) {
          EXPECT_GT(v, 0.0f) << y;
          EXPECT_LT(v, 1.0f) << y;
          EXPECT_NEAR(v, 0.5, 0.25) << y;
        }
      }
    }
  }
}

// The value a 1-pixel camera with a tiny field of view sees at the point (x, y) of the plane z = 0.
double SmoothValueAt(const std::vector<Patch> &patches, const std::vector<double> &b, double x, double y) {
  const Image img = Render(patches, b, LookAt({x, y, 1}, {x, y, 0}, 0.001, 1, 1), Shading::kSmooth, 4);
  return img.At(0, 0, 0);
}

TEST(Render, SmoothShadingIsBilinearOnQuads) {
  const auto patches = MakePatches(test::SceneOf({test::RectZ(0, 2, 0, 2, 0, true)}), 1);
  // B = 1, 2, 3, 5: corner values 1, 1.5, 2, 2.75 on the lower-left patch, i.e. 1 + x/2 + y + xy/4 there.
  const auto b = RadianceOf(patches, [](Vec3 c) {
    const double v = c.x > 1 ? (c.y > 1 ? 5 : 2) : (c.y > 1 ? 3 : 1);
    return Vec3(v, v, v);
  });
  auto f = [](double x, double y) { return 1 + x / 2 + y + x * y / 4; };
  for (const auto &p : std::vector<std::pair<double, double>>{{0.25, 0.75}, {0.8, 0.7}, {0.5, 0.1}}) {
    EXPECT_NEAR(SmoothValueAt(patches, b, p.first, p.second), f(p.first, p.second), 1e-4) << p.first << " " << p.second;
  }
  // Flat shading shows the patch's own value there.
  const Image flat = Render(patches, b, LookAt({0.25, 0.75, 1}, {0.25, 0.75, 0}, 0.001, 1, 1), Shading::kFlat, 4);
  EXPECT_EQ(flat.At(0, 0, 0), 1.0f);
}

TEST(Render, SmoothShadingIsLinearOnTriangles) {
  const auto patches = MakePatches(test::SceneOf({{{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}}), 1);
  const auto b = RadianceOf(patches, [](Vec3 c) {
    const double v = c.x > 1 ? 2 : c.y > 1 ? 8 : (c.x + c.y < 1 ? 1 : 4);
    return Vec3(v, v, v);
  });
  // Corner values (see SmoothMesh.TrianglesRepeatTheirThirdCorner): (0,0) 1, (1,0) 7/3, (0,1) 13/3, (1,1) 14/3.
  EXPECT_NEAR(SmoothValueAt(patches, b, 0.2, 0.3), 0.5 * 1 + 0.2 * 7 / 3 + 0.3 * 13 / 3, 1e-4);
  // Middle triangle (1,0), (1,1), (0,1): the plane 2 + x/3 + 7y/3.
  EXPECT_NEAR(SmoothValueAt(patches, b, 0.6, 0.6), 2 + 0.6 / 3 + 7 * 0.6 / 3, 1e-4);
}

TEST(Render, ImageDoesNotDependOnThreadCountButOnSeed) {
  const auto patches = MakePatches(test::UnitCube(), 2);
  const auto b = RadianceOf(patches, [](Vec3 c) { return Vec3(c.x, c.y * c.z, 1 - c.x * c.y); });
  const Camera c = LookAt({0.3, 0.4, 0.6}, {0.95, 0.1, 0.05}, 90, 96, 64);
  for (Shading shading : {Shading::kFlat, Shading::kSmooth}) {
    Image one, two;
    {
      ThreadLimit limit(1);
      one = Render(patches, b, c, shading, 4);
    }
    {
      ThreadLimit limit(2);
      two = Render(patches, b, c, shading, 4);
    }
    ASSERT_EQ(one.rgb.size(), two.rgb.size());
    EXPECT_EQ(std::memcmp(one.rgb.data(), two.rgb.data(), one.rgb.size() * sizeof(float)), 0);
    const Image reseeded = Render(patches, b, c, shading, 4, 2);
    EXPECT_NE(std::memcmp(one.rgb.data(), reseeded.rgb.data(), one.rgb.size() * sizeof(float)), 0);
  }
}

TEST(Render, RejectsBadOptions) {
  const auto patches = MakePatches(test::UnitCube(), 0);
  const std::vector<double> b(3 * patches.size(), 1.0);
  ExpectInputError([&] { Render(patches, b, LookAt({0.5, 0.5, 0.5}, {0.5, 0.5, 0}, 40, 4, 4), Shading::kFlat, 0); },
                   {"samples"});
  ExpectInputError([&] { Render(patches, b, LookAt({0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, 40, 4, 4), Shading::kFlat, 1); },
                   {"position and target"});
}

}  // namespace
}  // namespace rad
