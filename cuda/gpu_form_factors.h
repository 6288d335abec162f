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
// copies), "form-factor kernel", "visibility rays".
void ComputeRowsGpu(const FormFactorGeometry &g, const FlatBvh &bvh, const std::vector<long long> &rows,
                    const FormFactorOptions &options, std::vector<double> &out, PhaseTimers &timers,
                    FormFactorCounters &counters, bool showProgress);

}  // namespace rad
