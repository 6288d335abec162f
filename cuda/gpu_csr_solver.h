// The radiosity solve on CSR rows of F on one CUDA device per rank (the sparse and hierarchical operators'
// rows, and CSR files), with the contract of rad::SolveRadiosityGpu (gpu_solver.h), which hands CSR rows here.
// The row maths are solver/sparse_transport.h's, shared with the host reference that the tests run.
//  - Far field (hierarchical operator): per sweep, from B^k, three kernels: the node means (a warp per node),
//    what each element's links gather (a thread per element) and each row's share (a warp per row).
//  - Jacobi: a warp per row: its entries against B^k, plus its far field; new value and residual of B^k.
//  - Gauss-Seidel: rank-local Gauss-Seidel in increasing row order, Jacobi between ranks, as the CPU solver:
//    one thread block walks the rank's rows in groups of 32, a warp per row of the group reading the newest
//    values (and B^k, for the residual, in the same pass) and keeping the row's entries at the group's earlier
//    rows; then one warp solves the group in order through that triangle (block_gauss_seidel.h's substitution).
//    One block, because each group reads the values of all groups before it: a sweep is a chain of small
//    steps, which the device runs without returning to the host.
// Every sweep measures the residual of the iterate it starts from, as the dense GPU solver does.
// F stays in its precision on the device (float or double values, int32 columns); every sum is in double.
// cuSPARSE is not used: Gauss-Seidel through its triangular solve would need I - rho_c L as three matrices (one
// per channel's reflectance), its products take float values with float vectors or double with double, not
// float values with double sums, and the far field is not a product by one matrix.
#pragma once

#include <mpi.h>

#include "cuda/gpu_solver.h"

namespace rad {

// Collective. system.F must be CSR. Throws InputError as SolveRadiosityGpu does.
SolverResult SolveRadiosityGpuCsr(MPI_Comm comm, const LocalSystem &system, const SolverOptions &options,
                                  PhaseTimers &timers);

}  // namespace rad
