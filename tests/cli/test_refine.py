#!/usr/bin/env python3
"""Adaptive refinement where B varies (`run --refine`), against answers this test computes itself.

The scene: a floor 2 x 2 lit by a square light above it, with a black square plate between them that casts a
shadow with a sharp penumbra. The light and the plate reflect nothing and the floor sees nothing else that
shines, so the floor's radiosity at a point is rho E F(x), F the point's form factor to the part of the light
the plate leaves visible, which is the light less the plate's projection from x (two axis-aligned rectangles
in the light's plane): closed form. Checked:
  - each floor patch's B is the mean of that closed form over the patch (the test's reference checked too);
  - refined from a coarse split, B is as close to the closed form (L2 over the floor) as the uniform split of
    its finest patches, with under half of their patches, and much closer than the uniform split of as many
    patches;
  - 1 and 2 ranks (and 1 or 2 threads) give the same patches and B to the bit;
  - a white furnace (every patch emits and reflects alike, B the same everywhere) splits nothing;
  - --refine-min-size stops the splits at that size, and says how many it stopped;
  - a pass too large for the memory stops the job before it computes anything, with exit 2 and one line;
  - the files say how the patches were made (radiosity.h5 attributes, summary.txt, timings.json).

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_SOURCE_DIR).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_refine.py [-v]
"""

import json
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402
from test_cli import CliTestCase, describe, program_stderr_lines, run  # noqa: E402

RHO, EMISSION = 0.5, 10.0
LIGHT, LIGHT_Y = 0.5, 2.0       # the light: [-0.5, 0.5]^2 at y = 2, facing down
PLATE, PLATE_Y = 0.3, 0.25      # the plate: [-0.3, 0.3]^2 at y = 0.25

SCENE_OBJ = """mtllib shadow.mtl
v -1 0 -1
v -1 0 1
v 1 0 1
v 1 0 -1
v -{l} {ly} -{l}
v {l} {ly} -{l}
v {l} {ly} {l}
v -{l} {ly} {l}
v -{p} {py} -{p}
v {p} {py} -{p}
v {p} {py} {p}
v -{p} {py} {p}
usemtl floor
f 1 2 3 4
usemtl light
f 5 6 7 8
usemtl plate
f 9 10 11 12
""".format(l=LIGHT, ly=LIGHT_Y, p=PLATE, py=PLATE_Y)
SCENE_MTL = """newmtl floor
Kd {r} {r} {r}
newmtl light
Kd 0 0 0
Ke {e} {e} {e}
newmtl plate
Kd 0 0 0
""".format(r=RHO, e=EMISSION)


def corner_form_factor(u, v, h):
    """Point to the rectangle [0, u] x [0, v] in a parallel plane h above it, signed by u and v."""
    x, y = np.abs(u) / h, np.abs(v) / h
    sx, sy = np.sqrt(1 + x * x), np.sqrt(1 + y * y)
    f = (x / sx * np.arctan(y / sx) + y / sy * np.arctan(x / sy)) / (2 * np.pi)
    return np.sign(u) * np.sign(v) * f


def rectangle_form_factor(px, pz, x0, x1, z0, z1, h):
    """Point (px, 0, pz), facing up, to [x0, x1] x [z0, z1] at height h facing down (0 where empty)."""
    g = lambda a, b: corner_form_factor(a - px, b - pz, h)  # noqa: E731
    f = g(x1, z1) - g(x0, z1) - g(x1, z0) + g(x0, z0)
    return np.where((x1 > x0) & (z1 > z0), f, 0.0)


def exact_floor_radiosity(px, pz):
    """rho E times the form factor to the part of the light the plate does not hide."""
    whole = rectangle_form_factor(px, pz, -LIGHT, LIGHT, -LIGHT, LIGHT, LIGHT_Y)
    # The plate seen from the point, projected onto the light's plane: q -> p + (q - p) LIGHT_Y / PLATE_Y.
    s = LIGHT_Y / PLATE_Y
    lo_x, hi_x = px + (-PLATE - px) * s, px + (PLATE - px) * s
    lo_z, hi_z = pz + (-PLATE - pz) * s, pz + (PLATE - pz) * s
    hidden = rectangle_form_factor(px, pz, np.maximum(lo_x, -LIGHT), np.minimum(hi_x, LIGHT),
                                   np.maximum(lo_z, -LIGHT), np.minimum(hi_z, LIGHT), LIGHT_Y)
    return RHO * EMISSION * (whole - hidden)


def floor_patches(path):
    """The floor's patches as boxes (x0, x1, z0, z1) and their B (one channel: the scene is grey)."""
    with h5py.File(path, "r") as f:
        corners = f["patches/corners"][:]
        face = f["patches/face"][:]
        b = f["radiosity/B"][:, 0]
        attrs = dict(f.attrs)
    floor = face == 0
    c = corners[floor]
    boxes = np.stack([c[:, :, 0].min(1), c[:, :, 0].max(1), c[:, :, 2].min(1), c[:, :, 2].max(1)], axis=1)
    return boxes, b[floor], attrs


def grid(n):
    """n x n midpoints over the floor [-1, 1]^2."""
    t = -1 + (np.arange(n) + 0.5) * (2.0 / n)
    return np.meshgrid(t, t, indexing="ij")


def l2_error(boxes, b, n=400):
    """B held flat over each patch against the closed form, relative L2 over the floor."""
    px, pz = grid(n)
    px, pz = px.ravel(), pz.ravel()
    flat = np.full(px.shape, np.nan)
    for (x0, x1, z0, z1), value in zip(boxes, b):
        inside = (px >= x0) & (px < x1) & (pz >= z0) & (pz < z1)
        flat[inside] = value
    assert not np.isnan(flat).any(), "a point of the floor in no patch"
    exact = exact_floor_radiosity(px, pz)
    return float(np.sqrt(np.sum((flat - exact) ** 2) / np.sum(exact ** 2)))


def patch_means(boxes, m=24):
    """The closed form's mean over each patch, by an m x m midpoint rule."""
    t = (np.arange(m) + 0.5) / m
    out = np.empty(len(boxes))
    for k, (x0, x1, z0, z1) in enumerate(boxes):
        px, pz = np.meshgrid(x0 + t * (x1 - x0), z0 + t * (z1 - z0), indexing="ij")
        out[k] = exact_floor_radiosity(px, pz).mean()
    return out


class TestRefinement(CliTestCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.dir = tempfile.mkdtemp(prefix="radiosity_refine_")
        cls.scene = os.path.join(cls.dir, "shadow.obj")
        with open(cls.scene, "w") as fh:
            fh.write(SCENE_OBJ)
        with open(os.path.join(cls.dir, "shadow.mtl"), "w") as fh:
            fh.write(SCENE_MTL)
        cls.runs = {}

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.dir, True)

    def job(self, name, size, extra=(), ranks=None):
        """`run` on the shadow scene, once per name; returns (output folder, stderr)."""
        if name not in self.runs:
            out = os.path.join(self.dir, name)
            proc = run(["run", "--input", self.scene, "--max-patch-size", str(size), "--output-dir", out,
                        "--width", "32", "--height", "32"] + list(extra), ranks)
            self.assertEqual(proc.returncode, 0, "run failed:" + describe(proc))
            self.runs[name] = (out, proc.stderr)
        return self.runs[name]

    def test_patches_hold_the_closed_forms_mean(self):
        # The reference and the program agree patch by patch, uniform and refined: the closed form is right.
        for name, size, extra in (("uniform_fine", 0.0625, ()), ("refined", 0.25, ("--refine", "2"))):
            boxes, b, _ = floor_patches(os.path.join(self.job(name, size, extra)[0], "radiosity.h5"))
            means = patch_means(boxes)
            scale = exact_floor_radiosity(np.array([0.9]), np.array([0.9]))[0]
            self.assertLess(np.max(np.abs(b - means)), 2e-3 * scale, name)

    def test_refined_is_as_close_as_its_finest_uniform_split_with_fewer_patches(self):
        errors, counts = {}, {}
        for name, size, extra in (("uniform_coarse", 0.25, ()), ("uniform_mid", 0.125, ()),
                                  ("uniform_fine", 0.0625, ()), ("refined", 0.25, ("--refine", "2"))):
            boxes, b, _ = floor_patches(os.path.join(self.job(name, size, extra)[0], "radiosity.h5"))
            errors[name], counts[name] = l2_error(boxes, b), len(b)
        report = ", ".join("%s %d patches %.4f" % (k, counts[k], errors[k]) for k in errors)
        print("\n  L2 error of B over the floor: " + report, file=sys.stderr)
        self.assertEqual(counts["uniform_fine"], 1024, report)
        # Twice split from 0.25: its finest patches are the fine split's.
        self.assertLess(counts["refined"], 0.5 * counts["uniform_fine"], report)
        self.assertLess(errors["refined"], 1.15 * errors["uniform_fine"], report)
        # Against the uniform split with at least as many patches, far closer.
        self.assertGreaterEqual(counts["refined"], counts["uniform_mid"], report)
        self.assertLess(errors["refined"], 0.75 * errors["uniform_mid"], report)
        self.assertLess(errors["uniform_fine"], errors["uniform_mid"], report)

    def test_ranks_and_threads_do_not_show(self):
        one = self.job("refined", 0.25, ("--refine", "2"))[0]
        two = self.job("refined_2_ranks", 0.25, ("--refine", "2", "--threads", "1"), ranks=2)[0]
        with h5py.File(os.path.join(one, "radiosity.h5"), "r") as a, \
                h5py.File(os.path.join(two, "radiosity.h5"), "r") as b:
            self.assertTrue(np.array_equal(a["patches/corners"][:], b["patches/corners"][:]))
            self.assertTrue(np.array_equal(a["radiosity/B"][:], b["radiosity/B"][:]))

    def test_the_files_say_how_the_patches_were_made(self):
        out, stderr = self.job("refined", 0.25, ("--refine", "2"))
        _, b, attrs = floor_patches(os.path.join(out, "radiosity.h5"))
        self.assertEqual(float(attrs["refine_passes"]), 2)
        self.assertAlmostEqual(float(attrs["refine_contrast"]), 0.2)
        self.assertIn("refinement pass 2 of 2", stderr)
        with open(os.path.join(out, "summary.txt")) as fh:
            summary = fh.read()
        self.assertIn("refined twice where B varies", summary)
        self.assertRegex(summary, r"refinement: 89 -> \d+ -> \d+ patches")
        with open(os.path.join(out, "timings.json")) as fh:
            timings = json.load(fh)
        self.assertIn("refinement", json.dumps(timings))

    def test_minimum_size_stops_the_splits(self):
        out, stderr = self.job("refined_min", 0.25, ("--refine", "3", "--refine-min-size", "0.1"))
        boxes, _, _ = floor_patches(os.path.join(out, "radiosity.h5"))
        edges = np.minimum(boxes[:, 1] - boxes[:, 0], boxes[:, 3] - boxes[:, 2])
        self.assertAlmostEqual(float(edges.min()), 0.125, places=12)
        self.assertRegex(stderr, r"refinement pass 2 of 3: .* \d+ more at --refine-min-size")
        # Pass 2 could split nothing: the run stops there, with pass 1's patches.
        self.assertNotIn("refinement pass 3", stderr)

    def test_a_pass_too_large_for_the_memory_stops_with_nothing_written(self):
        # Dense F of the third pass's patches (845) is over the limit; the passes before fit. The check before
        # that pass stops the job with exit 2 and one line giving the count, not a --subdiv or --patches that
        # would not set it.
        out = self.path("tight")
        proc = run(["run", "--input", self.scene, "--max-patch-size", "0.25", "--refine", "3", "--operator", "dense",
                    "--memory-limit", "3M", "--output-dir", out], cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertIn("refinement pass 3 of 3", proc.stderr)
        error = [line for line in program_stderr_lines(proc.stderr) if "error" in line]
        self.assertEqual(len(error), 1, proc.stderr)
        self.assertIn("845 patches", error[0])
        self.assertNotIn("--subdiv", error[0])
        self.assertNotIn("--patches", error[0])
        self.assertFalse(os.path.exists(out), "nothing is written")

    def test_a_white_furnace_splits_nothing(self):
        # meshes/tests/furnace_cube.obj: a closed cube whose walls all emit 1 and reflect 0.5: B = 2 everywhere.
        cube = os.path.join(test_cli.TEST_MESHES, "furnace_cube.obj")
        proc = run(["run", "--input", cube, "--subdiv", "2", "--refine", "2", "--refine-contrast", "1e-4",
                    "--output-dir", self.path("furnace"), "--width", "16", "--height", "16"], cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertIn("refinement pass 1 of 2: 0 of 96 patches split", proc.stderr)
        with h5py.File(self.path("furnace", "radiosity.h5"), "r") as f:
            b = f["radiosity/B"][:]
        self.assertEqual(len(b), 96)
        self.assertLess(np.max(np.abs(b - 2.0)), 1e-5)


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__))
