// The radiosity solve on one CUDA device per rank, with the contract of rad::SolveRadiosity
// (solver/radiosity_solver.h): same SolverResult fields and meanings, same residual
// max|E - (I - rho F) B| / max|E|, same stopping rules and messages (solver/solver_common.h), same phases
// ("solve setup", "solve sweeps", "solve exchange"). Includable by g++ (no CUDA types).
//
// Dense rows are solved here; CSR rows (the sparse and hierarchical operators') by gpu_csr_solver.h.
// The rank's rows of F live in device memory as given (float or double; no managed memory), B as an n x 3
// column-major matrix next to the sweep's changes D (together n x 6).
//  - Jacobi: one product per iteration of the rank's rows by B (rows x n times n x 3: the three channels in one
//    pass over F), then one kernel makes B_new = E + rho * (F B) and each row's residual of B.
//  - Gauss-Seidel: rank-local Gauss-Seidel in increasing row order, Jacobi between ranks, computed in blocks
//    of settings.blockRows rows: per block one product of its rows by [B^k | D] (n x 6: the iterate and the
//    changes made by the rank's earlier blocks), then one kernel solves the block's diagonal part in order
//    (forward substitution). In exact arithmetic this is the CPU's Gauss-Seidel step, so it converges to the
//    same solution; the sums are grouped differently, so iterates agree to rounding, not bitwise. Details and
//    a host version of the same sweep: solver/block_gauss_seidel.h.
//    Every GPU sweep measures the residual of the iterate it starts from (the product with B^k comes with the
//    GEMM at no extra read of F), so SolverResult::residuals holds iterate residuals throughout, where the CPU
//    Gauss-Seidel reports its rows' own residuals until they fall below the tolerance.
//  - The product: cublasDgemm for double F. For float F, the project's kernel reads F as float and accumulates
//    in double: cuBLAS has no float x double GEMM (cublasGemmEx needs A and B of one type, and 64-bit compute
//    needs double inputs); SGEMM would accumulate in float, leaving the residual near 1e-7 * sqrt(n), short of
//    usual tolerances; converting F to double on the fly would move 5x the bytes of reading it.
//  - Residual: the max over the rank's rows by a Thrust reduction on the device, then MPI_Allreduce.
//  - Exchange: the rank's new values go to pinned host memory, MPI_Allgatherv (Open MPI here is not
//    CUDA-aware), and all of B goes back to the device (with one rank, straight from device to device).
// Device: SelectCudaDevice (node-local rank % device count).
#pragma once

#include <mpi.h>

#include "solver/radiosity_solver.h"
#include "util/timers.h"

namespace rad {

struct GpuSolverSettings {
  int blockRows = 512;          // Gauss-Seidel rows per block, 32 to kGpuMaxBlockRows
  bool cublasForDouble = true;  // double F: cublasDgemm; false: the project's product kernel (as for float F)
};
constexpr int kGpuMaxBlockRows = 512;

// Collective. Throws InputError when a rank has no CUDA device, when the rank's rows of F do not fit in its
// device's free memory (saying how much is needed and free), or for the CPU solver's input errors.
SolverResult SolveRadiosityGpu(MPI_Comm comm, const LocalSystem &system, const SolverOptions &options,
                               PhaseTimers &timers, const GpuSolverSettings &settings = GpuSolverSettings());

}  // namespace rad
