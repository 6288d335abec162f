// The Krylov solvers in a build without PETSc (solver/krylov_solver.h): `--solver gmres` is refused with what to
// install.
#include "solver/krylov_solver.h"

#include "util/error.h"

namespace rad {

std::string KrylovSolversVersion() { return ""; }

void SetPetscOptions(const std::string &) {}

SolverResult SolveRadiosityKrylov(MPI_Comm, const LocalSystem &, const SolverOptions &, PhaseTimers &) {
  throw InputError("--solver gmres: this build has no PETSc (Debian: apt-get install petsc-dev, then configure "
                   "again); use --solver gauss-seidel or jacobi");
}

void FinalizeKrylovSolvers() {}

}  // namespace rad
