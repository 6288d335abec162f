#!/usr/bin/env bash
# The main job on the bundled reference scene: the Cornell box with a sphere (46 polygons, --subdiv 3 =
# 2944 patches, 32 shadow rays per occluded pair), on 2 MPI ranks. Outputs go to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash jobs/setup.sh
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p out
mpirun -n 2 build/radiosity formfactors --input meshes/cornell_sphere.obj --subdiv 3 --shadow-rays 32 \
  --output out/cornell_sphere.h5 --raw out/cornell_sphere.formfactors --timings out/cornell_sphere.timings.json
build/radiosity info out/cornell_sphere.h5 | grep -E "patches|closure|reciprocity"
echo
echo "outputs: out/cornell_sphere.h5 (patches + F, HDF5), out/cornell_sphere.formfactors (raw matrix),"
echo "         out/cornell_sphere.timings.json (per-phase timings)"
