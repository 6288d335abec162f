#!/usr/bin/env bash
# GPU benchmark (issue 4), for a machine with a CUDA device (one rank, one GPU):
#  - exact visibility on the Cornell box at --subdiv 1 and the reference scene at --subdiv 3, GPU and CPU: how
#    the device's work limit holds the tail;
#  - form factors of the reference scene (meshes/cornell_sphere.obj) at subdiv 3 (2944 patches, the paper's
#    workload: 32 shadow rays per pair that may be occluded) and 4 (11776 patches): time per phase, shadow
#    rays per second, and agreement with the CPU backend (largest entry difference, entries that differ);
#  - the solver on the GPU against a device-to-device copy measured in the same run (radiosity_bench_gpu_solver);
#  - the BVH's rays per second on the device against Embree on the host (radiosity_bench_bvh);
#  - the path tracer (issue 5's wavefront) on the GPU and on the CPU: samples and rays per second on the
#    Cornell box, and how far the two images agree (the same paths from the same random numbers).
#   bash jobs/bench/gpu.sh [SUBDIV ...]      (env: RAD_BUILD_DIR, PYTHON)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${RAD_BUILD_DIR:-build}
[ -x "$build/radiosity" ] || bash jobs/setup.sh >/dev/null
python=${PYTHON:-/usr/bin/python3}  # a Python with numpy and h5py
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
if ! "$build/radiosity" --version | grep -q "gpu (CUDA"; then
  echo "gpu benchmark: this build has no CUDA backend (nvcc was not found when it was configured)" >&2; exit 1
fi
if "$build/radiosity" --version | grep -q "devices: 0"; then
  echo "gpu benchmark: no CUDA device: $("$build/radiosity" --version | tail -1)" >&2; exit 1
fi
subdivs=("$@")
[ ${#subdivs[@]} -gt 0 ] || subdivs=(3 4)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "gpu benchmark, $(date -u +%FT%TZ)"
"$build/radiosity" --version
for subdiv in "${subdivs[@]}"; do
  for backend in gpu cpu; do
    start=$(date +%s.%N)
    mpirun --bind-to none -n 1 "$build/radiosity" formfactors --input meshes/cornell_sphere.obj --subdiv "$subdiv" \
      --visibility rays --shadow-rays 32 --backend "$backend" --output "$out/F_$backend.h5" --timings "$out/t_$backend.json" --quiet
    end=$(date +%s.%N)
    "$python" - "$out/t_$backend.json" "$backend" "$subdiv" "$start" "$end" <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); backend, subdiv = sys.argv[2], sys.argv[3]
wall = float(sys.argv[5]) - float(sys.argv[4])
total = [p for p in t["phases"] if p["name"] == "total"][0]["max"]
print(f"\nsubdiv {subdiv}, {backend}: total {total:.3f} s (wall with start-up {wall:.2f} s)")
for p in t["phases"]:
    print(f"  {p['name']:<20} {p['max']:9.4f} s  {100 * p['share']:5.1f} %")
c = t["counters"]
print(f"  shadow rays {c['shadow rays']:.4g}, per second {t['parameters']['shadow rays per second']}")
PY
  done
  "$python" - "$out/F_gpu.h5" "$out/F_cpu.h5" <<'PY'
import sys, h5py, numpy as np
g = h5py.File(sys.argv[1], "r")["formfactors/F"][:]; c = h5py.File(sys.argv[2], "r")["formfactors/F"][:]
d = np.abs(g - c)
print(f"  GPU vs CPU: largest entry difference {d.max():.3g}, entries differing by > 1e-9: "
      f"{int((d > 1e-9).sum())} of {d.size}; row sums differ by at most {np.abs(g.sum(1) - c.sum(1)).max():.3g}")
PY
done

# Exact visibility (the default) at several of the GPU's work limits, and on the cores: SCENE SUBDIV RUN...
# (RUN: gpu:LIMIT or cpu:0; the first GPU run's entries are compared with the cores').
exact_at_limits() {
  local scene=$1 subdiv=$2; shift 2
  local first=""
  for run in "$@"; do
    local backend=${run%%:*} limit=${run#*:}
    [ -n "$first" ] || [ "$backend" != gpu ] || first=$run
    mpirun --bind-to none -n 1 "$build/radiosity" formfactors --input "$scene" --subdiv "$subdiv" \
      --backend "$backend" --gpu-work-limit "$limit" --output "$out/exact_$run.h5" --timings "$out/exact_$run.json" --quiet
    "$python" - "$out/exact_$run.json" "$backend" "$limit" <<'PY2'
import json, sys
t = json.load(open(sys.argv[1])); c = t["counters"]
total = [p for p in t["phases"] if p["name"] == "total"][0]["max"]
limit = f" (work limit {sys.argv[3]})" if sys.argv[2] == "gpu" else ""
print(f"  {sys.argv[2]}{limit}: total {total:.3f} s; pairs finished on host cores: {c.get('pairs finished on host cores', '-')}")
PY2
  done
  "$python" - "$out/exact_$first.h5" "$out/exact_cpu:0.h5" <<'PY2'
import sys, h5py, numpy as np
g = h5py.File(sys.argv[1], "r")["formfactors/F"][:]; c = h5py.File(sys.argv[2], "r")["formfactors/F"][:]
print(f"  GPU vs CPU: largest entry difference {np.abs(g - c).max():.3g}")
PY2
  rm -f "$out"/exact_*
}

# The unsplit-ish Cornell box: a few occluded entries cost a core tenths of a second, and one GPU thread
# 150-250 times that; past the device's work limit they are finished on the host's cores (pair_result.h,
# kDeviceOccludedWork, --gpu-work-limit). Without a limit the GPU took 23 s here and the CPU 1 s (H200); at
# 5000 4.50 s against 0.58 s, at 200 (the default) 0.64 s.
echo
echo "exact visibility, meshes/cornell_box.obj --subdiv 1 (68 patches; entries past the GPU's work limit go to the host):"
exact_at_limits meshes/cornell_box.obj 1 gpu:5000 gpu:1000 gpu:200 gpu:50 cpu:0
# The reference scene, where the costly entries are fewer (radiosity_bench_pair_cost: at --subdiv 2 the
# costliest 0.5 % are 93 % of the work).
echo
echo "exact visibility, meshes/cornell_sphere.obj --subdiv 3 (2944 patches):"
exact_at_limits meshes/cornell_sphere.obj 3 gpu:200 gpu:5000 cpu:0

echo
mpirun -n 1 "$build/radiosity_bench_gpu_solver" 2944 11776
echo
"$build/radiosity_bench_bvh" meshes/cornell_sphere.obj 3 4000000 "$(nproc)"

echo
echo "path tracer, meshes/cornell_box.obj 512x512, 64 spp (GPU wavefront vs CPU, same random numbers):"
for backend in gpu cpu; do
  mpirun --bind-to none -n 1 "$build/radiosity" pathtrace --input meshes/cornell_box.obj --width 512 --height 512 \
    --spp 64 --backend "$backend" --exr "$out/pt_$backend.exr" --timings "$out/pt_$backend.json" --quiet
done
"$python" - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
for backend in ("gpu", "cpu"):
    t = json.load(open(os.path.join(out, f"pt_{backend}.json")))
    q = t["parameters"]
    trace = [p for p in t["phases"] if p["name"] == "path trace"][0]["max"]
    print(f"  {backend}: path trace {trace:.3f} s, {float(q['image samples per second']):.4g} samples/s, "
          f"{float(q['image rays per second']):.4g} rays/s")
PY
"$build/radiosity" compare "$out/pt_cpu.exr" "$out/pt_gpu.exr" --json "$out/pt_compare.json" >/dev/null
"$python" - "$out/pt_compare.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
print(f"  GPU vs CPU image: MSE {c['mse']:.3e}, PSNR {c['psnr_db']:.1f} dB, SSIM {c['ssim']:.5f}")
PY
