#!/usr/bin/env python3
"""OpenFOAM cases (issue 18): their boundary read as a scene, and the view-factor files of their viewFactor model.

The case is made here: a room 4 x 3 x 2.5 m with a 1 m box standing on its floor (touching faces, occluded pairs),
meshed by OpenFOAM's own blockMesh, every wall in the group viewFactorWall. Then:
  - `formfactors --input CASE` (the faces split in four: a face is then a group of patches) and
    `export --format openfoam` at 1 and 2 ranks (the same bytes) write constant/F, globalFaceFaces, mapDist and
    finalAgglom. Checked against exact facts computed here from the mesh's own points: the room is closed, so
    every face's row sums to 1; reciprocity A_i F_ij = A_j F_ji; a face sees nothing in its own plane.
  - OpenFOAM's solver (buoyantSimpleFoam with the viewFactor radiation model) runs one iteration on them, and its
    radiative wall flux qr on every face is our `thermal` command's net heat flux for the same temperatures and
    emissivities (opposite sign: OpenFOAM counts what enters the fluid), once OpenFOAM's Stefan-Boltzmann
    constant (from its rounded k, h and c) is used for ours. That shows it read our files face for face.
  - Refusals, exit 2 with one line: a binary polyMesh file, a case with no viewFactorWall patch, an OpenFOAM
    export without the case, an output case whose boundary is another.
Skipped, with the reason, where Debian's openfoam package (blockMesh, buoyantSimpleFoam) is missing.

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_SOURCE_DIR).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_openfoam.py [-v]
"""

import json
import math
import os
import re
import shutil
import subprocess
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402
from test_cli import CliTestCase, describe, program_stderr_lines, run  # noqa: E402

OPENFOAM_ETC = "/usr/share/openfoam"  # Debian's openfoam: WM_PROJECT_DIR, where etc/controlDict is


def have_openfoam():
    return all(shutil.which(tool) for tool in ("blockMesh", "buoyantSimpleFoam")) and os.path.isdir(OPENFOAM_ETC)


HEADER = "FoamFile { version 2.0; format ascii; class %s; object %s; }\n"

# The room's planes: blocks between them, all but the box's (the block from x 1 to 2, y 1 to 2, z 0 to 1).
XS, YS, ZS = (0.0, 1.0, 2.0, 4.0), (0.0, 1.0, 2.0, 3.0), (0.0, 1.0, 2.5)
BOX = (1, 1, 0)
CELLS_PER_M = 2
PATCHES = {  # name: (emissivity, temperature in K)
    "box": (0.9, 500.0), "floor": (0.6, 300.0), "ceiling": (0.8, 320.0), "walls": (0.7, 350.0)}


def block_mesh_dict():
    """blockMeshDict of the room: a hex block per cell of the planes' grid, the box's left out."""
    def v(i, j, k):
        return i + len(XS) * (j + len(YS) * k)
    vertices = ["(%r %r %r)" % (x, y, z) for z in ZS for y in YS for x in XS]
    blocks, faces = [], {name: [] for name in PATCHES}
    for i in range(len(XS) - 1):
        for j in range(len(YS) - 1):
            for k in range(len(ZS) - 1):
                if (i, j, k) == BOX:
                    continue
                cells = [max(1, round(CELLS_PER_M * (hi[n + 1] - hi[n])))
                         for hi, n in ((XS, i), (YS, j), (ZS, k))]
                corners = [v(i, j, k), v(i + 1, j, k), v(i + 1, j + 1, k), v(i, j + 1, k),
                           v(i, j, k + 1), v(i + 1, j, k + 1), v(i + 1, j + 1, k + 1), v(i, j + 1, k + 1)]
                blocks.append("hex (%s) (%d %d %d) simpleGrading (1 1 1)" % (" ".join(map(str, corners)), *cells))
                # Each side of the block: the neighbour's index, and its four corners.
                sides = [((i - 1, j, k), (v(i, j, k), v(i, j + 1, k), v(i, j + 1, k + 1), v(i, j, k + 1))),
                         ((i + 1, j, k), (v(i + 1, j, k), v(i + 1, j, k + 1), v(i + 1, j + 1, k + 1), v(i + 1, j + 1, k))),
                         ((i, j - 1, k), (v(i, j, k), v(i, j, k + 1), v(i + 1, j, k + 1), v(i + 1, j, k))),
                         ((i, j + 1, k), (v(i, j + 1, k), v(i + 1, j + 1, k), v(i + 1, j + 1, k + 1), v(i, j + 1, k + 1))),
                         ((i, j, k - 1), (v(i, j, k), v(i + 1, j, k), v(i + 1, j + 1, k), v(i, j + 1, k))),
                         ((i, j, k + 1), (v(i, j, k + 1), v(i, j + 1, k + 1), v(i + 1, j + 1, k + 1), v(i + 1, j, k + 1)))]
                for (a, b, c), quad in sides:
                    if (a, b, c) == BOX:
                        faces["box"].append(quad)
                    elif c < 0:
                        faces["floor"].append(quad)
                    elif c >= len(ZS) - 1:
                        faces["ceiling"].append(quad)
                    elif a < 0 or b < 0 or a >= len(XS) - 1 or b >= len(YS) - 1:
                        faces["walls"].append(quad)
    boundary = []
    for name, quads in faces.items():
        boundary.append("%s { type wall; inGroups (viewFactorWall); faces (%s); }"
                        % (name, " ".join("(%d %d %d %d)" % q for q in quads)))
    return (HEADER % ("dictionary", "blockMeshDict") + "scale 1;\nvertices (%s);\nblocks (%s);\nedges ();\n"
            "boundary (%s);\n" % (" ".join(vertices), " ".join(blocks), " ".join(boundary)))


def field(cls, name, dims, internal, patch_entry):
    entries = " ".join("%s { %s }" % (p, patch_entry(p)) for p in PATCHES)
    return HEADER % (cls, name) + "dimensions %s;\ninternalField uniform %s;\nboundaryField { %s }\n" % (
        dims, internal, entries)


CASE_FILES = {
    "system/controlDict": HEADER % ("dictionary", "controlDict") +
    "application buoyantSimpleFoam; startFrom startTime; startTime 0; stopAt endTime; endTime 1; deltaT 1;\n"
    "writeControl timeStep; writeInterval 1; writeFormat ascii; writePrecision 15; writeCompression off;\n"
    "timeFormat general; timePrecision 6; runTimeModifiable false;\n",
    "system/fvSchemes": HEADER % ("dictionary", "fvSchemes") +
    "ddtSchemes { default steadyState; } gradSchemes { default Gauss linear; }\n"
    "divSchemes { default none; div(phi,U) bounded Gauss upwind; div(phi,K) bounded Gauss upwind;\n"
    "  div(phi,h) bounded Gauss upwind; div(((rho*nuEff)*dev2(T(grad(U))))) Gauss linear; }\n"
    "laplacianSchemes { default Gauss linear corrected; } interpolationSchemes { default linear; }\n"
    "snGradSchemes { default corrected; }\n",
    "system/fvSolution": HEADER % ("dictionary", "fvSolution") +
    "solvers { p_rgh { solver PCG; preconditioner DIC; tolerance 1e-06; relTol 0.01; }\n"
    "  \"(U|h)\" { solver PBiCGStab; preconditioner DILU; tolerance 1e-05; relTol 0.1; } }\n"
    "SIMPLE { nNonOrthogonalCorrectors 0; pRefCell 0; pRefValue 0; }\n"
    "relaxationFactors { fields { rho 1.0; p_rgh 0.7; } equations { U 0.2; h 0.2; } }\n",
    "constant/g": HEADER % ("uniformDimensionedVectorField", "g") + "dimensions [0 1 -2 0 0 0 0];\nvalue (0 0 -9.81);\n",
    "constant/turbulenceProperties": HEADER % ("dictionary", "turbulenceProperties") + "simulationType laminar;\n",
    "constant/thermophysicalProperties": HEADER % ("dictionary", "thermophysicalProperties") +
    "thermoType { type heRhoThermo; mixture pureMixture; transport const; thermo hConst; equationOfState perfectGas;\n"
    "  specie specie; energy sensibleEnthalpy; }\npRef 100000;\n"
    "mixture { specie { molWeight 28.9; } thermodynamics { Cp 1000; Hf 0; } transport { mu 1.8e-05; Pr 0.7; } }\n",
    "constant/radiationProperties": HEADER % ("dictionary", "radiationProperties") +
    "radiation on;\nradiationModel viewFactor;\nviewFactorCoeffs { smoothing false; constantEmissivity true; }\n"
    "solverFreq 1;\nabsorptionEmissionModel none;\nscatterModel none;\nsootModel none;\n",
    "constant/boundaryRadiationProperties": HEADER % ("dictionary", "boundaryRadiationProperties") +
    "".join("%s { type lookup; emissivity %r; absorptivity %r; }\n" % (p, e, e) for p, (e, _) in PATCHES.items()),
    "0/T": field("volScalarField", "T", "[0 0 0 1 0 0 0]", 300,
                 lambda p: "type fixedValue; value uniform %r;" % PATCHES[p][1]),
    "0/U": field("volVectorField", "U", "[0 1 -1 0 0 0 0]", "(0 0 0)", lambda p: "type noSlip;"),
    "0/p": field("volScalarField", "p", "[1 -1 -2 0 0 0 0]", 100000,
                 lambda p: "type calculated; value uniform 100000;"),
    "0/p_rgh": field("volScalarField", "p_rgh", "[1 -1 -2 0 0 0 0]", 100000,
                     lambda p: "type fixedFluxPressure; value uniform 100000;"),
    "0/qr": field("volScalarField", "qr", "[1 0 -3 0 0 0 0]", 0,
                  lambda p: "type greyDiffusiveRadiationViewFactor; qro uniform 0; value uniform 0;"),
}


def openfoam_env():
    env = dict(test_cli.ENV)
    env.setdefault("WM_PROJECT_DIR", OPENFOAM_ETC)
    return env


def run_openfoam(tool, case):
    proc = subprocess.run([tool, "-case", case], env=openfoam_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError("%s failed (exit %d):\n%s" % (tool, proc.returncode, proc.stdout[-3000:]))
    return proc.stdout


def foam_body(path):
    """The text of an OpenFOAM file after its FoamFile header, comments removed."""
    with open(path) as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return text[text.index("}", text.index("FoamFile")) + 1:]


def tokens(path):
    return re.findall(r"[()]|[^\s()]+", foam_body(path))


def list_of_lists(path, cast):
    t = tokens(path)
    count, out, p = int(t[0]), [], 2
    assert t[1] == "("
    for _ in range(count):
        n = int(t[p])
        assert t[p + 1] == "("
        out.append([cast(x) for x in t[p + 2:p + 2 + n]])
        p += n + 3
    return out


def view_factor_matrix(case):
    values = list_of_lists(os.path.join(case, "constant", "F"), float)
    columns = list_of_lists(os.path.join(case, "constant", "globalFaceFaces"), int)
    k = len(values)
    F = np.zeros((k, k))
    for i in range(k):
        F[i, columns[i]] = values[i]
    return F


def boundary_faces(case):
    """Each viewFactorWall face's area, normal (out of the domain) and a point, in OpenFOAM's order, from the
    mesh's own points and faces: polyMesh read here, independently of the program."""
    t = tokens(os.path.join(case, "constant", "polyMesh", "points"))
    numbers = [float(x) for x in t[1:] if x not in "()"]
    points = np.array(numbers).reshape(-1, 3)
    faces = list_of_lists(os.path.join(case, "constant", "polyMesh", "faces"), int)
    text = foam_body(os.path.join(case, "constant", "polyMesh", "boundary"))
    out = []
    for name in PATCHES:
        block = re.search(r"\b%s\s*\{([^}]*)\}" % name, text).group(1)
        start = int(re.search(r"startFace\s+(\d+)", block).group(1))
        count = int(re.search(r"nFaces\s+(\d+)", block).group(1))
        for f in faces[start:start + count]:
            p = points[f]
            twice = sum(np.cross(p[n], p[(n + 1) % len(p)]) for n in range(len(p)))
            out.append((name, np.linalg.norm(twice) / 2, twice / np.linalg.norm(twice), p.mean(axis=0)))
    return out


def openfoam_sigma(env):
    """OpenFOAM's Stefan-Boltzmann constant: 2 pi^5 k^4 / (15 h^3 c^2) from etc/controlDict's rounded SI values."""
    with open(os.path.join(env["WM_PROJECT_DIR"], "etc", "controlDict")) as f:
        text = f.read()
    si = text[text.index("SI"):]
    value = {name: float(re.search(r"\b%s\s+%s\s+\[[^\]]*\]\s+([0-9.eE+-]+)" % (name, name), si).group(1))
             for name in ("k", "h", "c")}
    return 2 * math.pi ** 5 * value["k"] ** 4 / (15 * value["h"] ** 3 * value["c"] ** 2)


def make_case(case):
    """The room case in folder `case`, meshed by blockMesh (also used by jobs/bench/openfoam_room.sh)."""
    files = dict(CASE_FILES)
    files["system/blockMeshDict"] = block_mesh_dict()
    for rel, text in files.items():
        os.makedirs(os.path.join(case, os.path.dirname(rel)), exist_ok=True)
        with open(os.path.join(case, rel), "w") as f:
            f.write(text)
    run_openfoam("blockMesh", case)
    return case


@unittest.skipUnless(have_openfoam(), "Debian's openfoam package is not installed (apt-get install openfoam)")
class TestOpenFoamCase(CliTestCase):
    def make_case(self, name):
        return make_case(self.path(name))

    def check_exact_facts(self, case):
        faces = boundary_faces(case)
        k = len(faces)
        F = view_factor_matrix(case)
        self.assertEqual(F.shape, (k, k))
        area = np.array([a for _, a, _, _ in faces])
        # Closed room: every row sums to 1 (to the cubature tolerance); reciprocity; nothing seen in one's plane.
        self.assertLess(np.abs(F.sum(axis=1) - 1).max(), 1e-5)
        AF = area[:, None] * F
        self.assertLess(np.abs(AF - AF.T).max() / area.max(), 1e-6)
        for i, (_, _, n_i, p_i) in enumerate(faces):
            coplanar = [j for j, (_, _, n_j, p_j) in enumerate(faces)
                        if np.dot(n_i, n_j) > 1 - 1e-12 and abs(np.dot(n_i, p_j - p_i)) < 1e-9]
            self.assertTrue(np.all(F[i, coplanar] == 0), "face %d sees a face in its own plane" % i)
        # The box's top (1 m up, facing up) and the floor see nothing of each other; the floor under the box is
        # not in the mesh.
        top = [i for i, (name, _, n, p) in enumerate(faces) if name == "box" and n[2] < -0.5]
        self.assertEqual(len(top), 4)  # 1 m x 1 m at 2 cells a metre
        floor = [i for i, (name, _, _, _) in enumerate(faces) if name == "floor"]
        self.assertEqual(len(floor), 2 * 2 * (4 * 3 - 1))
        self.assertTrue(np.all(F[np.ix_(top, floor)] == 0) and np.all(F[np.ix_(floor, top)] == 0))


    def test_view_factors_are_exact_and_openfoam_solves_with_them(self):
        # Split faces (four patches each), exported at 1 and 2 ranks; then whole faces, which OpenFOAM solves with.
        split, case = self.make_case("split"), self.make_case("room")
        ff_split, ff = self.path("split.h5"), self.path("ff.h5")
        self.rad_ok(["formfactors", "--input", split, "--subdiv", "1", "--output", ff_split, "--quiet"], ranks=2)
        self.rad_ok(["formfactors", "--input", case, "--subdiv", "0", "--output", ff, "--quiet"], ranks=2)
        other = self.make_case("room2")
        self.rad_ok(["export", "--formfactors", ff_split, "--input", split, "--format", "openfoam", "--output", split])
        self.rad_ok(["export", "--formfactors", ff_split, "--input", split, "--format", "openfoam", "--output", other],
                    ranks=2)
        for name in ("F", "globalFaceFaces", "mapDist", "finalAgglom"):
            with open(os.path.join(split, "constant", name), "rb") as a, \
                    open(os.path.join(other, "constant", name), "rb") as b:
                self.assertEqual(a.read(), b.read(), name + ": 1 and 2 ranks differ")
        self.rad_ok(["export", "--formfactors", ff, "--input", case, "--format", "openfoam", "--output", case])
        for where in (split, case):
            self.check_exact_facts(where)

        # OpenFOAM's radiation solver on our files, against `thermal` on the same form factors (whole faces, as
        # OpenFOAM's faces are: the same discretisation).
        k = len(boundary_faces(case))
        log = run_openfoam("buoyantSimpleFoam", case)
        self.assertIn("Solving view factor equations", log)
        qr = []
        text = foam_body(os.path.join(case, "1", "qr"))
        for name in PATCHES:
            block = re.search(r"\b%s\s*\{(.*?)\}" % name, text, re.S).group(1)
            values = re.search(r"value\s+nonuniform\s+List<scalar>\s*\d+\s*\(([^)]*)\)", block).group(1)
            qr += [float(x) for x in values.split()]
        qr = np.array(qr)
        self.assertEqual(len(qr), k)
        properties = self.path("thermal.json")
        with open(properties, "w") as f:
            json.dump({"materials": {p: {"emissivity": e, "temperature": t} for p, (e, t) in PATCHES.items()}}, f)
        out = self.path("thermal.h5")
        self.rad_ok(["thermal", "--formfactors", ff, "--input", case, "--properties", properties, "--output", out,
                     "--tolerance", "1e-13", "--quiet"])
        with h5py.File(out, "r") as h5:
            q = h5["/thermal/heat_flux"][:]
            face = h5["/patches/face"][:]
        self.assertEqual(list(face), list(range(k)))  # whole faces: patch i is face i
        q_face = q
        scale = openfoam_sigma(openfoam_env()) / 5.670374419e-8
        self.assertLess(np.abs(qr + q_face * scale).max() / np.abs(qr).max(), 1e-8)
        self.assertGreater(np.abs(qr).max(), 1000)  # real exchange: the box at 500 K

    def test_refusals(self):
        case = self.make_case("room")
        ff = self.path("ff.h5")
        self.rad_ok(["formfactors", "--input", case, "--subdiv", "0", "--output", ff, "--quiet"])

        def refused(args, *words):
            proc = run(args, cwd=self.tmp)
            self.assertEqual(proc.returncode, 2, describe(proc))
            lines = program_stderr_lines(proc.stderr)
            self.assertEqual(len(lines), 1, describe(proc))
            for word in words:
                self.assertIn(word, lines[0])

        obj = self.path("one.obj")
        with open(obj, "w") as f:
            f.write("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
        refused(["export", "--formfactors", ff, "--input", obj, "--format", "openfoam", "--output", case],
                "--format openfoam needs --input CASE")
        # Another mesh as the output: its boundary is not the input's.
        XS_saved = globals()["XS"]
        globals()["XS"] = (0.0, 1.0, 2.0, 5.0)
        try:
            bigger = self.make_case("bigger")
        finally:
            globals()["XS"] = XS_saved
        refused(["export", "--formfactors", ff, "--input", case, "--format", "openfoam", "--output", bigger],
                bigger, "viewFactorWall")
        self.assertFalse(os.path.exists(os.path.join(bigger, "constant", "F")))
        # Form factors of another mesh.
        ff_big = self.path("ff_big.h5")
        self.rad_ok(["formfactors", "--input", bigger, "--subdiv", "0", "--output", ff_big, "--quiet"])
        refused(["export", "--formfactors", ff_big, "--input", case, "--format", "openfoam", "--output", case],
                ff_big, "faces")
        self.assertFalse(os.path.exists(os.path.join(case, "constant", "F")))
        # No viewFactorWall patch.
        boundary = os.path.join(case, "constant", "polyMesh", "boundary")
        with open(boundary) as f:
            text = f.read()
        with open(boundary, "w") as f:
            f.write(text.replace("viewFactorWall", "wallOnly"))
        refused(["formfactors", "--input", case, "--output", self.path("x.h5")], boundary, "viewFactorWall")
        with open(boundary, "w") as f:
            f.write(text)
        # A binary file.
        points = os.path.join(case, "constant", "polyMesh", "points")
        with open(points) as f:
            text = f.read()
        with open(points, "w") as f:
            f.write(text.replace("format      ascii", "format      binary"))
        refused(["formfactors", "--input", case, "--output", self.path("x.h5")], points, "binary",
                "foamFormatConvert")


if __name__ == "__main__":
    unittest.main()
