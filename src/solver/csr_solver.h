// The radiosity solve on CSR rows of F (the sparse operator's, or a CSR file), without ever forming a dense
// row: the same iteration and stopping rules as the dense solver (solve_iteration.h), with sweeps that read
// each row's stored entries, and between sweeps each rank receives only what its rows read, where that moves
// less than gathering every row (read_exchange.h, SweepExchange). Each row's products are summed in column order, and Gauss-Seidel takes
// the rank's rows one after the other, so results depend on neither threads nor how rows are grouped; between
// ranks the update is Jacobi, as in the dense solver. The hierarchical operator's far links (far_links.h) are
// read from the sweep's starting iterate B^k: node sums pulled up the tree once per sweep (on the ranks that
// hold their patches, then asked for by those that read them), then every row's far field on all threads,
// before Gauss-Seidel's pass in row order (which reads it).
#pragma once

#include <mpi.h>

#include "solver/radiosity_solver.h"
#include "util/timers.h"

namespace rad {

// Collective. s.F must be CSR.
SolverResult SolveRadiosityCsr(MPI_Comm comm, const LocalSystem &s, const SolverOptions &options, PhaseTimers &timers);

}  // namespace rad
