#!/usr/bin/env python3
"""End-to-end tests of `radiosity vpl` (instant radiosity): outputs, MPI determinism, bad input.

Helpers (launcher, environment, temporary folders, PNG decoder) come from test_cli.py and test_pipeline.py.
The physics (white furnace, accelerations' error bounds) is tested by the C++ suite Vpl (tests/vpl_test.cpp).

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_MPIEXEC_FLAGS, RAD_SOURCE_DIR).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_vpl.py [-v] [unittest options]
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402  (helpers shared with the CLI tests)
from test_cli import CliTestCase, describe, program_stderr_lines, run  # noqa: E402
from test_pipeline import exr_data_window, read_png  # noqa: E402

CORNELL_BOX = os.path.join(test_cli.MESHES, "cornell_box.obj")
SMALL = ["--width", "24", "--height", "20", "--vpls", "40", "--bounces", "2", "--quiet"]


class TestVpl(CliTestCase):
    def test_outputs_exist_and_show_the_scene(self):
        png, exr, timings = self.path("v.png"), self.path("v.exr"), self.path("t.json")
        self.rad_ok(["vpl", "--input", CORNELL_BOX, "--output", png, "--exr", exr, "--timings", timings] + SMALL)
        img = read_png(png)
        self.assertEqual(img.shape, (20, 24, 3))
        self.assertGreater(img.max(), 0, "the image is not black")
        self.assertEqual(exr_data_window(exr), (24, 20))
        with open(timings) as fh:
            report = json.load(fh)
        self.assertIn("vpls_direct", json.dumps(report))
        self.assertFalse(os.path.exists(png + ".partial"))

    def test_same_exr_for_one_and_two_ranks_with_each_acceleration(self):
        for extra in ([], ["--interleave"], ["--indirect-scale", "2"], ["--imperfect-visibility"]):
            data = {}
            for ranks in (1, 2):
                exr = self.path("v_%d.exr" % ranks)
                self.rad_ok(["vpl", "--input", CORNELL_BOX, "--exr", exr] + SMALL + extra, ranks=ranks)
                with open(exr, "rb") as fh:
                    data[ranks] = fh.read()
            self.assertTrue(data[1] == data[2], "EXR at 2 ranks differs from 1 rank with %s" % extra)

    def test_agrees_with_the_path_tracer_on_the_same_light_paths(self):
        """VPL with B bounces carries light of up to B + 1 reflections, as the path tracer does with
        --max-depth B + 1, so the two differ only by the clamp of the geometry term (light missing in inside
        corners, within about 2 dmin of them) and Monte Carlo noise. On the Cornell box (64 x 64, 4 jittered VPL
        images, 512 paths per pixel): the mean radiance over the pixels that do not see the light agrees within
        3 %, and the median relative difference of 8 x 8-pixel blocks is under 4 %."""
        import test_compare  # noqa: E402  (its EXR reader)
        import numpy as np
        size = ["--width", "64", "--height", "64", "--quiet"]
        vpl, path = self.path("vpl.exr"), self.path("path.exr")
        self.rad_ok(["vpl", "--input", CORNELL_BOX, "--exr", vpl, "--spp", "4", "--bounces", "3"] + size)
        self.rad_ok(["pathtrace", "--input", CORNELL_BOX, "--exr", path, "--spp", "512", "--max-depth", "4"] + size)

        def luminance(a):
            return 0.2126 * a[..., 0] + 0.7152 * a[..., 1] + 0.0722 * a[..., 2]
        yv, yp = luminance(test_compare.read_exr(vpl)), luminance(test_compare.read_exr(path))
        lit = yp < 2  # not the light itself (radiance about 12 there): its edge pixels are sampled differently
        ratio = yv[lit].mean() / yp[lit].mean()
        self.assertLess(abs(ratio - 1), 0.03, "VPL / path tracer mean radiance %.4f" % ratio)
        bv, bp = yv.reshape(8, 8, 8, 8).mean((1, 3)), yp.reshape(8, 8, 8, 8).mean((1, 3))
        blocks = bp < 2
        median = float(np.median(np.abs(bv[blocks] / bp[blocks] - 1)))
        self.assertLess(median, 0.04, "median block difference %.4f" % median)

    def test_bad_inputs_exit_2_with_one_line(self):
        cases = [
            (["--input", self.path("missing.obj"), "--output", self.path("a.png")], "missing.obj"),
            (["--input", CORNELL_BOX, "--output", self.path("a.png"), "--vpls", "0"], "--vpls"),
            (["--input", CORNELL_BOX, "--output", self.path("a.png"), "--clamp-distance", "-1"], "--clamp-distance"),
            (["--input", CORNELL_BOX, "--output", self.path("a.png"), "--interleave", "--indirect-scale", "2"],
             "--interleave"),
            (["--input", CORNELL_BOX], "--output"),
            (["--input", CORNELL_BOX, "--output", self.path("no_such_dir", "a.png")], "no_such_dir"),
            (["--input", os.path.join(test_cli.BAD_MESHES, "index_out_of_range.obj"),
              "--output", self.path("a.png")], "index_out_of_range.obj"),
        ]
        for args, mention in cases:
            proc = run(["vpl"] + args + ["--width", "8", "--height", "8", "--quiet"], ranks=2)
            self.assertEqual(proc.returncode, 2, describe(proc))
            lines = program_stderr_lines(proc.stderr)
            self.assertTrue(lines, describe(proc))
            self.assertIn(mention, proc.stderr, describe(proc))
            self.assertFalse(os.path.exists(self.path("a.png")), "no output after an error")


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__))
