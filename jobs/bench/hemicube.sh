#!/usr/bin/env bash
# Hemicube rows against the exact kernel on the same lightmap texels (texture-space radiosity, Tjahyono,
# Lutteroth and Wuensche): the scene baked at --lightmap-resolution R (one page; the Cornell box at 128 has
# about 10,300 texels as the paper's 10,700 on 128 x 128), once with the kernel's exact F (the reference, a
# full-matrix solve) and then with hemicube rows at each resolution, with and without the random rotation.
# Prints per run: the hemicube pass (the rows) in seconds, seconds per gathering iteration (a solver sweep
# over the rows; without rows, --hemicube-mode gather, a pass of every hemicube), the whole run, the rows' nonzeros, B's difference from the reference per texel (mean and
# max of |dB| / B over the texels lit above 1e-3 of the mean), and a banding measure: on each of the 5
# largest charts, the power spectrum of the relative error image, its strongest non-constant frequency over
# its median (aligned hemicubes put their error in stripes, a few frequencies; rotated ones spread it as noise).
#   bash jobs/bench/hemicube.sh [SCENE] [RESOLUTION] [HEMICUBES]
#   e.g. meshes/cornell_box.obj 128 "32 64 128"
# Environment: RANKS (default 1), PYTHON (one with numpy and h5py, default /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/../.."
scene=${1:-meshes/cornell_box.obj}
resolution=${2:-128}
hemicubes=${3:-"32 64 128"}
ranks=${RANKS:-1}
python=${PYTHON:-/usr/bin/python3}
source jobs/bench/common.sh
echo "benchmark: $scene at --lightmap-resolution $resolution, hemicube $hemicubes (rotated and aligned) against" \
     "the exact kernel, $ranks rank(s), $(nproc) cores, $(date -u +%FT%TZ)"
job() {  # name, then run's options
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  mpirun --bind-to none -n "$ranks" "$build/radiosity" run --input "$scene" --lightmap-resolution "$resolution" \
    --output-dir "$out/$name" --quiet --width 64 --height 64 "$@" >/dev/null 2>"$out/err" \
    || { echo "$name failed:"; tail -3 "$out/err"; exit 1; }
  end=$(date +%s.%N)
  "$python" -c "print($end - $start)" > "$out/$name/wall"
}
job exact
names=""
for n in $hemicubes; do
  for rotation in true false; do
    job "hemicube_${n}_${rotation}" --method hemicube --hemicube "$n" --hemicube-rotation "$rotation"
    names="$names hemicube_${n}_${rotation}"
  done
done
# Without rows: every iteration traces the hemicubes again (Jacobi), at 64.
job gather_64_true --method hemicube --hemicube 64 --hemicube-mode gather --solver jacobi
names="$names gather_64_true"
"$python" - "$out" exact $names <<'EOF'
import h5py, json, numpy as np, sys
out, reference, runs = sys.argv[1], sys.argv[2], sys.argv[3:]

def texels(name):
    with h5py.File("%s/%s/radiosity.h5" % (out, name), "r") as f:
        b, area, t, face = f["radiosity/B"][:], f["patches/area"][:], f["lightmap/texel"][:], f["patches/face"][:]
        count = int(f["lightmap"].attrs["texels"])
    key = (t[:, 0].astype(np.int64) * 1 << 40) + (t[:, 2].astype(np.int64) << 20) + t[:, 1]
    keys, inverse = np.unique(key, return_inverse=True)
    weight = np.bincount(inverse, area)
    value = np.stack([np.bincount(inverse, area * b[:, c]) / weight for c in range(3)], 1)
    polygon = np.zeros(len(keys), np.int64)
    polygon[inverse] = face
    column, row = keys & ((1 << 20) - 1), (keys >> 20) & ((1 << 20) - 1)
    return value.mean(1), polygon, column, row, count

def timing(name):
    d = json.load(open("%s/%s/timings.json" % (out, name)))
    return {p["name"]: p["max"] for p in d["phases"]}, d["counters"], d["parameters"]

ref, polygon, column, row, count = texels(reference)
lit = ref > 1e-3 * ref.mean()
charts = sorted(np.unique(polygon), key=lambda p: -np.sum(polygon == p))[:5]
print("texels %d (patches' texels %d), lit %d; wall time of the exact kernel run %.1f s"
      % (count, len(ref), lit.sum(), float(open("%s/%s/wall" % (out, reference)).read())))
print("%-20s %10s %12s %9s %10s %12s %12s %10s" % ("run", "rows s", "s/iteration", "wall s", "nonzeros",
                                                   "mean |dB|/B", "max |dB|/B", "banding"))
for name in runs:
    b, _, _, _, _ = texels(name)
    rel = np.abs(b - ref) / np.where(lit, ref, 1)
    phases, counters, params = timing(name)
    sweeps = float(counters.get("solver sweeps", 0))
    nonzeros = params.get("nonzeros", "-")
    banding = []
    for p in charts:
        m = polygon == p
        c, r = column[m] - column[m].min(), row[m] - row[m].min()
        image = np.zeros((r.max() + 1, c.max() + 1))
        image[r, c] = np.where(lit[m], (b[m] - ref[m]) / np.where(lit[m], ref[m], 1), 0)
        power = np.abs(np.fft.fft2(image - image.mean())) ** 2
        power[0, 0] = 0
        banding.append(power.max() / max(np.median(power[power > 0]), 1e-300))
    print("%-20s %10.2f %12.4f %9.1f %10s %12.3g %12.3g %10.1f"
          % (name, phases.get("hemicube rows", 0),
             (phases.get("solve sweeps", 0) + phases.get("hemicube gathering", 0)) / max(sweeps, 1),
             float(open("%s/%s/wall" % (out, name)).read()), nonzeros, np.mean(rel[lit]), np.max(rel[lit]),
             np.mean(banding)))
EOF
