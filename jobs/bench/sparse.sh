#!/usr/bin/env bash
# The sparse and hierarchical operators against the dense one on generated cities (meshes/generate.py city)
# at one patch size, so that N grows with the number of buildings: for each city, `run` (form factors, solve,
# image) with --operator sparse at --drop-below EPS, --operator hierarchical at --operator-tolerance EPS, and
# the dense operator while N is at most DENSE_MAX. Prints per run the wall time, peak memory (max RSS of the
# rank), the nonzeros and density, the pairs evaluated, the mean dropped row sum (sparse) or the far links
# (hierarchical: the rows' own + those held by elements, and in brackets how many of both are smooth links),
# the operator check (what 16 rows computed in full do not keep, and the mean error of the operator's account
# of it), and on the dense row the relative RMS difference of the sparse and hierarchical B from the dense B;
# then the fitted exponent of time against N for each operator (time ~ N^k, least squares on logs).
#   bash jobs/bench/sparse.sh [CITIES] [PATCH_SIZE] [EPS]     e.g. "2x2 4x4 8x8 12x12" 0.5 1e-4
# The cities have a sky light (generate.py --sky-light), so that B is not 0.
# Environment: DENSE_MAX (default 6000), VISIBILITY (exact or rays, default exact), RANKS (default 1).
set -euo pipefail
cd "$(dirname "$0")/../.."
cities=${1:-"2x2 4x4 6x6 8x8"}
size=${2:-0.5}
eps=${3:-1e-4}
dense_max=${DENSE_MAX:-6000}
visibility=${VISIBILITY:-exact}
ranks=${RANKS:-1}
source jobs/bench/common.sh
echo "benchmark: cities $cities, --max-patch-size $size, --drop-below $eps, --visibility $visibility, $ranks rank(s) x $(( $(nproc) / ranks )) thread(s), $(date -u +%FT%TZ)"
printf "%-8s %-12s %8s %9s %9s %11s %9s %12s %12s %-18s %s\n" city operator N "time s" "peak MiB" nonzeros density "pairs eval" "dropped|links" "check: not kept/err" "B rel RMS (sparse, hierarchical)"
: > "$out/fit"
for city in $cities; do
  /usr/bin/python3 meshes/generate.py city --buildings "$city" --sky-light --output "$out/$city.obj" >/dev/null
  for op in sparse hierarchical dense; do
    dir="$out/$city-$op"
    args=(run --input "$out/$city.obj" --max-patch-size "$size" --visibility "$visibility" --operator "$op"
          --drop-below "$eps" --operator-tolerance "$eps" --output-dir "$dir" --quiet)
    [ "$op" = hierarchical ] || args+=(--save-formfactors)  # the table reads sparse and dense F from the file
    if [ "$op" = dense ] && [ -f "$out/$city-sparse/radiosity.h5" ]; then
      n=$(/usr/bin/python3 -c "import h5py;print(h5py.File('$out/$city-sparse/radiosity.h5','r')['patches/area'].shape[0])")
      [ "$n" -le "$dense_max" ] || { printf "%-8s %-7s %8s %9s\n" "$city" dense "$n" "skipped (DENSE_MAX $dense_max)"; continue; }
    fi
    start=$(date +%s.%N)
    /usr/bin/time -f "%M" -o "$out/rss" mpirun --bind-to none -n "$ranks" "$build/radiosity" "${args[@]}" 2>"$out/err" \
      || { echo "$city $op failed:"; tail -3 "$out/err"; continue; }
    end=$(date +%s.%N)
    /usr/bin/python3 - "$dir" "$out/$city" "$city" "$op" "$start" "$end" "$(cat "$out/rss")" "$out/fit" <<'PY'
import h5py, json, numpy as np, os, sys
d, base, city, op = sys.argv[1:5]
wall = float(sys.argv[6]) - float(sys.argv[5]); rss = float(sys.argv[7]) / 1024
f = h5py.File(d + "/radiosity.h5", "r"); n = f["patches/area"].shape[0]
B = f["radiosity/B"][:]
params = json.load(open(d + "/timings.json"))["parameters"]
rms = ""
# The operator check (16 rows in full): the mean exact sum a row does not keep, and the mean error of what the
# operator says of it (dropped estimate or far links).
check = [v for k, v in params.items() if k.endswith("error mean/max")]
check = "%.3g/%.2g" % tuple(float(x) for x in check[0].split("/")[:2]) if check else ""
if op == "sparse":
    g = f["formfactors"]
    nnz = g["data"].shape[0]; evaluated = "%.4g" % g.attrs["pairs_evaluated"]; extra = "%.3g" % g["dropped_row_sum"][:].mean()
elif op == "hierarchical":
    nnz = int(params["nonzeros"]); evaluated = params["pairs evaluated"]
    # the rows' own + the elements', and how many of both are smooth
    extra = "%s+%s(%s)" % (params["far links"], params.get("element links", "0"),
                           params.get("smooth links (of both)", "0"))
else:
    nnz = int((f["formfactors/F"][:] != 0).sum()); evaluated = "%.4g" % (n * (n - 1) / 2); extra = ""
    def rel(other):
        path = base + "-" + other + "/radiosity.h5"
        if not os.path.exists(path):
            return "-"
        b = h5py.File(path, "r")["radiosity/B"][:]
        return "%.2e" % np.sqrt(((b - B) ** 2).mean() / (B ** 2).mean())
    rms = rel("sparse") + ", " + rel("hierarchical")
print("%-8s %-12s %8d %9.2f %9.0f %11d %8.3f%% %12s %12s %-18s %s" % (city, op, n, wall, rss, nnz, 100 * nnz / n / n,
                                                                  evaluated, extra, check, rms))
open(sys.argv[8], "a").write("%s %d %g\n" % (op, n, wall))
PY
  done
done
/usr/bin/python3 - "$out/fit" <<'PY'
import numpy as np, sys
rows = [l.split() for l in open(sys.argv[1])]
for op in ("sparse", "hierarchical", "dense"):
    pts = [(float(n), float(t)) for o, n, t in rows if o == op]
    if len(pts) >= 2:
        k = np.polyfit(np.log([p[0] for p in pts]), np.log([p[1] for p in pts]), 1)[0]
        print("%s: time ~ N^%.2f over N = %d .. %d" % (op, k, pts[0][0], pts[-1][0]))
PY
