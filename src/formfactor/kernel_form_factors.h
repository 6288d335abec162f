// The GPU backend's form-factor computation run on the host: the same per-entry steps (pair_kernels.h) in the
// same two passes (unoccluded factors of all entries, then shadow rays on the project's BVH for the pairs that
// need them), with TBB threads in place of CUDA threads. The tests use it to check, on machines without a GPU,
// that the GPU's physics reproduces the CPU backend's rows; it is also what the GPU backend is compared with in
// jobs/bench.
#pragma once

#include <vector>

#include "accel/bvh.h"
#include "formfactor/cpu_form_factors.h"
#include "formfactor/geometry.h"
#include "formfactor/geometry_view.h"
#include "formfactor/pair_result.h"

namespace rad {

// Fills `out` (rows.size() x N, row-major) like ComputeRowsCpu. `bvh` holds the input polygons (SceneTriangles).
void ComputeRowsWithPairKernels(const FormFactorGeometry &g, const FlatBvh &bvh, const std::vector<long long> &rows,
                                const FormFactorOptions &options, std::vector<double> &out,
                                FormFactorCounters &counters);

// Computes the listed entries of a chunk of rows (entry e: row rows[e / n], column e % n) on the host's threads
// with `settings`, writing the k-th one's value and what it still needs (kEntryDone or kEntryNeedsRays) to
// values[k] and needs[k]: where the GPU and its host stand-in finish the entries past the device's work limit
// (kDeviceOccludedWork), without that limit. Always on the host, so that an entry's bits never depend on how
// many others were deferred with it (that is, on the rank's rows).
void ComputeEntriesOnHost(const GeometryView &view, const long long *rows, long long n, const long long *entries,
                          long long count, const PairSettings &settings, double *values, uint8_t *needs,
                          FormFactorCounters &counters);

// Scales each row to sum to 1 (the reference paper's --normalize-rows); shared by the backends.
void NormalizeRow(double *row, long long n);
// The same for a row held in float: summed and divided in double, each entry rounded once.
void NormalizeRow(float *row, long long n);

}  // namespace rad
