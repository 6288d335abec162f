#!/usr/bin/env bash
# What checkpoints cost `formfactors`: the same job without checkpoints, with only the final one (a long
# --checkpoint-every), and with one every few seconds, side by side in one run and repeated (the machine is
# shared and noisy), each checked to give the raw file of the run without checkpoints; then a restart from a
# checkpoint of half the rows.
#
#   bash jobs/bench/checkpoint.sh [SCENE] [SUBDIV] [RANKS] [REPEATS] [TOLERANCE]
#   (default: meshes/cornell_sphere.obj 3 2 3 1e-8: the reference workload, 2944 patches, 69 MB of F, with a
#   tighter cubature so that the run lasts long enough for several checkpoints)
set -euo pipefail
cd "$(dirname "$0")/../.."
source jobs/bench/common.sh
scene=${1:-meshes/cornell_sphere.obj}
subdiv=${2:-3}
ranks=${3:-2}
repeats=${4:-3}
tolerance=${5:-1e-8}
job=(mpirun --bind-to none -n "$ranks" "$build/radiosity" formfactors --input "$scene" --subdiv "$subdiv"
     --quadrature-tolerance "$tolerance" --quiet)

seconds() {  # the command's wall time
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'
}

echo "checkpoint cost: $scene --subdiv $subdiv --quadrature-tolerance $tolerance, $ranks rank(s), $repeats repeats (seconds)"
printf "%-8s %12s %14s %16s\n" repeat "none" "final only" "every 0.02 min"
for r in $(seq "$repeats"); do
  rm -rf "$out"/ck*
  a=$(seconds "${job[@]}" --output "$out/a.h5" --raw "$out/a.raw")
  b=$(seconds "${job[@]}" --output "$out/b.h5" --raw "$out/b.raw" --checkpoint-dir "$out/ckb" --checkpoint-every 600)
  c=$(seconds "${job[@]}" --output "$out/c.h5" --raw "$out/c.raw" --checkpoint-dir "$out/ckc" --checkpoint-every 0.02)
  cmp -s "$out/a.raw" "$out/b.raw" && cmp -s "$out/a.raw" "$out/c.raw" || { echo "the raw files differ"; exit 1; }
  printf "%-8s %12s %14s %16s\n" "$r" "$a" "$b" "$c"
done

# A restart: a run stopped by SIGTERM once it has written its third checkpoint (rows are not equally costly:
# on this scene the sphere's come first and take most of the time).
"${job[@]}" --output "$out/d.h5" --checkpoint-dir "$out/ckd" --checkpoint-every 0.02 >/dev/null 2>&1 &
pid=$!
until [ -f "$out/ckd/formfactors-3.raw" ]; do
  kill -0 "$pid" 2>/dev/null || { echo "the run ended before its third checkpoint"; exit 1; }
  sleep 0.05
done
kill -TERM "$pid"
wait "$pid" || true
rows=$(/usr/bin/python3 -c "import json; j = json.load(open('$out/ckd/checkpoint.json')); print(sum(b - a for a, b in j['done']), j['patches'])")
d=$(seconds "${job[@]}" --output "$out/d.h5" --raw "$out/d.raw" --checkpoint-dir "$out/ckd" --restart)
cmp -s "$out/a.raw" "$out/d.raw" || { echo "the restarted raw file differs"; exit 1; }
echo "restart from a checkpoint of ${rows/ / of } rows: $d s, raw file identical to the run without checkpoints"
