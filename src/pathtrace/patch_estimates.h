// A Monte Carlo estimate of every patch's outgoing radiance, to check a radiosity solution patch by patch with
// no image (and no interpolation) in between. Each patch gets K stratified points (jittered m x m strata of its
// parametrisation when K = m^2, else a shifted Hammersley set); each point's outgoing radiance is estimated as
// Ke + Kd/pi x irradiance, the irradiance from one cosine-weighted direction followed by a path, plus
// next-event estimation (PathTracer::OutgoingRadiance). The patch's value is the area-weighted mean over its
// points, the same quantity as the radiosity B_i (the patch average of the outgoing radiance); its standard
// error is that of the mean of the K point values (conservative for stratified points).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "pathtrace/path_tracer.h"
#include "scene/patch.h"

namespace rad {

struct PatchEstimates {
  std::vector<double> radiance;       // 3 per patch ([N][3])
  std::vector<double> standardError;  // 3 per patch ([N][3])
};

// Throws InputError unless pointsPerPatch >= 2.
void CheckPatchEstimates(long long patchCount, int pointsPerPatch);

// Collective: sums every rank's [mean (3N) | standard error (3N)] (0 for other ranks' patches) onto rank 0.
PatchEstimates GatherPatchEstimates(MPI_Comm comm, long long patchCount, std::vector<double> values);

// Collective over `comm`: patch i is estimated by rank i % P (cyclic: neighbouring patches cost alike), by TBB
// threads within the rank; the full arrays are returned on rank 0 (empty elsewhere). The numbers depend only on
// (seed, patch, point), never on the number of ranks or threads. `rays` receives this rank's ray counts.
// `pointsPerPatch` must be at least 2 (InputError otherwise); the patches must come from the tracer's scene.
PatchEstimates EstimatePatches(MPI_Comm comm, const PathTracer &tracer, const std::vector<Patch> &patches,
                               int pointsPerPatch, uint64_t seed, RayCounts *rays, bool showProgress);

}  // namespace rad
