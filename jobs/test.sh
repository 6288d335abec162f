#!/usr/bin/env bash
# Builds radiosity and runs the whole test suite (GoogleTest units and physics, MPI and CLI tests).
set -euo pipefail
cd "$(dirname "$0")/.."
bash jobs/setup.sh
cd "${RAD_BUILD_DIR:-build}"
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_rmaps_base_oversubscribe=1
ctest --output-on-failure -j "${RAD_TEST_JOBS:-2}"
