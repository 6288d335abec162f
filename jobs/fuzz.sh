#!/usr/bin/env bash
# Fuzzes the readers of hostile files with libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer (fuzz/):
#   obj   the OBJ and MTL readers, polygon repair and meshing (bytes: an OBJ file, a NUL, its MTL file)
#   hdf5  the radiosity HDF5 reader, on files built through the HDF5 library from a recipe (fuzz/hdf5_fuzzer.cpp)
#   openfoam  the OpenFOAM polyMesh reader (bytes: boundary, a NUL, points, a NUL, faces)
#
#   bash jobs/fuzz.sh [SECONDS_PER_TARGET]      (default 300; RAD_FUZZ_TARGETS="obj hdf5 openfoam" to choose)
#
# Builds fuzz/ with clang into $RAD_FUZZ_BUILD (default build-fuzz), then for each target: runs every input kept
# in tests/fuzz/<target>/ once (the seeds, and every input that once made a target fail: each finding becomes a
# test), then fuzzes for SECONDS from a scratch copy of them. A finding is copied into tests/fuzz/<target>/ and
# the script fails naming it. Exit 77 when clang or its libFuzzer is missing (Debian: clang libclang-rt-14-dev;
# jobs/setup.sh installs them as root), which CTest reports as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=${1:-${RAD_FUZZ_SECONDS:-300}}
targets=${RAD_FUZZ_TARGETS:-obj hdf5 openfoam}
build=${RAD_FUZZ_BUILD:-build-fuzz}
case $build in /*) ;; *) build=$root/$build ;; esac

if ! command -v clang++ >/dev/null 2>&1 || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a \
    >/dev/null 2>&1; then
  echo "fuzz: clang++ or libFuzzer not installed (Debian: apt-get install clang libclang-rt-14-dev): skipped"
  exit 77
fi
cmake -S fuzz -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang >"$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j "${RAD_BUILD_JOBS:-$(nproc)}" >/dev/null

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for target in $targets; do
  exe=$build/radiosity_fuzz_$target
  kept=$root/tests/fuzz/$target
  flags=(-rss_limit_mb=2048 -timeout=30 -max_len=8192 -print_final_stats=1)
  # 1. Every kept input, once.
  if ! "$exe" "${flags[@]}" -artifact_prefix="$scratch/" -runs=0 "$kept" >"$scratch/$target.kept.log" 2>&1; then
    tail -40 "$scratch/$target.kept.log"
    echo "fuzz: $target: an input kept in tests/fuzz/$target/ fails (above)"
    status=1
    continue
  fi
  # 2. Fuzzing from a copy of them, findings written to the scratch folder.
  mkdir -p "$scratch/$target/corpus" "$scratch/$target/findings"
  cp "$kept"/* "$scratch/$target/corpus/"
  echo "fuzz: $target: $(ls "$kept" | wc -l) inputs kept pass; fuzzing for $seconds s"
  if ! (cd "$scratch/$target/findings" &&
        "$exe" "${flags[@]}" -max_total_time="$seconds" "$scratch/$target/corpus" >"$scratch/$target.log" 2>&1); then
    grep -m1 -A30 "ERROR\|runtime error\|fatal" "$scratch/$target.log" || tail -40 "$scratch/$target.log"
    for finding in "$scratch/$target/findings"/*; do
      [ -e "$finding" ] || continue
      cp "$finding" "$kept/"
      echo "fuzz: $target: a finding, kept as tests/fuzz/$target/$(basename "$finding"): fix it and commit it as a test"
    done
    status=1
    continue
  fi
  grep -E "stat::(number_of_executed_units|average_exec_per_sec|new_units_added)" "$scratch/$target.log" |
    sed "s/^/fuzz: $target: /"
done
exit "$status"
