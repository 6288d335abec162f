// Radiosity by hemicube gathering without F (`--hemicube-mode gather`), as texture-space radiosity iterates:
// every iteration traces every row's hemicube again and gathers B from what its pixels see,
// B_i <- E_i + rho_i sum_k w_k B_hit(k), so that memory is O(patches) whatever the resolution (for scenes that
// change between iterations, or rows that would not fit). Jacobi over the ranks (each its block of rows, B
// gathered after each pass), each row summed in pixel order: the same bits for any rank or thread count. The
// pass that computes B^{p} gives the residual of B^{p-1}, E + rho F B - B = B^{p} - B^{p-1}, as the solvers
// measure it (relative to max |E|); the returned B is the last whose residual is known.
#pragma once

#include <mpi.h>

#include <vector>

#include "formfactor/hemicube_rows.h"
#include "solver/radiosity_solver.h"
#include "util/timers.h"

namespace rad {

// Collective. `rows`: this rank's (a block, ascending). `rowSums`: each own row's sum of F (what its pixels
// gave to patches), from the first pass.
SolverResult GatherByHemicubes(MPI_Comm comm, const Scene &scene, const std::vector<Patch> &patches,
                               const std::vector<long long> &rows, const HemicubeOptions &options, double tolerance,
                               int maxIterations, PhaseTimers &timers, bool quiet, std::vector<double> &rowSums);

}  // namespace rad
