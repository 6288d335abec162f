// The distributed radiosity solve: B_i = E_i + rho_i * sum_j F_ij B_j for R, G and B at once (one pass over
// a row of F serves the three channels). Each rank holds only its own rows of F; after every sweep the new
// values of all ranks are shared with MPI_Allgatherv (CSR rows: only with the ranks that read them, where that
// moves less, solver/read_exchange.h).
//  - Jacobi: every row is updated from the previous iterate.
//  - Gauss-Seidel: within a rank, rows are updated in increasing order and each uses the newest values of the
//    rank's earlier rows (exact rank-local Gauss-Seidel, whatever the number of threads); between ranks the
//    update is Jacobi.
// Convergence is judged on the relative residual max|E - (I - rho F) B| / max|E| of an iterate, computed in the
// same pass over F as the next sweep (F is read once per iteration). Jacobi measures it every sweep. Gauss-Seidel
// sweeps first measure each row's residual at its update (max|E_i + rho_i F_i . B_newest - B_i|: one product
// per row); once that falls below the tolerance, sweeps also measure the residual of the iterate they start
// from (a second product over the columns already updated, about half a row), and only that one stops the solve.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "formfactor/form_factor_rows.h"
#include "util/timers.h"

namespace rad {

// kGmres: PETSc's Krylov solvers (solver/krylov_solver.h), when the build has PETSc.
enum class SolverMethod { kJacobi, kGaussSeidel, kGmres };
SolverMethod ParseSolverMethod(const std::string &name);  // "jacobi" | "gauss-seidel" | "gmres"; throws InputError
const char *SolverMethodName(SolverMethod method);

// What CSR rows' sweeps exchange between ranks (solver/read_exchange.h): kRead, only what each rank's rows read;
// kAll, every row to every rank (MPI_Allgatherv); kAuto, whichever moves fewer values in all. Same results.
enum class SweepExchange { kAuto, kRead, kAll };

// A rank's share of the system: its rows of F (not owned; row r of the block is global row F->rows[r]) and every
// patch's reflectance and emission.
struct LocalSystem {
  const FormFactorRows *F = nullptr;
  std::vector<double> reflectance;  // 3 per patch, all n patches
  std::vector<double> emission;     // 3 per patch, all n patches
};

// Where a solve stands before sweep k: its iterate B^k and what the sweeps before it recorded. A solve continued
// from it (IterateKeeper::Resume) makes the sweeps, residuals and result of a solve never stopped, bit for bit,
// when the rows of F are split over the ranks as they were.
struct SolverIterate {
  int iteration = 0;               // k >= 1
  std::vector<double> radiance;    // B^k, 3 per patch ([n][3])
  double initialResidual = 0;      // of sweep 0
  std::vector<double> residuals;   // of sweeps 1 .. k-1 (SolverResult::residuals so far)
};

// Keeps a solve's iterate, so that a run stopped during the solve continues it (pipeline/solve_checkpoint.h).
class IterateKeeper {
 public:
  virtual ~IterateKeeper() = default;
  // Collective, before the first sweep: the iterate to continue from, or nullptr to start from B = E.
  virtual const SolverIterate *Resume() = 0;
  // Collective, after every exchange (B^k is on every rank): `iterate()` makes the state when the keeper keeps
  // it. May stop the process (a signal came and the iterate was kept).
  virtual void AfterExchange(int k, const std::function<SolverIterate()> &iterate) = 0;
};

struct SolverOptions {
  SolverMethod method = SolverMethod::kGaussSeidel;
  double tolerance = 1e-6;
  int maxIterations = 1000;
  bool printProgress = false;  // rank 0 prints each iteration's residual to stderr
  IterateKeeper *keeper = nullptr;  // checkpoints of the iterate: the sweeps of IterateSolve (either backend)
  SweepExchange exchange = SweepExchange::kAuto;  // CSR rows on the CPU (dense rows read every value)
};

enum class SolverStatus { kConverged, kMaxIterations, kDiverged };

struct SolverResult {
  std::vector<double> radiance;   // B, 3 per patch ([n][3]), identical on every rank
  // One per sweep after the first: Jacobi, the relative residual of iterate 1, 2, ..., iterations; Gauss-Seidel,
  // the rows' residuals at their update until they fall below the tolerance, then that of the iterate.
  std::vector<double> residuals;
  double initialResidual = 0;     // of the first sweep (Jacobi: of the starting guess B = E)
  double finalResidual = 0;       // of the returned B
  int iterations = 0;             // of the returned B
  int sweeps = 0;                 // passes over F (iterations + 1: the last one measures the returned B)
  SolverStatus status = SolverStatus::kConverged;
  // max over rows and channels of rho_i * sum_j F_ij: below 1, both methods converge (and contract in max norm).
  double contractionBound = 0;
  long long contractionRow = -1;
  std::string message;  // why it stopped, in words
};

// Collective. Throws InputError if F or the patch data hold non-finite values.
SolverResult SolveRadiosity(MPI_Comm comm, const LocalSystem &system, const SolverOptions &options,
                            PhaseTimers &timers);

}  // namespace rad
