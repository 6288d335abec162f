// Instant radiosity (src/vpl/): the white furnace against its exact answer, independence of the thread count,
// the accelerations' error bounds, and the pieces (Halton points, bounded geometry term, option checks).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "render/camera.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "util/error.h"
#include "util/thread_limit.h"
#include "util/timers.h"
#include "vpl/halton.h"
#include "vpl/vpl_lights.h"
#include "vpl/vpl_renderer.h"

namespace rad {
namespace {

std::vector<Patch> Mesh(const std::string &name) {
  return MakePatches(LoadScene(std::string(RAD_SOURCE_DIR) + "/meshes/" + name), 0);
}

Image Render(const std::vector<Patch> &patches, const Camera &camera, const VplOptions &o) {
  PhaseTimers timers;
  return RenderVpl(MPI_COMM_WORLD, patches, camera, o, timers, nullptr);
}

// Camera inside the furnace cube looking at the far wall, wide enough to see four side walls too.
Camera FurnaceCamera(int size) {
  Camera c;
  c.position = {0.5, 0.45, 0.1};
  c.target = {0.55, 0.5, 1.0};
  c.fovYDeg = 100;
  c.width = c.height = size;
  return c;
}

Camera CornellCamera(int size) {
  Camera c = LoadCameraJson(std::string(RAD_SOURCE_DIR) + "/meshes/cornell_box.camera.json");
  c.width = c.height = size;
  return c;
}

// Root mean square of (a - b) over all values, relative to the mean of b.
double RelativeRmse(const Image &a, const Image &b) {
  double squares = 0, mean = 0;
  for (size_t k = 0; k < a.rgb.size(); ++k) {
    squares += (double(a.rgb[k]) - b.rgb[k]) * (double(a.rgb[k]) - b.rgb[k]);
    mean += b.rgb[k];
  }
  mean /= double(b.rgb.size());
  return std::sqrt(squares / double(a.rgb.size())) / mean;
}

TEST(Vpl, HaltonPointsStratifyAndStayInTheUnitInterval) {
  const ScrambledHalton h(5, 7);
  // Any b^k consecutive points from index 0 put one point in each interval [m / b^k, (m+1) / b^k), for every
  // digit permutation: the defining property of a (scrambled) radical inverse.
  for (int dim = 0; dim < 5; ++dim) {
    const int base = std::vector<int>{2, 3, 5, 7, 11}[size_t(dim)];
    std::vector<int> hits(size_t(base * base), 0);
    for (int i = 0; i < base * base; ++i) {
      const double u = h.Sample(dim, uint64_t(i));
      ASSERT_GE(u, 0.0);
      ASSERT_LT(u, 1.0);
      ++hits[size_t(u * base * base + 1e-9)];  // the points sit on the interval edges m / b^2: round them there
    }
    for (int count : hits) EXPECT_EQ(count, 1) << "dimension " << dim;
  }
}

TEST(Vpl, BoundedGeometryTermIsCappedAndExactFarAway) {
  const double dmin2 = 4.0;
  for (double d2 = 0; d2 < 100; d2 += 0.01) EXPECT_GE(BoundedDenominator(d2, dmin2), dmin2 * (1 - 1e-12));
  EXPECT_NEAR(BoundedDenominator(4 * dmin2, dmin2) / (4 * dmin2), 1.0, 0.005);  // d = 2 dmin: within 0.5 %
  EXPECT_EQ(BoundedDenominator(3.0, 0.0), 3.0);
}

// Closed cube, Kd 0.5, Ke 1: L = Ke / (1 - Kd) = 2 everywhere. With bounces B the VPLs carry light up to B+1
// reflections: L = 2 - 0.5^(B+1) (0.002 below 2 for B = 8). The bounded geometry term (dmin = 0.1 of a unit
// cube) removes light exchanged between points closer than about 2 dmin, which exist only near the cube's edges:
// pixels whose point is at least 2 dmin from every other wall must be within 3 % of 2 (what is left: the
// Halton estimate with 1500 paths); every pixel within 30 % (the clamp's darkening of the edges, bounded), and
// the mean within 5 %.
TEST(Vpl, WhiteFurnaceEveryPixelIsTwo) {
  const std::vector<Patch> patches = Mesh("tests/furnace_cube.obj");
  VplOptions o;
  o.paths = 1500;
  o.bounces = 8;
  o.clampDistance = 0.1;
  const Camera camera = FurnaceCamera(16);
  const Image image = Render(patches, camera, o);
  ASSERT_EQ(image.rgb.size(), 3u * 16 * 16);
  double mean = 0, worstInterior = 0, worst = 0;
  int interior = 0;
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x) {
      // Where the pixel's centre ray leaves the cube, found here independently (slabs of [0,1]^3).
      const CameraRay ray = GenerateRay(camera, x + 0.5, y + 0.5);
      double t = 1e300;
      for (int a = 0; a < 3; ++a) {
        if (ray.direction[a] > 0) t = std::min(t, (1 - ray.origin[a]) / ray.direction[a]);
        if (ray.direction[a] < 0) t = std::min(t, -ray.origin[a] / ray.direction[a]);
      }
      const Vec3 p = ray.origin + ray.direction * t;
      double edge = 1e300;  // distance to the nearest other wall: the smallest margin of the free coordinates
      for (int a = 0; a < 3; ++a) {
        const double margin = std::min(p[a], 1 - p[a]);
        if (margin > 1e-9) edge = std::min(edge, margin);
      }
      for (int c = 0; c < 3; ++c) {
        const double error = std::fabs(image.At(x, y, c) - 2.0);
        mean += image.At(x, y, c);
        worst = std::max(worst, error);
        if (edge >= 2 * o.clampDistance) worstInterior = std::max(worstInterior, error);
      }
      if (edge >= 2 * o.clampDistance) ++interior;
    }
  mean /= double(image.rgb.size());
  ASSERT_GT(interior, 40) << "the camera must see pixels away from the edges";
  EXPECT_LT(worstInterior, 0.06) << "largest deviation from 2 of a pixel at least 2 dmin from the edges";
  EXPECT_LT(worst, 0.6) << "largest deviation from 2 of any pixel";
  EXPECT_NEAR(mean, 2.0, 0.1);
  std::printf("furnace: %d interior pixels, worst interior deviation %.4f, worst %.4f, mean %.4f\n", interior,
              worstInterior, worst, mean);
}

// On a convex closed scene nothing lies between two points of its walls, so bounding boxes block no shadow ray
// either: the images must be identical, bit for bit.
TEST(Vpl, ImperfectVisibilityIsExactInAConvexClosedScene) {
  const std::vector<Patch> patches = Mesh("tests/furnace_cube.obj");
  VplOptions o;
  o.paths = 200;
  o.bounces = 2;
  o.clampDistance = 0.1;
  const Image plain = Render(patches, FurnaceCamera(12), o);
  o.imperfectVisibility = true;
  const Image boxes = Render(patches, FurnaceCamera(12), o);
  ASSERT_EQ(plain.rgb.size(), boxes.rgb.size());
  for (size_t k = 0; k < plain.rgb.size(); ++k) ASSERT_EQ(plain.rgb[k], boxes.rgb[k]) << "value " << k;
}

TEST(Vpl, SameImageForOneAndTwoThreads) {
  const std::vector<Patch> patches = Mesh("cornell_box.obj");
  for (int mode = 0; mode < 3; ++mode) {
    VplOptions o;
    o.paths = 60;
    o.bounces = 2;
    o.interleave = mode == 1;
    o.indirectScale = mode == 2 ? 2 : 1;
    o.samplesPerPixel = mode == 0 ? 2 : 1;
    Image one, two;
    {
      ThreadLimit limit(1);
      one = Render(patches, CornellCamera(20), o);
    }
    {
      ThreadLimit limit(2);
      two = Render(patches, CornellCamera(20), o);
    }
    ASSERT_EQ(one.rgb.size(), two.rgb.size());
    for (size_t k = 0; k < one.rgb.size(); ++k) ASSERT_EQ(one.rgb[k], two.rgb[k]) << "mode " << mode << " value " << k;
  }
}

// Each acceleration against the plain image on the Cornell box (48x48, 240 paths, 2 bounces), as the relative
// RMSE (RMSE over the mean of the plain image). Measured: imperfect visibility 0.10, indirect at 1/2 0.023,
// interleaved 0.033; the bounds (0.15, 0.04, 0.06) leave about 50 % margin. Imperfect visibility must change
// the image (the boxes of the rotated blocks' faces are larger than the faces and over-shadow the floor).
TEST(Vpl, AccelerationsStayCloseToThePlainImageOnTheCornellBox) {
  const std::vector<Patch> patches = Mesh("cornell_box.obj");
  VplOptions o;
  o.paths = 240;
  o.bounces = 2;
  const Camera camera = CornellCamera(48);
  const Image plain = Render(patches, camera, o);
  double mean = 0;
  for (float v : plain.rgb) mean += v;
  ASSERT_GT(mean, 0.0);

  VplOptions boxes = o;
  boxes.imperfectVisibility = true;
  const double boxError = RelativeRmse(Render(patches, camera, boxes), plain);
  EXPECT_GT(boxError, 0.0);
  EXPECT_LT(boxError, 0.15);

  VplOptions low = o;
  low.indirectScale = 2;
  const double lowError = RelativeRmse(Render(patches, camera, low), plain);
  EXPECT_LT(lowError, 0.04);

  VplOptions interleaved = o;
  interleaved.interleave = true;
  const double interleaveError = RelativeRmse(Render(patches, camera, interleaved), plain);
  EXPECT_LT(interleaveError, 0.06);
  std::printf("relative RMSE against the plain image: imperfect visibility %.4f, indirect at 1/2 %.4f, "
              "interleaved %.4f\n", boxError, lowError, interleaveError);
}

TEST(Vpl, BadOptionsAreInputErrors) {
  const Camera camera = CornellCamera(8);
  VplOptions o;
  o.paths = 0;
  EXPECT_THROW(CheckVplOptions(o, camera), InputError);
  o = VplOptions();
  o.clampDistance = -1;
  EXPECT_THROW(CheckVplOptions(o, camera), InputError);
  o = VplOptions();
  o.interleave = true;
  o.indirectScale = 2;
  EXPECT_THROW(CheckVplOptions(o, camera), InputError);
  o = VplOptions();
  EXPECT_NO_THROW(CheckVplOptions(o, camera));
}

}  // namespace
}  // namespace rad
