// The wavefront path tracer (wavefront_stages.h) with its stages run by the host's threads over the project's
// BVH: exactly what the GPU runs, compiled by g++, so that this GPU-less machine can test the GPU's code path
// against the CPU path tracer (Embree) and the GPU can be tested against it where one is lent.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "accel/bvh.h"
#include "pathtrace/patch_estimates.h"
#include "pathtrace/path_scene.h"
#include "pathtrace/path_tracer.h"
#include "pathtrace/wavefront_stages.h"
#include "render/camera.h"
#include "render/image.h"
#include "scene/patch.h"
#include "scene/scene.h"

namespace rad {

class HostWavefrontTracer {
 public:
  // `scene` must outlive the tracer.
  HostWavefrontTracer(const Scene &scene, const PathTraceSettings &settings);

  // The contracts of RenderPathTraced and EstimatePatches; `pathsPerBatch` bounds the paths in flight.
  Image Render(MPI_Comm comm, const Camera &camera, int samplesPerPixel, uint64_t seed, long long pathsPerBatch,
               RayCounts *rays) const;
  PatchEstimates EstimatePatches(MPI_Comm comm, const std::vector<Patch> &patches, int pointsPerPatch,
                                 uint64_t seed, long long pathsPerBatch, RayCounts *rays) const;

  // Rank `rank` of `ranks`'s shares (TraceImageShare, EstimatePatchShare), without MPI: what every rank of a
  // run computes, so that a test can check that the shares add up to the one-rank result.
  std::vector<float> ImageShare(const Camera &camera, int samplesPerPixel, uint64_t seed, int rank, int ranks,
                                long long pathsPerBatch) const;
  std::vector<double> PatchShare(const std::vector<Patch> &patches, int pointsPerPatch, uint64_t seed, int rank,
                                 int ranks, long long pathsPerBatch) const;

 private:
  WavefrontJob Base() const;
  PathScene physics_;
  PathTraceSettings settings_;
  FlatBvh bvh_;
};

}  // namespace rad
