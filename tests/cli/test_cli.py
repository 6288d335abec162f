#!/usr/bin/env python3
"""End-to-end tests of the `radiosity` command line, its files and its MPI behaviour.

Self-contained: Python 3 standard library (unittest, subprocess) plus numpy and h5py. No pytest.

Environment:
  RAD_EXE            path of the radiosity executable (default: $RAD_SOURCE_DIR/build/radiosity)
  RAD_MPIEXEC        MPI launcher (default: mpiexec)
  RAD_MPIEXEC_FLAGS  extra launcher flags, split on spaces (default: --oversubscribe);
                     --allow-run-as-root is prepended when running as root
  RAD_SOURCE_DIR     repository root, for meshes/ (default: two folders above this file)

Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_cli.py [-v] [unittest options]
Every test works in its own temporary folder. Exit status is non-zero when a test fails.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

# --- configuration ------------------------------------------------------------------------------------------

SOURCE_DIR = os.path.abspath(
    os.environ.get("RAD_SOURCE_DIR")
    or os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir))
EXE = os.path.abspath(os.environ.get("RAD_EXE") or os.path.join(SOURCE_DIR, "build", "radiosity"))
MPIEXEC = os.environ.get("RAD_MPIEXEC") or "mpiexec"
_flags = os.environ.get("RAD_MPIEXEC_FLAGS")
MPIEXEC_FLAGS = (_flags if _flags is not None else "--oversubscribe").split()
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
if IS_ROOT and "--allow-run-as-root" not in MPIEXEC_FLAGS:
    MPIEXEC_FLAGS = ["--allow-run-as-root"] + MPIEXEC_FLAGS

MESHES = os.path.join(SOURCE_DIR, "meshes")
TEST_MESHES = os.path.join(MESHES, "tests")
BAD_MESHES = os.path.join(TEST_MESHES, "bad")
CORNELL_SPHERE = os.path.join(MESHES, "cornell_sphere.obj")

# Generous per-command limit: a hang (e.g. one rank stuck in a collective after another rank failed) must end
# as a test failure, not as a stuck test run.
COMMAND_TIMEOUT_S = 120

ENV = dict(os.environ)
if IS_ROOT:
    ENV.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    ENV.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")

# Exact values (Howell's catalogue) for the test scenes.
F_PARALLEL_SQUARES = 0.1998248957       # C-11: directly opposed unit squares at distance 1
F_PERPENDICULAR_SQUARES = 0.2000437761  # C-14: perpendicular unit squares with a common edge


# --- helpers ------------------------------------------------------------------------------------------------

def command(args, ranks=None):
    """The command line: the executable alone (ranks=None) or under the MPI launcher with `ranks` ranks."""
    if ranks is None:
        return [EXE] + list(args)
    return [MPIEXEC] + MPIEXEC_FLAGS + ["-n", str(ranks), EXE] + list(args)


def run(args, ranks=None, cwd=None):
    cmd = command(args, ranks)
    try:
        return subprocess.run(cmd, cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        raise AssertionError("command timed out after %d s (hang?): %s\nstderr: %s"
                             % (COMMAND_TIMEOUT_S, " ".join(shlex.quote(str(a)) for a in cmd), e.stderr))


def describe(proc):
    cmd = proc.args
    text = " ".join(shlex.quote(str(a)) for a in cmd)
    return "\n  command: %s\n  exit code: %s\n  stderr: %s\n  stdout (tail): %s" % (
        text, proc.returncode, proc.stderr.strip()[-3000:], proc.stdout.strip()[-1500:])


_LAUNCHER_RULE = re.compile(r"^\s*(-{20,}|={20,})\s*$")


def program_stderr_lines(stderr):
    """Non-empty stderr lines written by the program, without the MPI launcher's own notices.

    Open MPI's mpiexec adds help blocks framed by lines of dashes ("Primary job terminated normally, but 1
    process returned a non-zero exit code ..."); MPICH's frames its notices with lines of '='. Those blocks
    come from the launcher, not from radiosity, so they are removed before counting lines."""
    lines = stderr.splitlines()
    kept = []
    inside = False
    for line in lines:
        if _LAUNCHER_RULE.match(line):
            inside = not inside
            continue
        if inside or not line.strip():
            continue
        kept.append(line)
    return kept


def read_f(path):
    with h5py.File(path, "r") as f:
        return f["formfactors/F"][...]


def read_patches(path):
    with h5py.File(path, "r") as f:
        return {k: f["patches"][k][...] for k in f["patches"].keys()}


def read_raw(path):
    with open(path, "rb") as fh:
        data = fh.read()
    n = int(np.frombuffer(data[:4], dtype="<i4")[0])
    values = np.frombuffer(data[4:], dtype="<f8")
    return n, values, data


def attr_str(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.ndarray) and value.shape == ():
        return attr_str(value[()])
    if isinstance(value, np.ndarray) and value.size == 1:
        return attr_str(value.reshape(-1)[0])
    return str(value)


def attr_int(value):
    return int(np.asarray(value).reshape(-1)[0])


def mtllibs_of(obj_path):
    """Basenames of the material libraries an OBJ file names."""
    names = []
    with open(obj_path) as fh:
        for line in fh:
            parts = line.split()
            if parts and parts[0] == "mtllib":
                names.extend(os.path.basename(p) for p in parts[1:])
    return names


def count_faces(obj_path):
    with open(obj_path) as fh:
        return sum(1 for line in fh if line.split()[:1] == ["f"])


class CliTestCase(unittest.TestCase):
    """Each test gets its own temporary folder, self.tmp, removed afterwards."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="radiosity_cli_")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def rad_ok(self, args, ranks=None):
        proc = run(args, ranks, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, "command failed:" + describe(proc))
        return proc

    def formfactors(self, mesh, name, subdiv, ranks=None, extra=()):
        """Run `formfactors` on `mesh`; returns the path of the HDF5 file."""
        out = self.path(name + ".h5")
        self.rad_ok(["formfactors", "--input", mesh, "--subdiv", str(subdiv), "--output", out, "--quiet"]
                    + list(extra), ranks)
        return out


# --- 1. MPI and thread determinism --------------------------------------------------------------------------

class TestDeterminism(CliTestCase):
    def test_each_pair_is_computed_once_at_any_rank_count(self):
        # A pair whose rows live on two ranks is computed by one of them and its other entry sent over: the
        # work (contour evaluations, shadow rays) is the same at 1, 2 and 3 ranks, as are the bits.
        counters, matrices = [], []
        for ranks in (1, 2, 3):
            out, timings = self.path("once%d.h5" % ranks), self.path("once%d.json" % ranks)
            self.rad_ok(["formfactors", "--input", CORNELL_SPHERE, "--subdiv", "1", "--output", out,
                         "--timings", timings, "--quiet"], ranks)
            with open(timings) as fh:
                c = json.load(fh)["counters"]
            counters.append((c["contour evaluations"], c["shadow rays"]))
            matrices.append(read_f(out))
        self.assertEqual(counters[0], counters[1])
        self.assertEqual(counters[0], counters[2])
        self.assertTrue(np.array_equal(matrices[0], matrices[1]) and np.array_equal(matrices[0], matrices[2]))

    def test_ranks_threads_and_distribution_give_identical_bits(self):
        base = ["formfactors", "--input", CORNELL_SPHERE, "--subdiv", "1", "--visibility", "rays", "--shadow-rays", "16",
                "--quiet"]
        variants = [
            ("n1", 1, []),
            ("n2", 2, []),
            ("n4", 4, []),
            ("n2_block", 2, ["--distribution", "block"]),
            ("n1_t1", 1, ["--threads", "1"]),
            ("n1_t2", 1, ["--threads", "2"]),
        ]
        matrices, raws = {}, {}
        for name, ranks, extra in variants:
            h5 = self.path(name + ".h5")
            raw = self.path(name + ".raw")
            args = base + ["--output", h5, "--raw", raw] + extra
            if name == "n1":
                args += ["--timings", self.path("timings.json")]
            self.rad_ok(args, ranks)
            matrices[name] = read_f(h5)
            with open(raw, "rb") as fh:
                raws[name] = fh.read()

        # The ray path must have been exercised: cornell_sphere at subdiv 1 has occluded pairs.
        with open(self.path("timings.json")) as fh:
            timings = json.load(fh)
        self.assertIn("shadow rays", timings.get("counters", {}), "timings JSON: %r" % timings)
        self.assertGreater(float(timings["counters"]["shadow rays"]), 0)

        ref = matrices["n1"]
        self.assertEqual(ref.ndim, 2)
        self.assertEqual(ref.shape[0], ref.shape[1])
        self.assertTrue(np.all(np.isfinite(ref)))
        for name, _, _ in variants[1:]:
            with self.subTest(variant=name):
                same = np.array_equal(matrices[name], ref)
                if not same and matrices[name].shape == ref.shape:
                    diff = np.abs(matrices[name] - ref)
                    detail = "max |diff| %g at %s, %d entries differ" % (
                        diff.max(), np.unravel_index(diff.argmax(), diff.shape), int((diff != 0).sum()))
                else:
                    detail = "shapes %s vs %s" % (matrices[name].shape, ref.shape)
                self.assertTrue(same, "F of %s differs from the 1-rank run: %s" % (name, detail))
                self.assertTrue(raws[name] == raws["n1"], "raw file of %s differs from the 1-rank run" % name)


# --- 2. Raw file --------------------------------------------------------------------------------------------

class TestRawFile(CliTestCase):
    def test_raw_matches_hdf5(self):
        h5 = self.path("ff.h5")
        raw = self.path("ff.raw")
        self.rad_ok(["formfactors", "--input", CORNELL_SPHERE, "--subdiv", "1", "--shadow-rays", "4",
                     "--output", h5, "--raw", raw, "--quiet"], ranks=2)
        F = read_f(h5)
        n = F.shape[0]
        self.assertEqual(os.path.getsize(raw), 4 + 8 * n * n)
        header, values, _ = read_raw(raw)
        self.assertEqual(header, n)
        self.assertTrue(np.array_equal(values.reshape(n, n), F.astype(np.float64)),
                        "raw payload (value i*N+j = F[i][j]) differs from /formfactors/F")


# --- 3. HDF5 layout -----------------------------------------------------------------------------------------

class TestHdf5Layout(CliTestCase):
    def check_layout(self, path, n_faces):
        with h5py.File(path, "r") as f:
            self.assertEqual(attr_str(f.attrs["format"]), "radiosity")
            self.assertEqual(attr_int(f.attrs["format_version"]), 1)
            self.assertEqual(attr_int(f.attrs["complete"]), 1)
            p = f["patches"]
            area = p["area"]
            n = area.shape[0]
            self.assertGreater(n, 0)
            expected = {
                "area": ((n,), np.float64),
                "centroid": ((n, 3), np.float64),
                "normal": ((n, 3), np.float64),
                "corners": ((n, 4, 3), np.float64),
                "face": ((n,), np.int64),
                "reflectance": ((n, 3), np.float64),
                "emission": ((n, 3), np.float64),
            }
            for name, (shape, dtype) in expected.items():
                with self.subTest(dataset="/patches/" + name):
                    self.assertIn(name, p)
                    self.assertEqual(p[name].shape, shape)
                    self.assertEqual(p[name].dtype, np.dtype(dtype))
            self.assertTrue(np.all(p["area"][...] > 0))
            normal = p["normal"][...]
            np.testing.assert_allclose(np.linalg.norm(normal, axis=1), 1.0, rtol=0, atol=1e-12)
            face = p["face"][...]
            self.assertEqual(int(face.min()), 0)
            self.assertEqual(set(face.tolist()), set(range(n_faces)),
                             "every input polygon yields patches; face is 0-based")
            rho = p["reflectance"][...]
            self.assertTrue(np.all((rho >= 0) & (rho < 1)))
            self.assertTrue(np.all(p["emission"][...] >= 0))
            self.assertTrue(np.any(p["emission"][...] > 0), "the scene has a light")
            self.assertIn("formfactors/F", f)
            self.assertEqual(f["formfactors/F"].shape, (n, n))
            return n, f["formfactors/F"].dtype

    def test_layout_and_float_precision(self):
        n_faces = count_faces(CORNELL_SPHERE)
        d = self.path("double.h5")
        s = self.path("float.h5")
        common = ["formfactors", "--input", CORNELL_SPHERE, "--subdiv", "1", "--shadow-rays", "4", "--quiet"]
        self.rad_ok(common + ["--output", d], ranks=2)
        self.rad_ok(common + ["--output", s, "--precision", "float"], ranks=2)
        n, dtype_d = self.check_layout(d, n_faces)
        n2, dtype_s = self.check_layout(s, n_faces)
        self.assertEqual(n, n2)
        self.assertEqual(dtype_d, np.dtype(np.float64))
        self.assertEqual(dtype_s, np.dtype(np.float32))
        Fd = read_f(d)
        Fs = read_f(s)
        self.assertTrue(np.array_equal(Fs, Fd.astype(np.float32)),
                        "--precision float must store the double result rounded to float32")
        self.assertEqual(sorted(os.listdir(self.tmp)), ["double.h5", "double.xmf", "float.h5", "float.xmf"],
                         "no .partial or other file may be left behind")


# --- 4. Physics through the CLI -----------------------------------------------------------------------------

class TestPhysics(CliTestCase):
    def face_to_face(self, path, a, b):
        """sum over i in face a, j in face b of A_i F_ij, divided by the area of face a."""
        p = read_patches(path)
        F = read_f(path).astype(np.float64)
        ia = p["face"] == a
        ib = p["face"] == b
        self.assertTrue(ia.any() and ib.any())
        area = p["area"]
        return float((area[ia][:, None] * F[np.ix_(ia, ib)]).sum() / area[ia].sum())

    def test_unit_cube_closure_and_reciprocity(self):
        h5 = self.formfactors(os.path.join(TEST_MESHES, "unit_cube.obj"), "cube", 2)
        F = read_f(h5).astype(np.float64)
        area = read_patches(h5)["area"]
        self.assertEqual(F.shape, (96, 96))
        rows = F.sum(axis=1)
        worst = int(np.argmax(np.abs(rows - 1)))
        self.assertLessEqual(abs(rows[worst] - 1), 1e-4, "row %d sums to %.9f" % (worst, rows[worst]))
        AF = area[:, None] * F
        big = np.maximum(AF, AF.T)
        mask = big > 1e-12
        rel = np.abs(AF - AF.T)[mask] / big[mask]
        self.assertLessEqual(rel.max(), 1e-3, "reciprocity: worst relative error %g" % rel.max())

    def assert_both_ways(self, mesh, tag, exact):
        """Face 0 -> face 1 and back, summed over the patches of --subdiv 3, within 1e-4 of `exact`."""
        h5 = self.formfactors(os.path.join(TEST_MESHES, mesh), tag, 3)
        for a, b in ((0, 1), (1, 0)):
            value = self.face_to_face(h5, a, b)
            self.assertAlmostEqual(value / exact, 1.0, delta=1e-4,
                                   msg="%s: F(face %d -> face %d) = %.10f" % (mesh, a, b, value))

    def test_patches_by_count_split_by_size(self):
        """--patches 50 on the unit cube: the finest size within 50 is 0.5 (6 x 2 x 2 = 24; 0.34 would give
        54), every patch a 0.5 square, rows closed; --max-patch-size 0.5 gives the same file's F."""
        by_count = self.path("count.h5")
        self.rad_ok(["formfactors", "--input", os.path.join(TEST_MESHES, "unit_cube.obj"), "--patches", "50",
                     "--output", by_count, "--quiet"])
        out = self.path("size.h5")
        self.rad_ok(["formfactors", "--input", os.path.join(TEST_MESHES, "unit_cube.obj"), "--max-patch-size", "0.5",
                     "--output", out, "--quiet"])
        with h5py.File(by_count, "r") as a, h5py.File(out, "r") as b:
            self.assertEqual(a["patches/area"].shape, (24,))
            np.testing.assert_allclose(a["patches/area"][...], 0.25, rtol=1e-14)
            self.assertAlmostEqual(float(a["formfactors/F"].attrs["max_patch_size"]), 0.5, places=9)
            self.assertEqual(attr_int(a["formfactors/F"].attrs["patches_requested"]), 50)
            np.testing.assert_allclose(a["formfactors/F"][...].sum(axis=1), 1, atol=1e-6)
            self.assertTrue(np.array_equal(a["formfactors/F"][...], b["formfactors/F"][...]))
        # Too little memory for the size asked: the refusal suggests a --patches that fits.
        proc = run(["formfactors", "--input", os.path.join(TEST_MESHES, "unit_cube.obj"), "--max-patch-size", "0.01",
                    "--memory-limit", "20M", "--output", self.path("big.h5")], None, cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertRegex(proc.stderr, r"--patches \d+ or fewer")
        # --operator auto tries the sparse operator too, whose per-patch data alone exceed the limit: refused
        # before its rows are walked (that walk bounds 3.6e9 pairs here, minutes on two cores).
        self.assertIn("its geometry and trees alone", proc.stderr)
        self.assertIn("use fewer patches", proc.stderr)
        # --subdiv with either is refused.
        proc = run(["formfactors", "--input", os.path.join(TEST_MESHES, "unit_cube.obj"), "--subdiv", "1",
                    "--patches", "50", "--output", self.path("x.h5")], None, cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))

    def test_parallel_squares_howell_c11(self):
        self.assert_both_ways("parallel_squares.obj", "par", F_PARALLEL_SQUARES)

    def test_perpendicular_squares_howell_c14(self):
        self.assert_both_ways("perpendicular_squares.obj", "perp", F_PERPENDICULAR_SQUARES)

    def test_blocked_squares_exact_zero(self):
        h5 = self.formfactors(os.path.join(TEST_MESHES, "blocked_squares.obj"), "blocked", 1)
        F = read_f(h5)
        face = read_patches(h5)["face"]
        A, B, blocker = (np.flatnonzero(face == k) for k in (0, 1, 2))
        self.assertTrue(len(A) and len(B) and len(blocker))
        self.assertTrue(np.all(F[np.ix_(A, B)] == 0.0), "A -> B must be exactly 0 (fully blocked)")
        self.assertTrue(np.all(F[np.ix_(B, A)] == 0.0), "B -> A must be exactly 0 (fully blocked)")
        # B faces the front of the blocker: light is exchanged both ways between every pair.
        self.assertTrue(np.all(F[np.ix_(B, blocker)] > 0), "B -> blocker must be > 0")
        self.assertTrue(np.all(F[np.ix_(blocker, B)] > 0), "blocker -> B must be > 0")
        # A sees only the blocker's back side: its whole row is 0 (front-only emission and reception).
        self.assertTrue(np.all(F[A, :] == 0.0), "A faces only the back of the blocker: its row must be 0")


class TestExactVisibility(CliTestCase):
    # Unit squares at z = 0 (up) and z = 1 (down), a 0.5 x 0.5 blocker over one corner at z = 0.5. The exact
    # factor (shared/notes/accuracy.md; recomputed independently in tests/occluded_test.cpp) is 0.1498686718;
    # 32 shadow rays give +2 %.
    CORNER_EXACT = 0.1498686718

    def write_corner_scene(self):
        path = self.path("corner.obj")
        with open(path, "w") as fh:
            fh.write("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"          # A, facing up
                     "v 0 0 1\nv 0 1 1\nv 1 1 1\nv 1 0 1\n"          # B, facing down
                     "v 0 0 0.5\nv 0.5 0 0.5\nv 0.5 0.5 0.5\nv 0 0.5 0.5\n"  # blocker
                     "f 1 2 3 4\nf 5 6 7 8\nf 9 10 11 12\n")
        return path

    def test_corner_obstruction_exact_at_one_and_two_ranks(self):
        scene = self.write_corner_scene()
        one = self.formfactors(scene, "one", 0, 1, ["--visibility", "exact"])
        two = self.formfactors(scene, "two", 0, 2, ["--visibility", "exact"])
        F = read_f(one)
        self.assertTrue(np.array_equal(F, read_f(two)), "1 and 2 ranks must give the same bits")
        for i, j in ((0, 1), (1, 0)):
            self.assertAlmostEqual(F[i, j] / self.CORNER_EXACT, 1.0, delta=1e-6, msg="F[%d,%d] = %.10f" % (i, j, F[i, j]))
        with h5py.File(one, "r") as f:
            a = f["formfactors/F"].attrs
            self.assertEqual(attr_str(a["visibility"]), "exact")
            self.assertGreaterEqual(attr_int(a["pairs_exact_visibility"]), 2)
            self.assertEqual(attr_int(a["pairs_ray_traced"]), 0)
            self.assertEqual(attr_int(a["pairs_over_occluder_capacity"]), 0)
        rays = read_f(self.formfactors(scene, "rays", 0, 1, ["--visibility", "rays"]))
        self.assertGreater(abs(rays[0, 1] / self.CORNER_EXACT - 1), 1e-3, "rays are the approximate method")

    def test_polygons_passing_through_each_other_are_reported(self):
        # A square floor (polygon 0) and a closed unit block sunk halfway into it (polygons 1-6): its four sides
        # cross the floor's interior. The warning names the count and the first pairs with their OBJ lines;
        # the file carries the count.
        path = self.path("sunk.obj")
        with open(path, "w") as fh:
            fh.write("v -2 -2 0\nv 3 -2 0\nv 3 3 0\nv -2 3 0\nf 1 2 3 4\n")
            corners = [(x, y, z) for z in (-0.5, 0.5) for y in (0, 1) for x in (0, 1)]
            for p in corners:
                fh.write("v %g %g %g\n" % p)
            for quad in ((1, 3, 4, 2), (5, 6, 8, 7), (1, 2, 6, 5), (3, 7, 8, 4), (1, 5, 7, 3), (2, 4, 8, 6)):
                fh.write("f %d %d %d %d\n" % tuple(4 + k for k in quad))
        out = self.path("sunk.h5")
        proc = self.rad_ok(["formfactors", "--input", path, "--output", out, "--visibility", "exact"])
        self.assertIn("4 pair(s) of polygons pass through each other", proc.stderr)
        self.assertIn("polygons 0 (line 5) and 3 (line 16)", proc.stderr)
        with h5py.File(out, "r") as f:
            self.assertEqual(attr_int(f["formfactors/F"].attrs["interpenetrating_polygon_pairs"]), 4)
        quiet = self.rad_ok(["formfactors", "--input", path, "--output", out, "--quiet"])
        self.assertNotIn("pass through", quiet.stderr)

    def test_overlapping_faces_and_rows_above_one_are_reported(self):
        # The unit cube (lines 9-14) with the floor's half x < 0.5 written again over it (line 19): light reaching
        # the floor there is counted twice. Both warnings name the polygons; the file carries the count.
        path = self.path("overlap.obj")
        with open(path, "w") as fh:
            fh.write("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
                     "f 1 2 3 4\nf 5 8 7 6\nf 1 4 8 5\nf 2 6 7 3\nf 1 5 6 2\nf 4 3 7 8\n"
                     "v 0 0 0\nv 0.5 0 0\nv 0.5 1 0\nv 0 1 0\nf 9 10 11 12\n")
        out = self.path("overlap.h5")
        proc = self.rad_ok(["formfactors", "--input", path, "--output", out])
        self.assertIn("1 pair(s) of polygons overlap in one plane facing the same way, e.g. polygons 0 (line 9) "
                      "and 6 (line 19)", proc.stderr)
        self.assertRegex(proc.stderr, r"row\(s\) of F sum above 1\.0001 \(no closed scene does\), largest: patch \d+ "
                                      r"of polygon \d \(line \d+\): 1\.")
        with h5py.File(out, "r") as f:
            self.assertEqual(attr_int(f["formfactors/F"].attrs["overlapping_polygon_pairs"]), 1)
            self.assertGreater(f["formfactors/F"][...].sum(axis=1).max(), 1.1)
        # The closed cube alone says neither.
        clean = self.rad_ok(["formfactors", "--input", os.path.join(TEST_MESHES, "unit_cube.obj"), "--output", out])
        self.assertNotIn("overlap", clean.stderr)
        self.assertNotIn("sum above", clean.stderr)

    def write_tiled_cube(self, path, n, soup):
        """The unit cube, each wall n x n squares facing in; `soup`: every quad with its own corners."""
        verts, faces, index = [], [], {}
        def vertex(p):
            if soup or p not in index:
                verts.append(p)
                index[p] = len(verts)
            return len(verts) if soup else index[p]
        for axis in range(3):
            u, v = (axis + 1) % 3, (axis + 2) % 3
            for side in (0, 1):
                for a in range(n):
                    for b in range(n):
                        def corner(cu, cv):
                            p = [0.0, 0.0, 0.0]
                            p[axis], p[u], p[v] = float(side), cu / n, cv / n
                            return tuple(p)
                        quad = [corner(a, b), corner(a + 1, b), corner(a + 1, b + 1), corner(a, b + 1)]
                        if side == 1:
                            quad.reverse()  # (u, v, axis) is right-handed: face -axis on the far side
                        faces.append([vertex(p) for p in quad])
        with open(path, "w") as fh:
            for p in verts:
                fh.write("v %r %r %r\n" % p)
            for f in faces:
                fh.write("f %d %d %d %d\n" % tuple(f))

    def test_tiled_cube_welded_and_soup_closed_with_no_ray(self):
        # 864 polygons: past the face-pair lists, the occluder BVH must prove every pair of the empty box clear,
        # touching ones included, whether the file shares its corners or not.
        matrices = {}
        for soup in (False, True):
            scene = self.path("cube_%s.obj" % ("soup" if soup else "welded"))
            self.write_tiled_cube(scene, 12, soup)
            h5 = self.formfactors(scene, "soup" if soup else "welded", 0, 2, ["--visibility", "exact"])
            with h5py.File(h5, "r") as f:
                a = f["formfactors/F"].attrs
                self.assertEqual(attr_int(a["pairs_ray_traced"]), 0)
                self.assertEqual(attr_int(a["pairs_over_occluder_capacity"]), 0)
            matrices[soup] = read_f(h5)
        self.assertTrue(np.array_equal(matrices[False], matrices[True]), "welded and soup must give the same bits")
        rows = matrices[False].sum(axis=1)
        self.assertLess(np.abs(rows - 1).max(), 1e-6, "closed box: every row sums to 1")


# --- 5. info ------------------------------------------------------------------------------------------------

class TestInfo(CliTestCase):
    def test_info_reports_patches_completeness_and_closure(self):
        h5 = self.formfactors(os.path.join(TEST_MESHES, "unit_cube.obj"), "cube", 1)
        n = read_f(h5).shape[0]
        proc = self.rad_ok(["info", h5])
        out = proc.stdout
        self.assertTrue(re.search(r"patches\D*\b%d\b" % n, out), "patch count %d not printed:%s"
                        % (n, describe(proc)))
        self.assertIn("complete: yes", out)
        self.assertTrue(any("closure" in line for line in out.splitlines()), "no closure line:" + describe(proc))


# --- 6. Bad input -------------------------------------------------------------------------------------------

class TestBadInput(CliTestCase):
    def expect_usage_error(self, args, ranks=None, names=(), out_dir=None):
        """Exit code 2, exactly one non-empty stderr line (naming one of `names`, when given), no files."""
        proc = run(args, ranks, cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, "expected exit code 2:" + describe(proc))
        lines = program_stderr_lines(proc.stderr)
        if names:
            self.assertEqual(len(lines), 1, "expected exactly one error line:" + describe(proc))
            self.assertTrue(any(name in lines[0] for name in names),
                            "the error line names none of %s:%s" % (list(names), describe(proc)))
        else:
            self.assertGreaterEqual(len(lines), 1, "expected an error message:" + describe(proc))
        if out_dir is not None:
            self.assertEqual(os.listdir(out_dir), [], "files left behind:" + describe(proc))
        return proc

    def test_bad_scenes(self):
        bad = sorted(f for f in os.listdir(BAD_MESHES) if f.endswith(".obj"))
        self.assertGreater(len(bad), 0, "no bad scenes in " + BAD_MESHES)
        for name in bad:
            obj = os.path.join(BAD_MESHES, name)
            with open(obj) as fh:
                self.assertTrue(any(line.startswith("# expect:") for line in fh),
                                "%s lacks its '# expect:' line" % name)
            # The message may name the OBJ or the MTL file where the problem is.
            names = [name] + mtllibs_of(obj)
            # One rank: the executable alone (an MPI singleton; mpiexec takes ~2 s to report any failed job,
            # so the launcher's one-rank path is covered once, below); two ranks: under mpiexec.
            for ranks in (None, 2):
                with self.subTest(scene=name, ranks=ranks or 1):
                    out_dir = self.path("%s.%d" % (name, ranks or 1))
                    os.mkdir(out_dir)
                    # --strict: the polygons that would be mended (non-planar, concave, zero-area) are refused.
                    self.expect_usage_error(["formfactors", "--strict", "--input", obj,
                                             "--output", os.path.join(out_dir, "OUT.h5"),
                                             "--raw", os.path.join(out_dir, "OUT.raw")],
                                            ranks=ranks, names=names, out_dir=out_dir)

    def test_bad_scene_under_mpiexec_one_rank(self):
        name = "zero_area.obj"
        out_dir = self.path("out")
        os.mkdir(out_dir)
        self.expect_usage_error(["formfactors", "--strict", "--input", os.path.join(BAD_MESHES, name),
                                 "--output", os.path.join(out_dir, "OUT.h5"),
                                 "--raw", os.path.join(out_dir, "OUT.raw")],
                                ranks=1, names=[name], out_dir=out_dir)

    def test_published_polygons_are_mended_without_strict(self):
        """Without --strict the polygons --strict refuses are mended: one warning line naming file and line,
        the counts in /formfactors/F's attributes, /patches/face numbering the input polygons."""
        cases = {"nonplanar_quad.obj": ("non-planar polygon triangulated (line 10)", 2, [0, 0],
                                        "polygons_triangulated_nonplanar", 1),
                 "nonconvex_quad.obj": ("concave polygon triangulated (line 10)", 2, [0, 0],
                                        "polygons_triangulated_concave", 1),
                 "zero_area.obj": ("zero-area polygon skipped (line 12)", 1, [0], "polygons_skipped_zero_area", 2)}
        for name, (warning, patches, faces, attribute, polygons) in cases.items():
            with self.subTest(scene=name):
                out = self.path(name + ".h5")
                proc = run(["formfactors", "--input", os.path.join(BAD_MESHES, name), "--output", out], None,
                           cwd=self.tmp)
                self.assertEqual(proc.returncode, 0, describe(proc))
                warnings = [l for l in proc.stderr.splitlines() if "warning:" in l]
                self.assertEqual(len(warnings), 1, describe(proc))
                self.assertIn(name + ": 1 " + warning, warnings[0])
                with h5py.File(out, "r") as f:
                    self.assertEqual(list(f["patches/face"][...]), faces)
                    self.assertEqual(f["patches/area"].shape, (patches,))
                    self.assertEqual(attr_int(f["formfactors/F"].attrs[attribute]), 1)
                    self.assertEqual(attr_int(f["formfactors/F"].attrs["input_polygons"]), polygons)

    def test_missing_input(self):
        out = self.path("out")
        os.mkdir(out)
        self.expect_usage_error(["formfactors", "--input", self.path("no_such_scene.obj"),
                                 "--output", os.path.join(out, "OUT.h5")],
                                names=["no_such_scene.obj"], out_dir=out)

    def test_output_into_missing_folder(self):
        cube = os.path.join(TEST_MESHES, "unit_cube.obj")
        self.expect_usage_error(["formfactors", "--input", cube,
                                 "--output", self.path("no_such_dir", "OUT.h5")],
                                names=["no_such_dir"], out_dir=self.tmp)
        # A good --output but a --raw into a missing folder: the HDF5 file must not be left behind either.
        self.expect_usage_error(["formfactors", "--input", cube, "--output", self.path("OUT.h5"),
                                 "--raw", self.path("no_such_dir", "OUT.raw")],
                                names=["no_such_dir"], out_dir=self.tmp)

    def test_bad_values_and_options(self):
        cube = os.path.join(TEST_MESHES, "unit_cube.obj")
        base = ["formfactors", "--input", cube, "--output", self.path("OUT.h5")]
        for extra in (["--subdiv", "-1"], ["--shadow-rays", "0"], ["--precision", "half"],
                      ["--gpu-work-limit", "-1"], ["--visibility", "guess"], ["--no-such-option"]):
            with self.subTest(args=extra):
                self.expect_usage_error(base + extra, out_dir=self.tmp)

    def test_info_on_bad_files(self):
        missing = self.path("missing.h5")
        self.expect_usage_error(["info", missing], names=["missing.h5"])
        text = self.path("not_hdf5.h5")
        with open(text, "w") as fh:
            fh.write("this is not an HDF5 file\n")
        self.expect_usage_error(["info", text], names=["not_hdf5.h5"])

    def test_help(self):
        for args in (["--help"], ["formfactors", "--help"], ["info", "--help"]):
            with self.subTest(args=args):
                proc = run(args, cwd=self.tmp)
                self.assertEqual(proc.returncode, 0, describe(proc))
                self.assertTrue(proc.stdout.strip(), "help text expected on stdout")


def run_tests(script, mpi=True, announce=False):
    """The main of every CLI test script: checks that the executable, meshes/ and (with `mpi`) the MPI launcher
    are there (exit 2 saying which is missing), optionally says what it runs, then runs the script's tests."""
    name = os.path.basename(script)
    missing = []
    if not os.access(EXE, os.X_OK):
        missing.append("radiosity executable not found: %s (set RAD_EXE)" % EXE)
    if not os.path.isdir(MESHES):
        missing.append("meshes/ not found under %s (set RAD_SOURCE_DIR)" % SOURCE_DIR)
    if mpi and shutil.which(MPIEXEC) is None:
        missing.append("MPI launcher not found: %s (set RAD_MPIEXEC)" % MPIEXEC)
    for problem in missing:
        sys.stderr.write("%s: %s\n" % (name, problem))
    if missing:
        return 2
    if announce:
        sys.stderr.write("radiosity: %s\nlauncher: %s\nsource: %s\n"
                         % (EXE, " ".join([MPIEXEC] + MPIEXEC_FLAGS), SOURCE_DIR))
    program = unittest.main(module="__main__", argv=[sys.argv[0]] + sys.argv[1:], verbosity=2, exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(run_tests(__file__, announce=True))
