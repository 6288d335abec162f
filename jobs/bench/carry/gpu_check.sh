#!/usr/bin/env bash
# The GPU checks of one session with a lent GPU machine, in one call (about 6 minutes on an H200 with 16 cores):
# the device tests, jobs/bench/gpu.sh, the CLI suite with the device present (where `--backend auto` takes it),
# and the hierarchical operator on the host's cores against the dense GPU rows on one city. Here, first:
#   bash jobs/bench/carry/pack.sh        (the build and its Debian libraries into .devcarry/, about 45 MB)
# then on the GPU machine, carrying .devcarry:  bash jobs/bench/carry/gpu_check.sh
# It prints a summary last; logs go to $OUT (or ./gpu_check.out).
set -u
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/gpu_check.out}; mkdir -p "$OUT"
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
tar -xzf .devcarry/rad.tar.gz -C /tmp
source jobs/bench/carry/env.sh
ln -sf /tmp/rad/ompi/wrapbin_mpirun /tmp/rad/path/mpiexec
export PYTHON=python3 PYTHONUNBUFFERED=1 RAD_EXE=$RAD_BUILD_DIR/radiosity RAD_SOURCE_DIR=$PWD RAD_MPIEXEC=mpiexec
S=$OUT/summary.log
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; echo "cores $(nproc)"
  $RAD_EXE --version | tail -1; } 2>&1 | tee $S
echo "== device tests ($(el) s)" | tee -a $S
timeout 120 $RAD_BUILD_DIR/tests/radiosity_tests --gtest_filter='Gpu*:*Device*:BvhGpu*:Backend.*:GpuSolver.*:Wavefront*' \
  > $OUT/gtest_gpu.log 2>&1; echo "rc=$?" | tee -a $S
grep -E "^\[  (PASSED|FAILED) |^\[       OK \].*[0-9]{4,} ms" $OUT/gtest_gpu.log | tee -a $S
echo "== gpu.sh ($(el) s)" | tee -a $S
timeout 150 bash jobs/bench/gpu.sh > $OUT/gpu_bench.log 2>&1; echo "rc=$?" | tee -a $S
grep -E "^subdiv|GPU vs CPU|  (gpu|cpu): " $OUT/gpu_bench.log | tee -a $S
echo "== CLI suite and all gtests with the device present, 4 at a time ($(el) s)" | tee -a $S
printf '%s\n' test_formats test_pathtrace test_compare test_vpl test_pipeline test_sparse test_validate test_export \
    test_cli test_memory | xargs -P 4 -I{} sh -c 'timeout 200 python3 tests/cli/{}.py > /tmp/cli_{}.log 2>&1; echo "{} rc=$? $(tail -1 /tmp/cli_{}.log)"' | tee -a $S
timeout 200 $RAD_BUILD_DIR/tests/radiosity_tests > /tmp/gtest_all.log 2>&1; echo "all gtests rc=$?" | tee -a $S
for f in /tmp/cli_*.log /tmp/gtest_all.log; do echo "##### $f"; cat $f; done > $OUT/tests.log
echo "== city 16x16: hierarchical on the cores against dense GPU rows ($(el) s)" | tee -a $S
python3 meshes/generate.py city --buildings 16x16 --sky-light --output /tmp/city16.obj >/dev/null
for spec in "h16 --operator hierarchical --backend cpu" "d16gpu --operator dense --backend gpu"; do
  set -- $spec; name=$1; shift
  s=$(date +%s); timeout 120 mpirun --bind-to none -n 1 $RAD_EXE run --input /tmp/city16.obj --max-patch-size 1.0 \
    --visibility rays "$@" --output-dir /tmp/o_$name --quiet > $OUT/city_$name.log 2>&1
  echo "$name: rc $? wall $(( $(date +%s) - s )) s; $(grep -E '^  (total|sparse form factors|form-factor kernel) ' $OUT/city_$name.log | tr -s ' ' | tr '\n' ';')" | tee -a $S
done
echo "== done ($(el) s)" | tee -a $S
