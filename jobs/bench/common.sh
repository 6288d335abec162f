# What the benchmark scripts share, sourced from the repository root: the build (set up and built first where
# it is missing), Open MPI allowed to run as root and to oversubscribe, and a scratch folder `$out` removed on
# exit. RAD_BUILD_DIR picks another build (default build).
build=${RAD_BUILD_DIR:-build}
[ -x "$build/radiosity" ] || bash jobs/setup.sh >/dev/null
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_rmaps_base_oversubscribe=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
