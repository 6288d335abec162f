// The GPU's wavefront path tracer, run here by the host's threads (the same RAD_HD stages, tracing on the
// project's BVH), against the CPU path tracer (Embree) and against exact answers; and on a device, when one is
// present, against the host's run of the same stages.
//
// Tolerance. Both tracers follow the same paths from the same random numbers; they differ only where their
// ray tracers do: hit distances may differ in the last bit of a float (Embree and the project's watertight
// test round differently), which moves a hit point by about 1e-7 of the scene's size and every value after it
// by about as much, and a ray that grazes an edge may hit a different polygon, after which the two paths are
// unrelated. So most pixels agree within 1e-5 (relative), a few differ by Monte Carlo noise, and the images
// agree in the mean.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "pathtrace/patch_estimates.h"
#include "pathtrace/path_trace_image.h"
#include "pathtrace/path_tracer.h"
#include "pathtrace/wavefront_host.h"
#include "render/camera.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "util/thread_limit.h"

#include "cuda/device_info.h"
#include "cuda/gpu_path_tracer.h"

namespace rad {
namespace {

Scene Load(const std::string &name) { return LoadScene(std::string(RAD_SOURCE_DIR) + "/meshes/" + name); }

Camera CornellCamera(int size) {
  Camera c = LoadCameraJson(std::string(RAD_SOURCE_DIR) + "/meshes/cornell_sphere.camera.json");
  c.width = c.height = size;
  return c;
}

// How two lists of values (pixels or patch radiances) compare, value by value.
struct Agreement {
  double sameShare = 0;       // share of values within 1e-5 relative (or 1e-9 absolute) of each other
  double meanA = 0, meanB = 0;
};

template <typename T>
Agreement Agree(const std::vector<T> &a, const std::vector<T> &b) {
  Agreement r;
  EXPECT_EQ(a.size(), b.size());
  long same = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    const double x = a[k], y = b[k];
    EXPECT_TRUE(std::isfinite(x) && std::isfinite(y)) << "value " << k;
    if (std::fabs(x - y) <= 1e-5 * std::max(std::fabs(x), std::fabs(y)) + 1e-9) ++same;
    r.meanA += x / double(a.size());
    r.meanB += y / double(a.size());
  }
  r.sameShare = double(same) / double(a.size());
  return r;
}

TEST(WavefrontHost, ImageMatchesTheCpuPathTracer) {
  const Scene scene = Load("cornell_sphere.obj");
  const PathTraceSettings settings;
  const PathTracer cpu(scene, settings);
  const HostWavefrontTracer wavefront(scene, settings);
  const Camera camera = CornellCamera(40);
  RayCounts cpuRays, waveRays;
  const Image a = RenderPathTraced(MPI_COMM_WORLD, cpu, camera, 4, 11, &cpuRays, false);
  const Image b = wavefront.Render(MPI_COMM_WORLD, camera, 4, 11, 1 << 12, &waveRays);
  const Agreement r = Agree(a.rgb, b.rgb);
  EXPECT_GE(r.sameShare, 0.99);  // measured: 99.9 %
  EXPECT_NEAR(r.meanA, r.meanB, 1e-3 * r.meanA);
  EXPECT_GT(r.meanA, 0.01);  // the image is not black: the comparison means something
  // The same paths: the same numbers of rays of each kind, up to the few paths that diverged.
  EXPECT_EQ(cpuRays.primary, waveRays.primary);
  EXPECT_NEAR(double(cpuRays.bounce), double(waveRays.bounce), 0.01 * double(cpuRays.bounce));
  EXPECT_NEAR(double(cpuRays.shadow), double(waveRays.shadow), 0.01 * double(cpuRays.shadow));
}

TEST(WavefrontHost, PatchEstimatesMatchTheCpuPathTracer) {
  // Many bounces (white and coloured walls), a sphere's curved facets, paths from points on the patches.
  const Scene scene = Load("cornell_sphere.obj");
  const std::vector<Patch> patches = MakePatches(scene, 1);
  const PathTraceSettings settings;
  const PathTracer cpu(scene, settings);
  const HostWavefrontTracer wavefront(scene, settings);
  RayCounts rays;
  const PatchEstimates a = EstimatePatches(MPI_COMM_WORLD, cpu, patches, 16, 5, &rays, false);
  const PatchEstimates b = wavefront.EstimatePatches(MPI_COMM_WORLD, patches, 16, 5, 1000, &rays);
  const Agreement radiance = Agree(a.radiance, b.radiance);
  EXPECT_GE(radiance.sameShare, 0.97);
  EXPECT_NEAR(radiance.meanA, radiance.meanB, 1e-2 * radiance.meanA);
  EXPECT_GE(Agree(a.standardError, b.standardError).sameShare, 0.97);
}

TEST(WavefrontHost, WhiteFurnacePixelsAreTwo) {
  // Closed box, Kd 0.5, Ke 1 everywhere: L = 2 at every point. Paths end only by Russian roulette.
  const Scene furnace = Load("tests/furnace_cube.obj");
  Camera camera;
  camera.position = {0.5, 0.5, 0.5};
  camera.target = {0.5, 0.5, 0};
  camera.up = {0, 1, 0};
  camera.fovYDeg = 60;
  camera.width = camera.height = 24;
  const HostWavefrontTracer wavefront(furnace, PathTraceSettings());
  RayCounts rays;
  const Image image = wavefront.Render(MPI_COMM_WORLD, camera, 4, 7, 1 << 20, &rays);
  double mean = 0, squares = 0, least = 1e9;
  const double n = double(image.rgb.size());
  for (float v : image.rgb) mean += v / n, least = std::min(least, double(v));
  for (float v : image.rgb) squares += (v - mean) * (v - mean);
  const double standardError = std::sqrt(squares / (n - 1) / n);
  EXPECT_GE(least, 1.0);  // every sample sees Ke = 1 directly and adds only non-negative terms
  EXPECT_NEAR(mean, 2.0, 4 * standardError) << "standard error " << standardError;
  EXPECT_LT(standardError, 0.02);
  EXPECT_GT(rays.bounce, 3 * rays.primary);  // paths went on bouncing
}

TEST(WavefrontHost, BatchesAndThreadsDoNotChangeTheResult) {
  // Paths are scheduled in any order (queues filled by concurrent threads) and split into batches of any
  // size; their values, and the image, stay the same bit for bit.
  const Scene scene = Load("cornell_sphere.obj");
  const HostWavefrontTracer wavefront(scene, PathTraceSettings());
  const Camera camera = CornellCamera(16);
  RayCounts rays;
  Image one, many;
  {
    ThreadLimit limit(1);
    one = wavefront.Render(MPI_COMM_WORLD, camera, 3, 4, 1 << 20, &rays);
  }
  {
    ThreadLimit limit(3);
    many = wavefront.Render(MPI_COMM_WORLD, camera, 3, 4, 37, &rays);  // 12 pixels a batch, the last one short
  }
  ASSERT_EQ(one.rgb.size(), many.rgb.size());
  EXPECT_EQ(0, std::memcmp(one.rgb.data(), many.rgb.data(), one.rgb.size() * sizeof(float)));
}

TEST(WavefrontHost, RanksSharesAddUpToTheOneRankResult) {
  // Ranks take rows (pixels) and patches cyclically; every value is computed by one rank from the same random
  // numbers, so three ranks' shares add up to the one-rank result bit for bit (what ReduceImage and
  // GatherPatchEstimates then sum over MPI).
  const Scene scene = Load("cornell_sphere.obj");
  const HostWavefrontTracer wavefront(scene, PathTraceSettings());
  const Camera camera = CornellCamera(13);  // 13 rows: the ranks get 5, 4 and 4
  const std::vector<float> whole = wavefront.ImageShare(camera, 2, 6, 0, 1, 1 << 20);
  std::vector<float> sum(whole.size(), 0.0f);
  for (int rank = 0; rank < 3; ++rank) {
    const std::vector<float> share = wavefront.ImageShare(camera, 2, 6, rank, 3, 50);
    ASSERT_EQ(share.size(), whole.size());
    for (size_t k = 0; k < sum.size(); ++k) sum[k] += share[k];
  }
  EXPECT_EQ(0, std::memcmp(whole.data(), sum.data(), whole.size() * sizeof(float)));

  const std::vector<Patch> patches = MakePatches(scene, 0);  // 46 patches
  const std::vector<double> all = wavefront.PatchShare(patches, 4, 6, 0, 1, 1 << 20);
  std::vector<double> total(all.size(), 0.0);
  for (int rank = 0; rank < 3; ++rank) {
    const std::vector<double> share = wavefront.PatchShare(patches, 4, 6, rank, 3, 30);
    for (size_t k = 0; k < total.size(); ++k) total[k] += share[k];
  }
  EXPECT_EQ(all, total);
}

TEST(WavefrontDevice, GpuMatchesTheHostStages) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << DescribeCudaDevices();
  // The same stages compiled by nvcc: the device may contract a*b+c into one rounding in the double-precision
  // physics (the traversal's single-precision arithmetic is rounded like the host's), so values agree to
  // about 1e-12 where the paths are the same, and a path that takes another polygon at a grazing hit differs.
  const Scene scene = Load("cornell_sphere.obj");
  const PathTraceSettings settings;
  const HostWavefrontTracer host(scene, settings);
  const GpuPathTracer gpu(MPI_COMM_WORLD, scene, settings);
  const Camera camera = CornellCamera(64);
  RayCounts hostRays, gpuRays;
  const Image a = host.Render(MPI_COMM_WORLD, camera, 4, 3, 1 << 16, &hostRays);
  const Image b = gpu.Render(MPI_COMM_WORLD, camera, 4, 3, 1 << 16, &gpuRays, false);
  const Agreement r = Agree(a.rgb, b.rgb);
  EXPECT_GE(r.sameShare, 0.99);
  EXPECT_NEAR(r.meanA, r.meanB, 1e-3 * r.meanA);
  EXPECT_EQ(hostRays.primary, gpuRays.primary);

  const std::vector<Patch> patches = MakePatches(scene, 1);
  const PatchEstimates pa = host.EstimatePatches(MPI_COMM_WORLD, patches, 16, 5, 1 << 16, &hostRays);
  const PatchEstimates pb = gpu.EstimatePatches(MPI_COMM_WORLD, patches, 16, 5, 1000, &gpuRays, false);
  EXPECT_GE(Agree(pa.radiance, pb.radiance).sameShare, 0.99);
}

}  // namespace
}  // namespace rad
