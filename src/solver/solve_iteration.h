// The solve iteration, written once for both backends (radiosity_solver.cpp on the CPU, cuda/gpu_solver.cu on
// the GPU): the checks and exchange plan, B = 0 when nothing emits, then sweeps until the IterationMonitor stops
// them, each sweep's residual reduced over the ranks and the new values exchanged between sweeps. A backend
// brings only its sweeps, as an object with
//   double Sweep(bool measured);        one pass over the rank's rows from B^k (measuring the residual of B^k
//                                       when `measured`); returns the rank's residual
//   std::vector<double> Radiance();     B^k, 3 values per patch, after the sweep that stopped the iteration
//   void Exchange();                    every rank's new values become the next iterate B^(k+1)
// made by `makeSweeps(setup)` (inside the "solve setup" phase) once the system is known to emit. Sweeps that also
// have
//   std::vector<double> Iterate();                    B^k, 3 values per patch, once exchanged
//   void SetIterate(const std::vector<double> &b);    B^k := b
// can be kept and continued by options.keeper (radiosity_solver.h: IterateKeeper).
#pragma once

#include <mpi.h>

#include <type_traits>
#include <utility>
#include <vector>

#include "solver/radiosity_solver.h"
#include "solver/solver_common.h"
#include "util/error.h"
#include "util/mpi_check.h"
#include "util/timers.h"

namespace rad {

// Whether Sweeps has SetIterate and Iterate (its iterate can be kept across a restart).
template <typename Sweeps, typename = void>
struct KeepsIterate : std::false_type {};
template <typename Sweeps>
struct KeepsIterate<Sweeps, std::void_t<decltype(std::declval<Sweeps &>().SetIterate(std::declval<const std::vector<double> &>())),
                                        decltype(std::declval<Sweeps &>().Iterate())>> : std::true_type {};

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
  int first = 0;
  using Sweeps = typename std::decay_t<decltype(*sweeps)>;
  if constexpr (KeepsIterate<Sweeps>::value) {
    if (options.keeper != nullptr)
      if (const SolverIterate *from = options.keeper->Resume()) {
        RAD_CHECK(from->iteration >= 1 && from->radiance.size() == 3 * size_t(s.F->n) &&
                      from->residuals.size() == size_t(from->iteration - 1),
                  "IterateSolve: an iterate to continue from that does not fit the system");
        sweeps->SetIterate(from->radiance);
        result.initialResidual = from->initialResidual;
        result.residuals = from->residuals;
        result.sweeps = from->iteration;
        monitor.Resume(from->iteration, result);
        first = from->iteration;
      }
  } else {
    RAD_CHECK(options.keeper == nullptr, "IterateSolve: these sweeps cannot keep their iterate");
  }
  for (int k = first;; ++k) {  // B^k is the sweeps' iterate at the top of the loop
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
    {
      ScopedPhase phase(timers, "solve exchange");
      sweeps->Exchange();
    }
    if constexpr (KeepsIterate<Sweeps>::value)
      if (options.keeper != nullptr)
        options.keeper->AfterExchange(k + 1, [&] {
          return SolverIterate{k + 1, sweeps->Iterate(), result.initialResidual, result.residuals};
        });
  }
}

}  // namespace rad
