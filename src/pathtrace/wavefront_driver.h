// The loop of the wavefront path tracer (wavefront_stages.h), once for every place that runs its stages: the
// host's threads (wavefront_host.cpp) and the GPU (cuda/gpu_path_tracer.cu). A Backend provides
//   WavefrontJob Allocate(const WavefrontJob &base, int paths, int items)  buffers for one batch (usually
//                                                                          WavefrontBuffers::Attach)
//   void Run(WavefrontStage, const WavefrontJob &, int count)               one pass over `count` indices
//   void ReadCounts(const WavefrontJob &, int counts[2])                   the queues' lengths
//   void ClearCounts(const WavefrontJob &)
//   void ReadResults(const WavefrontJob &, int items, double *out)         6 per item
// and this file splits the rank's items into batches, moves paths between the queues until none is left, and
// gathers the items' results like the CPU path tracer does (rows or patches shared cyclically among ranks).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "pathtrace/patch_estimates.h"
#include "pathtrace/path_trace_image.h"
#include "pathtrace/path_tracer.h"
#include "pathtrace/wavefront_stages.h"
#include "render/image.h"
#include "render/radiosity_renderer.h"
#include "util/decomposition.h"
#include "util/error.h"
#include "util/mpi_check.h"
#include "util/progress.h"

namespace rad {

// The buffers of one batch and the job that points at them: Array is std::vector on the host and DeviceBuffer
// on the GPU (both have resize and data).
template <template <class...> class Array>
struct WavefrontBuffers {
  Array<WavefrontPath> paths;
  Array<Vec3> values;
  Array<double> results;
  Array<int> rays, nextRays, shadows, counts;

  WavefrontJob Attach(const WavefrontJob &base, int pathCount, int items) {
    for (Array<int> *queue : {&rays, &nextRays, &shadows}) queue->resize(size_t(pathCount));
    paths.resize(size_t(pathCount));
    values.resize(size_t(pathCount));
    results.resize(6 * size_t(items));
    counts.resize(2);
    WavefrontJob job = base;
    job.paths = paths.data();
    job.values = values.data();
    job.itemResults = results.data();
    job.rays = rays.data();
    job.nextRays = nextRays.data();
    job.shadows = shadows.data();
    job.counts = counts.data();
    return job;
  }
};

// Runs items [0, items) of `base` (its source, samples and camera or patches set) batch by batch; sink(first,
// count, results) receives each batch's 6 numbers per item. Returns the rays traced.
template <class Backend, class Sink>
RayCounts RunWavefront(Backend &backend, const WavefrontJob &base, long long items, long long pathsPerBatch,
                       Progress &progress, Sink sink) {
  RayCounts rays;
  if (items <= 0) return rays;
  const long long samples = base.samples;
  const long long perBatch = std::max(1LL, std::min(items, std::max(pathsPerBatch, samples) / samples));
  RAD_CHECK(perBatch * samples <= std::numeric_limits<int>::max(), "RunWavefront: batch too large");
  WavefrontJob job = backend.Allocate(base, int(perBatch * samples), int(perBatch));
  std::vector<double> results(6 * size_t(perBatch));
  for (long long first = 0; first < items; first += perBatch) {
    const int count = int(std::min(perBatch, items - first)), paths = int(count * samples);
    job.firstItem = first;
    backend.ClearCounts(job);
    backend.Run(WavefrontStage::kStart, job, paths);
    for (bool primary = base.source == PathSource::kCamera;; primary = false) {
      int queued[2];
      backend.ReadCounts(job, queued);
      // Light samples are connected before the next hits are shaded: the order of a path's sums on the CPU.
      if (queued[1] > 0) backend.Run(WavefrontStage::kConnect, job, queued[1]);
      rays.shadow += queued[1];
      backend.ClearCounts(job);
      if (queued[0] == 0) break;
      std::swap(job.rays, job.nextRays);
      backend.Run(WavefrontStage::kExtend, job, queued[0]);
      (primary ? rays.primary : rays.bounce) += queued[0];
      backend.Run(WavefrontStage::kShade, job, queued[0]);
    }
    backend.Run(WavefrontStage::kFinish, job, paths);
    backend.Run(WavefrontStage::kReduce, job, count);
    backend.ReadResults(job, count, results.data());
    sink(first, count, results.data());
    progress.Advance(count);
  }
  return rays;
}

// What the paths of rank `rank` of `ranks` start from: `samples` per item, jittered strata when that is a
// square.
inline void SetWavefrontSource(PathSource source, int samples, uint64_t seed, int rank, int ranks,
                               WavefrontJob &job) {
  job.source = source;
  job.samples = samples;
  job.strata = int(std::lround(std::sqrt(double(samples))));
  job.seed = seed;
  job.rank = rank;
  job.ranks = ranks;
}

// Rank `rank` of `ranks`'s share of a path-traced image: its rows (y = rank, rank + ranks, ...) filled, 0
// elsewhere, so that the sum of all ranks' shares is the image, exactly. `base` holds the scene, settings and
// BVH. Rays are counted into `rays`.
template <class Backend>
std::vector<float> TraceImageShare(Backend &backend, WavefrontJob base, const Camera &camera, int samplesPerPixel,
                                   uint64_t seed, int rank, int ranks, long long pathsPerBatch, RayCounts &rays,
                                   bool showProgress) {
  CheckPathTraceImage(camera, samplesPerPixel);
  SetWavefrontSource(PathSource::kCamera, samplesPerPixel, seed, rank, ranks, base);
  base.frame = MakeCameraFrame(camera);
  const int width = camera.width;
  const long long items = (long long)CyclicCount(camera.height, rank, ranks) * width;
  std::vector<float> rgb(3 * size_t(width) * size_t(camera.height), 0.0f);
  Progress progress("path trace", items, showProgress && rank == 0);
  rays = RunWavefront(backend, base, items, pathsPerBatch, progress,
                      [&](long long first, int count, const double *results) {
    for (int j = 0; j < count; ++j) {
      const long long item = first + j;
      const long long y = CyclicItem(item / width, rank, ranks), x = item % width;
      for (int c = 0; c < 3; ++c) rgb[3 * size_t(y * width + x) + size_t(c)] = float(results[6 * j + c]);
    }
  });
  progress.Finish();
  return rgb;
}

// Rank `rank` of `ranks`'s share of the patch estimates: [mean (3N) | standard error (3N)] of its patches
// (i = rank, rank + ranks, ...), 0 for the others'. `base` holds the scene, settings, BVH and the patches (in
// the backend's memory).
template <class Backend>
std::vector<double> EstimatePatchShare(Backend &backend, WavefrontJob base, long long patchCount,
                                       int pointsPerPatch, uint64_t seed, int rank, int ranks,
                                       long long pathsPerBatch, RayCounts &rays, bool showProgress) {
  CheckPatchEstimates(patchCount, pointsPerPatch);
  SetWavefrontSource(PathSource::kPatch, pointsPerPatch, seed, rank, ranks, base);
  const long long n = patchCount;
  const long long mine = CyclicCount(n, rank, ranks);
  std::vector<double> values(6 * size_t(n), 0.0);
  Progress progress("patch estimates", mine, showProgress && rank == 0);
  rays = RunWavefront(backend, base, mine, pathsPerBatch, progress,
                      [&](long long first, int count, const double *results) {
    for (int j = 0; j < count; ++j) {
      const long long i = CyclicItem(first + j, rank, ranks);
      for (int c = 0; c < 3; ++c) {
        values[3 * size_t(i) + size_t(c)] = results[6 * j + c];
        values[3 * size_t(n + i) + size_t(c)] = results[6 * j + 3 + c];
      }
    }
  });
  progress.Finish();
  return values;
}

// RenderPathTraced's contract (collective; the image on rank 0) on a wavefront backend.
template <class Backend>
Image RenderWavefront(MPI_Comm comm, Backend &backend, const WavefrontJob &base, const Camera &camera,
                      int samplesPerPixel, uint64_t seed, long long pathsPerBatch, RayCounts *rays,
                      bool showProgress) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  RayCounts counted;
  std::vector<float> rgb = TraceImageShare(backend, base, camera, samplesPerPixel, seed, rank, ranks,
                                           pathsPerBatch, counted, showProgress);
  if (rays) *rays = counted;
  return ReduceImage(comm, camera.width, camera.height, std::move(rgb));
}

// EstimatePatches's contract (collective; the arrays on rank 0) on a wavefront backend.
template <class Backend>
PatchEstimates EstimatePatchesWavefront(MPI_Comm comm, Backend &backend, const WavefrontJob &base,
                                        long long patchCount, int pointsPerPatch, uint64_t seed,
                                        long long pathsPerBatch, RayCounts *rays, bool showProgress) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  RayCounts counted;
  std::vector<double> values = EstimatePatchShare(backend, base, patchCount, pointsPerPatch, seed, rank, ranks,
                                                  pathsPerBatch, counted, showProgress);
  if (rays) *rays = counted;
  return GatherPatchEstimates(comm, patchCount, std::move(values));
}

}  // namespace rad
