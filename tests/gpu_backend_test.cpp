// The GPU backend's form factors and image, checked on this machine through the host-compiled kernels (the
// same RAD_HD code the CUDA kernels run, tracing on the project's BVH) against the CPU backend (Embree), and on
// a device when one is present. Backend selection: asking for a GPU that is not there is the user's mistake.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

#include "accel/bvh_builder.h"
#include "formfactor/cpu_form_factors.h"
#include "formfactor/embree_scene.h"
#include "formfactor/geometry.h"
#include "formfactor/kernel_form_factors.h"
#include "formfactor/pair.h"
#include "formfactor/pair_kernels.h"
#include "pipeline/backend.h"
#include "render/bvh_pixel.h"
#include "render/camera.h"
#include "render/radiosity_renderer.h"
#include "render/smooth_mesh.h"
#include "scene/scene.h"
#include "util/error.h"

#include "cuda/device_info.h"
#include "cuda/gpu_form_factors.h"
#include "cuda/gpu_renderer.h"

namespace rad {
namespace {

Scene Load(const std::string &name) { return LoadScene(std::string(RAD_SOURCE_DIR) + "/meshes/" + name); }

std::vector<long long> AllRows(size_t n) {
  std::vector<long long> rows(n);
  for (size_t i = 0; i < n; ++i) rows[i] = (long long)i;
  return rows;
}

struct RowsOfBothBackends {
  std::vector<double> cpu, kernels;
  FormFactorCounters cpuCounters, kernelCounters;
  long long n = 0;
};

RowsOfBothBackends ComputeBoth(const Scene &scene, int subdiv, uint32_t shadowRays,
                               VisibilityMethod visibility = VisibilityMethod::kExact) {
  RowsOfBothBackends r;
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, subdiv);
  r.n = (long long)g.patches.size();
  FormFactorOptions options;
  options.shadowRays = shadowRays;
  options.pair.visibility = visibility;
  PhaseTimers timers;
  const EmbreeScene embree(scene);
  ComputeRowsCpu(g, embree, AllRows(g.patches.size()), options, r.cpu, timers, r.cpuCounters, false);
  ComputeRowsWithPairKernels(g, BuildBvh(SceneTriangles(scene)), AllRows(g.patches.size()), options, r.kernels,
                             r.kernelCounters);
  return r;
}

// The unoccluded factors and the shaft decisions are the same code on both sides, and the shadow rays are the
// same single-precision rays; only the ray tracer differs (Embree vs the BVH), and the two agree ray by ray
// except at grazing hits (bvh_test.cpp). So entries must be equal, bar a few pairs where one grazing ray of
// the R flips, which moves the entry by at most its share of the kernel weight.
void ExpectSameRows(const RowsOfBothBackends &r, const char *scene) {
  ASSERT_EQ(r.cpu.size(), r.kernels.size());
  size_t differing = 0;
  double worst = 0;
  for (size_t e = 0; e < r.cpu.size(); ++e) {
    const double d = std::fabs(r.cpu[e] - r.kernels[e]);
    if (d > 0) ++differing;
    worst = std::max(worst, d);
  }
  EXPECT_LE(double(differing), 1e-3 * double(r.cpu.size())) << scene << ": entries that differ";
  EXPECT_LE(worst, 0.02) << scene << ": largest difference of an entry";
  EXPECT_EQ(r.cpuCounters.pairsExchanging, r.kernelCounters.pairsExchanging) << scene;
  EXPECT_EQ(r.cpuCounters.pairsRayTraced, r.kernelCounters.pairsRayTraced) << scene;
  // The CPU computes each unordered pair once (ComputesPair), the per-entry kernels every entry, and both
  // entries of a pair cost the same: exactly half the work, for the same bits.
  EXPECT_EQ(2 * r.cpuCounters.rays, r.kernelCounters.rays) << scene;
  EXPECT_EQ(2 * r.cpuCounters.evaluations, r.kernelCounters.evaluations) << scene;
}

TEST(GpuBackendHost, PairKernelsReproduceCpuRowsOnAnalyticScenes) {
  for (const char *name : {"tests/parallel_squares.obj", "tests/perpendicular_squares.obj",
                           "tests/blocked_squares.obj", "tests/unit_cube.obj"}) {
    const RowsOfBothBackends r = ComputeBoth(Load(name), 2, 16);
    ExpectSameRows(r, name);
    for (size_t e = 0; e < r.cpu.size(); ++e) ASSERT_EQ(r.cpu[e], r.kernels[e]) << name << " entry " << e;
  }
}

TEST(GpuBackendHost, PairKernelsReproduceCpuRowsWithShadowRays) {
  // The sphere occludes many pairs: shadow rays decide most of the matrix's structure.
  const RowsOfBothBackends r = ComputeBoth(Load("cornell_sphere.obj"), 1, 16, VisibilityMethod::kRays);
  EXPECT_GT(r.cpuCounters.rays, 5000);  // each unordered pair traced once
  ExpectSameRows(r, "cornell_sphere.obj");
}

TEST(GpuBackendHost, PairKernelsReproduceCpuRowsWithExactVisibility) {
  // The exact kernel is the same code on both sides and traces no ray: every entry is equal.
  const RowsOfBothBackends r = ComputeBoth(Load("cornell_sphere.obj"), 0, 16);
  EXPECT_GT(r.cpuCounters.pairsOccluded, 50);
  EXPECT_EQ(r.cpuCounters.pairsOccluded, r.kernelCounters.pairsOccluded);
  EXPECT_EQ(r.cpuCounters.rays, 0);
  ExpectSameRows(r, "cornell_sphere.obj");
  for (size_t e = 0; e < r.cpu.size(); ++e) ASSERT_EQ(r.cpu[e], r.kernels[e]) << "entry " << e;
}

TEST(GpuBackendHost, EntriesPastTheDeviceWorkLimitAreFinishedOnTheHostWithTheSameBits) {
  // The Cornell box unsplit: a few occluded entries cost a core tenths of a second (the tall block between
  // big walls), which one GPU thread would take a minute over. The limit gives them up; they are computed
  // again without it, and every entry comes out as the CPU backend's.
  const Scene scene = Load("cornell_box.obj");
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, 0);
  PairSettings limited, higher;
  limited.occludedWorkLimit = kDeviceOccludedWork;
  higher.occludedWorkLimit = 25 * kDeviceOccludedWork;
  int deferred = 0, keptOccludedAtHigher = 0;
  for (int i = 0; i < int(g.patches.size()); ++i)
    for (int j = 0; j < int(g.patches.size()); ++j) {
      const PairResult p = FormFactorPair(g, i, j, limited);
      EXPECT_FALSE(p.deferred && (p.value != 0 || p.occluded || p.evaluations != 0)) << i << "," << j;
      deferred += p.deferred ? 1 : 0;
      keptOccludedAtHigher += FormFactorPair(g, i, j, higher).occluded ? 1 : 0;
    }
  EXPECT_GT(deferred, 10);
  EXPECT_GT(keptOccludedAtHigher, 10);  // a higher limit spares the ordinary occluded entries
  const RowsOfBothBackends r = ComputeBoth(scene, 0, 16);
  EXPECT_EQ(r.kernelCounters.pairsDeferred, deferred);
  EXPECT_EQ(r.cpuCounters.pairsDeferred, 0);
  EXPECT_EQ(r.cpuCounters.pairsOccluded, r.kernelCounters.pairsOccluded);
  for (size_t e = 0; e < r.cpu.size(); ++e) ASSERT_EQ(r.cpu[e], r.kernels[e]) << "entry " << e;
  // --gpu-work-limit (FormFactorOptions::deviceWorkLimit): a higher limit gives up fewer, none gives up none, and the entries keep their bits either way.
  for (double limit : {kDeviceOccludedWork * 25, 0.0}) {
    FormFactorOptions options;
    options.shadowRays = 16;
    options.deviceWorkLimit = limit;
    std::vector<double> rows;
    FormFactorCounters counters;
    ComputeRowsWithPairKernels(g, BuildBvh(SceneTriangles(scene)), AllRows(g.patches.size()), options, rows,
                               counters);
    if (limit > 0) {
      EXPECT_LT(counters.pairsDeferred, deferred);
      EXPECT_GT(counters.pairsDeferred, 10);
    } else {
      EXPECT_EQ(counters.pairsDeferred, 0);
    }
    for (size_t e = 0; e < r.cpu.size(); ++e) ASSERT_EQ(r.cpu[e], rows[e]) << "limit " << limit << ", entry " << e;
  }
}

TEST(GpuBackendHost, BvhPixelsReproduceTheCpuImage) {
  const Scene scene = Load("cornell_box.obj");
  const std::vector<Patch> patches = MakePatches(scene, 1);
  std::vector<double> radiance(3 * patches.size());
  for (size_t i = 0; i < radiance.size(); ++i) radiance[i] = 0.1 + double((i * 7919) % 997) / 997.0;
  Camera camera = LoadCameraJson(std::string(RAD_SOURCE_DIR) + "/meshes/cornell_box.camera.json");
  camera.width = 64;  // small, and not square: rows and columns must not be mixed up
  camera.height = 48;
  for (Shading shading : {Shading::kFlat, Shading::kSmooth}) {
    RenderOptions options;
    options.samplesPerPixel = 4;
    options.shading = shading;
    const Image cpu = RenderRadiosity(MPI_COMM_SELF, patches, radiance, camera, options);

    SmoothMesh mesh;
    if (shading == Shading::kSmooth) mesh = BuildSmoothMesh(patches, radiance);
    const std::vector<BvhTriangle> triangles = PatchTriangles(patches, camera.position);
    const FlatBvh bvh = BuildBvh(triangles);
    const std::vector<uint8_t> secondHalf = SecondHalves(triangles);
    BvhPixelJob job;
    job.shading = MakeShadingView(patches, radiance, shading == Shading::kSmooth ? &mesh : nullptr);
    job.frame = MakeCameraFrame(camera);
    job.bvh = bvh.View();
    job.secondHalf = secondHalf.data();
    job.seed = options.seed;
    job.samples = options.samplesPerPixel;
    job.strata = 2;
    size_t differing = 0, lit = 0;
    for (int y = 0; y < camera.height; ++y)
      for (int x = 0; x < camera.width; ++x) {
        float rgb[3];
        RenderPixelOnBvh(job, x, y, rgb);
        const size_t p = 3 * (size_t(y) * size_t(camera.width) + size_t(x));
        bool same = true;
        for (int c = 0; c < 3; ++c) same = same && std::fabs(rgb[c] - cpu.rgb[p + size_t(c)]) <= 1e-5f * (1 + rgb[c]);
        if (!same) ++differing;
        if (rgb[0] > 0) ++lit;
      }
    // Only samples whose ray grazes a shared patch edge may pick the neighbour.
    EXPECT_GT(lit, size_t(camera.width * camera.height / 2));
    EXPECT_LE(differing, size_t(camera.width * camera.height / 100)) << "shading " << int(shading);
  }
}

TEST(Backend, CpuIsAlwaysAvailable) { EXPECT_EQ(ResolveBackend(MPI_COMM_WORLD, "cpu"), Backend::kCpu); }

TEST(Backend, AskingForAMissingGpuIsAnInputError) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a CUDA device is present: there is no missing GPU to ask for";
  EXPECT_THROW(ResolveBackend(MPI_COMM_WORLD, "gpu"), InputError);
  EXPECT_EQ(ResolveBackend(MPI_COMM_WORLD, "auto"), Backend::kCpu);
  EXPECT_THROW(ResolveBackend(MPI_COMM_WORLD, "tpu"), InputError);
}

TEST(GpuBackendDevice, FormFactorsMatchTheCpuBackend) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << DescribeCudaDevices();
  const Scene scene = Load("cornell_sphere.obj");
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, 1);
  FormFactorOptions options;
  options.shadowRays = 16;
  PhaseTimers timers;
  RowsOfBothBackends r;
  r.n = (long long)g.patches.size();
  ComputeRowsWithPairKernels(g, BuildBvh(SceneTriangles(scene)), AllRows(g.patches.size()), options, r.cpu,
                             r.cpuCounters);
  ComputeRowsGpu(g, BuildBvh(SceneTriangles(scene)), AllRows(g.patches.size()), options, r.kernels, timers,
                 r.kernelCounters, false);
  // The same code on both sides; only fused multiply-adds may differ (nvcc fuses, g++ here does not).
  size_t far = 0;
  for (size_t e = 0; e < r.cpu.size(); ++e)
    if (std::fabs(r.cpu[e] - r.kernels[e]) > 1e-9 * (1 + std::fabs(r.cpu[e]))) ++far;
  EXPECT_LE(double(far), 1e-3 * double(r.cpu.size()));
  EXPECT_EQ(r.cpuCounters.pairsRayTraced, r.kernelCounters.pairsRayTraced);
}

TEST(GpuBackendDevice, FloatRowsAreTheDoubleRowsRoundedOnce) {
  // --precision float on the GPU: each entry downloaded in double, normalised in double where asked, then
  // rounded once; the device computes every entry the same way both times.
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << DescribeCudaDevices();
  const Scene scene = Load("cornell_sphere.obj");
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, 1);
  const FlatBvh bvh = BuildBvh(SceneTriangles(scene));
  for (bool normalize : {false, true}) {
    FormFactorOptions options;
    options.shadowRays = 16;
    options.normalizeRows = normalize;
    PhaseTimers timers;
    FormFactorCounters c64, c32;
    std::vector<double> wide;
    std::vector<float> narrow;
    ComputeRowsGpu(g, bvh, AllRows(g.patches.size()), options, wide, timers, c64, false);
    ComputeRowsGpu(g, bvh, AllRows(g.patches.size()), options, narrow, timers, c32, false);
    ASSERT_EQ(wide.size(), narrow.size());
    size_t differ = 0;
    for (size_t e = 0; e < wide.size(); ++e) differ += float(wide[e]) != narrow[e] ? 1 : 0;
    EXPECT_EQ(differ, 0u) << "normalize " << normalize;
    EXPECT_EQ(c64.pairsRayTraced, c32.pairsRayTraced);
  }
}

TEST(GpuBackendDevice, ImageMatchesTheCpuRenderer) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << DescribeCudaDevices();
  const std::vector<Patch> patches = MakePatches(Load("cornell_box.obj"), 1);
  std::vector<double> radiance(3 * patches.size(), 0.5);
  Camera camera = LoadCameraJson(std::string(RAD_SOURCE_DIR) + "/meshes/cornell_box.camera.json");
  camera.width = 64;  // small, and not square: rows and columns must not be mixed up
  camera.height = 48;
  RenderOptions options;
  options.samplesPerPixel = 4;
  const Image cpu = RenderRadiosity(MPI_COMM_SELF, patches, radiance, camera, options);
  const Image gpu = RenderRadiosityGpu(MPI_COMM_SELF, patches, radiance, camera, options);
  ASSERT_EQ(cpu.rgb.size(), gpu.rgb.size());
  size_t differing = 0;
  for (size_t k = 0; k < cpu.rgb.size(); ++k)
    if (std::fabs(cpu.rgb[k] - gpu.rgb[k]) > 1e-5f) ++differing;
  EXPECT_LE(differing, cpu.rgb.size() / 100);
}

}  // namespace
}  // namespace rad
