#!/usr/bin/env python3
"""`radiosity thermal` (issue 18): gray-body radiative exchange against closed forms computed here.

Every scene is made of whole faces as patches (subdiv 0), the case of the textbook's net-radiation method (each
surface of uniform radiosity). The view factors of the closed forms come from Howell's catalogue (C-11, directly
opposed rectangles) and the closed-box identity, not from the program.
  - A cube with a hot face, the opposite face cold and four re-radiating (adiabatic) sides: the three-surface
    enclosure with a re-radiating surface (Incropera, eq. 13.30): the heat rates of the hot and cold faces, the
    sides' temperature, and the energy balance (sum of A q over the closed cube) to 1e-9 of what is exchanged.
  - Two parallel squares facing each other in space at 0 K: their two radiosity equations solved here by hand.
  - A thin closed box (10 x 10 x 0.1) with re-radiating edges, approaching two infinite parallel plates:
    q = sigma (T1^4 - T2^4) / (1/e1 + 1/e2 - 1) within 1 %, and the three-surface closed form exactly.
  - A face of fixed net heat flux in a cube of black walls at a fixed temperature: its temperature is
    (T_w^4 + q / (e sigma))^(1/4), with F as dense rows and as the sparse operator's CSR rows.
  - `export --format groups` (by material, 1 and 2 ranks: the same bytes) and `--format energyplus` (by polygon)
    on a cube of 16 patches a face: Howell's C-11 and the closed-box identity for the faces and for the four sides
    as one group, row sums 1, reciprocity.
  - The per-material CSV's heat rates are the sums of the patches' A q; refusals (a material without properties,
    two conditions for one material, no fixed temperature) exit 2 with one line naming the file.

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_SOURCE_DIR).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_thermal.py [-v]
"""

import csv
import json
import math
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402
from test_cli import CliTestCase, describe, program_stderr_lines, run  # noqa: E402

SIGMA = 5.670374419e-8


def f_parallel(a, b, c):
    """Howell C-11: directly opposed rectangles a x b at distance c."""
    x, y = a / c, b / c
    s = (math.log(math.sqrt((1 + x * x) * (1 + y * y) / (1 + x * x + y * y)))
         + x * math.sqrt(1 + y * y) * math.atan(x / math.sqrt(1 + y * y))
         + y * math.sqrt(1 + x * x) * math.atan(y / math.sqrt(1 + x * x))
         - x * math.atan(x) - y * math.atan(y))
    return 2 * s / (math.pi * x * y)


def box_obj(a, c, materials, mtl):
    """A closed box a x c x a (y from 0 to c), fronts facing in: faces y=0, y=c, then the four sides."""
    v = [(0, 0, a), (a, 0, a), (a, 0, 0), (0, 0, 0), (0, c, 0), (a, c, 0), (a, c, a), (0, c, a)]
    faces = [(1, 2, 3, 4), (5, 6, 7, 8), (4, 3, 6, 5), (8, 7, 2, 1), (4, 5, 8, 1), (2, 7, 6, 3)]
    lines = ["mtllib " + mtl]
    lines += ["v %r %r %r" % p for p in v]
    for face, material in zip(faces, materials):
        if material is None:
            continue
        lines += ["usemtl " + material, "f %d %d %d %d" % face]
    return "\n".join(lines) + "\n"


def three_surface(t1, e1, t2, e2, a1, a2, f12, f1r, f2r):
    """Incropera eq. 13.30: two gray surfaces and a re-radiating one. Heat rate q1 (W) and the re-radiating
    surface's temperature."""
    eb1, eb2 = SIGMA * t1 ** 4, SIGMA * t2 ** 4
    r1, r2 = (1 - e1) / (e1 * a1), (1 - e2) / (e2 * a2)
    r1r, r2r = 1 / (a1 * f1r), 1 / (a2 * f2r)
    q1 = (eb1 - eb2) / (r1 + 1 / (a1 * f12 + 1 / (r1r + r2r)) + r2)
    j1, j2 = eb1 - q1 * r1, eb2 + q1 * r2
    jr = (j1 / r1r + j2 / r2r) / (1 / r1r + 1 / r2r)
    return q1, (jr / SIGMA) ** 0.25


class TestThermal(CliTestCase):
    def scene(self, name, obj, materials, extra=()):
        with open(self.path(name + ".mtl"), "w") as fh:
            for m in materials:
                fh.write("newmtl %s\nKd 0.5 0.5 0.5\n" % m)
        with open(self.path(name + ".obj"), "w") as fh:
            fh.write(obj)
        out = self.path(name + "_F.h5")
        proc = run(["formfactors", "--input", self.path(name + ".obj"), "--subdiv", "0", "--quadrature-tolerance",
                    "1e-11", "--output", out, "--quiet"] + list(extra), ranks=2, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        return self.path(name + ".obj"), out

    def thermal(self, scene, formfactors, properties, ranks=2, extra=()):
        path = self.path("properties.json")
        with open(path, "w") as fh:
            json.dump({"materials": properties}, fh)
        out = self.path("thermal.h5")
        proc = run(["thermal", "--input", scene, "--formfactors", formfactors, "--properties", path, "--output", out,
                    "--tolerance", "1e-13"] + list(extra), ranks=ranks, cwd=self.tmp)
        return proc, out

    def solved(self, *args, **kwargs):
        proc, out = self.thermal(*args, **kwargs)
        self.assertEqual(proc.returncode, 0, describe(proc))
        with h5py.File(out, "r") as f:
            g = f["thermal"]
            values = {k: g[k][...] for k in ("radiosity", "irradiation", "heat_flux", "temperature", "emissivity")}
            values["area"] = f["patches/area"][...]
            values["attrs"] = dict(g.attrs)
        return proc, values

    def test_cube_with_a_hot_face_a_cold_face_and_reradiating_sides(self):
        scene, F = self.scene("cube", box_obj(1.0, 1.0, ["hot", "cold"] + ["side"] * 4, "cube.mtl"),
                              ["hot", "cold", "side"])
        t1, e1, t2, e2 = 1000.0, 0.8, 300.0, 0.5
        for ranks in (1, 2):
            proc, r = self.solved(scene, F, {"hot": {"emissivity": e1, "temperature": t1},
                                             "cold": {"emissivity": e2, "temperature": t2},
                                             "side": {"emissivity": 0.3, "adiabatic": True}}, ranks=ranks,
                                  extra=["--groups-csv", self.path("groups.csv")])
            f12 = f_parallel(1, 1, 1)
            q1, tr = three_surface(t1, e1, t2, e2, 1.0, 1.0, f12, 1 - f12, 1 - f12)
            A, q, T = r["area"], r["heat_flux"], r["temperature"]
            self.assertAlmostEqual(A[0] * q[0] / q1, 1, delta=1e-8)
            self.assertAlmostEqual(A[1] * q[1] / -q1, 1, delta=1e-8)
            for k in range(2, 6):
                self.assertLess(abs(q[k]), 1e-8 * q1, "a re-radiating side has a net flux")
                self.assertAlmostEqual(T[k] / tr, 1, delta=1e-9)
            self.assertEqual(list(T[:2]), [t1, t2])
            balance = float(np.sum(A * q))
            self.assertLess(abs(balance), 1e-9 * float(np.sum(np.abs(A * q))))
            self.assertAlmostEqual(r["attrs"]["heat_rate_sum_w"], balance, delta=1e-9 * q1)
            with open(self.path("groups.csv")) as fh:
                rows = {row["material"]: row for row in csv.DictReader(fh)}
            self.assertEqual(sorted(rows), ["cold", "hot", "side"])
            self.assertAlmostEqual(float(rows["hot"]["heat_rate_w"]) / q1, 1, delta=1e-8)
            self.assertEqual(int(rows["side"]["patches"]), 4)
            self.assertAlmostEqual(float(rows["side"]["area_m2"]), 4.0, delta=1e-12)
            said = [line for line in proc.stderr.splitlines() if line.startswith("radiosity: thermal: energy balance")]
            self.assertEqual(len(said), 1, proc.stderr)

    def test_two_parallel_squares_in_space_at_zero_kelvin(self):
        a, c = 10.0, 1.0
        obj = box_obj(a, c, ["hot", "cold", None, None, None, None], "plates.mtl")
        scene, F = self.scene("plates", obj, ["hot", "cold"])
        t1, e1, t2, e2 = 800.0, 0.9, 400.0, 0.6
        _, r = self.solved(scene, F, {"hot": {"emissivity": e1, "temperature": t1},
                                      "cold": {"emissivity": e2, "temperature": t2}})
        f = f_parallel(a, a, c)
        E1, E2, r1, r2 = e1 * SIGMA * t1 ** 4, e2 * SIGMA * t2 ** 4, 1 - e1, 1 - e2
        j1 = (E1 + r1 * f * E2) / (1 - r1 * r2 * f * f)
        j2 = E2 + r2 * f * j1
        want = [j1 - f * j2, j2 - f * j1]
        for k in range(2):
            self.assertAlmostEqual(r["radiosity"][k] / [j1, j2][k], 1, delta=1e-9)
            self.assertAlmostEqual(r["heat_flux"][k] / want[k], 1, delta=1e-8)

    def test_a_thin_box_approaches_infinite_parallel_plates(self):
        a, c = 10.0, 0.1
        scene, F = self.scene("thin", box_obj(a, c, ["hot", "cold"] + ["edge"] * 4, "thin.mtl"),
                              ["hot", "cold", "edge"])
        t1, e1, t2, e2 = 600.0, 0.7, 300.0, 0.4
        _, r = self.solved(scene, F, {"hot": {"emissivity": e1, "temperature": t1},
                                      "cold": {"emissivity": e2, "temperature": t2},
                                      "edge": {"emissivity": 0.5, "adiabatic": True}})
        f12 = f_parallel(a, a, c)
        a1, ar = a * a, 4 * a * c
        q1, tr = three_surface(t1, e1, t2, e2, a1, a1, f12, 1 - f12, 1 - f12)
        q = r["heat_flux"]
        self.assertAlmostEqual(a1 * q[0] / q1, 1, delta=1e-7)
        infinite = SIGMA * (t1 ** 4 - t2 ** 4) / (1 / e1 + 1 / e2 - 1)
        self.assertAlmostEqual(q[0] / infinite, 1, delta=0.01)
        self.assertGreater(ar, 0)

    def test_a_face_of_fixed_heat_flux_among_black_walls(self):
        # Dense rows, and the sparse operator's CSR rows (every entry kept at this threshold), these read in
        # blocks by default and cyclically when asked.
        cases = ((["--operator", "dense"], []), (["--operator", "sparse", "--drop-below", "1e-9"], []),
                 (["--operator", "sparse", "--drop-below", "1e-9"], ["--distribution", "cyclic"]))
        for operator, extra in cases:
            scene, F = self.scene("flux", box_obj(1.0, 1.0, ["heater"] + ["wall"] * 5, "flux.mtl"),
                                  ["heater", "wall"], operator)
            q0, e, tw = 5000.0, 0.7, 400.0
            proc, r = self.solved(scene, F, {"heater": {"emissivity": e, "heat_flux": q0},
                                             "wall": {"emissivity": 1.0, "temperature": tw}}, extra=extra)
            self.assertIn("HDF5 " + ("dense" if operator[1] == "dense" else "CSR"), proc.stderr)
            self.assertAlmostEqual(r["heat_flux"][0] / q0, 1, delta=1e-9)
            self.assertAlmostEqual(r["temperature"][0] / (tw ** 4 + q0 / (e * SIGMA)) ** 0.25, 1, delta=1e-9)
            self.assertAlmostEqual(float(np.sum(r["area"][1:] * r["heat_flux"][1:])) / -q0, 1, delta=1e-8)

    def test_view_factors_between_groups_as_csv_and_for_energyplus(self):
        # The cube of 16 patches a face: by material (hot face, cold face, four sides) and by polygon (the faces).
        obj = box_obj(1.0, 1.0, ["hot", "cold"] + ["side"] * 4, "cube.mtl")
        with open(self.path("cube.mtl"), "w") as fh:
            fh.write("".join("newmtl %s\nKd 0.5 0.5 0.5\n" % m for m in ("hot", "cold", "side")))
        with open(self.path("cube.obj"), "w") as fh:
            fh.write(obj)
        F = self.path("cube16.h5")
        proc = run(["formfactors", "--input", self.path("cube.obj"), "--subdiv", "2", "--quadrature-tolerance", "1e-11",
                    "--output", F, "--quiet"], ranks=2, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        opposite, adjacent = f_parallel(1, 1, 1), (1 - f_parallel(1, 1, 1)) / 4
        tables = {}
        for ranks in (None, 2):
            out = self.path("groups_%s.csv" % ranks)
            proc = run(["export", "--formfactors", F, "--format", "groups", "--groups", "material", "--input",
                        self.path("cube.obj"), "--output", out], ranks=ranks, cwd=self.tmp)
            self.assertEqual(proc.returncode, 0, describe(proc))
            with open(out) as fh:
                tables[ranks] = fh.read()
        self.assertEqual(tables[None], tables[2], "the group sums differ with the rank count")
        rows = list(csv.reader(line for line in tables[2].splitlines() if not line.startswith("#")))
        self.assertEqual(rows[0], ["group", "area", "hot", "cold", "side"])
        G = {r[0]: dict(zip(rows[0][2:], map(float, r[2:]))) for r in rows[1:]}
        area = {r[0]: float(r[1]) for r in rows[1:]}
        self.assertAlmostEqual(area["side"], 4.0, delta=1e-12)
        self.assertAlmostEqual(G["hot"]["cold"], opposite, delta=1e-8)
        self.assertAlmostEqual(G["hot"]["side"], 4 * adjacent, delta=1e-8)
        self.assertAlmostEqual(G["side"]["side"], 2 * adjacent + opposite, delta=1e-8)  # a side sees 3 other sides
        self.assertAlmostEqual(G["side"]["hot"], adjacent, delta=1e-8)
        self.assertEqual(G["hot"]["hot"], 0.0)
        for a in G:
            self.assertAlmostEqual(sum(G[a].values()), 1, delta=1e-8)
            for b in G:
                self.assertAlmostEqual(area[a] * G[a][b], area[b] * G[b][a], delta=1e-12)

        idf = self.path("cube.idf")
        proc = run(["export", "--formfactors", F, "--format", "energyplus", "--zone", "Cube Zone", "--output", idf],
                   ranks=2, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        with open(idf) as fh:
            text = "".join(line.split("!")[0] for line in fh)
        fields = [f.strip() for f in text.replace(";", ",").split(",") if f.strip()]
        self.assertEqual(fields[0], "ZoneProperty:UserViewFactors:BySurfaceName")
        self.assertEqual(fields[1], "Cube Zone")
        triples = [fields[k:k + 3] for k in range(2, len(fields), 3)]
        self.assertEqual(len(triples), 36)
        self.assertTrue(text.rstrip().endswith(";"))
        vf = {(a, b): float(v) for a, b, v in triples}
        self.assertAlmostEqual(vf[("polygon 0", "polygon 1")], opposite, delta=1e-8)
        self.assertAlmostEqual(vf[("polygon 0", "polygon 2")], adjacent, delta=1e-8)
        proc = run(["export", "--formfactors", F, "--format", "energyplus", "--output", idf], cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertIn("--zone", proc.stderr)

    def test_refusals(self):
        scene, F = self.scene("cube", box_obj(1.0, 1.0, ["hot", "cold"] + ["side"] * 4, "cube.mtl"),
                              ["hot", "cold", "side"])
        cases = [
            ({"hot": {"emissivity": 0.5, "temperature": 500}, "cold": {"emissivity": 0.5, "temperature": 300}},
             "no thermal properties for the scene's material(s) \"side\""),
            ({"hot": {"emissivity": 0.5, "temperature": 500, "heat_flux": 10},
              "cold": {"emissivity": 0.5, "temperature": 300}, "side": {"emissivity": 0.5, "adiabatic": True}},
             "exactly one of"),
            ({"hot": {"emissivity": 1.5, "temperature": 500}}, "\"emissivity\" must be in [0, 1]"),
            ({"hot": {"emissivity": 0.5, "heat_flux": 100}, "cold": {"emissivity": 0.5, "adiabatic": True},
              "side": {"emissivity": 0.5, "adiabatic": True}}, "not determined"),
        ]
        for properties, words in cases:
            proc, out = self.thermal(scene, F, properties)
            self.assertEqual(proc.returncode, 2, describe(proc))
            lines = program_stderr_lines(proc.stderr)
            self.assertEqual(len(lines), 1, describe(proc))
            self.assertIn("properties.json", lines[0])
            self.assertIn(words, lines[0])
            self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__))
