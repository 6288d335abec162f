// Rows of F on the CPU cores of one rank: unoccluded factors first (all rows), then shadow rays with Embree
// for the pairs that a shaft test could not prove clear. Each row is independent and computed by one thread,
// with no floating-point reduction across threads, so the result does not depend on the thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "formfactor/embree_scene.h"
#include "formfactor/geometry.h"
#include "formfactor/unoccluded.h"
#include "util/timers.h"

namespace rad {

struct FormFactorOptions {
  uint32_t shadowRays = 32;
  uint64_t seed = 1;
  QuadratureSettings quadrature;
  bool normalizeRows = false;  // the reference paper's behaviour: scale each row to sum to 1
};

struct FormFactorCounters {
  long long pairsExchanging = 0;  // pairs with a non-zero unoccluded factor
  long long pairsRayTraced = 0;   // of those, pairs a shaft could not prove clear
  long long rays = 0;
  long long evaluations = 0;      // point-to-polygon contour evaluations
};

// Fills `out` (rows.size() x N, row-major) with F for the given rows. Phases go to `timers` as
// "unoccluded kernel" and "visibility rays".
void ComputeRowsCpu(const FormFactorGeometry &g, const EmbreeScene &embree, const std::vector<long long> &rows,
                    const FormFactorOptions &options, std::vector<double> &out, PhaseTimers &timers,
                    FormFactorCounters &counters, bool showProgress);

}  // namespace rad
