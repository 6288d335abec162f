#include "vpl/vpl_renderer.h"

#include <tbb/blocked_range.h>
#include <tbb/combinable.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "render/pixel_kernels.h"
#include "util/decomposition.h"
#include "util/error.h"
#include "util/math_constants.h"
#include "util/mpi_check.h"
#include "vpl/vpl_filters.h"
#include "vpl/vpl_lights.h"
#include "vpl/vpl_scene.h"

namespace rad {

namespace {

constexpr int kTile = 3;  // interleaved sampling: kTile x kTile VPL subsets over kTile x kTile pixel tiles

static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 buffers are reduced as doubles");

// Every rank holds the sum over ranks; each entry is non-zero on one rank only, so the sum is exact.
void AllreduceVec3(MPI_Comm comm, std::vector<Vec3> &v) {
  RAD_CHECK(3 * v.size() <= size_t(std::numeric_limits<int>::max()), "RenderVpl: buffer too large for MPI");
  RAD_MPI(MPI_Allreduce(MPI_IN_PLACE, v.data(), int(3 * v.size()), MPI_DOUBLE, MPI_SUM, comm));
}

// Runs f(y) for this rank's rows y = rank, rank + ranks, ... < height, on the TBB threads.
template <typename F>
void ForOwnRows(int height, int rank, int ranks, F &&f) {
  const int rows = CyclicCount(height, rank, ranks);
  tbb::parallel_for(tbb::blocked_range<int>(0, rows), [&](const tbb::blocked_range<int> &r) {
    for (int k = r.begin(); k != r.end(); ++k) f(CyclicItem(k, rank, ranks));
  });
}

GBuffer BuildGBuffer(const VplScene &scene, const std::vector<Patch> &patches, const CameraFrame &frame,
                     const VplOptions &o, int sample) {
  GBuffer g;
  g.width = frame.width;
  g.height = frame.height;
  g.samples.resize(size_t(g.width) * size_t(g.height));
  const int strata = int(std::lround(std::sqrt(double(o.samplesPerPixel))));
  tbb::parallel_for(tbb::blocked_range<int>(0, g.height), [&](const tbb::blocked_range<int> &rows) {
    for (int y = rows.begin(); y != rows.end(); ++y)
      for (int x = 0; x < g.width; ++x) {
        const uint64_t pixel = uint64_t(y) * uint64_t(g.width) + uint64_t(x);
        double dx = 0.5, dy = 0.5;
        if (o.samplesPerPixel > 1) SampleOffset(o.seed, pixel, sample, o.samplesPerPixel, strata, dx, dy);
        const CameraRay ray = FrameRay(frame, x + dx, y + dy);
        const SurfaceHit hit = scene.Intersect(ray.origin, ray.direction);
        GSample &s = g.samples[size_t(pixel)];
        if (!hit.hit) continue;
        const Patch &p = patches[size_t(hit.patch)];
        if (!(Dot(ray.direction, p.normal) < 0)) continue;  // back side: black
        s.valid = true;
        s.position = ray.origin + ray.direction * hit.t;
        s.normal = p.normal;
        s.depth = hit.t;
        s.patch = hit.patch;
        s.face = p.face;
      }
  });
  return g;
}

double BoundingDiagonal(const std::vector<Patch> &patches) {
  Vec3 lo(1e300, 1e300, 1e300), hi(-1e300, -1e300, -1e300);
  for (const Patch &p : patches)
    for (int k = 0; k < p.cornerCount; ++k) {
      lo = Min(lo, p.corners[k]);
      hi = Max(hi, p.corners[k]);
    }
  return patches.empty() ? 0 : Length(hi - lo);
}

}  // namespace

void CheckVplOptions(const VplOptions &o, const Camera &camera) {
  ValidateCamera(camera, "camera");
  if (o.paths < 1) throw InputError("--vpls must be at least 1, got " + std::to_string(o.paths));
  if (o.bounces < 0 || o.bounces > 64) throw InputError("--bounces must be in [0, 64], got " + std::to_string(o.bounces));
  if (!(o.clampDistance >= 0) || !std::isfinite(o.clampDistance))
    throw InputError("--clamp-distance must be a finite length >= 0 (0: automatic)");
  if (o.indirectScale < 1) throw InputError("--indirect-scale must be at least 1, got " + std::to_string(o.indirectScale));
  if (o.interleave && o.indirectScale > 1)
    throw InputError("--interleave and --indirect-scale > 1 cannot be combined: choose one acceleration of the indirect light");
  if (o.samplesPerPixel < 1) throw InputError("--spp must be at least 1");
  const size_t values = 3 * size_t(camera.width) * size_t(camera.height);
  if (values > size_t(std::numeric_limits<int>::max())) throw InputError("image too large");
}

Image RenderVpl(MPI_Comm comm, const std::vector<Patch> &patches, const Camera &camera, const VplOptions &o,
                PhaseTimers &timers, VplStats *stats) {
  CheckVplOptions(o, camera);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const int width = camera.width, height = camera.height;
  const size_t pixels = size_t(width) * size_t(height);
  const double diagonal = BoundingDiagonal(patches);
  const double epsilon = 1e-4 * diagonal;
  const double dmin = o.clampDistance > 0 ? o.clampDistance : 0.05 * diagonal;
  const double dmin2 = dmin * dmin;

  std::unique_ptr<VplScene> scene;
  {
    ScopedPhase phase(timers, "scene");
    scene = std::make_unique<VplScene>(patches, o.imperfectVisibility);
  }
  VplSet vpls;
  {
    ScopedPhase phase(timers, "VPLs");
    vpls = ShootVpls(patches, *scene, o.paths, o.bounces, o.seed, epsilon);
  }
  // Interleaved sampling: subset b = the indirect VPLs of paths [b N / 9, (b+1) N / 9), a contiguous stretch of
  // the Halton sequence (a stride-9 subsequence would fix the leading base-3 digits and cluster them).
  const int subsets = kTile * kTile;
  std::vector<size_t> subsetBegin(static_cast<size_t>(subsets) + 1);
  std::vector<double> subsetScale(static_cast<size_t>(subsets));
  for (int b = 0; b <= subsets; ++b) {
    const long long firstPath = b * o.paths / subsets;
    subsetBegin[size_t(b)] = size_t(std::lower_bound(vpls.indirect.begin(), vpls.indirect.end(), firstPath,
                                                     [](const Vpl &v, long long p) { return v.path < p; }) -
                                    vpls.indirect.begin());
    if (b < subsets) {
      const long long count = (b + 1) * o.paths / subsets - firstPath;
      subsetScale[size_t(b)] = count > 0 ? double(o.paths) / double(count) : 0.0;
    }
  }

  tbb::combinable<long long> rays([] { return 0LL; });
  long long fallbackPixels = 0;
  const CameraFrame frame = MakeCameraFrame(camera);
  std::vector<double> sum(3 * pixels, 0.0);
  for (int sample = 0; sample < o.samplesPerPixel; ++sample) {
    GBuffer g;
    {
      // Every rank traces the whole (cheap) geometry buffer: the filters need neighbours across rank rows.
      ScopedPhase phase(timers, "G-buffer");
      g = BuildGBuffer(*scene, patches, frame, o, sample);
    }
    std::vector<Vec3> direct(pixels, Vec3(0, 0, 0)), indirect(pixels, Vec3(0, 0, 0));
    {
      ScopedPhase phase(timers, "direct");
      ForOwnRows(height, rank, ranks, [&](int y) {
        long long &count = rays.local();
        for (int x = 0; x < width; ++x) {
          const GSample &s = g.At(x, y);
          if (!s.valid) continue;
          direct[size_t(y) * size_t(width) + size_t(x)] = GatherIrradiance(
              *scene, s.position, s.normal, s.face, vpls.direct.data(), vpls.direct.size(), 1.0, dmin2, epsilon, &count);
        }
      });
    }
    const int k = o.indirectScale;
    const int lowWidth = (width + k - 1) / k, lowHeight = (height + k - 1) / k;
    std::vector<Vec3> low;
    {
      ScopedPhase phase(timers, "indirect");
      if (k > 1) {
        low.assign(size_t(lowWidth) * size_t(lowHeight), Vec3(0, 0, 0));
        ForOwnRows(lowHeight, rank, ranks, [&](int j) {
          long long &count = rays.local();
          for (int i = 0; i < lowWidth; ++i) {
            const GSample &s = g.At(LowResSource(i, k, width), LowResSource(j, k, height));
            if (!s.valid) continue;
            low[size_t(j) * size_t(lowWidth) + size_t(i)] =
                GatherIrradiance(*scene, s.position, s.normal, s.face, vpls.indirect.data(), vpls.indirect.size(),
                                 1.0, dmin2, epsilon, &count);
          }
        });
      } else {
        ForOwnRows(height, rank, ranks, [&](int y) {
          long long &count = rays.local();
          for (int x = 0; x < width; ++x) {
            const GSample &s = g.At(x, y);
            if (!s.valid) continue;
            size_t begin = 0, end = vpls.indirect.size();
            double scale = 1.0;
            if (o.interleave) {
              const int b = (x % kTile) + kTile * (y % kTile);
              begin = subsetBegin[size_t(b)];
              end = subsetBegin[size_t(b) + 1];
              scale = subsetScale[size_t(b)];
            }
            indirect[size_t(y) * size_t(width) + size_t(x)] = GatherIrradiance(
                *scene, s.position, s.normal, s.face, vpls.indirect.data() + begin, end - begin, scale, dmin2,
                epsilon, &count);
          }
        });
      }
    }
    {
      ScopedPhase phase(timers, "reduce");
      AllreduceVec3(comm, direct);
      AllreduceVec3(comm, k > 1 ? low : indirect);
    }
    if (o.interleave) {
      ScopedPhase phase(timers, "filter");
      indirect = DiscontinuityFilter(g, indirect);
    }
    if (k > 1) {
      std::vector<size_t> fallback;
      {
        ScopedPhase phase(timers, "filter");
        indirect = BilateralUpsample(g, k, lowWidth, lowHeight, low, &fallback);
      }
      // Pixels with no similar low-resolution sample are computed exactly, by the rank that owns their row.
      std::vector<Vec3> exact(pixels, Vec3(0, 0, 0));
      {
        ScopedPhase phase(timers, "indirect");
        tbb::parallel_for(tbb::blocked_range<size_t>(0, fallback.size()), [&](const tbb::blocked_range<size_t> &r) {
          long long &count = rays.local();
          for (size_t f = r.begin(); f != r.end(); ++f) {
            const size_t p = fallback[f];
            if (CyclicOwner(int(p / size_t(width)), ranks) != rank) continue;
            const GSample &s = g.samples[p];
            exact[p] = GatherIrradiance(*scene, s.position, s.normal, s.face, vpls.indirect.data(),
                                        vpls.indirect.size(), 1.0, dmin2, epsilon, &count);
          }
        });
      }
      {
        ScopedPhase phase(timers, "reduce");
        AllreduceVec3(comm, exact);
      }
      for (size_t p : fallback) indirect[p] = exact[p];
      fallbackPixels += (long long)fallback.size();
    }
    for (size_t p = 0; p < pixels; ++p) {
      const GSample &s = g.samples[p];
      if (!s.valid) continue;
      const Patch &patch = patches[size_t(s.patch)];
      const Vec3 e = direct[p] + indirect[p];
      for (int c = 0; c < 3; ++c) sum[3 * p + size_t(c)] += patch.emission[c] + patch.reflectance[c] / kPi * e[c];
    }
  }

  if (stats) {
    stats->paths = o.paths;
    stats->directVpls = (long long)vpls.direct.size();
    stats->indirectVpls = (long long)vpls.indirect.size();
    stats->clampDistance = dmin;
    stats->shadowRays = rays.combine([](long long a, long long b) { return a + b; });
    stats->fallbackPixels = fallbackPixels;
  }
  Image image;
  if (rank != 0) return image;
  image.width = width;
  image.height = height;
  image.rgb.resize(3 * pixels);
  for (size_t v = 0; v < 3 * pixels; ++v) image.rgb[v] = float(sum[v] / o.samplesPerPixel);
  return image;
}

}  // namespace rad
