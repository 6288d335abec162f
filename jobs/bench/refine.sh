#!/usr/bin/env bash
# The hierarchical operator on one scene split ever finer: N grows by refinement, not by adding buildings
# (jobs/bench/sparse.sh grows the city). This is the case hierarchical radiosity is built for (a model of a
# given size at a finer patch size) and the one a 1e6-patch run of a real model is. For each patch size, `run`
# (form factors, solve, image) with --operator hierarchical at --operator-tolerance EPS, and the dense operator
# while N is at most DENSE_MAX; prints per run the wall time, peak memory (max RSS), the three phases that grow
# (element walk, rows' walk, exact entries), per row: the exact entries kept, the far links (rows' own +
# elements'), the far links' shadow rays, and the walks' CPU time per far-link ray (their seconds times the
# cores, over the rays: 111 ns at N = 24272 and 170 ns at N = 999857 on the 8 x 8 city); what the rows
# hold (MiB: exact entries / rows' far links / elements' links); the operator check's mean far-link error per
# row, and B's relative RMS difference from the dense B where dense ran. Then the fitted exponents of time and
# memory against N (least squares on logs) and what they give at N = 1e6.
#   bash jobs/bench/refine.sh [CITY] [SIZES] [EPS]      e.g. 8x8 "1.0 0.5 0.25" 1e-4
# Environment: DENSE_MAX (default 16000), VISIBILITY (default rays), RANKS (default 1), PRECISION (double or
# float, default double), SCENE (an OBJ to refine instead of a generated city), PYTHON (one with numpy and h5py,
# default /usr/bin/python3). Peak memory is the largest rank's, as its timings file reports it.
set -euo pipefail
cd "$(dirname "$0")/../.."
city=${1:-8x8}
sizes=${2:-"1.0 0.5 0.25"}
eps=${3:-1e-4}
dense_max=${DENSE_MAX:-16000}
visibility=${VISIBILITY:-rays}
ranks=${RANKS:-1}
precision=${PRECISION:-double}
python=${PYTHON:-/usr/bin/python3}
cores=$(nproc)
source jobs/bench/common.sh
if [ -n "${SCENE:-}" ]; then
  scene=$SCENE
else
  scene=$out/city.obj
  "$python" meshes/generate.py city --buildings "$city" --sky-light --output "$scene" >/dev/null
fi
echo "benchmark: $scene refined to --max-patch-size $sizes, --operator-tolerance $eps, --visibility $visibility," \
     "--precision $precision, $ranks rank(s) x $(( cores / ranks )) thread(s), $(date -u +%FT%TZ)"
printf "%-6s %-12s %8s %9s %9s %28s %8s %14s %10s %11s %22s %12s %s\n" size operator N "time s" "peak MiB" \
  "walks: elements/rows/exact s" "exact/r" "links/r r+e" "rays/r" "walk ns/ray" "rows MiB: exact/r/e" \
  "check err/r" "B vs dense"
: > "$out/fit"
for size in $sizes; do
  for op in hierarchical dense; do
    dir="$out/$size-$op"
    if [ "$op" = dense ]; then
      n=$("$python" -c "import h5py;print(h5py.File('$out/$size-hierarchical/radiosity.h5','r')['patches/area'].shape[0])" 2>/dev/null || echo 0)
      [ "$n" -gt 0 ] && [ "$n" -le "$dense_max" ] || continue
    fi
    start=$(date +%s.%N)
    mpirun --bind-to none -n "$ranks" "$build/radiosity" run --input "$scene" \
      --max-patch-size "$size" --visibility "$visibility" --operator "$op" --operator-tolerance "$eps" \
      --precision "$precision" --output-dir "$dir" --quiet 2>"$out/err" \
      || { echo "$size $op failed:"; tail -3 "$out/err"; continue; }
    end=$(date +%s.%N)
    "$python" - "$dir" "$out" "$size" "$op" "$start" "$end" "$cores" <<'PY'
import h5py, json, numpy as np, os, sys
d, out, size, op = sys.argv[1:5]
cores = int(sys.argv[7])
wall = float(sys.argv[6]) - float(sys.argv[5])
t = json.load(open(d + "/timings.json"))
rss = max(p["peak_bytes"] for p in t["phases"]) / 2**20
n = h5py.File(d + "/radiosity.h5", "r")["patches/area"].shape[0]
phase = {p["name"]: p["max"] for p in t["phases"]}
params, counters = t["parameters"], t["counters"]
if op == "hierarchical":
    walks = "%.1f/%.1f/%.1f" % (phase.get("element walk", 0), phase.get("sparse walk", 0),
                                phase.get("sparse form factors", 0))
    exact = "%.0f" % (float(params["nonzeros"]) / n)
    links = "%.0f+%.0f" % (float(params["far links"]) / n, float(params.get("element links", 0)) / n)
    allRays = counters.get("far-link shadow rays", 0)
    rays = "%.0f" % (allRays / n)
    # Each rank walks for about the slowest rank's time on its share of the cores: CPU seconds over all rays.
    walked = phase.get("element walk", 0) + phase.get("sparse walk", 0)
    perRay = "%.0f" % (walked * cores * 1e9 / allRays) if allRays > 0 else "-"
    held = params.get("rows' MiB: entries/far links/element links/handed at most", "")
    held = "/".join(held.split(" / ")[:3]) if held else "-"
    check = [v for k, v in params.items() if k.endswith("error mean/max")]
    check = "%.2e" % float(check[0].split("/")[1]) if check else "-"
    compare = "-"
    open(out + "/fit", "a").write("%d %g %g\n" % (n, wall, rss))
else:
    walks = exact = links = rays = perRay = held = check = ""
    B = h5py.File(d + "/radiosity.h5", "r")["radiosity/B"][:]
    b = h5py.File(out + "/" + size + "-hierarchical/radiosity.h5", "r")["radiosity/B"][:]
    compare = "hierarchical %.2e" % np.sqrt(((b - B) ** 2).mean() / (B ** 2).mean())
print("%-6s %-12s %8d %9.2f %9.0f %28s %8s %14s %10s %11s %22s %12s %s" % (size, op, n, wall, rss, walks, exact,
                                                                          links, rays, perRay, held, check, compare),
      flush=True)
PY
  done
done
"$python" - "$out/fit" <<'PY'
import numpy as np, sys
rows = [[float(x) for x in l.split()] for l in open(sys.argv[1])]
if len(rows) >= 2:
    n, t, m = (np.array(c) for c in zip(*rows))
    kt, ct = np.polyfit(np.log(n), np.log(t), 1)
    km, cm = np.polyfit(np.log(n), np.log(m), 1)
    print("hierarchical: time ~ N^%.2f, peak memory ~ N^%.2f over N = %d .. %d; at N = 1e6 that gives %.0f s and %.1f GiB"
          % (kt, km, n[0], n[-1], np.exp(ct) * 1e6 ** kt, np.exp(cm) * 1e6 ** km / 1024))
PY
