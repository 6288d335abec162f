#include "pathtrace/wavefront_host.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>

#include "accel/bvh_builder.h"
#include "pathtrace/wavefront_driver.h"

namespace rad {

namespace {

// The Backend of wavefront_driver.h on the host: buffers in vectors, each pass a parallel loop.
class HostStages {
 public:
  WavefrontJob Allocate(const WavefrontJob &base, int paths, int items) {
    return buffers_.Attach(base, paths, items);
  }
  void Run(WavefrontStage stage, const WavefrontJob &job, int count) {
    tbb::parallel_for(tbb::blocked_range<int>(0, count, 64), [&](const tbb::blocked_range<int> &r) {
      for (int i = r.begin(); i != r.end(); ++i) RunStage(stage, job, i);
    });
  }
  void ReadCounts(const WavefrontJob &job, int counts[2]) {
    counts[0] = job.counts[0];
    counts[1] = job.counts[1];
  }
  void ClearCounts(const WavefrontJob &job) { job.counts[0] = job.counts[1] = 0; }
  void ReadResults(const WavefrontJob &job, int items, double *out) {
    std::copy_n(job.itemResults, 6 * size_t(unsigned(items)), out);  // items > 0: a batch holds at least one
  }

 private:
  WavefrontBuffers<std::vector> buffers_;
};

}  // namespace

HostWavefrontTracer::HostWavefrontTracer(const Scene &scene, const PathTraceSettings &settings)
    : physics_(MakePathScene(scene)), settings_(settings), bvh_(BuildBvh(SceneTriangles(scene))) {}

WavefrontJob HostWavefrontTracer::Base() const {
  WavefrontJob job;
  job.scene = physics_.View();
  job.settings = settings_;
  job.bvh = bvh_.View();
  return job;
}

Image HostWavefrontTracer::Render(MPI_Comm comm, const Camera &camera, int samplesPerPixel, uint64_t seed,
                                  long long pathsPerBatch, RayCounts *rays) const {
  HostStages stages;
  return RenderWavefront(comm, stages, Base(), camera, samplesPerPixel, seed, pathsPerBatch, rays, false);
}

PatchEstimates HostWavefrontTracer::EstimatePatches(MPI_Comm comm, const std::vector<Patch> &patches,
                                                    int pointsPerPatch, uint64_t seed, long long pathsPerBatch,
                                                    RayCounts *rays) const {
  HostStages stages;
  WavefrontJob base = Base();
  base.patches = patches.data();
  return EstimatePatchesWavefront(comm, stages, base, (long long)patches.size(), pointsPerPatch, seed,
                                  pathsPerBatch, rays, false);
}

std::vector<float> HostWavefrontTracer::ImageShare(const Camera &camera, int samplesPerPixel, uint64_t seed,
                                                   int rank, int ranks, long long pathsPerBatch) const {
  HostStages stages;
  RayCounts rays;
  return TraceImageShare(stages, Base(), camera, samplesPerPixel, seed, rank, ranks, pathsPerBatch, rays, false);
}

std::vector<double> HostWavefrontTracer::PatchShare(const std::vector<Patch> &patches, int pointsPerPatch,
                                                    uint64_t seed, int rank, int ranks,
                                                    long long pathsPerBatch) const {
  HostStages stages;
  WavefrontJob base = Base();
  base.patches = patches.data();
  RayCounts rays;
  return EstimatePatchShare(stages, base, (long long)patches.size(), pointsPerPatch, seed, rank, ranks,
                            pathsPerBatch, rays, false);
}

}  // namespace rad
