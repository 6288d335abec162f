// Rows of F on the rank's GPU: the same estimator, code (formfactor/pair_kernels.h) and counter-based random
// numbers as the CPU backend, shadow rays on the project's BVH in device memory. Includable without CUDA.
#pragma once

#include <vector>

#include "accel/bvh.h"
#include "formfactor/cpu_form_factors.h"
#include "formfactor/geometry.h"
#include "util/timers.h"

namespace rad {

// Fills `out` (rows.size() x N, row-major) like ComputeRowsCpu, on the device chosen for this rank
// (SelectCudaDevice). `bvh` holds the input polygons (SceneTriangles). Phases: "device memory" (allocations and
// copies), "form-factor kernel", "visibility rays". Float rows are the double values rounded once, after
// --normalize-rows, through a host staging area of at most kGpuStagingEntries doubles.
void ComputeRowsGpu(const FormFactorGeometry &g, const FlatBvh &bvh, const std::vector<long long> &rows,
                    const FormFactorOptions &options, std::vector<double> &out, PhaseTimers &timers,
                    FormFactorCounters &counters, bool showProgress);
void ComputeRowsGpu(const FormFactorGeometry &g, const FlatBvh &bvh, const std::vector<long long> &rows,
                    const FormFactorOptions &options, std::vector<float> &out, PhaseTimers &timers,
                    FormFactorCounters &counters, bool showProgress);

// Doubles in the host staging area of float rows (at least one row).
constexpr long long kGpuStagingEntries = 1LL << 22;

}  // namespace rad
