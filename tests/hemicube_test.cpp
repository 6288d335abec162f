// Hemicube gathering (formfactor/hemicube.h, hemicube_rows.h): the multiplier map is a partition of the
// cosine-weighted hemisphere, a patch under an infinite plane gathers all of it, rows approach the exact point
// form factors as the resolution grows, and neither threads nor back sides change what a row holds.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>

#include "formfactor/convex_polygon.h"
#include "formfactor/hemicube.h"
#include "formfactor/hemicube_rows.h"
#include "formfactor/hemicube_bvh.h"
#include "formfactor/point_polygon.h"
#include "cuda/device_info.h"
#include "cuda/gpu_hemicube.h"
#include "scene/patch.h"
#include "tests/test_scenes.h"

namespace rad {
namespace {

FormFactorRows Rows(const Scene &scene, const std::vector<Patch> &patches, HemicubeOptions options) {
  FormFactorRows f;
  f.n = (long long)patches.size();
  for (size_t i = 0; i < patches.size(); ++i) f.rows.push_back((long long)i);
  long long rays = 0;
  ComputeHemicubeRowsCpu(scene, patches, f.rows, options, f, rays, false);
  EXPECT_EQ(rays, (long long)patches.size() * HemicubePixels(options.resolution));
  return f;
}

TEST(Hemicube, TheMultiplierMapSumsToOne) {
  for (int n : {2, 8, 64, 128}) {
    const std::vector<double> w = HemicubeWeights(n);
    ASSERT_EQ(w.size(), size_t(3 * n * n));
    double sum = 0, top = 0;
    for (size_t k = 0; k < w.size(); ++k) {
      EXPECT_GT(w[k], 0);
      sum += w[k];
      if (k < size_t(n * n)) top += w[k];
    }
    EXPECT_NEAR(sum, 1.0, 1e-13) << n;
    // The top face alone is the square [-1, 1]^2 at height 1 seen from below: 1/(2 pi) 4 x (the corner term),
    // the unit square's form factor at distance 1 from a point under its corner, 0.13826, four times.
    const double corner = (1 / (2 * kPi)) * (1 / std::sqrt(2.0) * std::atan(1 / std::sqrt(2.0)) * 2);
    EXPECT_NEAR(top, 4 * corner, 1e-13) << n;
  }
}

TEST(Hemicube, APatchUnderAnInfinitePlaneGathersAllOfIt) {
  // A small floor under a ceiling wide enough that every pixel's ray meets it (the lowest side pixels rise at
  // 1/128 rad at n = 64: 128 units out at height 1).
  const Scene s = test::SceneOf({test::RectZ(-0.1, 0.1, -0.1, 0.1, 0, true), test::RectZ(-1e4, 1e4, -1e4, 1e4, 1, false)});
  const std::vector<Patch> patches = MakePatches(s, 0);
  for (bool rotate : {false, true}) {
    const FormFactorRows f = Rows(s, patches, {64, rotate, 7});
    EXPECT_NEAR(f.RowSum(0), 1.0, 1e-13);
    EXPECT_EQ(f.At(0, 1), f.RowSum(0));
  }
}

TEST(Hemicube, RowsApproachThePointFormFactorsAsTheResolutionGrows) {
  // A floor of 4 x 4 patches under a unit square at height 1: patch i's entry for the square is its hemicube's
  // estimate of the square's form factor from i's centroid, which Lambert's formula gives exactly.
  Scene s = test::SceneOf({test::RectZ(0, 1, 0, 1, 0, true), test::RectZ(0.2, 1.2, 0.3, 1.3, 1, false)});
  Meshing m;
  m.subdiv = 2;
  std::vector<Patch> patches = MakePatches(s, m);
  const Patch &top = patches.back();
  ASSERT_EQ(patches.size(), 32u);
  std::vector<Patch> floorAndSquare(patches.begin(), patches.begin() + 16);
  Patch square = PatchOf(s.faces[1].corners.data(), 4, 1, Material{}, top.normal);
  floorAndSquare.push_back(square);
  double previous = 1;
  for (int n : {8, 32, 128}) {
    const FormFactorRows f = Rows(s, floorAndSquare, {n, true, 3});
    double error = 0;
    for (size_t i = 0; i < 16; ++i) {
      const double exact =
          PointToPolygonFormFactor(floorAndSquare[i].centroid, floorAndSquare[i].normal, MakeConvexPolygon(square.corners, 4));
      error += std::fabs(f.At(i, 16) - exact) / 16;
    }
    EXPECT_LT(error, 0.6 * previous) << n;  // pixels cut by the square's edges, fewer as n grows
    previous = error;
  }
  EXPECT_LT(previous, 2e-4);  // measured: 9.5e-3, 1.5e-3 and 4.9e-5 at 8, 32 and 128
}

TEST(Hemicube, RowsDoNotDependOnTheThreadsAndBackSidesSendNothing) {
  // A closed box seen from inside, and one plate inside it facing down: patches above the plate see its back.
  std::vector<std::vector<Vec3>> polygons = test::BoxFaces({0, 0, 0}, {1, 1, 1}, false);
  polygons.push_back(test::RectZ(0.3, 0.7, 0.3, 0.7, 0.5, false));
  const Scene s = test::SceneOf(polygons);
  const std::vector<Patch> patches = MakePatches(s, 2);
  const FormFactorRows many = Rows(s, patches, {16, true, 5});
  FormFactorRows one;
  {
    tbb::global_control single(tbb::global_control::max_allowed_parallelism, 1);
    one = Rows(s, patches, {16, true, 5});
  }
  EXPECT_EQ(many.ColumnsUnpacked(), one.ColumnsUnpacked());
  EXPECT_EQ(many.f64, one.f64);
  const size_t plate = patches.size() - 1;
  for (size_t r = 0; r < patches.size(); ++r) {
    if (patches[r].face == patches[plate].face) continue;
    // The plate faces -z: only patches below it (z < 0.5) may hold an entry for it.
    const double entry = many.At(r, (long long)plate);
    if (patches[r].centroid.z > 0.5) EXPECT_EQ(entry, 0.0) << r;
  }
  // Every ray meets the box or the plate, so each row holds what its pixels did not give to the plate's back.
  for (size_t r = 0; r < patches.size(); ++r) EXPECT_LE(many.RowSum(r), 1 + 1e-13);
  EXPECT_GT(many.RowSum(0), 0.5);
}

// A room of 6 x 4 patch walls with a block inside and an obstruction plate: rows that see much, hide much and
// meet an obstruction.
Scene RoomWithBlockAndPlate() {
  std::vector<std::vector<Vec3>> polygons = test::BoxFaces({0, 0, 0}, {2, 1.5, 1}, false);
  for (const auto &face : test::BoxFaces({0.6, 0.4, 0}, {1.1, 0.9, 0.5}, true)) polygons.push_back(face);
  polygons.push_back(test::RectZ(1.3, 1.8, 0.2, 0.7, 0.8, false));
  Scene s = test::SceneOf(polygons);
  for (size_t f = 0; f < s.faces.size(); ++f) s.faces[f].polygon = int(f);
  Material plate;
  plate.obstruction = true;
  s.materials.push_back(plate);
  s.faces.back().material = 1;
  return s;
}

TEST(Hemicube, TheDevicesBvhPathGivesTheEmbreeRows) {
  // The pixels traced on the project's BVH (what the GPU runs per thread, here compiled for the host) against
  // Embree: the same hits but for rays that graze an edge, and every row summed the same way.
  const Scene s = RoomWithBlockAndPlate();
  const std::vector<Patch> patches = MakePatches(s, 2);
  const HemicubeOptions options{32, true, 11};
  const FormFactorRows embree = Rows(s, patches, options);
  FormFactorRows bvh;
  bvh.n = embree.n;
  bvh.rows = embree.rows;
  ComputeHemicubeRowsOnBvh(s, patches, bvh.rows, options, bvh);
  ASSERT_EQ(bvh.indptr.size(), embree.indptr.size());
  double worst = 0;
  size_t sameRows = 0;
  const std::vector<int32_t> bvhColumns = bvh.ColumnsUnpacked(), embreeColumns = embree.ColumnsUnpacked();
  for (size_t r = 0; r < patches.size(); ++r) {
    worst = std::max(worst, std::fabs(bvh.RowSum(r) - embree.RowSum(r)));
    bool same = bvh.indptr[r + 1] - bvh.indptr[r] == embree.indptr[r + 1] - embree.indptr[r];
    for (long long k = bvh.indptr[r]; same && k < bvh.indptr[r + 1]; ++k)
      same = bvhColumns[size_t(k)] == embreeColumns[size_t(k)] && bvh.f64[size_t(k)] == embree.f64[size_t(k)];
    sameRows += same;
  }
  // A grazing ray that changes patch moves one pixel's weight (at most 1.2e-3 at n = 32) between entries.
  EXPECT_LT(worst, 2e-3);
  EXPECT_GT(sameRows, patches.size() * 9 / 10);
  // The obstruction takes what it hides: the floor under it sees less than the rest of the room gives.
  EXPECT_LT(embree.RowSum(0), 1.0);
}

TEST(Hemicube, TheGpuRowsAreTheHostBvhRows) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << DescribeCudaDevices();
  const Scene s = RoomWithBlockAndPlate();
  const std::vector<Patch> patches = MakePatches(s, 2);
  const HemicubeOptions options{32, true, 11};
  FormFactorRows host, device;
  host.n = device.n = (long long)patches.size();
  for (size_t i = 0; i < patches.size(); ++i) host.rows.push_back((long long)i);
  device.rows = host.rows;
  ComputeHemicubeRowsOnBvh(s, patches, host.rows, options, host);
  long long rays = 0;
  ComputeHemicubeRowsGpu(s, patches, device.rows, options, device, rays);
  EXPECT_EQ(device.indptr, host.indptr);
  EXPECT_EQ(device.ColumnsUnpacked(), host.ColumnsUnpacked());
  EXPECT_EQ(device.f64, host.f64);
}

}  // namespace
}  // namespace rad
