#include "pathtrace/patch_estimates.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <string>
#include <utility>

#include "render/pixel_kernels.h"
#include "util/decomposition.h"
#include "util/error.h"
#include "util/mpi_check.h"
#include "util/progress.h"

namespace rad {

void CheckPatchEstimates(long long patchCount, int pointsPerPatch) {
  if (pointsPerPatch < 2)
    throw InputError("points per patch must be at least 2 (for a standard error), got " +
                     std::to_string(pointsPerPatch));
  RAD_CHECK(6 * patchCount <= (long long)std::numeric_limits<int>::max(),
            "patch estimates: too many patches for MPI_Reduce");
}

PatchEstimates GatherPatchEstimates(MPI_Comm comm, long long patchCount, std::vector<double> values) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  RAD_MPI(MPI_Reduce(rank == 0 ? MPI_IN_PLACE : values.data(), values.data(), int(values.size()), MPI_DOUBLE, MPI_SUM,
                     0, comm));
  PatchEstimates out;
  if (rank != 0) return out;
  out.radiance.assign(values.begin(), values.begin() + 3 * patchCount);
  out.standardError.assign(values.begin() + 3 * patchCount, values.end());
  return out;
}

PatchEstimates EstimatePatches(MPI_Comm comm, const PathTracer &tracer, const std::vector<Patch> &patches,
                               int pointsPerPatch, uint64_t seed, RayCounts *rays, bool showProgress) {
  CheckPatchEstimates((long long)patches.size(), pointsPerPatch);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const long long n = (long long)patches.size();
  const int k = pointsPerPatch;
  const int strata = int(std::lround(std::sqrt(double(k))));
  const long long mine = CyclicCount(n, rank, ranks);

  // [mean (3N) | standard error (3N)], 0 for other ranks' patches, so that the sum over ranks is exact.
  std::vector<double> values(6 * size_t(n), 0.0);
  RayCounts total;
  std::mutex totalMutex;
  Progress progress("patch estimates", mine, showProgress && rank == 0);
  tbb::parallel_for(tbb::blocked_range<long long>(0, mine, 1), [&](const tbb::blocked_range<long long> &block) {
    RayCounts local;
    std::vector<Vec3> samples(static_cast<size_t>(k));
    for (long long r = block.begin(); r != block.end(); ++r) {
      const long long i = CyclicItem(r, rank, ranks);
      const Patch &p = patches[size_t(i)];
      for (int s = 0; s < k; ++s) {
        double u, v, weight;
        SampleOffset(seed, uint64_t(i), s, k, strata, u, v, kPatchPointStream);
        const Vec3 x = PointOnPolygon(p.corners, p.cornerCount, p.area, u, v, &weight);
        WalkRandom random(seed, uint64_t(i), uint32_t(s), kPatchWalkStream);
        samples[size_t(s)] = tracer.OutgoingRadiance(x, p.face, random, local) * weight;
      }
      Vec3 error;
      const Vec3 mean = MeanOf(samples.data(), k, &error);
      for (int c = 0; c < 3; ++c) {
        values[3 * size_t(i) + size_t(c)] = mean[c];
        values[3 * size_t(n + i) + size_t(c)] = error[c];
      }
      progress.Advance();
    }
    std::lock_guard<std::mutex> lock(totalMutex);
    total.Add(local);
  });
  progress.Finish();
  if (rays) *rays = total;
  return GatherPatchEstimates(comm, n, std::move(values));
}

}  // namespace rad
