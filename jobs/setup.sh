#!/usr/bin/env bash
# Installs what radiosity needs (Debian 12 packages), configures and builds it in build/.
# As root on Debian: installs missing packages with apt-get. Otherwise: lists what is missing and stops,
# so that on a cluster you can load the matching modules (MPI, HDF5 with MPI, Embree 3 or 4, TBB, CLI11,
# GoogleTest, tinyobjloader, Assimp) and point CMake at them instead.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake libopenmpi-dev openmpi-bin libhdf5-openmpi-dev hdf5-tools libembree-dev libtbb-dev
          libcli11-dev libgtest-dev libgmock-dev libtinyobjloader-dev libstb-dev libtinyexr-dev nlohmann-json3-dev
          libassimp-dev python3-numpy python3-h5py python3-matplotlib python3-scipy)
# Optional, for the tests that run the batch scripts against a throw-away Slurm (tests/cli/test_slurm.py), fuzz
# the readers with clang's libFuzzer (jobs/fuzz.sh), install the Python package into a venv and read the XDMF
# files with meshio (python/tests/test_package.py), run OpenFOAM's radiation solver on the view factors we write
# for its case (tests/cli/test_openfoam.py, Debian's openfoam); and PETSc, which the build uses for --solver gmres when it is
# there. Installed where this script can install packages; otherwise those tests are skipped (a cluster has its
# own Slurm) and --solver gmres is refused. RAD_SETUP_TEST_TOOLS=0 leaves the test tools out (a container image).
testPackages=(slurm-wlm munge clang libclang-rt-14-dev python3-meshio python3-venv python3-pip python3-setuptools
              openfoam)
[ "${RAD_SETUP_TEST_TOOLS:-1}" = 1 ] || testPackages=()
testPackages+=(petsc-dev)
missing=()
missingOptional=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  for p in "${testPackages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missingOptional+=("$p")
  done
fi
canInstall=0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then canInstall=1; fi
if [ ${#missingOptional[@]} -gt 0 ]; then
  if [ "$canInstall" = 1 ]; then
    missing+=("${missingOptional[@]}")
  else
    echo "setup: note: ${missingOptional[*]} not installed: the slurm_scaling and fuzz tests will be skipped" >&2
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$canInstall" = 1 ]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing packages: ${missing[*]}" >&2
    echo "setup: install them (sudo apt-get install ...) or load the equivalent modules, then run again" >&2
    exit 1
  fi
fi

build=${RAD_BUILD_DIR:-build}
jobs=${RAD_BUILD_JOBS:-$(nproc)}
cmake -S . -B "$build" -DPython3_EXECUTABLE=/usr/bin/python3 ${RAD_CMAKE_ARGS:-} >"$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; exit 1; }
sed -n '/radiosity .* configuration/,/tests  /p' "$build.configure.log" | sed 's/^-- //'
cmake --build "$build" -j "$jobs"
