#!/usr/bin/env bash
# The path tracer (`radiosity pathtrace`, CPU or GPU) on the Cornell box with its own camera: throughput (samples and
# rays per second, the program's own figures over the slowest rank) and convergence against time: renders at
# 1, 2, 4, ... MAX_SPP samples per pixel, each timed, and the MSE of each against a long reference render with
# other random numbers (`radiosity compare --json -` on the linear EXR files). An unbiased renderer's MSE
# halves with each doubling of spp (and of time) until the reference's own noise, MSE_ref ~ MSE(1) / REF_SPP,
# shows.
#   bash jobs/bench/pathtrace.sh [MAX_SPP] [REF_SPP] [RANKS]
# Environment: RAD_BUILD_DIR (default build), RAD_BENCH_SIZE (default 128), RAD_BENCH_THREADS (default: all),
# RAD_BENCH_BACKEND (cpu, gpu or auto; default cpu). On a GPU, e.g.:
#   RAD_BENCH_BACKEND=gpu RAD_BENCH_SIZE=512 bash jobs/bench/pathtrace.sh 1024 16384
set -euo pipefail
cd "$(dirname "$0")/../.."
maxSpp=${1:-256}
refSpp=${2:-4096}
ranks=${3:-1}
size=${RAD_BENCH_SIZE:-128}
backend=${RAD_BENCH_BACKEND:-cpu}
build=${RAD_BUILD_DIR:-build}
threads=()
[ -n "${RAD_BENCH_THREADS:-}" ] && threads=(--threads "$RAD_BENCH_THREADS")
scene=meshes/cornell_box.obj
[ -x "$build/radiosity" ] || bash jobs/setup.sh >/dev/null
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_rmaps_base_oversubscribe=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "benchmark: pathtrace on $scene, ${size}x${size}, spp 1..$maxSpp, reference $refSpp spp, $ranks rank(s)," \
  "backend $backend, $(nproc) cores, $(date -u +%FT%TZ)"

trace() {  # trace SPP SEED NAME
  mpirun --bind-to none -n "$ranks" "$build/radiosity" pathtrace --input "$scene" --width "$size" --height "$size" \
    --spp "$1" --seed "$2" --backend "$backend" "${threads[@]}" --exr "$out/$3.exr" --timings "$out/$3.json" --quiet >/dev/null 2>&1
}
trace "$refSpp" 987654321 reference
spps=()
for ((spp = 1; spp <= maxSpp; spp *= 2)); do
  spps+=("$spp")
  trace "$spp" 1 "spp$spp"
  "$build/radiosity" compare "$out/reference.exr" "$out/spp$spp.exr" --json - > "$out/spp$spp.vs_ref.json"
done

/usr/bin/python3 - "$out" "$refSpp" "${spps[@]}" <<'PY'
import json, math, os, sys
out, ref_spp, spps = sys.argv[1], int(sys.argv[2]), [int(s) for s in sys.argv[3:]]
def load(name):
    return json.load(open(os.path.join(out, name)))
def phase(t, name):
    return [p for p in t["phases"] if p["name"] == name][0]["max"]
ref = load("reference.json")
p = ref["parameters"]
print(f"\nthroughput (reference render, {ref_spp} spp): {float(p['image samples per second']):.4g} samples/s, "
      f"{float(p['image rays per second']):.4g} rays/s, "
      f"{float(p['image rays']) / float(p['image samples']):.2f} rays per sample, {phase(ref, 'path trace'):.2f} s")
print(f"\n{'spp':>6} {'time s':>9} {'samples/s':>10} {'rays/s':>10} {'MSE':>11} {'MSE*spp':>10} {'PSNR dB':>8} {'SSIM':>7}")
rows = []
for spp in spps:
    t, c = load(f"spp{spp}.json"), load(f"spp{spp}.vs_ref.json")
    q = t["parameters"]
    rows.append((spp, c["mse"]))
    print(f"{spp:6d} {phase(t, 'path trace'):9.3f} {float(q['image samples per second']):10.4g} "
          f"{float(q['image rays per second']):10.4g} {c['mse']:11.4e} {c['mse'] * spp:10.4g} "
          f"{c['psnr_db']:8.2f} {c['ssim']:7.4f}")
xs = [math.log(s) for s, m in rows if m > 0]; ys = [math.log(m) for s, m in rows if m > 0]
n = len(xs); mx = sum(xs) / n; my = sum(ys) / n
slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
print(f"\nlog-log slope of MSE against spp: {slope:.3f} (1/spp: -1); the reference's own noise is about "
      f"MSE(1)/{ref_spp} = {rows[0][1] / ref_spp:.3e}.")
print("time: the slowest rank's 'path trace' phase (no scene loading or BVH build); MSE over pixels and R, G, B"
      " of linear radiance; PSNR/SSIM with L = max luminance of the reference.")
PY
