// The Krylov solvers through PETSc (solver/krylov_solver.h). Built when CMake finds PETSc.
#include "solver/krylov_solver.h"

#include <petscksp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "solver/solver_common.h"
#include "util/error.h"
#include "util/mpi_check.h"

namespace rad {

namespace {

std::string pendingOptions;  // --petsc-options, inserted once PETSc is started
bool started = false;

void Check(PetscErrorCode code, const char *what) {
  if (code != 0) throw std::runtime_error(std::string("PETSc: ") + what + " failed (error " + std::to_string(code) + ")");
}

// PETSc on MPI_COMM_WORLD (MPI is already started), without its signal handlers: the program's own stop a run
// cleanly (util/interrupts.h).
void Start() {
  if (started) return;
  static char name[] = "radiosity", noHandler[] = "-no_signal_handler";
  static char *args[] = {name, noHandler, nullptr};
  int argc = 2;
  char **argv = args;
  Check(PetscInitialize(&argc, &argv, nullptr, nullptr), "PetscInitialize");
  // PETSc's errors come back as codes, without its pages of diagnostics: the program says them in one line.
  Check(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr), "PetscPushErrorHandler");
  started = true;
  if (!pendingOptions.empty() && PetscOptionsInsertString(nullptr, pendingOptions.c_str()) != 0)
    throw InputError("--petsc-options: PETSc cannot read '" + pendingOptions + "'");
}

// One channel's solve: the rank's values of B_c (in the order of its rows), and how KSP went.
struct ChannelSolve {
  std::vector<double> values;
  int iterations = 0;
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  std::vector<double> history;  // 2-norms of the unpreconditioned residual, from the start
};

// The rank's rows of I - diag(rho_c) F as a PETSc matrix whose row and column of patch i is position[i]; the
// rank's rows are [first, first + m) there.
Mat AssembleChannel(MPI_Comm comm, const LocalSystem &s, int c, const std::vector<PetscInt> &position, PetscInt first,
                    PetscInt m) {
  const FormFactorRows &f = *s.F;
  const PetscInt n = PetscInt(f.n);
  Mat A;
  Check(MatCreate(comm, &A), "MatCreate");
  Check(MatSetSizes(A, m, m, n, n), "MatSetSizes");
  Check(MatSetType(A, f.IsDense() ? MATDENSE : MATAIJ), "MatSetType");
  if (f.IsDense()) {
    Check(MatSetUp(A), "MatSetUp");
  } else {
    std::vector<PetscInt> inside(size_t(m), 1), outside(size_t(m), 0);  // the diagonal is always there
    for (PetscInt r = 0; r < m; ++r)
      f.ForEachEntry(size_t(r), [&](int32_t j, long long) {
        if (j == f.rows[size_t(r)]) return;
        const PetscInt p = position[size_t(j)];
        (p >= first && p < first + m ? inside : outside)[size_t(r)]++;
      });
    Check(MatSeqAIJSetPreallocation(A, 0, inside.data()), "MatSeqAIJSetPreallocation");
    Check(MatMPIAIJSetPreallocation(A, 0, inside.data(), 0, outside.data()), "MatMPIAIJSetPreallocation");
  }
  std::vector<PetscInt> columns;
  std::vector<PetscScalar> values;
  for (PetscInt r = 0; r < m; ++r) {
    const long long i = f.rows[size_t(r)];
    const double rho = s.reflectance[3 * size_t(i) + size_t(c)];
    const PetscInt row = first + r;
    columns.clear();
    values.clear();
    bool diagonal = false;
    if (f.IsDense()) {
      for (long long j = 0; j < f.n; ++j) {
        columns.push_back(position[size_t(j)]);
        values.push_back((j == i ? 1.0 : 0.0) - rho * f.Value(size_t(r) * size_t(f.n) + size_t(j)));
      }
      diagonal = true;
    } else {
      f.ForEachEntry(size_t(r), [&](int32_t j, long long k) {
        diagonal = diagonal || j == i;
        columns.push_back(position[size_t(j)]);
        values.push_back((j == i ? 1.0 : 0.0) - rho * f.Value(size_t(k)));
      });
    }
    if (!diagonal) {
      columns.push_back(row);
      values.push_back(1.0);
    }
    Check(MatSetValues(A, 1, &row, PetscInt(columns.size()), columns.data(), values.data(), INSERT_VALUES),
          "MatSetValues");
  }
  Check(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY), "MatAssemblyBegin");
  Check(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY), "MatAssemblyEnd");
  return A;
}

ChannelSolve SolveChannel(MPI_Comm comm, const LocalSystem &s, int c, const std::vector<PetscInt> &position,
                          PetscInt first, PetscInt m, const SolverOptions &options, double maxEmission) {
  Mat A = AssembleChannel(comm, s, c, position, first, m);
  Vec b, x;
  Check(MatCreateVecs(A, &x, &b), "MatCreateVecs");
  PetscScalar *pb = nullptr;
  Check(VecGetArray(b, &pb), "VecGetArray");
  for (PetscInt r = 0; r < m; ++r) pb[r] = s.emission[3 * size_t(s.F->rows[size_t(r)]) + size_t(c)];
  Check(VecRestoreArray(b, &pb), "VecRestoreArray");
  Check(VecCopy(b, x), "VecCopy");  // from B = E, as the other solvers

  KSP ksp;
  PC pc;
  Check(KSPCreate(comm, &ksp), "KSPCreate");
  Check(KSPSetOperators(ksp, A, A), "KSPSetOperators");
  Check(KSPSetType(ksp, KSPGMRES), "KSPSetType");
  Check(KSPGetPC(ksp, &pc), "KSPGetPC");
  Check(PCSetType(pc, PCJACOBI), "PCSetType");
  // Right preconditioning, so that the norm tested is the true residual's: below tolerance * max|E| in the
  // 2-norm, the relative max-norm residual is below the tolerance too.
  Check(KSPSetPCSide(ksp, PC_RIGHT), "KSPSetPCSide");
  Check(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED), "KSPSetNormType");
  Check(KSPSetTolerances(ksp, 1e-300, options.tolerance * maxEmission, PETSC_DEFAULT, options.maxIterations),
        "KSPSetTolerances");
  Check(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE), "KSPSetInitialGuessNonzero");
  Check(KSPSetResidualHistory(ksp, nullptr, PETSC_DECIDE, PETSC_TRUE), "KSPSetResidualHistory");
  // PETSc's own options choose otherwise; one it cannot take (an unknown method) is the user's to mend.
  if (KSPSetFromOptions(ksp) != 0)
    throw InputError("--petsc-options (or PETSC_OPTIONS): PETSc cannot use them (an unknown -ksp_type or -pc_type?)");
  Check(KSPSolve(ksp, b, x), "KSPSolve");

  ChannelSolve out;
  PetscInt iterations = 0;
  Check(KSPGetIterationNumber(ksp, &iterations), "KSPGetIterationNumber");
  Check(KSPGetConvergedReason(ksp, &out.reason), "KSPGetConvergedReason");
  out.iterations = int(iterations);
  const PetscReal *history = nullptr;
  PetscInt count = 0;
  Check(KSPGetResidualHistory(ksp, &history, &count), "KSPGetResidualHistory");
  out.history.assign(history, history + count);
  const PetscScalar *px = nullptr;
  Check(VecGetArrayRead(x, &px), "VecGetArrayRead");
  out.values.assign(px, px + m);
  Check(VecRestoreArrayRead(x, &px), "VecRestoreArrayRead");
  KSPDestroy(&ksp);
  VecDestroy(&x);
  VecDestroy(&b);
  MatDestroy(&A);
  return out;
}

// max over the rank's rows and the channels of |E + rho F B - B| (B as channels of n values each).
double LocalResidual(const LocalSystem &s, const std::vector<std::vector<double>> &B) {
  double worst = 0;
  for (size_t r = 0; r < s.F->rows.size(); ++r) {
    const size_t i = size_t(s.F->rows[r]);
    for (int c = 0; c < 3; ++c) {
      const double t = s.F->RowDot(r, B[size_t(c)].data());
      const double v = std::fabs(s.emission[3 * i + size_t(c)] + s.reflectance[3 * i + size_t(c)] * t - B[size_t(c)][i]);
      worst = std::max(worst, std::isnan(v) ? HUGE_VAL : v);
    }
  }
  return worst;
}

}  // namespace

std::string KrylovSolversVersion() {
  char text[64];
  std::snprintf(text, sizeof text, "PETSc %d.%d.%d", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR);
  return text;
}

void SetPetscOptions(const std::string &options) { pendingOptions = options; }

SolverResult SolveRadiosityKrylov(MPI_Comm comm, const LocalSystem &s, const SolverOptions &options,
                                  PhaseTimers &timers) {
  if (!s.F->links.Empty())
    throw InputError("--solver gmres: the hierarchical operator's far links are not handed to PETSc (`solve` "
                     "spreads them into entries first; `run` does not): use --solver gauss-seidel or jacobi");
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  SolverResult result;
  SolveSetup setup;
  {
    ScopedPhase phase(timers, "solve setup");
    Start();
    setup = PrepareSolve(comm, s, options, result);
  }
  const long long n = s.F->n;
  if (setup.maxEmission == 0) {
    SetZeroSolution(n, result);
    return result;
  }
  // PETSc owns contiguous ranges of rows: rank 0's rows first, then rank 1's, ... (the exchange's order).
  const std::vector<long long> &allRows = setup.exchange.allRows;
  std::vector<PetscInt> position(allRows.size());  // every patch is some rank's row
  for (size_t q = 0; q < allRows.size(); ++q) position[size_t(allRows[q])] = PetscInt(q);
  const PetscInt first = PetscInt(setup.exchange.displacements[size_t(rank)] / 3);
  const PetscInt m = PetscInt(s.F->rows.size());
  std::vector<int> counts(setup.exchange.counts.size()), displacements(counts.size());
  for (size_t k = 0; k < counts.size(); ++k) {
    counts[k] = setup.exchange.counts[k] / 3;
    displacements[k] = setup.exchange.displacements[k] / 3;
  }

  std::vector<std::vector<double>> B(3), E(3);
  for (int c = 0; c < 3; ++c) {
    E[size_t(c)].resize(size_t(n));
    for (long long i = 0; i < n; ++i) E[size_t(c)][size_t(i)] = s.emission[3 * size_t(i) + size_t(c)];
  }
  double localResidual = LocalResidual(s, E), residual = 0;
  RAD_MPI(MPI_Allreduce(&localResidual, &residual, 1, MPI_DOUBLE, MPI_MAX, comm));
  result.initialResidual = residual / setup.maxEmission;

  static const char *const kChannel[3] = {"R", "G", "B"};
  int slowest = -1;
  bool outOfIterations = false, failed = false;
  std::string reasons;
  for (int c = 0; c < 3; ++c) {
    ChannelSolve solved;
    {
      ScopedPhase phase(timers, "solve sweeps");
      solved = SolveChannel(comm, s, c, position, first, m, options, setup.maxEmission);
    }
    {
      ScopedPhase phase(timers, "solve exchange");
      std::vector<double> gathered(allRows.size());
      RAD_MPI(MPI_Allgatherv(solved.values.data(), int(m), MPI_DOUBLE, gathered.data(), counts.data(),
                             displacements.data(), MPI_DOUBLE, comm));
      B[size_t(c)].assign(size_t(n), 0.0);
      for (size_t q = 0; q < allRows.size(); ++q) B[size_t(c)][size_t(allRows[q])] = gathered[q];
    }
    result.sweeps += solved.iterations + 1;
    if (solved.iterations > result.iterations || slowest < 0) {
      result.iterations = std::max(result.iterations, solved.iterations);
      slowest = c;
      result.residuals.clear();
      for (size_t k = 1; k < solved.history.size(); ++k) result.residuals.push_back(solved.history[k] / setup.maxEmission);
    }
    outOfIterations = outOfIterations || solved.reason == KSP_DIVERGED_ITS;
    failed = failed || (solved.reason < 0 && solved.reason != KSP_DIVERGED_ITS);
    reasons += std::string(c ? ", " : "") + kChannel[c] + " " + std::to_string(solved.iterations) + " (" +
               KSPConvergedReasons[solved.reason] + ")";
    if (rank == 0 && options.printProgress)
      std::fprintf(stderr, "radiosity: solve (gmres): channel %s: %d iteration(s), PETSc: %s\n", kChannel[c],
                   solved.iterations, KSPConvergedReasons[solved.reason]);
  }
  localResidual = LocalResidual(s, B);
  RAD_MPI(MPI_Allreduce(&localResidual, &residual, 1, MPI_DOUBLE, MPI_MAX, comm));
  result.finalResidual = residual / setup.maxEmission;
  result.radiance.assign(3 * size_t(n), 0.0);
  for (long long i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) result.radiance[3 * size_t(i) + size_t(c)] = B[size_t(c)][size_t(i)];

  char text[512];
  if (!std::isfinite(result.finalResidual) || failed) {
    result.status = SolverStatus::kDiverged;
    std::snprintf(text, sizeof text, "diverged: PETSc's Krylov solve failed (%s); relative residual %.3e",
                  reasons.c_str(), result.finalResidual);
  } else if (result.finalResidual < options.tolerance) {
    result.status = SolverStatus::kConverged;
    std::snprintf(text, sizeof text, "converged: relative residual %.3e < %.3e after %d iteration(s) (%s)",
                  result.finalResidual, options.tolerance, result.iterations, reasons.c_str());
  } else {
    result.status = SolverStatus::kMaxIterations;
    std::snprintf(text, sizeof text,
                  "not converged: relative residual %.3e is still above %.3e after %d iteration(s) (%s%s)",
                  result.finalResidual, options.tolerance, result.iterations, reasons.c_str(),
                  outOfIterations ? "; raise --max-iterations" : "; PETSc's tolerances were looser");
  }
  result.message = text;
  return result;
}

void FinalizeKrylovSolvers() {
  if (started) PetscFinalize();
  started = false;
}

}  // namespace rad
