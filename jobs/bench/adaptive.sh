#!/usr/bin/env bash
# Adaptive refinement where B varies (`run --refine`) against uniform splits, on one scene: each run's image
# and B compared with those of a uniform split finer than any of them (the reference). Prints per run the
# patches, wall time, peak memory, the image's RMSE and SSIM against the reference image (`radiosity compare`),
# and B's relative L2 difference over the surfaces (the reference's patch centroids, each taking the B of the
# run's patch that holds it: B held flat, as the patches are).
#   bash jobs/bench/adaptive.sh [SCENE] [BASE] [LEVELS] [PASSES] [CONTRASTS]
#   e.g. meshes/cornell_box.obj 2 3 2 "0.4 0.2 0.1": uniform --subdiv 2, 3, 4 and 5 (the reference, LEVELS
#   finer than BASE), and --subdiv 2 refined twice at each contrast.
# Environment: SPLIT (subdiv, the default: BASE is a --subdiv level; size: BASE is a --max-patch-size, halved
# per level), OPTIONS (more options for every run, e.g. "--operator hierarchical"), VISIBILITY (default exact),
# RANKS (default 1), PYTHON (one with numpy and h5py, default /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/../.."
scene=${1:-meshes/cornell_box.obj}
base=${2:-2}
levels=${3:-3}
passes=${4:-2}
contrasts=${5:-"0.4 0.2 0.1"}
split=${SPLIT:-subdiv}
visibility=${VISIBILITY:-exact}
ranks=${RANKS:-1}
python=${PYTHON:-/usr/bin/python3}
source jobs/bench/common.sh
level() {  # the split options of level k (0: BASE)
  if [ "$split" = size ]; then echo "--max-patch-size $("$python" -c "print($base / 2 ** $1)")"
  else echo "--subdiv $((base + $1))"; fi
}
echo "benchmark: $scene, uniform $(level 0) .. $(level "$levels") (the reference) against $(level 0) --refine" \
     "$passes at --refine-contrast $contrasts, --visibility $visibility ${OPTIONS:-}, $ranks rank(s)," \
     "$(date -u +%FT%TZ)"
job() {  # name, then run's options
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  mpirun --bind-to none -n "$ranks" "$build/radiosity" run --input "$scene" --visibility "$visibility" \
    --output-dir "$out/$name" --quiet ${OPTIONS:-} "$@" >/dev/null 2>"$out/err" || { echo "$name failed:"; tail -3 "$out/err"; exit 1; }
  end=$(date +%s.%N)
  "$python" -c "print($end - $start)" > "$out/$name/wall"
}
# shellcheck disable=SC2046  # level's words are options
job reference $(level "$levels")
runs=""
for k in $(seq 0 $((levels - 1))); do job "uniform-$k" $(level "$k"); runs="$runs uniform-$k"; done
for c in $contrasts; do
  # shellcheck disable=SC2046
  job "refined-$c" $(level 0) --refine "$passes" --refine-contrast "$c"; runs="$runs refined-$c"
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
# about the normal; a triangle's repeated corner makes an edge of length 0, which holds everything). Candidates
# are the patches with the 32 nearest centroids (all of them for the points none of those holds).
from scipy.spatial import cKDTree
def inside(corners, points, normal):
    """[points, patches]: whether each point lies in each patch."""
    held = np.ones((len(points), len(corners)), bool)
    for e in range(4):
        a, edge = corners[:, e], corners[:, (e + 1) % 4] - corners[:, e]
        side = np.cross(edge[None], points[:, None, :] - a[None]) @ normal
        held &= side >= -1e-9 * np.linalg.norm(edge, axis=1)[None]
    return held
holder = np.full(len(r["B"]), -1)
for face in np.unique(r["face"]):
    q, c = np.where(r["face"] == face)[0], np.where(t["face"] == face)[0]
    points, normal = r["centroid"][q], r["normal"][q[0]]
    k = min(32, len(c))
    near = cKDTree(t["centroid"][c]).query(points, k=k)[1].reshape(len(q), k)
    for s in range(0, len(q), 4096):
        block = near[s:s + 4096]
        corners = t["corners"][c[block]]  # [points, k, 4, 3]
        held = np.ones(block.shape, bool)
        for e in range(4):
            a, edge = corners[:, :, e], corners[:, :, (e + 1) % 4] - corners[:, :, e]
            side = np.cross(edge, points[s:s + 4096, None, :] - a) @ normal
            held &= side >= -1e-9 * np.linalg.norm(edge, axis=2)
        found = held.any(axis=1)
        holder[q[s:s + 4096][found]] = c[block[found, np.argmax(held[found], axis=1)]]
    missing = np.where(holder[q] < 0)[0]
    if len(missing):
        held = inside(t["corners"][c], points[missing], normal)
        holder[q[missing]] = c[np.argmax(held, axis=1)]
w = r["area"][:, None]
l2 = np.sqrt((w * (t["B"][holder] - r["B"]) ** 2).sum() / (w * r["B"] ** 2).sum())
m = json.load(open(run + "/compare.json"))
peak = max(p["peak_bytes"] for p in json.load(open(run + "/timings.json"))["phases"]) / 2**20
wall = float(open(run + "/wall").read())
print("%-16s %8d %9.2f %9.0f %11.5f %8.5f %12.5f" % (run.split("/")[-1], len(t["B"]), wall, peak, m["rmse"], m["ssim"], l2))
PY
done
