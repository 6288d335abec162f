# Sourced first by the GPU machine's check scripts (gpu_check.sh, gpu_solve_check.sh), from the repository root:
# unpacks the carried build (pack.sh) and sets up its environment (env.sh), the test runners' variables, $OUT
# for the logs, $S for the summary (the device and cores first) and `el` for the seconds since the start.
OUT=${OUT:-$PWD/gpu_check.out}; mkdir -p "$OUT"
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
tar -xzf .devcarry/rad.tar.gz -C /tmp
source jobs/bench/carry/env.sh
ln -sf /tmp/rad/ompi/wrapbin_mpirun /tmp/rad/path/mpiexec
export PYTHON=python3 PYTHONUNBUFFERED=1 RAD_EXE=$RAD_BUILD_DIR/radiosity RAD_SOURCE_DIR=$PWD RAD_MPIEXEC=mpiexec
S=$OUT/summary.log
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; echo "cores $(nproc)"
  $RAD_EXE --version | tail -1; } 2>&1 | tee $S
