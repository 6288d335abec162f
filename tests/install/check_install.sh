#!/usr/bin/env bash
# `cmake --install` of a build, then a project outside the repository (tests/install/CMakeLists.txt) configured
# against the installed tree with find_package(radiosity), built, and run on an installed scene; and the installed
# executable's --version. Usage: check_install.sh BUILD_DIR WORK_DIR
set -euo pipefail
build=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
for f in bin/radiosity include/radiosity/solver/gray_body.h include/radiosity/io/raw_matrix.h \
         share/radiosity/meshes/cornell_box.obj; do
  [ -e "$work/prefix/$f" ] || { echo "check_install: $f was not installed"; exit 1; }
done
ls "$work"/prefix/lib*/cmake/radiosity/radiosityConfig.cmake >/dev/null
"$work/prefix/bin/radiosity" --version
cmake -S "$here" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$work/consumer.configure.log" 2>&1 || { cat "$work/consumer.configure.log"; exit 1; }
cmake --build "$work/consumer" -j 2 >"$work/consumer.build.log" 2>&1 || { tail -40 "$work/consumer.build.log"; exit 1; }
"$work/consumer/consumer" "$work/prefix/share/radiosity/meshes/cornell_box.obj"
echo "check_install: installed, found by find_package(radiosity), linked and run"
