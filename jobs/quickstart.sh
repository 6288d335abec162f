#!/usr/bin/env bash
# The main job on the bundled classic Cornell box: form factors, distributed radiosity solve and an image, on
# 2 MPI ranks (`radiosity run`). Outputs go to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash jobs/setup.sh
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_rmaps_base_oversubscribe=1
mpirun -n 2 build/radiosity run --input meshes/cornell_box.obj --output-dir out/
echo
cat out/summary.txt
echo
echo "outputs: out/image.png (8-bit sRGB), out/image.exr (linear radiance), out/radiosity.h5 (patches, B, residuals),"
echo "         out/timings.json (per-phase timings), out/summary.txt"
