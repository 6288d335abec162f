#!/usr/bin/env bash
# The program and its unit tests built with AddressSanitizer and UndefinedBehaviorSanitizer (clang, -O1, no CUDA):
# the unit tests (tests/*_test.cpp, GPU ones skipped), then the program through the tests of hostile input and of
# interrupted runs: bad options and scene files, hostile HDF5 files and matrices, the fuzzers' kept inputs, full
# disks, locks, signals, SIGKILL and restart (tests/cli/test_hostile.py, test_checkpoint.py, test_formats.py).
# Any sanitizer report stops the process, and the stage fails.
#
#   bash jobs/sanitizers.sh            (RAD_SANITIZE_BUILD: the build folder, default build-sanitize)
#
# LeakSanitizer is off here: Open MPI's components allocate at MPI_Init and are unloaded at MPI_Finalize, so
# their blocks are reported from unknown modules and cannot be told from ours; the fuzzers (jobs/fuzz.sh), which
# do not start MPI, check leaks. Exit 77 when clang is missing (CTest: skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${RAD_SANITIZE_BUILD:-build-sanitize}
case $build in /*) ;; *) build=$root/$build ;; esac

if ! command -v clang++ >/dev/null 2>&1; then
  echo "sanitizers: clang++ not installed (Debian: apt-get install clang): skipped"
  exit 77
fi
flags="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DRAD_ENABLE_CUDA=OFF \
  -DRAD_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_C_FLAGS=$flags" \
  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" >"$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; exit 1; }
echo "sanitizers: building radiosity and radiosity_tests with $flags"
# The build runs the unit tests once to list them (gtest_discover_tests): leaks are not checked (see above).
export ASAN_OPTIONS=detect_leaks=0
cmake --build "$build" -j "${RAD_BUILD_JOBS:-$(nproc)}" --target radiosity radiosity_tests >"$build.build.log" 2>&1 \
  || { tail -40 "$build.build.log"; exit 1; }

# Every report goes to a file of its own as well, so that one in a process whose output a test does not show
# (a run it kills, a refusal it expects) is not missed.
reports=$build/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
export RAD_EXE=$build/radiosity RAD_SOURCE_DIR=$root
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:log_path=$reports/asan
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_rmaps_base_oversubscribe=1
status=0

# Reports of a stage, if any: printed, and the stage fails.
check_reports() {
  if [ -n "$(ls "$reports")" ]; then
    echo "sanitizers: $1: reports:"
    head -60 "$reports"/*
    rm -f "$reports"/*
    status=1
  fi
}

echo "sanitizers: unit tests"
if ! (cd "$root" && "$build/tests/radiosity_tests" --gtest_brief=1 >"$build/unit_tests.log" 2>&1); then
  tail -60 "$build/unit_tests.log"
  status=1
fi
check_reports "unit tests"
tail -3 "$build/unit_tests.log" | sed "s/^/sanitizers: unit tests: /"

for test in test_hostile.py test_checkpoint.py test_formats.py; do
  echo "sanitizers: tests/cli/$test"
  if ! /usr/bin/python3 "tests/cli/$test" >"$build/$test.log" 2>&1; then
    tail -60 "$build/$test.log"
    status=1
  fi
  check_reports "$test"
  tail -3 "$build/$test.log" | sed "s/^/sanitizers: $test: /"
done
exit "$status"
