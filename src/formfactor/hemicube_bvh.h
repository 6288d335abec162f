// Hemicube pixels traced on the project's BVH (accel/): what the GPU runs per thread (cuda/gpu_hemicube.cu),
// written once (RAD_HD) so that the host tests check it against the Embree rows (hemicube_rows.h). The device
// finds what each pixel sees; the rows are summed on the host in pixel order from those hits, as the CPU sums
// them, so a row is the same bits wherever its rays were traced alike.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "accel/bvh.h"
#include "accel/bvh_traversal.h"
#include "formfactor/form_factor_rows.h"
#include "formfactor/hemicube.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "util/hd.h"

namespace rad {

struct HemicubeBvhJob {
  BvhView bvh;                    // HemicubeTriangles: patches (id = patch), then obstructions (id >= patchCount)
  const Patch *patches = nullptr;
  const long long *rows = nullptr;  // the batch's global rows
  int32_t patchCount = 0;
  int resolution = 64;
  bool rotate = true;
  uint64_t seed = 1;
  float tnear = 0;                // as the Embree tracer's: 1e-6 of the scene's extent
};

// The job for `patches` (host or device pointers: the kernel's and the host reference's alike) on `bvh` built
// from `triangles` (HemicubeTriangles); its rows are set per batch.
HemicubeBvhJob MakeHemicubeBvhJob(BvhView bvh, const Patch *patches, size_t patchCount,
                                  const std::vector<BvhTriangle> &triangles, const HemicubeOptions &options);

// Empties f into CSR rows in its precision, ready for AppendHemicubeRows.
void StartCsrRows(FormFactorRows &f);

// The patch whose front pixel k of the batch's row r sees first, or -1 (nothing, an obstruction, a back side).
RAD_HD inline int32_t HemicubePixelHit(const HemicubeBvhJob &job, long long r, int k) {
  const long long row = job.rows[r];
  const Patch &p = job.patches[row];
  const HemicubeFrame frame = MakeHemicubeFrame(p.normal, uint32_t(row), job.seed, job.rotate);
  const Vec3 direction = frame.ToWorld(HemicubePixelDirection(job.resolution, k));
  const BvhHit hit = ClosestHit(job.bvh, ToFloat3(p.centroid), ToFloat3(direction), job.tnear, INFINITY);
  if (hit.id < 0 || hit.id >= job.patchCount) return -1;
  return Dot(job.patches[hit.id].normal, direction) < 0 ? hit.id : -1;
}

// The triangles the pixels are traced against: every patch (PatchTriangles, id = patch) and the obstructions'
// polygons (id = patch count + their face), in absolute coordinates as the Embree tracer holds them.
std::vector<BvhTriangle> HemicubeTriangles(const Scene &scene, const std::vector<Patch> &patches);

// The tracer's start distance for this scene (HemicubeTracer's).
float HemicubeStart(const std::vector<BvhTriangle> &triangles);

// The rows (global, ascending) of F from `hits`: per row, HemicubePixels(resolution) patch indices or -1, pixel by
// pixel; summed in pixel order into f's CSR (appended: indptr must hold its first 0).
void AppendHemicubeRows(const int32_t *hits, size_t rows, int resolution, const std::vector<double> &weight,
                        size_t patchCount, FormFactorRows &f);

// Host reference of the device path: the rows traced with HemicubePixelHit on the host's copy of the BVH.
void ComputeHemicubeRowsOnBvh(const Scene &scene, const std::vector<Patch> &patches,
                              const std::vector<long long> &rows, const HemicubeOptions &options, FormFactorRows &f);

}  // namespace rad
