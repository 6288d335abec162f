// Krylov solvers for the radiosity system through PETSc (`--solver gmres`): for reflectances near 1, where
// Jacobi and Gauss-Seidel contract slowly (a closed cube of reflectance 0.95: hundreds of sweeps), GMRES needs
// tens of iterations. Built when PETSc is found at configure time (petsc/krylov_solver.cpp), else
// petsc/without_petsc.cpp refuses `--solver gmres` with one line.
//
// Per colour channel, the rank's rows of (I - diag(rho) F) are copied into a PETSc matrix (MATDENSE for dense
// rows, MATAIJ for CSR rows; the rows renumbered so that each rank owns a contiguous range, as PETSc needs) and
// solved with KSP from B = E: GMRES with a Jacobi preconditioner on the right by default, stopping when the 2-norm
// of the unpreconditioned residual is below tolerance * max|E| (which bounds the max-norm residual `solve`
// uses). PETSc's own options (`--petsc-options "-ksp_type bcgs -pc_type none -ksp_monitor"`, or the
// PETSC_OPTIONS environment variable) choose the method, preconditioner and tolerances and show its monitors;
// `-log_view` prints PETSc's profile at the end of the run. After the solve the relative max-norm residual of B is
// measured with the rows of F, as for the other solvers.
#pragma once

#include <mpi.h>

#include <string>

#include "solver/radiosity_solver.h"
#include "util/timers.h"

namespace rad {

// "PETSc 3.18.5" when built with it, else "".
std::string KrylovSolversVersion();

// Options for PETSc (its command-line syntax), given before the first Krylov solve.
void SetPetscOptions(const std::string &options);

// Collective. Dense or CSR rows without far links (InputError otherwise, and without PETSc).
SolverResult SolveRadiosityKrylov(MPI_Comm comm, const LocalSystem &system, const SolverOptions &options,
                                  PhaseTimers &timers);

// Before MPI_Finalize: PETSc's finalization (its -log_view report), if it was started.
void FinalizeKrylovSolvers();

}  // namespace rad
