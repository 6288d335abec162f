// What the CPU and GPU radiosity solvers share, so that both keep one contract (radiosity_solver.h): the
// checks on the system, the exchange plan for MPI_Allgatherv, and the rules that stop the iteration (converged,
// diverged, out of iterations) with their messages.
#pragma once

#include <mpi.h>

#include <vector>

#include "solver/radiosity_solver.h"

namespace rad {

// Checks the data (all finite; throws InputError naming the first bad patch or row, on every rank alike) and
// finds max_i,c rho_ic * sum_j F_ij over all ranks (result.contractionBound, contractionRow). Collective.
void CheckSystem(MPI_Comm comm, const LocalSystem &s, SolverResult &result);

// Every rank's rows, in rank order, so that the gathered values can be put back in place.
struct Exchange {
  std::vector<int> counts, displacements;  // in doubles (3 per row)
  std::vector<long long> allRows;          // rows of rank 0, then rank 1, ...
};
Exchange MakeExchange(MPI_Comm comm, const std::vector<long long> &rows);  // collective

struct SolveSetup {
  Exchange exchange;
  double maxEmission = 0;  // max |E| over all patches and channels: the residual is relative to it
};
// CheckSystem + MakeExchange + maxEmission, and rank 0's warning (with options.printProgress) when the
// contraction bound reaches 1. Collective.
SolveSetup PrepareSolve(MPI_Comm comm, const LocalSystem &s, const SolverOptions &options, SolverResult &result);

// When nothing emits, B = 0 exactly: fills `result` for that case.
void SetZeroSolution(long long n, SolverResult &result);

// The stopping rules. Sweep k starts from iterate B^k; it either measures the relative residual of B^k
// (Jacobi always; Gauss-Seidel when MeasureNext() says so) or only its rows' residuals at their update.
//  - converged: a measured residual below the tolerance;
//  - diverged: a non-finite residual, or one grown kDivergenceGrowth times past max(first residual, tolerance);
//  - out of iterations: a measured sweep at k >= maxIterations.
// An unmeasured sweep whose residual falls below the tolerance, or that comes within one of maxIterations,
// turns measuring on for the sweeps after it.
class IterationMonitor {
 public:
  // `measureEverySweep`: the caller measures B^k in every sweep whatever the method (the GPU solver does).
  IterationMonitor(const SolverOptions &options, int rank, bool measureEverySweep = false);
  bool MeasureNext() const { return measure_; }
  // Records sweep k's residual (max over ranks) and counts the sweep. Returns true when the solve stops with
  // B^k: status, iterations, finalResidual and message are then filled in (the caller fills radiance).
  bool Record(int k, double residual, SolverResult &result);
  // Before sweep k of a solve continued from a kept iterate (`result` holding the residuals of sweeps 0 .. k-1):
  // whether sweeps measure B^k is what it was when the solve was stopped.
  void Resume(int k, const SolverResult &result);

  static constexpr double kDivergenceGrowth = 1e3;

 private:
  SolverOptions options_;
  int rank_;
  bool measure_;
};

}  // namespace rad
