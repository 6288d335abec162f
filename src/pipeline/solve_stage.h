// The solve stage of `solve`, `run` and `validate`: the local system from the patches and this rank's rows of
// F, the solve itself on the chosen backend with its report, and what goes into the output file.
#pragma once

#include <string>
#include <vector>

#include "io/radiosity_file.h"
#include "pipeline/backend.h"
#include "scene/patch.h"
#include "solver/radiosity_solver.h"
#include "util/timers.h"

namespace rad {

struct SolveStepOptions {
  SolverMethod solver = SolverMethod::kGaussSeidel;
  double tolerance = 1e-6;
  int maxIterations = 1000;
  std::string petscOptions;  // --petsc-options (--solver gmres)
  SweepExchange exchange = SweepExchange::kAuto;  // --exchange
  Backend backend = Backend::kCpu;  // resolved by the command (--backend)
};

// The solver's options from the stage's (rank 0 prints progress unless quiet).
SolverOptions SolverOptionsFor(const SolveStepOptions &o, bool quiet);

// Runs the solver on this rank's rows of F and prints, on rank 0 unless quiet, the residual history and how it
// ended. A diverged solve throws SolveFailed (nothing should be written). `keeper`: checkpoints of the iterate
// (the CPU backend's dense rows).
SolverResult SolveStep(const SolveStepOptions &o, const std::vector<Patch> &patches, const FormFactorRows &f,
                       PhaseTimers &timers, bool quiet, IterateKeeper *keeper = nullptr);

// The attributes of /radiosity: solver, tolerance, iterations, converged, residuals.
Attributes SolverAttributes(const SolveStepOptions &o, const SolverResult &result);

// Exit code of a finished solve: 0 if converged, kExitNotConverged otherwise (rank 0 prints why).
int FinishSolve(const SolverResult &result);

// A solve that diverged: there is no solution to write.
class SolveFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace rad
