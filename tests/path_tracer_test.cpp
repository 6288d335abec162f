// The path tracer against exact answers: the white furnace (every pixel 2), the depth limit (emission only,
// then direct light only), and per-patch estimates against radiosity solutions that are exact up to their form
// factors; plus independence of the thread count.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "formfactor/cpu_form_factors.h"
#include "formfactor/embree_scene.h"
#include "formfactor/geometry.h"
#include "pathtrace/patch_estimates.h"
#include "pathtrace/path_trace_image.h"
#include "pathtrace/path_tracer.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "solver/radiosity_solver.h"
#include "tests/dense_solve.h"
#include "tests/test_scenes.h"
#include "util/error.h"
#include "util/thread_limit.h"

namespace rad {
namespace {

Scene FurnaceCube() { return LoadScene(std::string(RAD_SOURCE_DIR) + "/meshes/tests/furnace_cube.obj"); }

// From the centre of the unit cube towards the z = 0 wall: every pixel sees a wall's front side.
Camera InsideCube(int size) {
  Camera c;
  c.position = {0.5, 0.5, 0.5};
  c.target = {0.5, 0.5, 0};
  c.up = {0, 1, 0};
  c.fovYDeg = 60;
  c.width = c.height = size;
  return c;
}

Image Render(const Scene &scene, const PathTraceSettings &settings, int size, int spp, uint64_t seed = 7) {
  PathTracer tracer(scene, settings);
  RayCounts rays;
  return RenderPathTraced(MPI_COMM_WORLD, tracer, InsideCube(size), spp, seed, &rays, false);
}

struct PixelStats {
  double mean = 0, standardError = 0, min = 0;
  bool finite = true;
};

// Mean over all pixel values of the image and the standard error of that mean (pixels are independent).
PixelStats StatsOf(const Image &image) {
  PixelStats s;
  const double n = double(image.rgb.size());
  s.min = image.rgb[0];
  for (float v : image.rgb) {
    s.finite = s.finite && std::isfinite(v);
    s.mean += v / n;
    s.min = std::min(s.min, double(v));
  }
  double squares = 0;
  for (float v : image.rgb) squares += (v - s.mean) * (v - s.mean);
  s.standardError = std::sqrt(squares / (n - 1) / n);
  return s;
}

TEST(PathTracer, WhiteFurnacePixelsAreTwo) {
  // Closed box, Kd 0.5, Ke 1 everywhere: L = Ke / (1 - Kd) = 2 at every point, in every channel.
  const Image image = Render(FurnaceCube(), PathTraceSettings(), 24, 4);
  const PixelStats s = StatsOf(image);
  ASSERT_TRUE(s.finite);
  EXPECT_GE(s.min, 1.0);  // every sample sees Ke = 1 directly and adds only non-negative terms
  EXPECT_GT(s.standardError, 0);
  EXPECT_NEAR(s.mean, 2.0, 4 * s.standardError) << "standard error " << s.standardError;
  EXPECT_LT(s.standardError, 0.02);  // the test can tell 2 from a 4% bias
}

TEST(PathTracer, DepthLimitCountsBounces) {
  const Scene furnace = FurnaceCube();
  PathTraceSettings settings;
  settings.maxDepth = 0;  // emitters only: exactly Ke = 1
  const Image emitted = Render(furnace, settings, 8, 1);
  for (float v : emitted.rgb) ASSERT_EQ(v, 1.0f);
  settings.maxDepth = 1;  // plus direct light: Kd * (irradiance / pi) = 0.5 * Ke * (sum of F = 1) -> 1.5
  const PixelStats s = StatsOf(Render(furnace, settings, 24, 4));
  EXPECT_NEAR(s.mean, 1.5, 4 * s.standardError) << "standard error " << s.standardError;
  EXPECT_LT(s.standardError, 0.02);
}

TEST(PathTracer, ImageDoesNotDependOnThreads) {
  const Scene furnace = FurnaceCube();
  Image one, two;
  {
    ThreadLimit limit(1);
    one = Render(furnace, PathTraceSettings(), 16, 2);
  }
  {
    ThreadLimit limit(3);
    two = Render(furnace, PathTraceSettings(), 16, 2);
  }
  ASSERT_EQ(one.rgb.size(), two.rgb.size());
  EXPECT_EQ(0, std::memcmp(one.rgb.data(), two.rgb.data(), one.rgb.size() * sizeof(float)));
  // ... but does depend on the seed.
  const Image other = Render(furnace, PathTraceSettings(), 16, 2, 8);
  EXPECT_NE(0, std::memcmp(one.rgb.data(), other.rgb.data(), one.rgb.size() * sizeof(float)));
}

TEST(PathTracer, PointOnPatchWeightsGiveAreaAverages) {
  // A trapezoid, whose bilinear map does not preserve area: weighted means over uniform (u, v) must give its
  // area (mean weight 1) and its area centroid.
  const Vec3 c[4] = {{0, 0, 0}, {4, 0, 0}, {3, 1, 0}, {1, 1, 0}};  // area 3, centroid y = 4/9
  const int m = 200;
  double weightSum = 0, ySum = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) {
      double w;
      const Vec3 p = PointOnPatch(c, 4, (i + 0.5) / m, (j + 0.5) / m, &w);
      weightSum += w;
      ySum += w * p.y;
    }
  EXPECT_NEAR(weightSum / (m * m), 1.0, 1e-9);
  EXPECT_NEAR(ySum / weightSum, 4.0 / 9.0, 1e-5);  // unweighted: 0.5
  double w;
  PointOnPatch(c, 3, 0.3, 0.6, &w);
  EXPECT_EQ(w, 1.0);
}

struct Comparison {
  int values = 0, beyond3 = 0, beyond5 = 0;
  double worst = 0;  // largest |difference| / standard error
};

// Patch by patch and channel by channel: how many estimates lie more than 3 and 5 standard errors from the
// reference. A small absolute allowance covers rounding (patches whose value is exact have a zero error).
Comparison Compare(const PatchEstimates &e, const std::vector<double> &reference) {
  Comparison c;
  for (size_t k = 0; k < reference.size(); ++k) {
    const double d = std::fabs(e.radiance[k] - reference[k]);
    const double se = e.standardError[k], slack = 1e-9 * (1 + std::fabs(reference[k]));
    ++c.values;
    if (d > 3 * se + slack) ++c.beyond3;
    if (d > 5 * se + slack) ++c.beyond5;
    if (se > 0) c.worst = std::max(c.worst, d / se);
  }
  return c;
}

// All rows of F on this rank (CPU form factors) and the radiosity solution by a dense direct solve.
std::vector<double> ExactRadiosity(const Scene &scene, int subdiv, std::vector<Patch> *patches) {
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, subdiv);
  const EmbreeScene embree(scene);
  const long long n = (long long)g.patches.size();
  std::vector<long long> rows(static_cast<size_t>(n));
  std::iota(rows.begin(), rows.end(), 0LL);
  std::vector<double> f, rho, e;
  PhaseTimers timers;
  FormFactorCounters counters;
  ComputeRowsCpu(g, embree, rows, FormFactorOptions(), f, timers, counters, false);
  for (const Patch &p : g.patches)
    for (int c = 0; c < 3; ++c) {
      rho.push_back(p.reflectance[c]);
      e.push_back(p.emission[c]);
    }
  std::vector<double> b(3 * size_t(n));
  for (int c = 0; c < 3; ++c) {
    const std::vector<double> channel = test::DenseSolve(n, f, rho, e, c);
    for (size_t i = 0; i < size_t(n); ++i) b[3 * i + size_t(c)] = channel[i];
  }
  *patches = g.patches;
  return b;
}

TEST(PathTracer, PatchEstimatesMatchExactRadiosityOfLitFloor) {
  // One emitting wall, one reflecting floor, black sides: the floor's radiance varies, and radiosity is exact
  // (the floor receives only from the uniform emitter), so only Monte Carlo error separates the two.
  const Scene scene = LoadScene(std::string(RAD_SOURCE_DIR) + "/meshes/tests/lit_floor_box.obj");
  std::vector<Patch> patches;
  const std::vector<double> b = ExactRadiosity(scene, 3, &patches);
  const PathTracer tracer(scene, PathTraceSettings());
  RayCounts rays;
  const PatchEstimates e = EstimatePatches(MPI_COMM_WORLD, tracer, patches, 64, 3, &rays, false);
  ASSERT_EQ(e.radiance.size(), b.size());
  const Comparison c = Compare(e, b);
  EXPECT_LE(c.beyond3, c.values / 100) << "worst " << c.worst << " standard errors";
  EXPECT_EQ(c.beyond5, 0) << "worst " << c.worst << " standard errors";
  // The floor really varies (centre brighter than corners), and the estimates are tight enough to tell.
  double floorMin = 1e9, floorMax = 0, worstRelativeError = 0;
  for (size_t i = 0; i < patches.size(); ++i)
    if (patches[i].face == 0) {
      floorMin = std::min(floorMin, b[3 * i]);
      floorMax = std::max(floorMax, b[3 * i]);
      worstRelativeError = std::max(worstRelativeError, e.standardError[3 * i] / b[3 * i]);
    }
  EXPECT_GT(floorMax, 1.5 * floorMin);
  EXPECT_LT(worstRelativeError, 0.1);
}

TEST(PathTracer, PatchEstimatesMatchRadiosityOfManyBounces) {
  // A closed cube whose walls have different Kd per channel and Ke = c (1 - Kd): then L = c at every point
  // (L = Ke + Kd * c, since the whole hemisphere sees c), a solution of the radiosity system for exact F.
  // Paths bounce many times, Russian roulette ends them, and the six emitters differ in power.
  const Vec3 c(1.0, 2.0, 0.5);
  const Vec3 kd[6] = {{0.3, 0.5, 0.7}, {0.8, 0.4, 0.3}, {0.5, 0.5, 0.5},
                      {0.6, 0.9, 0.4}, {0.4, 0.2, 0.6}, {0.7, 0.6, 0.1}};
  Scene scene = test::UnitCube();
  scene.materials.clear();
  for (int k = 0; k < 6; ++k) {
    Material m;
    m.name = "wall" + std::to_string(k);
    m.reflectance = kd[k];
    m.emission = {c.x * (1 - kd[k].x), c.y * (1 - kd[k].y), c.z * (1 - kd[k].z)};
    scene.materials.push_back(m);
    scene.faces[size_t(k)].material = k;
  }
  std::vector<Patch> patches;
  const std::vector<double> b = ExactRadiosity(scene, 2, &patches);
  for (size_t i = 0; i < patches.size(); ++i)
    for (int ch = 0; ch < 3; ++ch) ASSERT_NEAR(b[3 * i + size_t(ch)], c[ch], 1e-3 * c[ch]);
  const PathTracer tracer(scene, PathTraceSettings());
  RayCounts rays;
  const PatchEstimates e = EstimatePatches(MPI_COMM_WORLD, tracer, patches, 64, 5, &rays, false);
  const Comparison cmp = Compare(e, b);
  EXPECT_LE(cmp.beyond3, cmp.values / 100) << "worst " << cmp.worst << " standard errors";
  EXPECT_EQ(cmp.beyond5, 0) << "worst " << cmp.worst << " standard errors";
  EXPECT_GT(rays.bounce, 2 * long(patches.size()) * 64);  // paths went on after the first bounce
}

TEST(PathTracer, PatchEstimatesDoNotDependOnThreads) {
  const Scene scene = LoadScene(std::string(RAD_SOURCE_DIR) + "/meshes/tests/lit_floor_box.obj");
  const std::vector<Patch> patches = MakePatches(scene, 1);
  const PathTracer tracer(scene, PathTraceSettings());
  RayCounts rays;
  PatchEstimates one, three;
  {
    ThreadLimit limit(1);
    one = EstimatePatches(MPI_COMM_WORLD, tracer, patches, 16, 9, &rays, false);
  }
  {
    ThreadLimit limit(3);
    three = EstimatePatches(MPI_COMM_WORLD, tracer, patches, 16, 9, &rays, false);
  }
  EXPECT_EQ(one.radiance, three.radiance);
  EXPECT_EQ(one.standardError, three.standardError);
  EXPECT_THROW(EstimatePatches(MPI_COMM_WORLD, tracer, patches, 1, 9, &rays, false), InputError);
}

}  // namespace
}  // namespace rad
