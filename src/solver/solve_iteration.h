// The solve iteration, written once for both backends (radiosity_solver.cpp on the CPU, cuda/gpu_solver.cu on
// the GPU): the checks and exchange plan, B = 0 when nothing emits, then sweeps until the IterationMonitor stops
// them, each sweep's residual reduced over the ranks and the new values exchanged between sweeps. A backend
// brings only its sweeps, as an object with
//   double Sweep(bool measured);        one pass over the rank's rows from B^k (measuring the residual of B^k
//                                       when `measured`); returns the rank's residual
//   std::vector<double> Radiance();     B^k, 3 values per patch, after the sweep that stopped the iteration
//   void Exchange();                    every rank's new values become the next iterate B^(k+1)
// made by `makeSweeps(setup)` (inside the "solve setup" phase) once the system is known to emit.
#pragma once

#include <mpi.h>

#include "solver/radiosity_solver.h"
#include "solver/solver_common.h"
#include "util/mpi_check.h"
#include "util/timers.h"

namespace rad {

// `measureEverySweep`: the backend's sweeps measure B^k whatever the method (IterationMonitor).
template <typename MakeSweeps>
SolverResult IterateSolve(MPI_Comm comm, const LocalSystem &s, const SolverOptions &options, PhaseTimers &timers,
                          bool measureEverySweep, MakeSweeps makeSweeps) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  SolverResult result;
  SolveSetup setup;
  decltype(makeSweeps(setup)) sweeps;
  {
    ScopedPhase phase(timers, "solve setup");
    setup = PrepareSolve(comm, s, options, result);
    if (setup.maxEmission > 0) sweeps = makeSweeps(setup);
  }
  if (setup.maxEmission == 0) {
    SetZeroSolution(s.F->n, result);
    return result;
  }
  IterationMonitor monitor(options, rank, measureEverySweep);
  for (int k = 0;; ++k) {  // B^k is the sweeps' iterate at the top of the loop
    double localResidual = 0, residual = 0;
    {
      ScopedPhase phase(timers, "solve sweeps");
      localResidual = sweeps->Sweep(monitor.MeasureNext());
    }
    {
      ScopedPhase phase(timers, "solve exchange");
      RAD_MPI(MPI_Allreduce(&localResidual, &residual, 1, MPI_DOUBLE, MPI_MAX, comm));
    }
    if (monitor.Record(k, residual, result)) {
      result.radiance = sweeps->Radiance();
      return result;
    }
    ScopedPhase phase(timers, "solve exchange");
    sweeps->Exchange();
  }
}

}  // namespace rad
