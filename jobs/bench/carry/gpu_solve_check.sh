#!/usr/bin/env bash
# A shorter GPU check for the solvers (about 3 minutes on an H200 with 16 cores): the solvers' device tests, the
# CLI suites that solve CSR and dense files with the device present, and jobs/bench/gpu_csr_solve.sh on the
# 16x16 and 32x32 cities. Here, first:  bash jobs/bench/carry/pack.sh
# then on the GPU machine, carrying .devcarry:  bash jobs/bench/carry/gpu_solve_check.sh
set -u
cd "$(dirname "$0")/../../.."
source jobs/bench/carry/start.sh
echo "== solver device tests ($(el) s)" | tee -a $S
timeout 60 $RAD_BUILD_DIR/tests/radiosity_tests --gtest_filter='GpuSolver.*:GpuCsrSolver.*' > $OUT/gtest_solvers.log 2>&1
echo "rc=$?" | tee -a $S; grep -E "^\[  (PASSED|FAILED|SKIPPED) " $OUT/gtest_solvers.log | tee -a $S
echo "== CLI suites ($(el) s)" | tee -a $S
printf '%s\n' "test_export" "test_memory" "test_validate" "test_sparse -k gpu_solves" | xargs -P 4 -I{} sh -c \
  'set -- {}; timeout 170 python3 tests/cli/$1.py $2 $3 > $0/cli_$1.log 2>&1; echo "{} rc=$? $(tail -1 $0/cli_$1.log)"' $OUT \
  | tee -a $S
echo "== gpu_csr_solve.sh ($(el) s)" | tee -a $S
timeout 150 bash jobs/bench/gpu_csr_solve.sh 16 32 2>&1 | tee $OUT/gpu_csr_solve.log | tail -n +2 | tee -a $S
echo "== done ($(el) s)" | tee -a $S
