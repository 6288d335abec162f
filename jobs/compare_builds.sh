#!/usr/bin/env bash
# Same outputs, bit for bit, from two builds: runs every command of `radiosity` on the suite's scenes and the
# reference workload with OLD and NEW at 1 and 2 ranks, then compares every file they wrote (HDF5 files by
# their datasets and attributes, as h5py reads them: HDF5 stores object times, so the bytes differ; every
# other file byte for byte). For refactors that must not change a result (issue 14).
#
#   bash jobs/compare_builds.sh OLD_EXE NEW_EXE [WORK_DIR]
#
# Prints one line per file and ends with "same outputs: K files" (exit 0) or the files that differ (exit 1).
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 OLD_EXE NEW_EXE [WORK_DIR]" >&2
  exit 2
fi
old=$(realpath "$1")
new=$(realpath "$2")
work=${3:-$(mktemp -d /tmp/compare_builds.XXXXXX)}
root=$(cd "$(dirname "$0")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
box=$root/meshes/cornell_box.obj
sphere=$root/meshes/cornell_sphere.obj

# run_all EXE RANKS DIR: every command, small settings, into DIR.
run_all() {
  local exe=$1 n=$2 d=$3
  local mpi=(mpiexec --bind-to none -n "$n")
  mkdir -p "$d"
  "${mpi[@]}" "$exe" formfactors --input "$sphere" --subdiv 3 --output "$d/ref.h5" --raw "$d/ref.raw" --quiet
  "${mpi[@]}" "$exe" formfactors --input "$box" --subdiv 2 --visibility rays --output "$d/rays.h5" --quiet
  "${mpi[@]}" "$exe" formfactors --input "$box" --subdiv 2 --precision float --distribution block \
    --output "$d/float.h5" --quiet
  "${mpi[@]}" "$exe" formfactors --input "$box" --patches 400 --normalize-rows --output "$d/bysize.h5" --quiet
  "${mpi[@]}" "$exe" solve --formfactors "$d/ref.h5" --output "$d/solve_gs.h5" --quiet
  "${mpi[@]}" "$exe" solve --formfactors "$d/float.h5" --solver jacobi --output "$d/solve_jacobi.h5" --quiet
  "${mpi[@]}" "$exe" solve --formfactors "$d/ref.raw" --input "$sphere" --subdiv 3 --output "$d/solve_raw.h5" --quiet
  "${mpi[@]}" "$exe" render --radiosity "$d/solve_gs.h5" --output "$d/render.png" --exr "$d/render.exr" \
    --ply "$d/render.ply" --width 96 --height 96 --quiet
  "${mpi[@]}" "$exe" render --radiosity "$d/solve_gs.h5" --output "$d/render_flat.exr" --shading flat \
    --width 64 --height 64 --spp 4 --quiet
  "${mpi[@]}" "$exe" run --input "$box" --subdiv 2 --output-dir "$d/run" --save-formfactors --raw --ply \
    --width 96 --height 96 --quiet
  local f
  for f in mtx petsc raw csr; do
    "${mpi[@]}" "$exe" export --formfactors "$d/rays.h5" --format "$f" --output "$d/export.$f" --quiet > /dev/null
  done
  "${mpi[@]}" "$exe" export --formfactors "$d/ref.h5" --format csr --drop-below 1e-4 --precision float \
    --output "$d/export_drop.csr" --quiet > /dev/null
  "${mpi[@]}" "$exe" pathtrace --input "$box" --output "$d/pt.png" --exr "$d/pt.exr" --spp 8 --width 64 \
    --height 64 --patch-estimates "$d/pt_patches.h5" --patch-samples 4 --subdiv 1 --quiet
  "${mpi[@]}" "$exe" vpl --input "$box" --output "$d/vpl.png" --exr "$d/vpl.exr" --vpls 64 --width 64 \
    --height 64 --quiet
  "${mpi[@]}" "$exe" vpl --input "$box" --output "$d/vpl_fast.exr" --vpls 64 --width 63 --height 63 \
    --interleave --imperfect-visibility --quiet
  "${mpi[@]}" "$exe" vpl --input "$box" --output "$d/vpl_scaled.exr" --vpls 64 --width 64 --height 64 \
    --indirect-scale 2 --clamp-distance 0.1 --bounces 2 --quiet
  "${mpi[@]}" "$exe" validate --input "$box" --subdiv 1 --output-dir "$d/validate" --width 48 --height 48 \
    --render-spp 2 --spp 8 --reference-spp 16 --vpls 32 --quiet > /dev/null
  "$exe" compare "$d/render.exr" "$d/pt.exr" --json "$d/compare_images.json" --heatmap "$d/heat.png" || true
  "$exe" compare "$d/solve_gs.h5" "$d/solve_raw.h5" --json "$d/compare_solutions.json" || true
  "$exe" compare "$d/render.png" "$d/run/image.png" --json "$d/compare_png.json" || true
}

for n in 1 2; do
  # Both builds write into the same folder (paths are recorded in the files), moved aside after.
  for build in old new; do
    echo "== $n rank(s): $build" >&2
    rm -rf "$work/out" "$work/$build$n"
    exe=$old; [[ $build == new ]] && exe=$new
    run_all "$exe" "$n" "$work/out"
    mv "$work/out" "$work/$build$n"
  done
done

/usr/bin/python3 - "$work" <<'PY'
import os, sys, filecmp
import h5py, numpy as np
work = sys.argv[1]
import csv, json, re
# Files that hold only measurements of time, not results.
skip = {"timings.json"}
TIME_KEYS = {"seconds", "phases", "reference_seconds"}
def without_times(x):
    if isinstance(x, dict): return {k: without_times(v) for k, v in x.items() if k not in TIME_KEYS}
    if isinstance(x, list): return [without_times(v) for v in x]
    return x
def times_in(x):
    if isinstance(x, dict):
        return [t for k, v in x.items() for t in ([v] if k in TIME_KEYS and isinstance(v, float) else times_in(v))]
    if isinstance(x, list): return [t for v in x for t in times_in(v)]
    return []
def text_without_times(path):
    """The file's text with its times masked: the summary's phase table, the CSV's seconds column, and in the
    HTML report every number equal (to its printed digits) to a time in the folder's metrics.json."""
    text = open(path).read()
    name = os.path.basename(path)
    if name == "summary.txt": return text.split("phases (seconds")[0]
    if name.endswith(".csv"):
        rows = list(csv.reader(text.splitlines()))
        col = rows[0].index("seconds") if rows and "seconds" in rows[0] else None
        return "\n".join(",".join(c for i, c in enumerate(r) if i != col) for r in rows)
    if name.endswith(".html"):
        times = times_in(json.load(open(os.path.join(os.path.dirname(path), "metrics.json"))))
        for group in json.load(open(os.path.join(os.path.dirname(path), "metrics.json")))["methods"].values():
            times += list(group.get("phases", {}).values())
        def mask(m):
            v = float(m.group(0))
            return "<time>" if any(abs(v - t) <= 1e-5 * abs(t) for t in times) else m.group(0)
        return re.sub(r"\d+\.\d+(e-?\d+)?", mask, text)
    return text
def h5_items(path):
    out = {}
    with h5py.File(path, "r") as f:
        for k, v in f.attrs.items(): out["/@" + k] = np.asarray(v)
        def visit(name, obj):
            for k, v in obj.attrs.items(): out[name + "@" + k] = np.asarray(v)
            if isinstance(obj, h5py.Dataset): out[name] = (obj.dtype.str, obj[()])
        f.visititems(visit)
    return out
def same_h5(a, b):
    x, y = h5_items(a), h5_items(b)
    if x.keys() != y.keys(): return "objects differ: " + str(sorted(set(x) ^ set(y)))
    for k in x:
        u, v = x[k], y[k]
        if isinstance(u, tuple):
            if u[0] != v[0] or np.asarray(u[1]).tobytes() != np.asarray(v[1]).tobytes(): return k + " differs"
        elif u.tobytes() != v.tobytes(): return k + " differs"
    return None
bad, count = [], 0
for n in (1, 2):
    a_root, b_root = os.path.join(work, f"old{n}"), os.path.join(work, f"new{n}")
    names = sorted(os.path.relpath(os.path.join(d, f), a_root) for d, _, fs in os.walk(a_root) for f in fs)
    names_b = sorted(os.path.relpath(os.path.join(d, f), b_root) for d, _, fs in os.walk(b_root) for f in fs)
    if names != names_b:
        bad.append(f"{n} rank(s): files differ: {sorted(set(names) ^ set(names_b))}")
    for name in names:
        if os.path.basename(name) in skip or name not in names_b: continue
        a, b = os.path.join(a_root, name), os.path.join(b_root, name)
        if name.endswith(".h5") or name.endswith(".csr"):
            why = same_h5(a, b)
        elif name.endswith(".json"):
            why = None if without_times(json.load(open(a))) == without_times(json.load(open(b))) else "values differ"
        elif os.path.basename(name) in ("summary.txt", "report.html") or name.endswith(".csv"):
            why = None if text_without_times(a) == text_without_times(b) else "text differs (times masked)"
        else:
            why = None if filecmp.cmp(a, b, shallow=False) else "bytes differ"
        count += 1
        print(f"{n} rank(s) {name}: {'same' if why is None else why}")
        if why: bad.append(f"{n} rank(s) {name}: {why}")
if bad:
    print("DIFFERENT:\n  " + "\n  ".join(bad)); sys.exit(1)
print(f"same outputs: {count} files")
PY
