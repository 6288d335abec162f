#include "solver/solver_common.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "util/error.h"
#include "util/mpi_check.h"

namespace rad {

void CheckSystem(MPI_Comm comm, const LocalSystem &s, SolverResult &result) {
  const size_t n = size_t(s.F->n);
  if (s.reflectance.size() != 3 * n || s.emission.size() != 3 * n)
    RAD_FATAL("LocalSystem: reflectance and emission need 3 values per patch");
  for (size_t k = 0; k < 3 * n; ++k)
    if (!std::isfinite(s.reflectance[k]) || !std::isfinite(s.emission[k]))
      throw InputError("patch " + std::to_string(k / 3) + " has a non-finite reflectance or emission");
  std::vector<double> rowSum(s.F->rows.size());
  std::vector<char> rowFinite(s.F->rows.size());
  tbb::parallel_for(size_t(0), s.F->rows.size(), [&](size_t r) {
    const double sum = s.F->RowSum(r);
    rowSum[r] = sum;
    rowFinite[r] = std::isfinite(sum);
  });
  struct {
    double value;
    int row;
  } local{-1.0, -1}, global{};
  long long badRow = -1;
  for (size_t r = 0; r < s.F->rows.size(); ++r) {
    if (!rowFinite[r]) {
      if (badRow < 0) badRow = s.F->rows[r];
      continue;
    }
    const size_t i = size_t(s.F->rows[r]);
    const double rho = std::max({s.reflectance[3 * i], s.reflectance[3 * i + 1], s.reflectance[3 * i + 2]});
    if (rho * rowSum[r] > local.value) local = {rho * rowSum[r], int(i)};
  }
  long long firstBad = 0;
  const long long mine = badRow < 0 ? s.F->n : badRow;
  RAD_MPI(MPI_Allreduce(&mine, &firstBad, 1, MPI_LONG_LONG, MPI_MIN, comm));
  if (firstBad < s.F->n) throw InputError("row " + std::to_string(firstBad) + " of F holds non-finite values");
  RAD_MPI(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
  result.contractionBound = std::max(global.value, 0.0);
  result.contractionRow = global.row;
}

Exchange MakeExchange(MPI_Comm comm, const std::vector<long long> &rows) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  Exchange e;
  std::vector<int> rowCounts(size_t(size), 0), rowDispl(size_t(size), 0);
  const int mine = int(rows.size());
  RAD_MPI(MPI_Allgather(&mine, 1, MPI_INT, rowCounts.data(), 1, MPI_INT, comm));
  long long total = 0;
  for (int r = 0; r < size; ++r) {
    rowDispl[size_t(r)] = int(total);
    total += rowCounts[size_t(r)];
  }
  e.allRows.resize(size_t(total));
  RAD_MPI(MPI_Allgatherv(rows.data(), mine, MPI_LONG_LONG, e.allRows.data(), rowCounts.data(), rowDispl.data(),
                         MPI_LONG_LONG, comm));
  e.counts.resize(size_t(size));
  e.displacements.resize(size_t(size));
  for (int r = 0; r < size; ++r) {
    e.counts[size_t(r)] = 3 * rowCounts[size_t(r)];
    e.displacements[size_t(r)] = 3 * rowDispl[size_t(r)];
  }
  return e;
}

SolveSetup PrepareSolve(MPI_Comm comm, const LocalSystem &s, const SolverOptions &options, SolverResult &result) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  SolveSetup setup;
  CheckSystem(comm, s, result);
  setup.exchange = MakeExchange(comm, s.F->rows);
  for (double e : s.emission) setup.maxEmission = std::max(setup.maxEmission, std::fabs(e));
  if (rank == 0 && options.printProgress && result.contractionBound >= 1)
    std::fprintf(stderr,
                 "radiosity: warning: reflectance x row sum of F reaches %.6g (patch %lld); the iteration converges "
                 "only if the spectral radius is below 1\n",
                 result.contractionBound, result.contractionRow);
  return setup;
}

void SetZeroSolution(long long n, SolverResult &result) {
  result.radiance.assign(3 * size_t(n), 0.0);
  result.status = SolverStatus::kConverged;
  result.message = "no patch emits: B = 0";
}

IterationMonitor::IterationMonitor(const SolverOptions &options, int rank, bool measureEverySweep)
    : options_(options),
      rank_(rank),
      measure_(measureEverySweep || options.method == SolverMethod::kJacobi || options.maxIterations == 0) {}

void IterationMonitor::Resume(int k, const SolverResult &result) {
  // Record turns measuring on for good after a sweep below the tolerance or one within one of maxIterations.
  measure_ = measure_ || result.initialResidual < options_.tolerance || k >= options_.maxIterations;
  for (double r : result.residuals) measure_ = measure_ || r < options_.tolerance;
}

bool IterationMonitor::Record(int k, double residual, SolverResult &result) {
  const bool measured = measure_;
  ++result.sweeps;
  if (k == 0) result.initialResidual = residual;
  else result.residuals.push_back(residual);
  if (rank_ == 0 && options_.printProgress)
    std::fprintf(stderr, "radiosity: solve: iteration %d: relative residual %.3e%s\n", k, residual,
                 measured ? "" : " (Gauss-Seidel: each row at its update)");

  const bool converged = measured && residual < options_.tolerance;
  measure_ = measure_ || residual < options_.tolerance || k + 1 >= options_.maxIterations;
  const bool diverged = !std::isfinite(residual) ||
                        (k > 0 && residual > kDivergenceGrowth * std::max(result.initialResidual, options_.tolerance));
  if (!(converged || diverged || (measured && k >= options_.maxIterations))) return false;

  result.iterations = k;
  result.finalResidual = residual;
  char text[256];
  if (converged) {
    result.status = SolverStatus::kConverged;
    std::snprintf(text, sizeof text, "converged: relative residual %.3e < %.3e after %d iteration(s)", residual,
                  options_.tolerance, k);
  } else if (diverged) {
    result.status = SolverStatus::kDiverged;
    std::snprintf(text, sizeof text,
                  "diverged: relative residual grew from %.3e to %.3e in %d iteration(s); reflectance x row sum "
                  "of F reaches %.6g at patch %lld (rows of F summing above 1, or reflectance >= 1?)",
                  result.initialResidual, residual, k, result.contractionBound, result.contractionRow);
  } else {
    result.status = SolverStatus::kMaxIterations;
    std::snprintf(text, sizeof text,
                  "not converged: relative residual %.3e is still above %.3e after %d iteration(s) "
                  "(raise --max-iterations or --tolerance)",
                  residual, options_.tolerance, k);
  }
  result.message = text;
  return true;
}

}  // namespace rad
