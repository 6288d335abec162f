#!/usr/bin/env python3
"""End-to-end tests of `radiosity pathtrace`: MPI determinism, the white furnace, the patch-estimates file and
bad inputs.

Self-contained like test_pipeline.py (whose helpers it imports): Python 3 standard library plus numpy and h5py;
EXR files are decoded by test_compare.py's reader, PNG files by test_pipeline.py's.

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_MPIEXEC_FLAGS, RAD_SOURCE_DIR).

Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_pathtrace.py [-v] [unittest options]
"""

import json
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402  (helpers shared with the CLI tests)
from test_cli import attr_int  # noqa: E402
from test_compare import read_exr  # noqa: E402
from test_pipeline import INSIDE_FURNACE, PipelineTestCase, read_png  # noqa: E402

FURNACE_CUBE = os.path.join(test_cli.TEST_MESHES, "furnace_cube.obj")
LIT_FLOOR_BOX = os.path.join(test_cli.TEST_MESHES, "lit_floor_box.obj")


class TestPathTrace(PipelineTestCase):
    def trace(self, name, ranks=None, extra=(), seed=11):
        exr, png = self.path(name + ".exr"), self.path(name + ".png")
        proc = self.rad_ok(["pathtrace", "--input", FURNACE_CUBE, "--exr", exr, "--output", png,
                            "--width", "24", "--height", "20", "--spp", "4", "--seed", str(seed)]
                           + INSIDE_FURNACE + list(extra), ranks)
        return exr, png, proc

    def test_ranks_give_identical_images(self):
        one, _, _ = self.trace("n1", 1)
        two, _, _ = self.trace("n2", 2, ["--threads", "1"])
        with open(one, "rb") as a, open(two, "rb") as b:
            self.assertEqual(a.read(), b.read(), "1 and 2 ranks must write byte-identical EXR files")
        other, _, _ = self.trace("seed", 1, seed=12)
        self.assertFalse(np.array_equal(read_exr(one), read_exr(other)), "another seed, another image")

    def test_white_furnace_is_two(self):
        timings = self.path("t.json")
        exr, png, proc = self.trace("furnace", None, ["--timings", timings])
        img = read_exr(exr).astype(np.float64)
        self.assertEqual(img.shape, (20, 24, 3))
        self.assertTrue(np.all(np.isfinite(img)) and np.all(img >= 1.0), "every sample sees Ke = 1 at least")
        mean, se = img.mean(), img.std(ddof=1) / np.sqrt(img.size)
        self.assertLess(abs(mean - 2.0), 4 * se, "furnace mean %.5f, standard error %.5f" % (mean, se))
        self.assertLess(se, 0.03)
        self.assertEqual(read_png(png).shape, (20, 24, 3))
        self.assertIn("samples/s", proc.stderr)
        self.assertIn("rays/s", proc.stderr)
        with open(timings) as fh:
            report = json.load(fh)
        self.assertIn("path trace", json.dumps(report))
        self.assertIn("image rays per second", json.dumps(report))

    def test_patch_estimates_file(self):
        out = self.path("est.h5")
        self.rad_ok(["pathtrace", "--input", LIT_FLOOR_BOX, "--subdiv", "1", "--patch-estimates", out,
                     "--patch-samples", "16", "--quiet"], 2)
        with h5py.File(out, "r") as f:
            self.assertEqual(attr_int(f.attrs["complete"]), 1)
            n = f["/patches/area"].shape[0]
            self.assertEqual(n, 6 * 4)
            b, se = f["/pathtrace/B"][...], f["/pathtrace/stderr"][...]
            self.assertEqual(b.shape, (n, 3))
            self.assertEqual(se.shape, (n, 3))
            emission, reflectance = f["/patches/emission"][...], f["/patches/reflectance"][...]
        self.assertFalse(os.path.exists(out + ".partial"))
        # Exact where no randomness enters: the emitter (Kd 0) shows Ke, the black walls 0; the floor is lit.
        light = np.all(reflectance == 0, axis=1) & np.any(emission > 0, axis=1)
        black = np.all(reflectance == 0, axis=1) & np.all(emission == 0, axis=1)
        floor = ~light & ~black
        self.assertEqual((light.sum(), black.sum(), floor.sum()), (4, 16, 4))
        np.testing.assert_allclose(b[light], emission[light], rtol=1e-12)
        np.testing.assert_array_equal(b[black], 0)
        self.assertTrue(np.all(b[floor] > 0) and np.all(se[floor] > 0) and np.all(se[floor] < 0.2 * b[floor]))
        # Same numbers with one rank.
        one = self.path("est1.h5")
        self.rad_ok(["pathtrace", "--input", LIT_FLOOR_BOX, "--subdiv", "1", "--patch-estimates", one,
                     "--patch-samples", "16", "--quiet"], 1)
        with h5py.File(one, "r") as f:
            np.testing.assert_array_equal(f["/pathtrace/B"][...], b)

    def test_gpu_backend_agrees_with_the_cpu(self):
        """The GPU's wavefront follows the CPU's paths from the same random numbers: pixels agree but where a
        grazing ray took another polygon. Needs a CUDA device."""
        version = test_cli.run(["--version"])
        if "gpu (CUDA" not in version.stdout or "devices: 0" in version.stdout:
            self.skipTest("no CUDA device: " + version.stdout.strip().splitlines()[-1])
        cpu, _, _ = self.trace("cpu", None, ["--backend", "cpu"])
        gpu, _, proc = self.trace("gpu", None, ["--backend", "gpu"])
        self.assertIn("GPU (wavefront)", proc.stderr)
        a, b = read_exr(cpu).astype(np.float64), read_exr(gpu).astype(np.float64)
        same = np.abs(a - b) <= 1e-5 * np.maximum(np.abs(a), np.abs(b)) + 1e-9
        self.assertGreaterEqual(same.mean(), 0.99)
        self.assertLess(abs(a.mean() - b.mean()), 1e-3 * a.mean())

    def test_image_files_follow_their_extension(self):
        """--output writes PNG or EXR by the file's extension (any case); anything else, or --exr naming a
        PNG, is refused before any work with exit 2 and nothing written."""
        exr, png = self.path("by_ext.EXR"), self.path("by_ext.png")
        args = ["pathtrace", "--input", FURNACE_CUBE, "--width", "8", "--height", "6", "--spp", "1"] + INSIDE_FURNACE
        self.rad_ok(args + ["--output", exr])
        with open(exr, "rb") as fh:
            self.assertEqual(fh.read(4), b"\x76\x2f\x31\x01", "--output x.EXR must be an OpenEXR file")
        self.assertEqual(read_exr(exr).shape, (6, 8, 3))
        self.rad_ok(args + ["--output", png])
        with open(png, "rb") as fh:
            self.assertEqual(fh.read(8), b"\x89PNG\r\n\x1a\n")
        for option, name in (("--output", "x.jpg"), ("--output", "noextension"), ("--exr", "x.png")):
            out = self.path(name)
            self.expect_error(args + [option, out], 2, names=[name], words=[".exr"], missing=[out])
        for command in (["render", "--radiosity", self.path("none.h5")], ["vpl", "--input", FURNACE_CUBE]):
            out = self.path("y.tiff")
            self.expect_error(command + ["--output", out], 2, names=["y.tiff"], missing=[out])

    def test_bad_inputs_exit_2(self):
        out = self.path("x.exr")
        self.expect_error(["pathtrace", "--input", self.path("missing.obj"), "--exr", out], 2,
                          names=["missing.obj"], missing=[out])
        self.expect_error(["pathtrace", "--input", FURNACE_CUBE], 2, words=["nothing to do"])
        self.expect_error(["pathtrace", "--input", FURNACE_CUBE, "--exr", self.path("no", "dir", "x.exr")], 2,
                          names=["x.exr"])
        proc = self.run_args(["pathtrace", "--input", FURNACE_CUBE, "--patch-estimates", self.path("e.h5"),
                              "--patch-samples", "1"])
        self.assertEqual(proc.returncode, 2, "--patch-samples 1 leaves no standard error")
        proc = self.run_args(["pathtrace", "--input", FURNACE_CUBE, "--exr", out, "--max-depth", "-1"])
        self.assertEqual(proc.returncode, 2)
        self.assertEqual(sorted(os.listdir(self.tmp)), [], "no output after a failure")


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__))
