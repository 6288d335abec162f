#!/usr/bin/env bash
# What checkpoints cost `formfactors`: the same job without checkpoints, with only the final one (a long
# --checkpoint-every), and with one every few seconds, side by side in one run and repeated (the machine is
# shared and noisy), each checked to give the raw file of the run without checkpoints; then a restart from a
# checkpoint of half the rows.
#
#   bash jobs/bench/checkpoint.sh [SCENE] [SUBDIV] [RANKS] [REPEATS] [TOLERANCE] [METHOD]
#   (default: meshes/cornell_sphere.obj 3 2 3 1e-8 kernel: the reference workload, 2944 patches, 69 MB of F, with
#   a tighter cubature so that the run lasts long enough for several checkpoints. METHOD hemicube: the rows by
#   hemicubes of 256 x 256 x 128 pixels; sparse or hierarchical: that operator, each row computed alone when
#   checkpointed. These hold CSR rows and checkpoints, compared by every /formfactors dataset; the cubature
#   tolerance does not apply to the hemicube)
set -euo pipefail
cd "$(dirname "$0")/../.."
source jobs/bench/common.sh
scene=${1:-meshes/cornell_sphere.obj}
subdiv=${2:-3}
ranks=${3:-2}
repeats=${4:-3}
tolerance=${5:-1e-8}
method=${6:-kernel}
job=(mpirun --bind-to none -n "$ranks" "$build/radiosity" formfactors --input "$scene" --subdiv "$subdiv"
     --quadrature-tolerance "$tolerance" --quiet)
case "$method" in
  kernel) ;;
  hemicube) job+=(--method hemicube --hemicube 256) ;;
  sparse|hierarchical) job+=(--operator "$method") ;;
  *) echo "checkpoint.sh: METHOD is kernel, hemicube, sparse or hierarchical, not $method" >&2; exit 2 ;;
esac

# The output of run X (kernel: its raw file; hemicube: its HDF5 file) for a run's arguments.
outputs() { if [ "$method" = kernel ]; then echo --output "$out/$1.h5" --raw "$out/$1.raw"; else echo --output "$out/$1.h5"; fi; }
same() {  # whether runs X and Y wrote the same F
  if [ "$method" = kernel ]; then cmp -s "$out/$1.raw" "$out/$2.raw"; return; fi
  /usr/bin/python3 - "$out/$1.h5" "$out/$2.h5" <<'PY'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["formfactors"] for p in sys.argv[1:])
sys.exit(0 if sorted(a) == sorted(b) and all(np.array_equal(a[k][...], b[k][...]) for k in a) else 1)
PY
}

seconds() {  # the command's wall time
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'
}

echo "checkpoint cost ($method rows): $scene --subdiv $subdiv --quadrature-tolerance $tolerance, $ranks rank(s), $repeats repeats (seconds)"
printf "%-8s %12s %14s %16s\n" repeat "none" "final only" "every 0.02 min"
for r in $(seq "$repeats"); do
  rm -rf "$out"/ck*
  a=$(seconds "${job[@]}" $(outputs a))
  b=$(seconds "${job[@]}" $(outputs b) --checkpoint-dir "$out/ckb" --checkpoint-every 600)
  c=$(seconds "${job[@]}" $(outputs c) --checkpoint-dir "$out/ckc" --checkpoint-every 0.02)
  same a b && same a c || { echo "the outputs differ"; exit 1; }
  printf "%-8s %12s %14s %16s\n" "$r" "$a" "$b" "$c"
done

# A restart: a run stopped by SIGTERM once it has written its third checkpoint (rows are not equally costly:
# on this scene the sphere's come first and take most of the time).
"${job[@]}" --output "$out/d.h5" --checkpoint-dir "$out/ckd" --checkpoint-every 0.02 >/dev/null 2>&1 &
pid=$!
until [ -f "$out/ckd/formfactors-3.raw" ] || [ -f "$out/ckd/formfactors-3.h5" ]; do
  kill -0 "$pid" 2>/dev/null || { echo "the run ended before its third checkpoint"; exit 1; }
  sleep 0.05
done
kill -TERM "$pid"
wait "$pid" || true
rows=$(/usr/bin/python3 -c "import json; j = json.load(open('$out/ckd/checkpoint.json')); print(sum(b - a for a, b in j['done']), j['patches'])")
d=$(seconds "${job[@]}" $(outputs d) --checkpoint-dir "$out/ckd" --restart)
same a d || { echo "the restarted output differs"; exit 1; }
echo "restart from a checkpoint of ${rows/ / of } rows: $d s, F identical to the run without checkpoints"
