#!/usr/bin/env bash
# Jacobi, Gauss-Seidel and GMRES (PETSc, --solver gmres) side by side on a closed cube of reflectance 0.95 with
# one lit face, where the sweeps contract slowly: iterations, seconds and the largest difference of B from
# Gauss-Seidel's on 1 rank, at each rank count.
#
#   bash jobs/bench/krylov.sh [SUBDIV] [RANKS...]     (default: 4, i.e. 1536 patches; 1 2)
set -euo pipefail
cd "$(dirname "$0")/../.."
source jobs/bench/common.sh
subdiv=${1:-4}
shift || true
ranks=("$@")
[ $# -gt 0 ] || ranks=(1 2)
"$build/radiosity" --version | grep -q gmres || { echo "krylov: this build has no PETSc (apt-get install petsc-dev)"; exit 77; }
printf 'newmtl wall\nKd 0.95 0.95 0.95\nKe 0 0 0\nnewmtl lamp\nKd 0.95 0.95 0.95\nKe 1 1 1\n' >"$out/cube.mtl"
awk '/^usemtl/ { next } /^mtllib/ { print "mtllib cube.mtl"; next }
     /^f / { n++; print (n == 1 ? "usemtl lamp" : "usemtl wall"); print; next } { print }' \
  meshes/tests/furnace_cube.obj >"$out/cube.obj"
mpirun --bind-to none -n 2 "$build/radiosity" formfactors --input "$out/cube.obj" --subdiv "$subdiv" \
  --quadrature-tolerance 1e-10 --output "$out/F.h5" --quiet >/dev/null 2>&1
echo "krylov: closed cube, one lit face, reflectance 0.95, --subdiv $subdiv, --tolerance 1e-10"
printf "%-14s %6s %11s %9s %22s\n" solver ranks iterations seconds "max |B - B_gs,1| / max B"
for solver in gauss-seidel jacobi gmres; do  # Gauss-Seidel on the first rank count first: the reference
  for r in "${ranks[@]}"; do
    start=$(date +%s.%N)
    mpirun --bind-to none -n "$r" "$build/radiosity" solve --formfactors "$out/F.h5" --output "$out/$solver$r.h5" \
      --solver "$solver" --tolerance 1e-10 --max-iterations 5000 --quiet >/dev/null 2>&1
    end=$(date +%s.%N)
    /usr/bin/python3 - "$out" "$solver" "$r" "$start" "$end" "${ranks[0]}" <<'PY'
import sys, h5py, numpy as np
out, solver, r, start, end, first = sys.argv[1:]
with h5py.File("%s/%s%s.h5" % (out, solver, r)) as f:
    B, its = f["radiosity/B"][...], int(f["radiosity"].attrs["iterations"])
with h5py.File("%s/gauss-seidel%s.h5" % (out, first)) as g:
    ref = g["radiosity/B"][...]
print("%-14s %6s %11d %9.2f %22.2e" % (solver, r, its, float(end) - float(start), np.max(np.abs(B - ref)) / np.max(ref)))
PY
  done
done
