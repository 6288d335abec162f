#!/usr/bin/env python3
"""The procedural scenes of meshes/generate.py (room, city): polygon counts, geometry checked from the OBJ by
this test's own arithmetic, every row of F summing to 1 in the closed room (a polygon facing the wrong way would
break it), the city's rows within [0, 1], the same bytes for the same seed, and bad arguments giving exit 2.

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_SOURCE_DIR).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_generators.py [-v]
"""

import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402
from test_cli import CliTestCase, read_f, run  # noqa: E402

SOURCE = os.environ.get("RAD_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GENERATE = os.path.join(SOURCE, "meshes", "generate.py")


def generate(*args):
    return subprocess.run([sys.executable, GENERATE] + [str(a) for a in args], capture_output=True, text=True)


def read_obj(path):
    """{material: [corner arrays]} of an OBJ written by generate.py."""
    vertices, faces, material = [], {}, None
    with open(path) as fh:
        for line in fh:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "v":
                vertices.append([float(x) for x in parts[1:4]])
            elif parts[0] == "usemtl":
                material = parts[1]
            elif parts[0] == "f":
                faces.setdefault(material, []).append(np.array([vertices[int(i) - 1] for i in parts[1:]]))
    return faces


def area_normal(corners):
    """Area and unit normal by the shoelace (cross-product) sum, right-hand rule."""
    s = np.zeros(3)
    for k in range(len(corners)):
        s += np.cross(corners[k], corners[(k + 1) % len(corners)])
    return np.linalg.norm(s) / 2, s / np.linalg.norm(s)


class GeneratorTest(CliTestCase):
    def test_room_rows_sum_to_one(self):
        obj = os.path.join(self.tmp, "room.obj")
        result = generate("room", "--objects", 5, "--output", obj)
        self.assertEqual(result.returncode, 0, result.stderr)
        faces = read_obj(obj)
        self.assertEqual(sum(len(f) for f in faces.values()), 10 + 6 * 5)
        self.assertEqual(len(faces["light"]), 1)
        out = os.path.join(self.tmp, "room.h5")
        proc = run(["formfactors", "--input", obj, "--output", out, "--quiet"], ranks=2)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        f = read_f(out)
        self.assertEqual(f.shape, (40, 40))
        sums = f.sum(axis=1)
        # A closed room whose polygons all face its air: every row sums to 1 (exact visibility, tolerance 1e-5).
        self.assertLess(np.abs(sums - 1).max(), 1e-4, sums)

    def test_city_geometry_and_rows(self):
        obj = os.path.join(self.tmp, "city.obj")
        result = generate("city", "--buildings", "3x2", "--seed", 4, "--output", obj)
        self.assertEqual(result.returncode, 0, result.stderr)
        faces = read_obj(obj)
        self.assertEqual(sum(len(f) for f in faces.values()), 9 * 6 + 4)
        self.assertEqual(len(faces["roof"]), 6)
        self.assertEqual(len(faces["facade"]), 24)
        # The ground is the site (lots of 4 x 4 and a border of 4) less the six 2.5 x 2.5 footprints.
        ground = sum(area_normal(c)[0] for c in faces["ground"])
        self.assertAlmostEqual(ground, (3 * 4 + 8) * (2 * 4 + 8) - 6 * 2.5 ** 2, places=9)
        for c in faces["ground"] + faces["roof"]:
            self.assertTrue(np.allclose(area_normal(c)[1], [0, 1, 0]))
        # Facades face away from their building: the normal points from the roof's centre to the facade's.
        centres = [c.mean(axis=0) for c in faces["roof"]]
        for c in faces["facade"]:
            mid = c.mean(axis=0)
            roof = min(centres, key=lambda r: np.hypot(r[0] - mid[0], r[2] - mid[2]))
            outward = np.array([mid[0] - roof[0], 0, mid[2] - roof[2]])
            self.assertGreater(area_normal(c)[1] @ outward, 0)
        out = os.path.join(self.tmp, "city.h5")
        proc = run(["formfactors", "--input", obj, "--output", out, "--quiet"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        sums = read_f(out).sum(axis=1)
        self.assertGreaterEqual(sums.min(), 0)
        self.assertLess(sums.max(), 1 + 1e-4)  # open to the sky: no row above 1
        self.assertLess(sums.mean(), 0.9)

    def test_same_seed_same_bytes(self):
        paths = [os.path.join(self.tmp, folder, "city.obj") for folder in ("a", "b", "c")]
        for path, seed in zip(paths, (3, 3, 4)):
            os.mkdir(os.path.dirname(path))
            self.assertEqual(generate("city", "--buildings", "4x4", "--seed", seed, "--output", path).returncode, 0)
        data = [open(p, "rb").read() + open(p[:-4] + ".mtl", "rb").read() for p in paths]
        self.assertEqual(data[0], data[1])
        self.assertNotEqual(data[0], data[2])

    def test_bad_arguments(self):
        missing = os.path.join(self.tmp, "no_such_dir", "x.obj")
        for args in (["city", "--buildings", "0x3", "--output", os.path.join(self.tmp, "x.obj")],
                     ["city", "--buildings", "3", "--output", os.path.join(self.tmp, "x.obj")],
                     ["room", "--objects", "-1", "--output", os.path.join(self.tmp, "x.obj")],
                     ["room", "--output", missing],
                     ["room", "--output", os.path.join(self.tmp, "x.txt")]):
            result = generate(*args)
            self.assertEqual(result.returncode, 2, args)
            self.assertIn("error", result.stderr)
            self.assertFalse(os.path.exists(os.path.join(self.tmp, "x.obj")))


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__))
