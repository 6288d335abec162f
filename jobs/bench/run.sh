#!/usr/bin/env bash
# The main job on the reference workload: `radiosity run` on meshes/cornell_sphere.obj --subdiv 3 (2944
# patches, 32 shadow rays per occluded pair), at 1 and 2 ranks: wall time and the per-phase split.
#   bash jobs/bench/run.sh [SCENE] [SUBDIV]
set -euo pipefail
cd "$(dirname "$0")/../.."
scene=${1:-meshes/cornell_sphere.obj}
subdiv=${2:-3}
source jobs/bench/common.sh
echo "run benchmark: $scene --subdiv $subdiv, $(nproc) cores, $(date -u +%FT%TZ)"
for ranks in 1 2; do
  start=$(date +%s.%N)
  mpirun --bind-to none -n "$ranks" "$build/radiosity" run --input "$scene" --subdiv "$subdiv" \
    --output-dir "$out/r$ranks" --quiet 2>/dev/null
  end=$(date +%s.%N)
  /usr/bin/python3 - "$out/r$ranks/timings.json" "$ranks" "$start" "$end" <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); ranks = sys.argv[2]; wall = float(sys.argv[4]) - float(sys.argv[3])
total = [p for p in t["phases"] if p["name"] == "total"][0]["max"]
print(f"\n{ranks} rank(s): wall {wall:.2f} s (mpirun included), total {total:.2f} s")
for p in t["phases"]:
    print(f"  {p['name']:<20} {p['max']:8.3f} s  {100 * p['share']:5.1f} %")
print(f"  solver: {t['parameters'].get('solver iterations', '?')}")
PY
done
