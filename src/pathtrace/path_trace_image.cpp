#include "pathtrace/path_trace_image.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "render/pixel_kernels.h"
#include "render/radiosity_renderer.h"
#include "util/decomposition.h"
#include "util/error.h"
#include "util/progress.h"

namespace rad {

void CheckPathTraceImage(const Camera &camera, int samplesPerPixel) {
  ValidateCamera(camera, "camera");
  if (samplesPerPixel < 1)
    throw InputError("samples per pixel must be at least 1, got " + std::to_string(samplesPerPixel));
  const size_t values = 3 * size_t(camera.width) * size_t(camera.height);
  RAD_CHECK(values <= size_t(std::numeric_limits<int>::max()), "path tracer: image too large for MPI_Reduce");
}

Image RenderPathTraced(MPI_Comm comm, const PathTracer &tracer, const Camera &camera, int samplesPerPixel,
                       uint64_t seed, RayCounts *rays, bool showProgress) {
  CheckPathTraceImage(camera, samplesPerPixel);
  const size_t values = 3 * size_t(camera.width) * size_t(camera.height);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const int width = camera.width, height = camera.height, samples = samplesPerPixel;
  const int strata = int(std::lround(std::sqrt(double(samples))));
  const CameraFrame frame = MakeCameraFrame(camera);
  const int myRows = CyclicCount(height, rank, ranks);

  // Every pixel is written by exactly one rank and is 0 elsewhere, so the sum in ReduceImage is exact.
  std::vector<float> rgb(values, 0.0f);
  RayCounts total;
  std::mutex totalMutex;
  Progress progress("path trace", myRows, showProgress && rank == 0);
  tbb::parallel_for(tbb::blocked_range<int>(0, myRows, 1), [&](const tbb::blocked_range<int> &block) {
    RayCounts local;
    std::vector<Vec3> values(static_cast<size_t>(samples));
    for (int r = block.begin(); r != block.end(); ++r) {
      const int y = CyclicItem(r, rank, ranks);
      for (int x = 0; x < width; ++x) {
        const uint64_t pixel = uint64_t(y) * uint64_t(width) + uint64_t(x);
        for (int s = 0; s < samples; ++s) {
          double dx, dy;
          SampleOffset(seed, pixel, s, samples, strata, dx, dy, kPathJitterStream);
          const CameraRay ray = FrameRay(frame, x + dx, y + dy);
          WalkRandom random(seed, pixel, uint32_t(s), kPathWalkStream);
          values[size_t(s)] = tracer.CameraRadiance(ray.origin, ray.direction, random, local);
        }
        const Vec3 mean = MeanOf(values.data(), samples);
        for (int c = 0; c < 3; ++c) rgb[3 * size_t(pixel) + size_t(c)] = float(mean[c]);
      }
      progress.Advance();
    }
    std::lock_guard<std::mutex> lock(totalMutex);
    total.Add(local);  // integer counts: the order of the sums does not matter
  });
  progress.Finish();
  if (rays) *rays = total;
  return ReduceImage(comm, width, height, std::move(rgb));
}

}  // namespace rad
