#!/usr/bin/env bash
# Solver benchmark: seconds per iteration and effective GB/s of reading F for Jacobi and Gauss-Seidel, next to
# a plain memcpy and a plain sum over the same bytes measured in the same run, at 1 and 2 ranks, for
# N = 2944 (the reference scene at subdiv 3) and N = 11776 (subdiv 4), F in float64 (and float32 with --float).
#   bash jobs/bench/solver.sh [--float] [SWEEPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
precisions=(double)
if [ "${1:-}" = --float ]; then precisions=(double float); shift; fi
sweeps=${1:-40}
build=${RAD_BUILD_DIR:-build}
[ -x "$build/radiosity_bench_solver" ] || bash jobs/setup.sh >/dev/null
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_rmaps_base_oversubscribe=1
echo "solver benchmark: $(nproc) cores, $sweeps sweeps, $(date -u +%FT%TZ)"
for precision in "${precisions[@]}"; do
  for n in 2944 11776; do
    for ranks in 1 2; do
      mpirun --bind-to none -n "$ranks" "$build/radiosity_bench_solver" "$n" "$sweeps" "$precision"
    done
  done
done
