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

namespace rad {

// Fills `out` (rows.size() x N, row-major) like ComputeRowsCpu. `bvh` holds the input polygons (SceneTriangles).
void ComputeRowsWithPairKernels(const FormFactorGeometry &g, const FlatBvh &bvh, const std::vector<long long> &rows,
                                const FormFactorOptions &options, std::vector<double> &out,
                                FormFactorCounters &counters);

// Scales each row to sum to 1 (the reference paper's --normalize-rows); shared by the backends.
void NormalizeRow(double *row, long long n);
// The same for a row held in float: summed and divided in double, each entry rounded once.
void NormalizeRow(float *row, long long n);

}  // namespace rad
