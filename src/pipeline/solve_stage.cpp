#include "pipeline/solve_stage.h"

#include <cstdio>

#include "pipeline/execution.h"
#include "solver/krylov_solver.h"
#include "util/error.h"

namespace rad {

SolverOptions SolverOptionsFor(const SolveStepOptions &o, bool quiet) {
  SolverOptions options;
  options.method = o.solver;
  options.tolerance = o.tolerance;
  options.maxIterations = o.maxIterations;
  options.printProgress = !quiet;
  options.exchange = o.exchange;
  return options;
}

SolverResult SolveStep(const SolveStepOptions &o, const std::vector<Patch> &patches, const FormFactorRows &f,
                       PhaseTimers &timers, bool quiet, IterateKeeper *keeper) {
  LocalSystem system;
  RAD_CHECK(f.n == (long long)patches.size(), "SolveStep: F is not N x N for the patches");
  system.F = &f;
  system.reflectance.reserve(3 * patches.size());
  system.emission.reserve(3 * patches.size());
  for (const Patch &p : patches)
    for (int c = 0; c < 3; ++c) {
      system.reflectance.push_back(p.reflectance[c]);
      system.emission.push_back(p.emission[c]);
    }
  SolverOptions options = SolverOptionsFor(o, quiet);
  options.keeper = keeper;
  if (o.solver == SolverMethod::kGmres) SetPetscOptions(o.petscOptions);
  SolverResult result = SolveRadiosityOn(o.backend, MPI_COMM_WORLD, system, options, timers);
  timers.SetCounter("solver sweeps", WorldRank() == 0 ? result.sweeps : 0);
  if (WorldRank() == 0 && !quiet) std::fprintf(stderr, "radiosity: solve (%s): %s\n", SolverMethodName(o.solver), result.message.c_str());
  if (result.status == SolverStatus::kDiverged) throw SolveFailed(result.message);
  return result;
}

Attributes SolverAttributes(const SolveStepOptions &o, const SolverResult &result) {
  Attributes a;
  a.strings["solver"] = SolverMethodName(o.solver);
  a.strings["status"] = result.message;
  if (o.solver == SolverMethod::kGmres && !o.petscOptions.empty()) a.strings["petsc_options"] = o.petscOptions;
  a.numbers["tolerance"] = o.tolerance;
  a.numbers["max_iterations"] = o.maxIterations;
  a.numbers["iterations"] = result.iterations;
  a.numbers["converged"] = result.status == SolverStatus::kConverged ? 1 : 0;
  a.numbers["initial_residual"] = result.initialResidual;
  a.numbers["final_residual"] = result.finalResidual;
  a.numbers["contraction_bound"] = result.contractionBound;
  a.numbers["ranks"] = WorldSize();
  return a;
}

int FinishSolve(const SolverResult &result) {
  if (result.status == SolverStatus::kConverged) return 0;
  if (WorldRank() == 0) std::fprintf(stderr, "radiosity: error: %s\n", result.message.c_str());
  return kExitNotConverged;
}

}  // namespace rad
