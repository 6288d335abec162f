#!/usr/bin/env bash
# Peer benchmark: OpenFOAM's viewFactorsGen (Debian package `openfoam`, v1912) against
# `radiosity formfactors` on the same geometry, both compared with the exact view factors.
#
# Geometry: the unit cube, each of its 6 walls split into n x n squares (N = 6 n^2 faces; n = 20: 2400,
# n = 40: 9600). Every face radiates from its inner side; there is no occluder.
#   OpenFOAM: blockMesh of the cube with n x n x n cells, the 6 walls as patches in group viewFactorWall,
#             constant/finalAgglom written directly as the identity (one coarse face per wall face: no
#             agglomeration, so F is per face), then viewFactorsGen (serial). F is read from constant/F
#             (rows) and constant/globalFaceFaces (their columns).
#   radiosity: the same faces as an OBJ (one quad per face, counter-clockwise seen from inside),
#             `radiosity formfactors --subdiv 0` under mpirun (RAD_RANKS ranks, default 1, all cores).
#   exact:    closed-form rectangle-to-rectangle factors by corner superposition (jobs/bench/peer/exact_box.py,
#             self-tested against Howell's tables and the cube's closure before anything runs).
# Each tool is measured with /usr/bin/time -v (wall, user+sys CPU, peak resident memory of the largest
# process). One table at the end: tool, N, wall s, CPU s, peak MiB, max |F - exact| over all N^2 entries,
# max |row sum - 1|, max error of the 36 wall-to-wall factors.
#
#   bash jobs/bench/peer_openfoam.sh [n ...]          # default: 20 40
# Environment: RAD_BUILD_DIR (default build), RAD_VISIBILITY (exact or rays, default exact), RAD_RANKS (default 1), RAD_THREADS (--threads per rank; default:
#   the cores divided among the ranks), FOAM_TIMEOUT (s, default 1800),
#   PEER_SKIP_FOAM=1 / PEER_SKIP_RAD=1 (run one side only), PEER_KEEP=1 (keep the work folder),
#   PEER_WORK (parent of the work folder, default $TMPDIR or /tmp).
# Installs (as root, when missing): openfoam, time, python3-numpy, python3-h5py.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
peer=$root/jobs/bench/peer
py=/usr/bin/python3
build=${RAD_BUILD_DIR:-build}
ranks=${RAD_RANKS:-1}
rad_threads=()
[ -z "${RAD_THREADS:-}" ] || rad_threads=(--threads "$RAD_THREADS")
foam_timeout=${FOAM_TIMEOUT:-1800}
rad_visibility=${RAD_VISIBILITY:-exact}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(20 40)
for n in "${sizes[@]}"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "peer_openfoam: n must be a positive integer, got '$n'" >&2; exit 2; }
done

say() { echo "== $*"; }
die() { echo "peer_openfoam: $*" >&2; exit 1; }

# ---------------------------------------------------------------- packages
apt_updated=0
apt_install() {  # apt_install PKG...: install as root, or say what is missing
  if [ "$(id -u)" != 0 ]; then die "missing Debian package(s) $*: run as root or install them"; fi
  if [ $apt_updated = 0 ]; then apt-get update -qq >/dev/null; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
[ -x /usr/bin/time ] || { say "installing time"; apt_install time; }
$py -c 'import numpy, h5py' 2>/dev/null || { say "installing python3-numpy python3-h5py"; apt_install python3-numpy python3-h5py; }
if [ "${PEER_SKIP_FOAM:-0}" != 1 ] && ! command -v viewFactorsGen >/dev/null; then
  say "installing Debian package openfoam (viewFactorsGen, blockMesh)"
  t0=$(date +%s.%N)
  apt_install openfoam
  say "openfoam installed in $($py -c "print(f'{$(date +%s.%N) - $t0:.1f}')") s"
fi
if [ "${PEER_SKIP_FOAM:-0}" != 1 ]; then
  # Debian's binaries are on PATH; they only need the project folder to find etc/controlDict.
  if [ -z "${WM_PROJECT_DIR:-}" ]; then
    for d in /usr/share/openfoam /usr/lib/openfoam/*; do
      if [ -f "$d/etc/controlDict" ]; then export WM_PROJECT_DIR=$d; break; fi
    done
  fi
  [ -f "${WM_PROJECT_DIR:-/nonexistent}/etc/controlDict" ] || die "OpenFOAM's etc/controlDict not found (set WM_PROJECT_DIR)"
  foam_version=$(dpkg-query -W -f '${Version}' openfoam 2>/dev/null || echo unknown)
fi
run_rad=1
if [ "${PEER_SKIP_RAD:-0}" = 1 ]; then
  run_rad=0
elif [ ! -x "$build/radiosity" ]; then
  echo "peer_openfoam: $build/radiosity not built (bash jobs/setup.sh, or set RAD_BUILD_DIR): OpenFOAM only" >&2
  run_rad=0
fi
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_rmaps_base_oversubscribe=1

# ---------------------------------------------------------------- work folder
work=$(mktemp -d "${PEER_WORK:-${TMPDIR:-/tmp}}/peer_openfoam.XXXXXX")
cleanup() {
  if [ "${PEER_KEEP:-0}" = 1 ]; then echo "work folder kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
results=$work/results.tsv
: >"$results"
failures=0

say "exact view factors: self-test"
$py "$peer/exact_box.py"

echo
say "peer benchmark: unit cube, walls split into n x n faces, n = ${sizes[*]}; $(nproc) cores, $(date -u +%FT%TZ)"
[ "${PEER_SKIP_FOAM:-0}" = 1 ] || say "OpenFOAM: openfoam $foam_version, viewFactorsGen serial (1 core)"
[ $run_rad = 0 ] || say "radiosity: $build/radiosity formfactors --subdiv 0${RAD_THREADS:+ --threads $RAD_THREADS}, $ranks rank(s), --bind-to none"

for n in "${sizes[@]}"; do
  N=$((6 * n * n))
  exact_npy=$work/exact_$n.npy
  # ------------------------------------------------------------ OpenFOAM
  if [ "${PEER_SKIP_FOAM:-0}" != 1 ]; then
    case=$work/foam_$n
    echo
    say "n = $n (N = $N): OpenFOAM case $case"
    $py "$peer/make_inputs.py" foam "$case" "$n"
    blockMesh -case "$case" >"$case/log.blockMesh" 2>&1 || { tail -20 "$case/log.blockMesh"; die "blockMesh failed (n = $n)"; }
    $py "$peer/make_inputs.py" agglom "$case" "$n"
    say "viewFactorsGen (timeout $foam_timeout s)"
    rc=0
    /usr/bin/time -v -o "$case/time.txt" timeout "$foam_timeout" viewFactorsGen -case "$case" >"$case/log.viewFactorsGen" 2>&1 || rc=$?
    if [ $rc != 0 ]; then
      tail -15 "$case/log.viewFactorsGen" >&2
      [ $rc = 124 ] && echo "peer_openfoam: viewFactorsGen ran past FOAM_TIMEOUT=$foam_timeout s at n = $n: skipped" >&2 \
                    || echo "peer_openfoam: viewFactorsGen failed (exit $rc) at n = $n: skipped" >&2
      grep -E "Elapsed|Maximum resident" "$case/time.txt" >&2 || true
      printf 'OpenFOAM viewFactorsGen\t%s\tFAILED (exit %s)\t\t\t\t\t\n' "$N" "$rc" >>"$results"
      failures=$((failures + 1))
    else
      $py "$peer/compare.py" foam "$case" "$n" "$case/time.txt" "$results" "$exact_npy"
    fi
    rm -rf "$case/constant/F" "$case/constant/globalFaceFaces" "$case/constant/visibleFaceFaces" \
      "$case/0/viewFactorField" "$case/constant/polyMesh"   # large; the logs stay
  fi
  # ------------------------------------------------------------ radiosity
  if [ $run_rad = 1 ]; then
    echo
    say "n = $n (N = $N): radiosity formfactors"
    obj=$work/cube_$n.obj
    $py "$peer/make_inputs.py" obj "$obj" "$n"
    rc=0
    /usr/bin/time -v -o "$work/rad_time_$n.txt" mpirun --bind-to none -n "$ranks" "$build/radiosity" formfactors \
      --input "$obj" --output "$work/rad_$n.h5" --subdiv 0 --visibility "$rad_visibility" "${rad_threads[@]}" \
      >"$work/rad_log_$n.txt" 2>&1 || rc=$?
    if [ $rc != 0 ]; then
      tail -15 "$work/rad_log_$n.txt" >&2
      echo "peer_openfoam: radiosity formfactors failed (exit $rc) at n = $n" >&2
      printf 'radiosity formfactors\t%s\tFAILED (exit %s)\t\t\t\t\t\n' "$N" "$rc" >>"$results"
      failures=$((failures + 1))
    else
      $py "$peer/compare.py" rad "$work/rad_$n.h5" "$n" "$work/rad_time_$n.txt" "$results" "$exact_npy"
    fi
    rm -f "$work/rad_$n.h5"
  fi
  rm -f "$exact_npy"
done

echo
say "summary (errors against the exact closed-form view factors; max over all N^2 entries / N rows / 36 wall pairs)"
$py "$peer/compare.py" table "$results"
echo "(OpenFOAM: serial viewFactorsGen, one point per face pair (centre to centre), one ray per pair;"
echo " radiosity: $ranks rank(s) x ${RAD_THREADS:-all} thread(s); wall and CPU from /usr/bin/time -v, mpirun included;"
echo " peak = largest single process's resident memory.)"
[ $failures = 0 ] || { echo "peer_openfoam: $failures run(s) failed" >&2; exit 1; }
