#include "solver/hemicube_gathering.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/progress.h"

namespace rad {

SolverResult GatherByHemicubes(MPI_Comm comm, const Scene &scene, const std::vector<Patch> &patches,
                               const std::vector<long long> &rows, const HemicubeOptions &options, double tolerance,
                               int maxIterations, PhaseTimers &timers, bool quiet, std::vector<double> &rowSums) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const size_t n = patches.size();
  const std::vector<double> weight = HemicubeWeights(options.resolution);
  std::unique_ptr<HemicubeTracer> tracer;
  {
    ScopedPhase phase(timers, "acceleration");
    tracer = std::make_unique<HemicubeTracer>(scene, patches);
  }
  // Each rank's block of B, for the gathers.
  int mine = int(3 * rows.size());
  std::vector<int> counts(static_cast<size_t>(ranks)), displacements(static_cast<size_t>(ranks), 0);
  MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  for (int r = 1; r < ranks; ++r) displacements[size_t(r)] = displacements[size_t(r) - 1] + counts[size_t(r) - 1];

  std::vector<double> b(3 * n), next(3 * n), own(3 * rows.size());
  double largestEmission = 0;
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) {
      b[3 * i + size_t(c)] = patches[i].emission[c];
      largestEmission = std::max(largestEmission, std::fabs(patches[i].emission[c]));
    }
  SolverResult result;
  rowSums.assign(rows.size(), 0.0);
  if (largestEmission == 0) {  // nothing shines: B = 0, no pass needed
    result.radiance = b;
    result.message = "nothing emits: B = 0";
    return result;
  }
  double contraction = 0;
  for (int pass = 1;; ++pass) {
    {
      ScopedPhase phase(timers, "hemicube gathering");
      tbb::parallel_for(tbb::blocked_range<size_t>(0, rows.size(), 8), [&](const tbb::blocked_range<size_t> &range) {
        for (size_t r = range.begin(); r != range.end(); ++r) {
          double gathered[3] = {0, 0, 0}, sum = 0;
          GatherRowCpu(*tracer, weight, patches, rows[r], options, [&](int32_t j, double w) {
            for (int c = 0; c < 3; ++c) gathered[c] += w * b[3 * size_t(j) + size_t(c)];
            sum += w;
          });
          const Patch &p = patches[size_t(rows[r])];
          for (int c = 0; c < 3; ++c) own[3 * r + size_t(c)] = p.emission[c] + p.reflectance[c] * gathered[c];
          if (pass == 1) rowSums[r] = sum;
        }
      });
    }
    {
      ScopedPhase phase(timers, "solve exchange");
      MPI_Allgatherv(own.data(), mine, MPI_DOUBLE, next.data(), counts.data(), displacements.data(), MPI_DOUBLE, comm);
    }
    if (pass == 1) {
      double local = 0;
      for (size_t r = 0; r < rows.size(); ++r)
        for (int c = 0; c < 3; ++c) local = std::max(local, patches[size_t(rows[r])].reflectance[c] * rowSums[r]);
      MPI_Allreduce(&local, &contraction, 1, MPI_DOUBLE, MPI_MAX, comm);
    }
    double change = 0;  // the same on every rank: every rank holds all of both iterates
    for (size_t k = 0; k < 3 * n; ++k) change = std::max(change, std::fabs(next[k] - b[k]));
    const double residual = change / largestEmission;  // of b, the iterate before this pass
    if (pass == 1) result.initialResidual = residual;
    else result.residuals.push_back(residual);
    if (rank == 0 && !quiet)
      std::fprintf(stderr, "radiosity: gathering: pass %d: relative residual %.3e of iterate %d\n", pass, residual,
                   pass - 1);
    result.sweeps = pass;
    if (residual < tolerance || !std::isfinite(residual) || pass > maxIterations) {
      result.iterations = pass - 1;
      result.finalResidual = residual;
      result.radiance = b;
      result.contractionBound = contraction;
      char text[160];
      if (!std::isfinite(residual)) {
        result.status = SolverStatus::kDiverged;
        std::snprintf(text, sizeof text, "diverged: relative residual %g after %d iteration(s)", residual, pass - 1);
      } else if (residual < tolerance) {
        std::snprintf(text, sizeof text, "converged: relative residual %.3e < %.3e after %d iteration(s)", residual,
                      tolerance, pass - 1);
      } else {
        result.status = SolverStatus::kMaxIterations;
        std::snprintf(text, sizeof text, "not converged: relative residual %.3e after %d iteration(s)", residual,
                      pass - 1);
      }
      result.message = text;
      return result;
    }
    b.swap(next);
  }
}

}  // namespace rad
