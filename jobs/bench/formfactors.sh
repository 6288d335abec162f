#!/usr/bin/env bash
# Form-factor benchmark on the reference workload: meshes/cornell_sphere.obj --subdiv 3 (2944 patches),
# 32 shadow rays per occluded pair, at 1 and 2 ranks. Prints wall time, the per-phase split, shadow rays per
# second, and the ratio of our visibility phase's rays per second to a plain Embree loop tracing the same
# number of comparable rays with the same threads, measured in the same run.
#   bash jobs/bench/formfactors.sh [SCENE] [SUBDIV]
set -euo pipefail
cd "$(dirname "$0")/../.."
scene=${1:-meshes/cornell_sphere.obj}
subdiv=${2:-3}
source jobs/bench/common.sh
cores=$(nproc)
echo "benchmark: $scene --subdiv $subdiv, 32 shadow rays, $cores cores, $(date -u +%FT%TZ)"
for ranks in 1 2; do
  start=$(date +%s.%N)
  mpirun --bind-to none -n "$ranks" "$build/radiosity" formfactors --input "$scene" --subdiv "$subdiv" --visibility rays --shadow-rays 32 \
    --output "$out/F$ranks.h5" --timings "$out/t$ranks.json" --quiet 2>/dev/null
  end=$(date +%s.%N)
  threads=$(( cores / ranks > 0 ? cores / ranks : 1 ))
  /usr/bin/python3 - "$out/t$ranks.json" "$ranks" "$start" "$end" <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); ranks = sys.argv[2]; wall = float(sys.argv[4]) - float(sys.argv[3])
print(f"\n{ranks} rank(s): wall {wall:.2f} s (mpirun included), total {[p for p in t['phases'] if p['name']=='total'][0]['max']:.2f} s")
for p in t["phases"]:
    print(f"  {p['name']:<20} {p['max']:8.3f} s  {100*p['share']:5.1f} %")
c = t["counters"]
print(f"  shadow rays {c['shadow rays']:.4g}, pairs ray traced {c['pairs ray traced']:.4g} of {c['pairs exchanging light']:.4g} exchanging light")
print(f"  shadow rays per second {t['parameters']['shadow rays per second']}")
PY
done
# Plain Embree loop with all cores, the same number of rays as the 1-rank run.
rays=$(/usr/bin/python3 -c "import json;print(int(json.load(open('$out/t1.json'))['counters']['shadow rays']))")
ours=$(/usr/bin/python3 -c "import json;print(json.load(open('$out/t1.json'))['parameters']['shadow rays per second'])")
plain=$("$build/radiosity_bench_embree" "$scene" "$subdiv" "$rays" "$cores")
plainRate=$(echo "$plain" | awk '{print $6}')
echo
echo "plain Embree loop ($cores threads): $plain"
/usr/bin/python3 -c "print(f'visibility phase vs plain Embree loop (1 rank, $cores threads): {float(\"$ours\")/float(\"$plainRate\"):.2f}x the rays per second')"
/usr/bin/python3 -c "
import h5py, numpy as np
a = h5py.File('$out/F1.h5', 'r')['formfactors/F'][:]; b = h5py.File('$out/F2.h5', 'r')['formfactors/F'][:]
print('matrices at 1 and 2 ranks:', 'bitwise identical' if np.array_equal(a, b) else 'DIFFER (max %g)' % abs(a - b).max())"
