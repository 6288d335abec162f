#!/usr/bin/env bash
# The GPU checks of one session with a lent GPU machine, in one call (about 6 minutes on an H200 with 16 cores,
# then what is left of GPU_CHECK_SECONDS, default 530): the device tests, jobs/bench/gpu.sh, the CLI suite with
# the device present (where `--backend auto` takes it), on one city the hierarchical operator on the host's
# cores (solved there, then on the GPU) against the dense GPU rows, and last jobs/bench/refine.sh on the 8 x 8
# city at patch sizes 0.25 and 0.125 (N = 93968 and 375456) on all the cores, in the time left. Here, first:
#   bash jobs/bench/carry/pack.sh        (the build and its Debian libraries into .devcarry/, about 45 MB)
# then on the GPU machine, carrying .devcarry:  bash jobs/bench/carry/gpu_check.sh
# It prints a summary last; logs go to $OUT (or ./gpu_check.out).
set -u
cd "$(dirname "$0")/../../.."
source jobs/bench/carry/start.sh
echo "== device tests ($(el) s)" | tee -a $S
timeout 120 $RAD_BUILD_DIR/tests/radiosity_tests --gtest_filter='Gpu*:*Device*:BvhGpu*:Backend.*:GpuSolver.*:Wavefront*:*Gpu*' \
  > $OUT/gtest_gpu.log 2>&1; echo "rc=$?" | tee -a $S
grep -E "^\[  (PASSED|FAILED) |^\[       OK \].*[0-9]{4,} ms" $OUT/gtest_gpu.log | tee -a $S
echo "== gpu.sh ($(el) s)" | tee -a $S
timeout 150 bash jobs/bench/gpu.sh > $OUT/gpu_bench.log 2>&1; echo "rc=$?" | tee -a $S
grep -E "^subdiv|GPU vs CPU|  (gpu|cpu)[ :]" $OUT/gpu_bench.log | tee -a $S
echo "== CLI suite, 4 at a time, beside all gtests, with the device present ($(el) s)" | tee -a $S
( timeout 280 $RAD_BUILD_DIR/tests/radiosity_tests > /tmp/gtest_all.log 2>&1; echo "all gtests rc=$?" > /tmp/gtest_rc ) &
printf '%s\n' test_sparse test_pipeline test_formats test_pathtrace test_compare test_vpl test_validate test_export \
    test_cli test_memory test_checkpoint test_lightmap | xargs -P 4 -I{} sh -c 'timeout 280 python3 tests/cli/{}.py > /tmp/cli_{}.log 2>&1; echo "{} rc=$? $(tail -1 /tmp/cli_{}.log)"' | tee -a $S
wait; cat /tmp/gtest_rc | tee -a $S
for f in /tmp/cli_*.log /tmp/gtest_all.log; do echo "##### $f"; cat $f; done > $OUT/tests.log
echo "== city 16x16: hierarchical on the cores against dense GPU rows ($(el) s)" | tee -a $S
python3 meshes/generate.py city --buildings 16x16 --sky-light --output /tmp/city16.obj >/dev/null
for spec in "h16 --operator hierarchical --backend cpu" "h16gpu --operator hierarchical --backend gpu" \
            "d16gpu --operator dense --backend gpu"; do
  set -- $spec; name=$1; shift
  s=$(date +%s); timeout 120 mpirun --bind-to none -n 1 $RAD_EXE run --input /tmp/city16.obj --max-patch-size 1.0 \
    --visibility rays "$@" --output-dir /tmp/o_$name --quiet > $OUT/city_$name.log 2>&1
  echo "$name: rc $? wall $(( $(date +%s) - s )) s; $(grep -E '^  (total|sparse form factors|form-factor kernel|solve sweeps) ' $OUT/city_$name.log | tr -s ' ' | tr '\n' ';')" | tee -a $S
done
left=$(( ${GPU_CHECK_SECONDS:-530} - $(el) ))
echo "== 8 x 8 city refined, hierarchical on all cores, within $left s ($(el) s)" | tee -a $S
if [ $left -gt 60 ]; then
  PYTHON=python3 DENSE_MAX=0 timeout $left bash jobs/bench/refine.sh 8x8 "0.25 0.125" 1e-4 > $OUT/refine.log 2>&1
  echo "rc=$?" | tee -a $S; tail -n +2 $OUT/refine.log | tee -a $S
fi
echo "== done ($(el) s)" | tee -a $S
