#!/usr/bin/env bash
# Peer benchmark on an OpenFOAM case read as it is: a room 4 x 3 x 2.5 m with a 1 m box on its floor (touching
# faces and occluded pairs; the case of tests/cli/test_openfoam.py), meshed by blockMesh at C cells a metre.
#   radiosity: `formfactors --input CASE --subdiv 0` (the case's viewFactorWall faces as they are), then
#              `export --format openfoam`, which writes constant/F, globalFaceFaces, mapDist, finalAgglom.
#   OpenFOAM:  viewFactorsGen (serial) on a copy of the case with the same finalAgglom (each face its own).
# The room is closed, so every row of the exact F sums to 1, and A_i F_ij = A_j F_ji: the table gives, for each,
# the largest |row sum - 1|, the largest reciprocity gap |A_i F_ij - A_j F_ji| / max A, wall and CPU seconds and
# peak memory (/usr/bin/time -v), and how far the two matrices are apart.
#
#   bash jobs/bench/openfoam_room.sh [C ...]        # default: 2 4 8 (372, 1488 and 5952 faces)
# Environment: RAD_BUILD_DIR (default build), RAD_RANKS (default 1), RAD_VISIBILITY (exact, the default, or
#   rays), BENCH_KEEP=1 (keep the work folder).
# Needs Debian's openfoam (blockMesh, viewFactorsGen), time, python3-numpy.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
py=/usr/bin/python3
exe=$root/${RAD_BUILD_DIR:-build}/radiosity
ranks=${RAD_RANKS:-1}
visibility=${RAD_VISIBILITY:-exact}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2 4 8)
for tool in blockMesh viewFactorsGen /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "openfoam_room: $tool is missing (apt-get install openfoam time)" >&2; exit 1; }
done
[ -x "$exe" ] || { echo "openfoam_room: $exe is not built (bash jobs/setup.sh)" >&2; exit 1; }
export WM_PROJECT_DIR=${WM_PROJECT_DIR:-/usr/share/openfoam}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d "${TMPDIR:-/tmp}/openfoam_room.XXXXXX")
[ "${BENCH_KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

# timed LABEL CMD...: runs CMD under /usr/bin/time -v, appends "LABEL wall cpu peakMiB" to $work/times.
timed() {
  local label=$1; shift
  /usr/bin/time -v -o "$work/time.txt" "$@" > "$work/$label.log" 2>&1 ||
    { echo "openfoam_room: $label failed:"; tail -20 "$work/$label.log"; exit 1; } >&2
  $py - "$label" "$work/time.txt" >> "$work/times" <<'EOF'
import re, sys
t = open(sys.argv[2]).read()
def field(name):
    return re.search(re.escape(name) + r":\s*(.+)", t).group(1).strip()
h, m, s = ([0, 0] + field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"))[-3:]
wall = float(h) * 3600 + float(m) * 60 + float(s)
cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
print(sys.argv[1], wall, cpu, int(field("Maximum resident set size (kbytes)")) / 1024)
EOF
}

for c in "${sizes[@]}"; do
  ours=$work/ours_$c theirs=$work/theirs_$c
  $py - "$ours" "$c" <<'EOF'
import sys
sys.path.insert(0, "tests/cli")
import test_openfoam as room
room.CELLS_PER_M = int(sys.argv[2])
room.make_case(sys.argv[1])
EOF
  cp -r "$ours" "$theirs"
  launcher=()
  [ "$ranks" = 1 ] || launcher=(mpirun --bind-to none -n "$ranks")
  timed "radiosity_$c" "${launcher[@]}" "$exe" formfactors --input "$ours" --subdiv 0 \
    --visibility "$visibility" --output "$work/ff_$c.h5" --quiet
  "$exe" export --formfactors "$work/ff_$c.h5" --input "$ours" --format openfoam --output "$ours" --quiet
  cp "$ours/constant/finalAgglom" "$theirs/constant/"
  printf 'FoamFile { version 2.0; format ascii; class dictionary; object viewFactorsDict; }\nwriteViewFactorMatrix true;\nwriteFacesAgglomeration false;\nwritePatchViewFactors false;\nmaxDynListLength 100000000;\n' \
    > "$theirs/constant/viewFactorsDict"
  timed "viewFactorsGen_$c" viewFactorsGen -case "$theirs"
done

$py - "$work" "${sizes[@]}" <<'EOF'
import sys
sys.path.insert(0, "tests/cli")
import numpy as np
import test_openfoam as room
work, sizes = sys.argv[1], sys.argv[2:]
times = {}
for line in open(work + "/times"):
    label, wall, cpu, mib = line.split()
    times[label] = (float(wall), float(cpu), float(mib))
print("%-15s %6s %8s %8s %9s %12s %12s %10s" % ("tool", "cells/m", "faces", "wall s", "CPU s", "peak MiB",
                                               "max|sum-1|", "recip gap"))
for c in sizes:
    faces = room.boundary_faces(work + "/ours_" + c)
    area = np.array([a for _, a, _, _ in faces])
    matrices = {}
    for tool, folder in (("radiosity", "ours_"), ("viewFactorsGen", "theirs_")):
        F = room.view_factor_matrix(work + "/" + folder + c)
        matrices[tool] = F
        AF = area[:, None] * F
        wall, cpu, mib = times["%s_%s" % (tool, c)]
        print("%-15s %6s %8d %8.2f %9.2f %12.0f %12.3g %10.3g" % (tool, c, len(faces), wall, cpu, mib,
              np.abs(F.sum(axis=1) - 1).max(), np.abs(AF - AF.T).max() / area.max()))
    a, b = matrices["radiosity"], matrices["viewFactorsGen"]
    print("  cells/m %s: max |F_radiosity - F_viewFactorsGen| %.3g; pairs seen by radiosity only %d, by "
          "viewFactorsGen only %d" % (c, np.abs(a - b).max(), int(((a != 0) & (b == 0)).sum()),
                                     int(((a == 0) & (b != 0)).sum())))
EOF
