#!/usr/bin/env bash
# Adaptive refinement where B varies (`run --refine`) against uniform splits, on one scene: each run's image
# and B compared with those of a uniform split finer than any of them (the reference). Prints per run the
# patches, wall time, peak memory, the image's RMSE and SSIM against the reference image (`radiosity compare`),
# and B's relative L2 difference over the surfaces (the reference's patch centroids, each taking the B of the
# run's patch that holds it: B held flat, as the patches are).
#   bash jobs/bench/adaptive.sh [SCENE] [BASE] [REF] [PASSES] [CONTRASTS]
#   e.g. meshes/cornell_box.obj 2 5 2 "0.4 0.2 0.1": uniform --subdiv 2..4 and 5 (the reference), and --subdiv 2
#   refined twice at each contrast.
# Environment: VISIBILITY (default exact), RANKS (default 1), PYTHON (one with numpy and h5py, default
# /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/../.."
scene=${1:-meshes/cornell_box.obj}
base=${2:-2}
ref=${3:-5}
passes=${4:-2}
contrasts=${5:-"0.4 0.2 0.1"}
visibility=${VISIBILITY:-exact}
ranks=${RANKS:-1}
python=${PYTHON:-/usr/bin/python3}
source jobs/bench/common.sh
echo "benchmark: $scene, uniform --subdiv $base..$ref (reference $ref) against --subdiv $base --refine $passes" \
     "at --refine-contrast $contrasts, --visibility $visibility, $ranks rank(s), $(date -u +%FT%TZ)"
job() {  # name, then run's options
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  mpirun --bind-to none -n "$ranks" "$build/radiosity" run --input "$scene" --visibility "$visibility" \
    --output-dir "$out/$name" --quiet "$@" >/dev/null 2>"$out/err" || { echo "$name failed:"; tail -3 "$out/err"; exit 1; }
  end=$(date +%s.%N)
  "$python" -c "print($end - $start)" > "$out/$name/wall"
}
job reference --subdiv "$ref"
runs=""
for k in $(seq "$base" $((ref - 1))); do job "uniform-$k" --subdiv "$k"; runs="$runs uniform-$k"; done
for c in $contrasts; do
  job "refined-$c" --subdiv "$base" --refine "$passes" --refine-contrast "$c"; runs="$runs refined-$c"
done
printf "%-16s %8s %9s %9s %11s %8s %12s\n" run patches "time s" "peak MiB" "image RMSE" SSIM "B rel L2"
for name in $runs; do
  "$build/radiosity" compare "$out/reference/image.exr" "$out/$name/image.exr" --json "$out/$name/compare.json" >/dev/null
  "$python" - "$out/reference" "$out/$name" <<'PY'
import h5py, json, numpy as np, sys
ref, run = sys.argv[1:3]
def load(d):
    with h5py.File(d + "/radiosity.h5", "r") as f:
        p = f["patches"]
        return {k: p[k][:] for k in ("corners", "face", "area", "centroid", "normal")} | {"B": f["radiosity/B"][:]}
r, t = load(ref), load(run)
# The run's patch holding each reference centroid: same polygon, inside every edge (corners counter-clockwise
# about the normal; a triangle's repeated corner makes an edge of length 0, which holds everything).
holder = np.full(len(r["B"]), -1)
for face in np.unique(r["face"]):
    q, c = np.where(r["face"] == face)[0], np.where(t["face"] == face)[0]
    corners, points, normal = t["corners"][c], r["centroid"][q], r["normal"][q[0]]
    inside = np.ones((len(q), len(c)), bool)
    for e in range(4):
        a, edge = corners[:, e], corners[:, (e + 1) % 4] - corners[:, e]
        side = np.cross(edge[None], points[:, None, :] - a[None]) @ normal
        inside &= side >= -1e-9 * np.linalg.norm(edge, axis=1)[None]
    holder[q] = c[np.argmax(inside, axis=1)]
w = r["area"][:, None]
l2 = np.sqrt((w * (t["B"][holder] - r["B"]) ** 2).sum() / (w * r["B"] ** 2).sum())
m = json.load(open(run + "/compare.json"))
peak = max(p["peak_bytes"] for p in json.load(open(run + "/timings.json"))["phases"]) / 2**20
wall = float(open(run + "/wall").read())
print("%-16s %8d %9.2f %9.0f %11.5f %8.5f %12.5f" % (run.split("/")[-1], len(t["B"]), wall, peak, m["rmse"], m["ssim"], l2))
PY
done
