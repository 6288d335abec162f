#!/usr/bin/env bash
# Instant radiosity (`radiosity vpl`) on the Cornell box: the cost and the error of each acceleration.
# Renders meshes/cornell_box.obj with its camera at 256x256 with no acceleration, then with each acceleration
# alone, and prints for each the wall time (the program's own total), the shadow rays traced, and RMSE / SSIM
# (`radiosity compare --json -`, linear EXR) against the plain VPL image and against the radiosity pipeline's
# image (`radiosity run`, the same camera and size).
#   bash jobs/bench/vpl.sh [VPL_PATHS] [BOUNCES] [RANKS]
# Environment: RAD_BUILD_DIR (default build), RAD_BENCH_SIZE (default 256), RAD_RUN_SUBDIV (default 3).
set -euo pipefail
cd "$(dirname "$0")/../.."
paths=${1:-512}
bounces=${2:-3}
ranks=${3:-1}
size=${RAD_BENCH_SIZE:-256}
subdiv=${RAD_RUN_SUBDIV:-3}
build=${RAD_BUILD_DIR:-build}
scene=meshes/cornell_box.obj
[ -x "$build/radiosity" ] || bash jobs/setup.sh >/dev/null
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_rmaps_base_oversubscribe=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "benchmark: vpl on $scene, ${size}x${size}, $paths paths, $bounces bounces, $ranks rank(s), $(nproc) cores, $(date -u +%FT%TZ)"

mpirun --bind-to none -n "$ranks" "$build/radiosity" run --input "$scene" --subdiv "$subdiv" --output-dir "$out/run" \
  --width "$size" --height "$size" --quiet >/dev/null 2>&1
runImage="$out/run/image.exr"

declare -A options=(
  [plain]=""
  [imperfect-visibility]="--imperfect-visibility"
  [indirect-scale-2]="--indirect-scale 2"
  [indirect-scale-4]="--indirect-scale 4"
  [interleave]="--interleave"
)
for name in plain imperfect-visibility indirect-scale-2 indirect-scale-4 interleave; do
  # shellcheck disable=SC2086  # the options are words
  mpirun --bind-to none -n "$ranks" "$build/radiosity" vpl --input "$scene" --width "$size" --height "$size" \
    --vpls "$paths" --bounces "$bounces" ${options[$name]} --exr "$out/$name.exr" --timings "$out/$name.json" \
    --quiet >/dev/null 2>&1
  "$build/radiosity" compare "$out/plain.exr" "$out/$name.exr" --json - > "$out/$name.vs_plain.json"
  "$build/radiosity" compare "$runImage" "$out/$name.exr" --json - > "$out/$name.vs_run.json"
done

/usr/bin/python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(name):
    return json.load(open(os.path.join(out, name)))
def total(t):
    return [p for p in t["phases"] if p["name"] == "total"][0]["max"]
plain = total(load("plain.json"))
print(f"\n{'method':<22} {'time s':>8} {'speed-up':>8} {'shadow rays':>12} {'RMSE/plain':>11} {'SSIM/plain':>10} "
      f"{'RMSE/run':>9} {'SSIM/run':>8}")
for name in ["plain", "imperfect-visibility", "indirect-scale-2", "indirect-scale-4", "interleave"]:
    t = load(name + ".json"); a = load(name + ".vs_plain.json"); b = load(name + ".vs_run.json")
    ssim = lambda j: float("nan") if j["ssim"] is None else j["ssim"]
    print(f"{name:<22} {total(t):8.2f} {plain / total(t):8.2f} {t['counters']['shadow_rays']:12.4g} "
          f"{a['rmse']:11.4g} {ssim(a):10.4f} {b['rmse']:9.4g} {ssim(b):8.4f}")
print("\nRMSE in linear radiance; SSIM on luminance with the dynamic range of the reference (see README, compare).")
PY
