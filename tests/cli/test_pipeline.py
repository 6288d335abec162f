#!/usr/bin/env python3
"""End-to-end tests of the radiosity pipeline: `solve`, `render` and `run`, alone and under MPI.

Self-contained: Python 3 standard library (unittest, subprocess, zlib) plus numpy and h5py; the helpers
(launcher, environment, temporary folders) come from test_cli.py next to this file. No pytest, no imaging
library: PNG files are decoded by the small decoder below; EXR files are only checked for their magic number
and data window (the C++ unit tests cover exact image round trips).

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_MPIEXEC_FLAGS, RAD_SOURCE_DIR).

Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_pipeline.py [-v] [unittest options]
Test 2 (TestSolverAgainstLU) prints a table of iteration counts per ranks x solver to stderr.
"""

import json
import os
import shutil
import struct
import sys
import tempfile
import unittest
import zlib

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402  (helpers shared with the CLI tests)
from test_cli import (CliTestCase, attr_int, attr_str, describe, program_stderr_lines,  # noqa: E402
                      read_patches, read_raw, run)

MESHES = test_cli.MESHES
TEST_MESHES = test_cli.TEST_MESHES
CORNELL_SPHERE = test_cli.CORNELL_SPHERE
CORNELL_BOX = os.path.join(MESHES, "cornell_box.obj")
FURNACE_CUBE = os.path.join(TEST_MESHES, "furnace_cube.obj")

# Camera at the centre of the closed furnace cube, looking at the z=0 wall: every pixel sees a wall.
INSIDE_FURNACE = ["--camera-position", "0.5", "0.5", "0.5", "--camera-target", "0.5", "0.5", "0",
                  "--fov-y", "60"]


# --- helpers ------------------------------------------------------------------------------------------------

def read_png(path):
    """Decode an 8-bit RGB, non-interlaced PNG: returns a uint8 array [height, width, 3].

    Checks the signature, every chunk's CRC, and the IHDR fields the writer is expected to use."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s: not a PNG file (signature %r)" % (path, data[:8]))
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]
        if zlib.crc32(kind + body) & 0xffffffff != crc:
            raise ValueError("%s: bad CRC in chunk %r" % (path, kind))
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    if (depth, color, interlace) != (8, 2, 0):
        raise ValueError("%s: expected 8-bit RGB non-interlaced, got depth %d colour %d interlace %d"
                         % (path, depth, color, interlace))
    raw = zlib.decompress(b"".join(idat))
    bpp, stride = 3, 3 * width
    if len(raw) != height * (stride + 1):
        raise ValueError("%s: %d bytes of image data, expected %d" % (path, len(raw), height * (stride + 1)))
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.int64)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=y * (stride + 1) + 1).astype(np.int64)
        if ftype == 0:      # None
            cur = line
        elif ftype == 1:    # Sub: running sum per channel
            cur = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) % 256
        elif ftype == 2:    # Up
            cur = (line + prev) % 256
        elif ftype in (3, 4):  # Average, Paeth: byte by byte
            cur = [0] * stride
            up = prev.tolist()
            src = line.tolist()
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                b = up[i]
                if ftype == 3:
                    pred = (a + b) // 2
                else:
                    c = up[i - bpp] if i >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if (pa <= pb and pa <= pc) else (b if pb <= pc else c)
                cur[i] = (src[i] + pred) % 256
            cur = np.array(cur, dtype=np.int64)
        else:
            raise ValueError("%s: bad filter type %d in row %d" % (path, ftype, y))
        out[y] = cur
        prev = cur
    return out.reshape(height, width, 3)


def exr_data_window(path):
    """(width, height) of an OpenEXR file from its header's dataWindow; checks the magic number."""
    with open(path, "rb") as fh:
        data = fh.read(1 << 16)
    if data[:4] != b"\x76\x2f\x31\x01":  # 20000630 = 0x01312f76, little-endian
        raise ValueError("%s: not an OpenEXR file (first bytes %r)" % (path, data[:4]))
    pos = 8
    while data[pos:pos + 1] != b"\0":
        end = data.index(b"\0", pos)
        name = data[pos:end]
        tend = data.index(b"\0", end + 1)
        kind = data[end + 1:tend]
        size = struct.unpack("<i", data[tend + 1:tend + 5])[0]
        value = data[tend + 5:tend + 5 + size]
        if name == b"dataWindow" and kind == b"box2i":
            xmin, ymin, xmax, ymax = struct.unpack("<4i", value)
            return xmax - xmin + 1, ymax - ymin + 1
        pos = tend + 5 + size
    raise ValueError("%s: no dataWindow in the EXR header" % path)


def srgb_byte(v):
    """The 8-bit sRGB code of linear value v (standard curve, clamped to [0, 1], rounded to nearest)."""
    v = min(max(v, 0.0), 1.0)
    s = 12.92 * v if v <= 0.0031308 else 1.055 * v ** (1 / 2.4) - 0.055
    return int(round(255 * s))


def radiosity_attrs(path):
    with h5py.File(path, "r") as f:
        return dict(f["radiosity"].attrs)


def read_b(path):
    with h5py.File(path, "r") as f:
        return f["radiosity/B"][...]


def dense_solution(path):
    """B of (I - rho F) B = E per channel, solved densely with numpy from the file's F and materials."""
    with h5py.File(path, "r") as f:
        F = f["formfactors/F"][...].astype(np.float64)
        rho = f["patches/reflectance"][...]
        E = f["patches/emission"][...]
    n = F.shape[0]
    return np.stack([np.linalg.solve(np.eye(n) - rho[:, c:c + 1] * F, E[:, c]) for c in range(3)], axis=1)


def write_two_patch_file(path, F, reflectance, emission, text=np.bytes_):
    """A complete format_version 1 file for two facing unit squares (z=0 facing +z, z=1 facing -z) with the
    given 2x2 form-factor matrix; built with h5py only, as a third-party tool would.

    `text` makes the string attribute: np.bytes_ gives a fixed-length ASCII string (as radiosity writes);
    str gives h5py's default for a Python str, a variable-length UTF-8 string."""
    corners = np.array([[[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]],
                        [[0, 0, 1], [0, 1, 1], [1, 1, 1], [1, 0, 1]]], dtype=np.float64)
    with h5py.File(path, "w") as f:
        p = f.create_group("patches")
        p["area"] = np.array([1.0, 1.0])
        p["centroid"] = corners.mean(axis=1)
        p["normal"] = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]])
        p["corners"] = corners
        p["face"] = np.array([0, 1], dtype=np.int64)
        p["reflectance"] = np.asarray(reflectance, dtype=np.float64)
        p["emission"] = np.asarray(emission, dtype=np.float64)
        f.create_group("formfactors")["F"] = np.asarray(F, dtype=np.float64)
        f.attrs["format"] = text("radiosity")
        f.attrs["format_version"] = np.int64(1)
        f.attrs["complete"] = np.int64(1)


class PipelineTestCase(CliTestCase):
    def run_args(self, args, ranks=None):
        return run(args, ranks, cwd=self.tmp)

    def solve(self, ff, out, ranks=None, extra=()):
        self.rad_ok(["solve", "--formfactors", ff, "--output", out, "--quiet"] + list(extra), ranks)
        return out

    def expect_error(self, args, code, ranks=None, names=(), words=(), clean_dir=None, missing=()):
        """Exit `code`; for code 2, exactly one stderr line naming one of `names`; every one of `words` in
        stderr (case-insensitive); `clean_dir` left empty; every path of `missing` absent."""
        proc = self.run_args(args, ranks)
        self.assertEqual(proc.returncode, code, "expected exit code %d:%s" % (code, describe(proc)))
        lines = program_stderr_lines(proc.stderr)
        if code == 2:
            self.assertEqual(len(lines), 1, "expected exactly one error line:" + describe(proc))
            self.assertTrue(lines[0].startswith("radiosity: error:"), "error line format:" + describe(proc))
        if names:
            self.assertTrue(any(name in "\n".join(lines) for name in names),
                            "stderr names none of %s:%s" % (list(names), describe(proc)))
        for word in words:
            self.assertIn(word.lower(), proc.stderr.lower(), "stderr lacks %r:%s" % (word, describe(proc)))
        if clean_dir is not None:
            self.assertEqual(sorted(os.listdir(clean_dir)), [], "files left behind:" + describe(proc))
        for path in missing:
            self.assertFalse(os.path.exists(path), "%s must not exist:%s" % (path, describe(proc)))
        return proc

    def assert_uniform_png(self, path, width, height, rgb):
        img = read_png(path)
        self.assertEqual(img.shape, (height, width, 3), "%s: image size (height, width, 3)" % path)
        expected = np.array(rgb, dtype=np.uint8)
        bad = np.any(img != expected, axis=2)
        if bad.any():
            y, x = np.argwhere(bad)[0]
            self.fail("%s: %d of %d pixels differ from %s; first at (x=%d, y=%d): %s"
                      % (path, int(bad.sum()), bad.size, list(rgb), x, y, img[y, x].tolist()))


# --- 1. White furnace ---------------------------------------------------------------------------------------

class TestWhiteFurnace(PipelineTestCase):
    def test_furnace_cube_is_two_everywhere(self):
        ff = self.formfactors(FURNACE_CUBE, "furnace", 2)
        rad = self.solve(ff, self.path("rad.h5"), extra=["--tolerance", "1e-10"])
        B = read_b(rad)
        self.assertEqual(B.shape, (96, 3))
        worst = float(np.abs(B - 2.0).max())
        self.assertLessEqual(worst, 1e-6, "B must be Ke / (1 - Kd) = 2 everywhere; worst |B - 2| = %g" % worst)
        attrs = radiosity_attrs(rad)
        self.assertEqual(attr_int(attrs["converged"]), 1)
        self.assertEqual(attr_str(attrs["solver"]), "gauss-seidel")
        self.assertLess(float(attrs["final_residual"]), 1e-10)


    def test_scene_without_light_is_black(self):
        # unit_cube.obj emits nothing: B = 0 exactly, reached without iterating (an empty residual is fine).
        ff = self.formfactors(os.path.join(TEST_MESHES, "unit_cube.obj"), "dark", 1)
        for ranks in (None, 2):
            with self.subTest(ranks=ranks or 1):
                rad = self.solve(ff, self.path("rad_%d.h5" % (ranks or 1)), ranks=ranks)
                with h5py.File(rad, "r") as f:
                    self.assertEqual(attr_int(f.attrs["complete"]), 1)
                    B = f["radiosity/B"][...]
                    residual = f["radiosity/residual"][...]
                    attrs = dict(f["radiosity"].attrs)
                self.assertEqual(B.shape, (24, 3))
                self.assertTrue(np.all(B == 0.0), "no light: B must be 0")
                self.assertEqual(attr_int(attrs["converged"]), 1)
                self.assertEqual(residual.shape, (attr_int(attrs["iterations"]),))
        self.assertFalse([p for p in os.listdir(self.tmp) if p.endswith(".partial")], "partial files left")


# --- 2. Distributed solvers against a dense LU solve --------------------------------------------------------

class TestSolverAgainstLU(unittest.TestCase):
    RANKS = (1, 2, 4)
    SOLVERS = ("jacobi", "gauss-seidel")
    TOLERANCE = 1e-13

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="radiosity_pipeline_")
        cls.ff = os.path.join(cls.tmp, "ff.h5")
        proc = run(["formfactors", "--input", CORNELL_SPHERE, "--subdiv", "1", "--output", cls.ff, "--quiet"],
                   cwd=cls.tmp)
        if proc.returncode != 0:
            shutil.rmtree(cls.tmp, True)
            raise AssertionError("formfactors failed:" + describe(proc))
        cls.reference = dense_solution(cls.ff)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def test_jacobi_and_gauss_seidel_at_1_2_4_ranks(self):
        iterations = {}
        for ranks in self.RANKS:
            for solver in self.SOLVERS:
                with self.subTest(ranks=ranks, solver=solver):
                    out = os.path.join(self.tmp, "rad_%d_%s.h5" % (ranks, solver))
                    proc = run(["solve", "--formfactors", self.ff, "--output", out, "--solver", solver,
                                "--tolerance", repr(self.TOLERANCE), "--quiet"], ranks, cwd=self.tmp)
                    self.assertEqual(proc.returncode, 0, "solve failed:" + describe(proc))
                    with h5py.File(out, "r") as f:
                        B = f["radiosity/B"][...]
                        residual = f["radiosity/residual"][...]
                        attrs = dict(f["radiosity"].attrs)
                    self.assertEqual(B.shape, self.reference.shape)
                    worst = float(np.abs(B - self.reference).max())
                    self.assertLessEqual(worst, 1e-9, "max |B - B_LU| = %g" % worst)
                    self.assertEqual(attr_int(attrs["converged"]), 1)
                    self.assertEqual(attr_str(attrs["solver"]), solver)
                    self.assertEqual(float(attrs["tolerance"]), self.TOLERANCE)
                    n_iter = attr_int(attrs["iterations"])
                    iterations[ranks, solver] = n_iter
                    self.assertEqual(residual.shape, (n_iter,),
                                     "/radiosity/residual has one value per iteration")
                    self.assertTrue(np.all(np.diff(residual) < 0),
                                    "residual must decrease: %s" % residual.tolist())
                    self.assertLess(residual[-1], self.TOLERANCE)
                    self.assertEqual(float(attrs["final_residual"]), float(residual[-1]))
        for ranks in self.RANKS:
            if (ranks, "jacobi") in iterations and (ranks, "gauss-seidel") in iterations:
                with self.subTest(ranks=ranks, check="gauss-seidel faster"):
                    self.assertLess(iterations[ranks, "gauss-seidel"], iterations[ranks, "jacobi"],
                                    "Gauss-Seidel must need fewer iterations than Jacobi at %d rank(s)" % ranks)
        n = self.reference.shape[0]
        lines = ["", "iterations to relative residual %g, cornell_sphere.obj --subdiv 1 (%d patches):"
                 % (self.TOLERANCE, n),
                 "| ranks | " + " | ".join(self.SOLVERS) + " |", "|---|" + "---|" * len(self.SOLVERS)]
        for ranks in self.RANKS:
            lines.append("| %d | " % ranks + " | ".join(str(iterations.get((ranks, s), "-"))
                                                       for s in self.SOLVERS) + " |")
        sys.stderr.write("\n".join(lines) + "\n")


# --- 3. Solve from the raw matrix file ----------------------------------------------------------------------

class TestSolveFromRaw(PipelineTestCase):
    def test_raw_gives_the_hdf5_result(self):
        h5 = self.path("ff.h5")
        raw = self.path("ff.raw")
        self.rad_ok(["formfactors", "--input", CORNELL_SPHERE, "--subdiv", "1", "--output", h5, "--raw", raw,
                     "--quiet"])
        from_h5 = self.solve(h5, self.path("from_h5.h5"), ranks=2)
        from_raw = self.solve(raw, self.path("from_raw.h5"), ranks=2,
                              extra=["--input", CORNELL_SPHERE, "--subdiv", "1"])
        B_h5, B_raw = read_b(from_h5), read_b(from_raw)
        self.assertEqual(B_raw.shape, B_h5.shape)
        worst = float(np.abs(B_raw - B_h5).max())
        self.assertLessEqual(worst, 1e-12, "B from the raw file differs from B from HDF5 by %g" % worst)
        p_h5, p_raw = read_patches(from_h5), read_patches(from_raw)
        for name in ("area", "reflectance", "emission", "face"):
            with self.subTest(dataset="/patches/" + name):
                self.assertTrue(np.array_equal(p_raw[name], p_h5[name]))
        self.assertEqual(attr_int(radiosity_attrs(from_raw)["converged"]), 1)

        # Wrong --subdiv: N of the raw file does not match the scene's patches.
        out = self.path("wrong_subdiv.h5")
        self.expect_error(["solve", "--formfactors", raw, "--input", CORNELL_SPHERE, "--subdiv", "0",
                           "--output", out, "--quiet"], 2, names=["ff.raw"], missing=[out])
        self.expect_error(["solve", "--formfactors", raw, "--input", CORNELL_SPHERE, "--subdiv", "0",
                           "--output", out, "--quiet"], 2, ranks=2, names=["ff.raw"], missing=[out])
        # A raw file without --input: no patches to solve for.
        self.expect_error(["solve", "--formfactors", raw, "--subdiv", "1", "--output", out, "--quiet"], 2,
                          names=["ff.raw"], missing=[out])


# --- 4. Divergence and non-convergence ----------------------------------------------------------------------

class TestDivergence(PipelineTestCase):
    def test_diverging_system_writes_nothing(self):
        ff = self.path("diverge.h5")
        write_two_patch_file(ff, [[0, 1.5], [1.5, 0]], [[0.9] * 3, [0.9] * 3], [[1.0] * 3, [0.0] * 3])
        for ranks in (None, 2):
            with self.subTest(ranks=ranks or 1):
                out = self.path("rad_%d.h5" % (ranks or 1))
                self.expect_error(["solve", "--formfactors", ff, "--output", out, "--quiet"], 3, ranks=ranks,
                                  words=["diverged"], missing=[out])
        self.assertEqual(sorted(os.listdir(self.tmp)), ["diverge.h5"], "no partial file may be left behind")

    def test_iteration_limit_writes_unconverged_file(self):
        ff = self.path("slow.h5")
        write_two_patch_file(ff, [[0, 0.99], [0.99, 0]], [[0.99] * 3, [0.99] * 3], [[1.0] * 3, [0.0] * 3])
        out = self.path("rad.h5")
        self.expect_error(["solve", "--formfactors", ff, "--output", out, "--max-iterations", "3", "--quiet"], 3,
                          words=["not converged"])
        self.assertTrue(os.path.exists(out), "the unconverged result must be written")
        with h5py.File(out, "r") as f:
            self.assertEqual(attr_int(f.attrs["complete"]), 1)
            attrs = dict(f["radiosity"].attrs)
            B = f["radiosity/B"][...]
            residual = f["radiosity/residual"][...]
        self.assertEqual(attr_int(attrs["converged"]), 0)
        self.assertEqual(attr_int(attrs["iterations"]), 3)
        self.assertEqual(residual.shape, (3,))
        self.assertEqual(B.shape, (2, 3))
        self.assertTrue(np.all(np.isfinite(B)))
        self.assertGreater(float(attrs["final_residual"]), 1e-6)


# --- 4b. A file written by another tool (h5py) -------------------------------------------------------------

class TestThirdPartyFile(PipelineTestCase):
    def test_two_patch_system_from_h5py(self):
        # F = 0.5 both ways, rho = 0.5, E = (1, 0.5, 0) on patch 0: B0 = E / (1 - 1/16), B1 = B0 / 4.
        # Both kinds of string attribute h5py writes must be accepted.
        E0 = np.array([1.0, 0.5, 0.0])
        exact = np.stack([E0 * 16 / 15, E0 * 4 / 15])
        for label, text in (("fixed-length ASCII", np.bytes_), ("variable-length UTF-8 (h5py str)", str)):
            with self.subTest(format_attribute=label):
                tag = "utf8" if text is str else "ascii"
                ff = self.path("two_%s.h5" % tag)
                write_two_patch_file(ff, [[0, 0.5], [0.5, 0]], [[0.5] * 3, [0.5] * 3], [E0, [0.0] * 3],
                                     text=text)
                out = self.path("rad_%s.h5" % tag)
                self.solve(ff, out, extra=["--tolerance", "1e-14"])
                B = read_b(out)
                self.assertLessEqual(float(np.abs(B - exact).max()), 1e-13, "B = %s, exact %s"
                                     % (B.tolist(), exact.tolist()))

    def test_attributes_of_the_wrong_type_are_input_errors(self):
        # A third-party file whose `complete` is a string, or whose `format` is a number: exit 2, naming it.
        for label, key, value in (("complete as text", "complete", np.bytes_("yes")),
                                  ("format as a number", "format", np.int64(1))):
            with self.subTest(case=label):
                ff = self.path("wrong_%s.h5" % key)
                write_two_patch_file(ff, [[0, 0.5], [0.5, 0]], [[0.5] * 3] * 2, [[1.0] * 3, [0.0] * 3])
                with h5py.File(ff, "r+") as f:
                    f.attrs[key] = value
                out = self.path("rad_wrong_%s.h5" % key)
                self.expect_error(["solve", "--formfactors", ff, "--output", out], 2, names=[ff],
                                  missing=[out, out + ".partial"])
                self.expect_error(["info", ff], 2, names=[ff])


# --- 5. Bad input for solve and render ----------------------------------------------------------------------

class TestBadInput(PipelineTestCase):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("inputs")
        self.outputs = self.path("outputs")
        os.mkdir(self.inputs)
        os.mkdir(self.outputs)

    def test_solve_and_render_bad_input(self):
        ff = os.path.join(self.inputs, "ff.h5")
        self.rad_ok(["formfactors", "--input", FURNACE_CUBE, "--subdiv", "1", "--output", ff, "--quiet"])
        rad = self.solve(ff, os.path.join(self.inputs, "rad.h5"))  # /patches and /radiosity, no /formfactors
        incomplete = os.path.join(self.inputs, "incomplete.h5")
        shutil.copy(ff, incomplete)
        with h5py.File(incomplete, "r+") as f:
            f.attrs["complete"] = np.int64(0)
        out_h5 = os.path.join(self.outputs, "OUT.h5")
        out_png = os.path.join(self.outputs, "OUT.png")
        cases = [
            ("solve: missing file", ["solve", "--formfactors", os.path.join(self.inputs, "no_such_ff.h5"),
                                     "--output", out_h5], ["no_such_ff.h5"]),
            ("solve: complete=0", ["solve", "--formfactors", incomplete, "--output", out_h5],
             ["incomplete.h5"]),
            ("solve: no /formfactors/F", ["solve", "--formfactors", rad, "--output", out_h5], ["rad.h5"]),
            ("solve: missing output folder", ["solve", "--formfactors", ff,
                                              "--output", os.path.join(self.outputs, "no_such_dir", "OUT.h5")],
             ["no_such_dir"]),
            ("render: missing file", ["render", "--radiosity", os.path.join(self.inputs, "no_such_rad.h5"),
                                      "--output", out_png], ["no_such_rad.h5"]),
            ("render: no /radiosity/B", ["render", "--radiosity", ff, "--output", out_png], ["ff.h5"]),
            ("render: complete=0", ["render", "--radiosity", incomplete, "--output", out_png],
             ["incomplete.h5"]),
            ("render: missing output folder", ["render", "--radiosity", rad,
                                               "--output", os.path.join(self.outputs, "no_such_dir", "OUT.png")],
             ["no_such_dir"]),
            ("render: missing --exr folder", ["render", "--radiosity", rad, "--output", out_png,
                                              "--exr", os.path.join(self.outputs, "no_such_dir", "OUT.exr")],
             ["no_such_dir"]),
        ]
        for label, args, names in cases:
            for ranks in (None, 2):
                with self.subTest(case=label, ranks=ranks or 1):
                    self.expect_error(args + ["--quiet"], 2, ranks=ranks, names=names, clean_dir=self.outputs)


class TestBackendChoice(PipelineTestCase):
    """--backend: cpu always works; gpu without a device on every rank is the user's mistake (exit 2, one
    line, no output); auto falls back to the CPU and says so in one line."""

    def setUp(self):
        super().setUp()
        version = run(["--version"])
        self.assertEqual(version.returncode, 0, describe(version))
        self.has_gpu = "gpu (CUDA" in version.stdout and "devices: 0" not in version.stdout
        self.outputs = self.path("outputs")
        os.mkdir(self.outputs)

    def test_gpu_without_a_device_is_an_input_error(self):
        if self.has_gpu:
            self.skipTest("a CUDA device is present")
        ff = self.path("ff.h5")
        self.rad_ok(["formfactors", "--input", FURNACE_CUBE, "--subdiv", "1", "--output", ff, "--quiet",
                     "--backend", "cpu"])
        rad = self.solve(ff, self.path("rad.h5"), extra=["--backend", "cpu"])
        cases = [
            ["formfactors", "--input", FURNACE_CUBE, "--output", os.path.join(self.outputs, "ff.h5")],
            ["solve", "--formfactors", ff, "--output", os.path.join(self.outputs, "rad.h5")],
            ["render", "--radiosity", rad, "--output", os.path.join(self.outputs, "img.png")],
            ["run", "--input", FURNACE_CUBE, "--subdiv", "1", "--output-dir", os.path.join(self.outputs, "run")],
            ["pathtrace", "--input", FURNACE_CUBE, "--exr", os.path.join(self.outputs, "pt.exr")],
            ["validate", "--input", FURNACE_CUBE, "--output-dir", os.path.join(self.outputs, "validate")],
        ]
        for args in cases:
            for ranks in (None, 2):
                with self.subTest(command=args[0], ranks=ranks or 1):
                    self.expect_error(args + ["--backend", "gpu", "--quiet"], 2, ranks=ranks,
                                      words=["--backend gpu", "CUDA device"], clean_dir=self.outputs)

    def test_auto_falls_back_to_the_cpu_and_says_so(self):
        if self.has_gpu:
            self.skipTest("a CUDA device is present: auto takes it")
        ff = self.path("auto.h5")
        proc = self.rad_ok(["formfactors", "--input", FURNACE_CUBE, "--subdiv", "1", "--output", ff], ranks=2)
        notices = [line for line in proc.stderr.splitlines() if "using the CPU backend" in line]
        self.assertEqual(len(notices), 1, proc.stderr)
        with h5py.File(ff, "r") as f:
            self.assertEqual(attr_str(f["formfactors/F"].attrs["backend"]), "cpu")


# --- 6. render: exact pixel values of a uniform solution ----------------------------------------------------

class TestRenderUniform(PipelineTestCase):
    VALUE = (0.25, 0.5, 0.125)

    def setUp(self):
        super().setUp()
        ff = self.formfactors(FURNACE_CUBE, "furnace", 1)
        self.rad = self.solve(ff, self.path("rad.h5"))
        with h5py.File(self.rad, "r+") as f:
            B = f["radiosity/B"]
            B[...] = np.tile(np.array(self.VALUE), (B.shape[0], 1))

    def expected(self, exposure=0.0):
        return [srgb_byte(v * 2.0 ** exposure) for v in self.VALUE]

    def test_flat_and_smooth_pixels_are_exact(self):
        for shading in ("flat", "smooth"):
            with self.subTest(shading=shading):
                png = self.path("img_%s.png" % shading)
                exr = self.path("img_%s.exr" % shading)
                self.rad_ok(["render", "--radiosity", self.rad, "--output", png, "--exr", exr, "--width", "32",
                             "--height", "24", "--shading", shading, "--quiet"] + INSIDE_FURNACE)
                self.assert_uniform_png(png, 32, 24, self.expected())
                self.assertEqual(exr_data_window(exr), (32, 24))
                self.assertGreater(os.path.getsize(exr), 100)

    def test_exposure_doubles_the_linear_value(self):
        png = self.path("img_exposed.png")
        self.rad_ok(["render", "--radiosity", self.rad, "--output", png, "--width", "32", "--height", "24",
                     "--exposure", "1", "--quiet"] + INSIDE_FURNACE)
        expected = self.expected(1.0)
        self.assertNotEqual(expected, self.expected(0.0))
        self.assert_uniform_png(png, 32, 24, expected)

    def test_camera_file_gives_the_size(self):
        cam = self.path("camera.json")
        with open(cam, "w") as fh:
            json.dump({"position": [0.5, 0.5, 0.5], "target": [0.5, 0.5, 0.0], "up": [0, 1, 0],
                       "fov_y_deg": 60, "width": 20, "height": 10}, fh)
        png = self.path("img_cam.png")
        self.rad_ok(["render", "--radiosity", self.rad, "--output", png, "--camera", cam, "--quiet"])
        self.assert_uniform_png(png, 20, 10, self.expected())

    def test_bad_camera_files(self):
        out_dir = self.path("out")
        os.mkdir(out_dir)
        bad = {
            "syntax.json": '{"position": [0.5, 0.5, 0.5], "target": [0.5, 0.5, 0.0], ',
            "short_position.json": json.dumps({"position": [0.5, 0.5], "target": [0.5, 0.5, 0.0],
                                               "up": [0, 1, 0], "fov_y_deg": 60, "width": 20, "height": 10}),
            "zero_width.json": json.dumps({"position": [0.5, 0.5, 0.5], "target": [0.5, 0.5, 0.0],
                                           "up": [0, 1, 0], "fov_y_deg": 60, "width": 0, "height": 10}),
            "target_is_position.json": json.dumps({"position": [0.5, 0.5, 0.5], "target": [0.5, 0.5, 0.5],
                                                   "up": [0, 1, 0], "fov_y_deg": 60, "width": 20,
                                                   "height": 10}),
        }
        for name, text in sorted(bad.items()):
            cam = self.path(name)
            with open(cam, "w") as fh:
                fh.write(text)
            with self.subTest(camera=name):
                self.expect_error(["render", "--radiosity", self.rad, "--output", os.path.join(out_dir, "OUT.png"),
                                   "--camera", cam, "--quiet"], 2, names=[name], clean_dir=out_dir)


# --- 7. run: the whole pipeline -----------------------------------------------------------------------------

class TestRun(PipelineTestCase):
    def test_run_cornell_box(self):
        d2 = self.path("n2")
        self.rad_ok(["run", "--input", CORNELL_BOX, "--subdiv", "1", "--output-dir", d2, "--ply",
                     "--save-formfactors", "--tolerance", "1e-12", "--quiet"], ranks=2)
        for name in ("radiosity.h5", "image.png", "image.exr", "timings.json", "summary.txt", "radiosity.ply"):
            with self.subTest(file=name):
                self.assertTrue(os.path.isfile(os.path.join(d2, name)), "%s missing in %s: %s"
                                % (name, d2, sorted(os.listdir(d2))))

        rad = os.path.join(d2, "radiosity.h5")
        with h5py.File(rad, "r") as f:
            self.assertEqual(attr_str(f.attrs["format"]), "radiosity")
            self.assertEqual(attr_int(f.attrs["format_version"]), 1)
            self.assertEqual(attr_int(f.attrs["complete"]), 1)
            n = f["patches/area"].shape[0]
            self.assertEqual(f["formfactors/F"].shape, (n, n))
            B2 = f["radiosity/B"][...]
            E = f["patches/emission"][...]
            attrs = dict(f["radiosity"].attrs)
            F2 = f["formfactors/F"][...]
        self.assertEqual(B2.shape, (n, 3))
        self.assertTrue(np.all(np.isfinite(B2)))
        self.assertTrue(np.all(B2 >= E - 1e-12), "B = E + rho F B >= E per channel")
        self.assertEqual(attr_int(attrs["converged"]), 1)
        worst = float(np.abs(B2 - dense_solution(rad)).max())
        self.assertLessEqual(worst, 1e-9, "B of `run` vs dense solve of its own F: %g" % worst)

        with open(os.path.join(d2, "timings.json")) as fh:
            timings = json.load(fh)
        phases = timings.get("phases")
        names = set(p.get("name") for p in phases) if isinstance(phases, list) else set(phases or {})
        for phase in ("total", "render"):
            self.assertIn(phase, names, "timings.json phases: %s" % sorted(names))

        with open(os.path.join(d2, "summary.txt")) as fh:
            summary = fh.read()
        self.assertIn("patches", summary)
        self.assertIn("iterations", summary)
        self.assertIn(str(n), summary)

        img = read_png(os.path.join(d2, "image.png"))
        self.assertEqual(img.shape, (512, 512, 3), "the bundled cornell_box.camera.json is 512x512")
        self.assertGreater(len(np.unique(img.reshape(-1, 3), axis=0)), 1, "image is uniform")
        row = img[256, :512 // 3].astype(int)
        red = (row[:, 0] > row[:, 1]) & (row[:, 0] > row[:, 2])
        self.assertGreater(red.mean(), 0.5, "left third of the middle row should show the red wall: %d of %d "
                           "pixels red-dominant" % (int(red.sum()), len(red)))
        self.assertEqual(exr_data_window(os.path.join(d2, "image.exr")), (512, 512))

        with open(os.path.join(d2, "radiosity.ply"), "rb") as fh:
            head = fh.read(4096)
        self.assertTrue(head.startswith(b"ply"), "PLY magic: %r" % head[:16])
        self.assertIn(b"element vertex", head.split(b"end_header")[0])

        # One rank (small image, raw file): the same B within 1e-9, and the same F bit for bit.
        d1 = self.path("n1")
        self.rad_ok(["run", "--input", CORNELL_BOX, "--subdiv", "1", "--output-dir", d1, "--raw",
                     "--tolerance", "1e-12", "--width", "48", "--height", "32", "--quiet"], ranks=None)
        rad1 = os.path.join(d1, "radiosity.h5")
        self.assertEqual(attr_int(radiosity_attrs(rad1)["converged"]), 1)
        B1 = read_b(rad1)
        worst = float(np.abs(B1 - B2).max())
        self.assertLessEqual(worst, 1e-9, "B at 1 rank vs 2 ranks: max |diff| %g" % worst)
        self.assertEqual(read_png(os.path.join(d1, "image.png")).shape, (32, 48, 3))
        self.assertFalse(os.path.exists(os.path.join(d1, "radiosity.ply")), "no PLY without --ply")
        with h5py.File(rad1, "r") as f:
            self.assertNotIn("formfactors", f, "no /formfactors without --save-formfactors")
        raw = os.path.join(d1, "formfactors")
        self.assertTrue(os.path.isfile(raw), "--raw writes DIR/formfactors: %s" % sorted(os.listdir(d1)))
        header, values, _ = read_raw(raw)
        self.assertEqual(header, n)
        self.assertTrue(np.array_equal(values.reshape(n, n), F2.astype(np.float64)),
                        "raw F of the 1-rank run differs from /formfactors/F of the 2-rank run")


# --- 8. render does not depend on the number of ranks -------------------------------------------------------

class TestRenderRanks(PipelineTestCase):
    def test_render_is_identical_at_1_and_3_ranks(self):
        ff = self.formfactors(CORNELL_SPHERE, "ff", 1)
        rad = self.solve(ff, self.path("rad.h5"))
        cam = os.path.join(MESHES, "cornell_sphere.camera.json")
        files = {}
        for ranks in (1, 3):
            png = self.path("img_%d.png" % ranks)
            exr = self.path("img_%d.exr" % ranks)
            self.rad_ok(["render", "--radiosity", rad, "--output", png, "--exr", exr, "--camera", cam,
                         "--width", "96", "--height", "80", "--quiet"], ranks=ranks)
            with open(png, "rb") as fh, open(exr, "rb") as gh:
                files[ranks] = (fh.read(), gh.read())
        img = read_png(self.path("img_1.png"))
        self.assertEqual(img.shape, (80, 96, 3))
        self.assertGreater(len(np.unique(img.reshape(-1, 3), axis=0)), 10, "the image shows the scene")
        self.assertTrue(files[1][0] == files[3][0], "PNG at 3 ranks differs from the PNG at 1 rank")
        self.assertTrue(files[1][1] == files[3][1], "EXR at 3 ranks differs from the EXR at 1 rank")


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__, announce=True))
