#!/usr/bin/env bash
# What ranks exchange between sweeps over CSR rows (`solve --exchange`, solver/read_exchange.h): a hierarchical
# operator computed once on a generated city (`formfactors --operator hierarchical`), then solved (Jacobi) on
# each rank count with --exchange read (only what each rank's rows read) and --exchange all (every row to
# every rank), rows in blocks (solve's split of CSR rows; cyclic rows put patches of every rank in every leaf
# of the tree, so that no node is summed by one rank alone and `auto` gathers). Prints per run the values moved per sweep by all ranks together (and their ratio to gathering
# every row), the seconds of the solve's sweeps and of its exchange (largest rank), and checks that B is the
# same bits whatever the ranks and the exchange.
#   bash jobs/bench/exchange.sh [CITY] [PATCH_SIZE] [RANKS]     e.g. 8x8 0.5 "2 4 8 16"
# Ranks past the cores are oversubscribed: the seconds then say little, the values moved are what counts.
set -euo pipefail
cd "$(dirname "$0")/../.."
city=${1:-8x8}
size=${2:-0.5}
rank_counts=${3:-"2 4 8"}
source jobs/bench/common.sh
/usr/bin/python3 meshes/generate.py city --buildings "$city" --sky-light --output "$out/city.obj" >/dev/null
start=$(date +%s)
"$build/radiosity" formfactors --input "$out/city.obj" --max-patch-size "$size" --visibility rays \
  --operator hierarchical --output "$out/ff.h5" --quiet 2>"$out/err" || { tail -3 "$out/err"; exit 1; }
n=$(/usr/bin/python3 -c "import h5py;print(h5py.File('$out/ff.h5','r')['patches/area'].shape[0])")
echo "benchmark: city $city, --max-patch-size $size: N = $n, hierarchical operator in $(( $(date +%s) - start )) s; $(date -u +%FT%TZ)"
printf "%6s %-9s %14s %14s %7s %10s %12s %s\n" ranks exchange "values/sweep" "all rows" ratio "sweeps s" "exchange s" B
"$build/radiosity" solve --formfactors "$out/ff.h5" --output "$out/b1.h5" --solver jacobi --quiet 2>/dev/null
for p in $rank_counts; do
  for x in read all; do
    mpirun --bind-to none -n "$p" "$build/radiosity" solve --formfactors "$out/ff.h5" --output "$out/b.h5" \
      --solver jacobi --exchange "$x" --timings "$out/t.json" --quiet 2>"$out/err" || { tail -3 "$out/err"; exit 1; }
    /usr/bin/python3 - "$out" "$p" "$x" <<'PY'
import h5py, json, numpy as np, sys
out, p, x = sys.argv[1:4]
t = json.load(open(out + "/t.json")); c = t["counters"]
phase = {q["name"]: q["max"] for q in t["phases"]}
moved, everything = c["solve values exchanged per sweep"], c["solve values of all rows per sweep"]
same = np.array_equal(h5py.File(out + "/b.h5", "r")["radiosity/B"][:], h5py.File(out + "/b1.h5", "r")["radiosity/B"][:])
print("%6s %-9s %14d %14d %7.2f %10.3f %12.3f %s" % (p, x, moved, everything, moved / everything,
      phase.get("solve sweeps", 0), phase.get("solve exchange", 0), "same bits as 1 rank" if same else "DIFFERS"))
PY
  done
done
