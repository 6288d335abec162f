#!/usr/bin/env bash
# The solve of CSR rows with far links (the hierarchical operator) on the GPU against the CPU cores, for a
# machine with a CUDA device (one rank): per city of K x K buildings (meshes/generate.py, --max-patch-size 1,
# shadow rays), the operator is computed once on the cores into a file, then `solve` runs on each backend with
# Gauss-Seidel and Jacobi to a relative residual of 1e-8: sweeps, the "solve sweeps" phase, time per sweep, and
# how far the GPU's B is from the cores' (largest relative difference).
#   bash jobs/bench/gpu_csr_solve.sh [K ...]      (env: RAD_BUILD_DIR, RAD_MPIEXEC, PYTHON; default K: 16)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${RAD_BUILD_DIR:-build}
[ -x "$build/radiosity" ] || bash jobs/setup.sh >/dev/null
python=${PYTHON:-/usr/bin/python3}  # a Python with numpy and h5py
mpiexec=${RAD_MPIEXEC:-mpirun}
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
if "$build/radiosity" --version | grep -q "devices: 0\|cpu (Embree[^)]*)$"; then
  echo "gpu_csr_solve: no CUDA device or backend: $("$build/radiosity" --version | tail -1)" >&2; exit 1
fi
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(16)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "gpu_csr_solve, $(date -u +%FT%TZ); $("$build/radiosity" --version | tail -1)"
printf '%-8s %-8s %-13s %7s %10s %12s %s\n' N backend solver sweeps "sweeps s" "ms/sweep" "B vs cores"
for k in "${sizes[@]}"; do
  city=$out/city$k.obj
  "$python" meshes/generate.py city --buildings "${k}x$k" --sky-light --output "$city" >/dev/null
  "$mpiexec" --bind-to none -n 1 "$build/radiosity" formfactors --input "$city" --max-patch-size 1.0 \
    --visibility rays --operator hierarchical --output "$out/h$k.h5" --quiet > "$out/ff$k.log" 2>&1
  for solver in gauss-seidel jacobi; do
    for backend in cpu gpu; do
      log=$out/s_${k}_${solver}_$backend.log
      "$mpiexec" --bind-to none -n 1 "$build/radiosity" solve --formfactors "$out/h$k.h5" --backend $backend \
        --solver $solver --tolerance 1e-8 --output "$out/b_${k}_${solver}_$backend.h5" > "$log" 2>&1
      n=$(awk '$1 == "patches" {print $2}' "$log")
      sweeps=$(awk '$1 == "solver" && $2 == "sweeps" {print $3}' "$log")
      seconds=$(awk '$1 == "solve" && $2 == "sweeps" {print $5}' "$log")
      diff=-
      if [ $backend = gpu ]; then
        diff=$("$python" -c 'import h5py, numpy as np, sys
a = h5py.File(sys.argv[1], "r")["radiosity/B"][:]; b = h5py.File(sys.argv[2], "r")["radiosity/B"][:]
print("%.2e" % (np.abs(a - b).max() / np.abs(b).max()))' "$out/b_${k}_${solver}_gpu.h5" "$out/b_${k}_${solver}_cpu.h5")
      fi
      printf '%-8s %-8s %-13s %7s %10s %12.3f %s\n' "$n" $backend $solver "$sweeps" "$seconds" \
        "$(awk -v s="$seconds" -v k="$sweeps" 'BEGIN {print 1000 * s / k}')" "$diff"
    done
  done
done
