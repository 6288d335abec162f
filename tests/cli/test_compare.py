#!/usr/bin/env python3
"""End-to-end tests of `radiosity compare`: image metrics and patch-level comparison of radiosity files.

Every number the command prints in --json is checked against an independent implementation written here with
numpy: MSE, RMSE, PSNR, and SSIM as Wang, Bovik, Sheikh and Simoncelli (2004) define it (normalised
11x11 Gaussian window with sigma 1.5 built as a 2-D array, K1 = 0.01, K2 = 0.03, 'valid' convolution with
numpy's sliding windows rather than the program's separable passes, mean of the SSIM map), on luminance
Y = 0.2126 R + 0.7152 G + 0.0722 B. Images come from `radiosity render` (PNG and EXR; the EXR files are
decoded by a small reader below) and from a tiny PNG writer; radiosity files from `radiosity solve` at two
tolerances, perturbed with h5py.

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_MPIEXEC_FLAGS, RAD_SOURCE_DIR).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_compare.py [-v] [unittest options]
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
from test_cli import describe, program_stderr_lines, run  # noqa: E402
from test_pipeline import read_png  # noqa: E402

CORNELL_BOX = os.path.join(test_cli.MESHES, "cornell_box.obj")
TOLERANCE = 1e-6  # relative agreement asked of every metric


# --- independent metrics ------------------------------------------------------------------------------------

def luminance(rgb):
    return 0.2126 * rgb[..., 0] + 0.7152 * rgb[..., 1] + 0.0722 * rgb[..., 2]


def gaussian_window(size=11, sigma=1.5):
    """The 2-D Gaussian window normalised to sum 1, built directly in two dimensions."""
    k = np.arange(size) - (size - 1) / 2.0
    xx, yy = np.meshgrid(k, k)
    w = np.exp(-(xx ** 2 + yy ** 2) / (2 * sigma ** 2))
    return w / w.sum()


def ssim(x, y, L):
    """Mean SSIM of two luminance images (Wang et al. 2004), over the 'valid' window positions."""
    w = gaussian_window()

    def filt(img):  # 'valid' 2-D correlation: the weighted sum of every 11x11 block inside the image
        return np.einsum("ijkl,kl->ij", np.lib.stride_tricks.sliding_window_view(img, w.shape), w)

    mu_x, mu_y = filt(x), filt(y)
    s_xx = filt(x * x) - mu_x ** 2
    s_yy = filt(y * y) - mu_y ** 2
    s_xy = filt(x * y) - mu_x * mu_y
    c1, c2 = (0.01 * L) ** 2, (0.03 * L) ** 2
    m = ((2 * mu_x * mu_y + c1) * (2 * s_xy + c2)) / ((mu_x ** 2 + mu_y ** 2 + c1) * (s_xx + s_yy + c2))
    return float(m.mean()), m.shape


def metrics(a, b, L):
    """MSE, RMSE, PSNR and SSIM of two float64 RGB images [H, W, 3]."""
    mse = float(np.mean((a - b) ** 2))
    psnr = 10 * np.log10(L * L / mse) if mse > 0 else None
    s, shape = ssim(luminance(a), luminance(b), L)
    return {"mse": mse, "rmse": np.sqrt(mse), "psnr_db": psnr, "ssim": s, "ssim_windows": [shape[1], shape[0]]}


def srgb_encode(linear, exposure=0.0):
    """What `render` writes to an 8-bit PNG, as values in [0,1]: scale, clamp, sRGB curve, round."""
    v = np.clip(linear.astype(np.float64) * 2.0 ** exposure, 0.0, 1.0)
    s = np.where(v <= 0.0031308, 12.92 * v, 1.055 * np.power(v, 1 / 2.4) - 0.055)
    return np.floor(s * 255 + 0.5) / 255.0


# --- image files --------------------------------------------------------------------------------------------

def write_png(path, rgb):
    """A tiny 8-bit RGB PNG writer (no filtering): rgb is a uint8 array [H, W, 3]."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\0" + rgb[y].astype(np.uint8).tobytes() for y in range(h))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff)

    with open(path, "wb") as fh:
        fh.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                 + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def read_exr(path):
    """Decode a scanline OpenEXR file of float32 channels R, G, B without compression, ZIPS or ZIP (what
    tinyexr writes): returns float32 [H, W, 3]."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:4] != b"\x76\x2f\x31\x01":
        raise ValueError("%s: not an OpenEXR file" % path)
    if struct.unpack("<I", data[4:8])[0] & 0x200:
        raise ValueError("%s: tiled EXR files are not supported by this reader" % path)
    pos, attrs = 8, {}
    while data[pos] != 0:
        end = data.index(b"\0", pos)
        tend = data.index(b"\0", end + 1)
        size = struct.unpack("<i", data[tend + 1:tend + 5])[0]
        attrs[data[pos:end].decode()] = data[tend + 5:tend + 5 + size]
        pos = tend + 5 + size
    pos += 1
    channels, cl = [], attrs["channels"]
    while cl[0] != 0:
        end = cl.index(b"\0")
        pixel_type = struct.unpack("<i", cl[end + 1:end + 5])[0]
        if pixel_type != 2:
            raise ValueError("%s: channel %r is not float32" % (path, cl[:end]))
        channels.append(cl[:end].decode())
        cl = cl[end + 17:]
    compression = attrs["compression"][0]
    lines_per_block = {0: 1, 2: 1, 3: 16}[compression]
    xmin, ymin, xmax, ymax = struct.unpack("<4i", attrs["dataWindow"])
    w, h = xmax - xmin + 1, ymax - ymin + 1
    blocks = (h + lines_per_block - 1) // lines_per_block
    offsets = struct.unpack("<%dQ" % blocks, data[pos:pos + 8 * blocks])
    planes = np.zeros((len(channels), h, w), dtype=np.float32)
    for off in offsets:
        y, size = struct.unpack("<ii", data[off:off + 8])
        body = data[off + 8:off + 8 + size]
        lines = min(lines_per_block, ymax + 1 - y)
        raw_size = lines * len(channels) * w * 4
        if compression != 0 and size < raw_size:
            t = np.frombuffer(zlib.decompress(body), dtype=np.uint8).astype(np.int64)
            t[1:] -= 128                       # undo the byte predictor ...
            d = (np.cumsum(t) % 256).astype(np.uint8)
            body = np.empty_like(d)            # ... and the split into even and odd bytes
            half = (len(d) + 1) // 2
            body[0::2], body[1::2] = d[:half], d[half:]
            body = body.tobytes()
        values = np.frombuffer(body, dtype="<f4").reshape(lines, len(channels), w)
        planes[:, y - ymin:y - ymin + lines, :] = values.transpose(1, 0, 2)
    return np.stack([planes[channels.index(c)] for c in "RGB"], axis=-1)


def png_values(path):
    return read_png(path).astype(np.float64) / 255.0


# --- tests --------------------------------------------------------------------------------------------------

class Fixture:
    """One set of files for all the tests (form factors, two solves, a perturbed copy, renders), made once."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="radiosity_compare_")
        p = self.path
        ff = p("ff.h5")
        self.ok(["formfactors", "--input", CORNELL_BOX, "--subdiv", "1", "--shadow-rays", "8", "--output", ff,
                 "--quiet"])
        self.rad_hi, self.rad_lo = p("rad_hi.h5"), p("rad_lo.h5")
        self.ok(["solve", "--formfactors", ff, "--output", self.rad_hi, "--tolerance", "1e-10", "--quiet"])
        self.ok(["solve", "--formfactors", ff, "--output", self.rad_lo, "--tolerance", "1e-2", "--quiet"])
        # A solution with a structured error: every patch scaled by its own factor, a few much more.
        self.rad_pert = p("rad_pert.h5")
        shutil.copy(self.rad_hi, self.rad_pert)
        with h5py.File(self.rad_pert, "r+") as f:
            B = f["radiosity/B"]
            n = B.shape[0]
            scale = 1 + 0.2 * np.sin(np.arange(n) * 1.7)
            scale[5::11] = 1.8
            B[...] = B[...] * scale[:, None]
        self.pngs, self.exrs = {}, {}
        for name, rad in (("hi", self.rad_hi), ("pert", self.rad_pert)):
            self.pngs[name], self.exrs[name] = p(name + ".png"), p(name + ".exr")
            self.ok(["render", "--radiosity", rad, "--output", self.pngs[name], "--exr", self.exrs[name],
                     "--width", "64", "--height", "48", "--spp", "4", "--quiet"])
        self.pngs["small"] = p("small.png")
        self.ok(["render", "--radiosity", self.rad_hi, "--output", self.pngs["small"], "--width", "48",
                 "--height", "48", "--spp", "1", "--quiet"])

    def path(self, name):
        return os.path.join(self.tmp, name)

    def ok(self, args, ranks=None):
        proc = run(args, ranks, cwd=self.tmp)
        if proc.returncode != 0:
            raise AssertionError("command failed:" + describe(proc))
        return proc


FIXTURE = None


def setUpModule():
    global FIXTURE
    FIXTURE = Fixture()


def tearDownModule():
    if FIXTURE is not None:
        shutil.rmtree(FIXTURE.tmp, True)


class CompareTestCase(unittest.TestCase):
    def setUp(self):
        f = FIXTURE
        self.tmp, self.rad_hi, self.rad_lo, self.rad_pert = f.tmp, f.rad_hi, f.rad_lo, f.rad_pert
        self.pngs, self.exrs, self.path, self.ok = f.pngs, f.exrs, f.path, f.ok

    def compare_json(self, a, b, extra=(), ranks=None):
        proc = self.ok(["compare", a, b, "--json", "-"] + list(extra), ranks)
        try:
            return json.loads(proc.stdout)
        except ValueError:
            self.fail("--json - must print one JSON document on stdout:" + describe(proc))

    def assert_close(self, got, expected, what, tolerance=TOLERANCE):
        if expected is None:
            self.assertIsNone(got, what)
            return
        self.assertIsNotNone(got, what)
        self.assertLessEqual(abs(got - expected), tolerance * max(abs(expected), 1e-300),
                             "%s: radiosity says %.12g, numpy %.12g" % (what, got, expected))

    def assert_metrics(self, out, a, b, L):
        expected = metrics(a, b, L)
        self.assertEqual((out["height"], out["width"]), a.shape[:2])
        self.assert_close(out["dynamic_range"], L, "L")
        for key in ("mse", "rmse", "psnr_db", "ssim"):
            self.assert_close(out[key], expected[key], key)
        self.assertEqual(out["ssim_windows"], expected["ssim_windows"])
        return expected

    def expect_input_error(self, args, names, ranks=None):
        proc = run(args, ranks, cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, "expected exit code 2:" + describe(proc))
        lines = program_stderr_lines(proc.stderr)
        self.assertEqual(len(lines), 1, "expected one error line:" + describe(proc))
        self.assertTrue(lines[0].startswith("radiosity: error:"), describe(proc))
        for name in names:
            self.assertIn(name, lines[0], describe(proc))
        return lines[0]


class TestImages(CompareTestCase):
    def test_png_pair_against_numpy(self):
        a, b = png_values(self.pngs["hi"]), png_values(self.pngs["pert"])
        out = self.compare_json(self.pngs["hi"], self.pngs["pert"])
        self.assertEqual(out["values"], "srgb")
        expected = self.assert_metrics(out, a, b, 1.0)
        self.assertGreater(expected["mse"], 1e-4, "the perturbed solution must look different")
        self.assertLess(expected["ssim"], 0.99)

    def test_exr_pair_against_numpy(self):
        a, b = read_exr(self.exrs["hi"]).astype(np.float64), read_exr(self.exrs["pert"]).astype(np.float64)
        self.assertEqual(a.shape, (48, 64, 3))
        out = self.compare_json(self.exrs["hi"], self.exrs["pert"])
        self.assertEqual(out["values"], "linear")
        L = float(luminance(a).max())  # the documented rule: max luminance of the reference A
        self.assertIn("max luminance", out["dynamic_range_rule"])
        self.assert_metrics(out, a, b, L)
        # --range overrides L, and L changes SSIM and PSNR.
        forced = self.compare_json(self.exrs["hi"], self.exrs["pert"], ["--range", "3"])
        self.assert_metrics(forced, a, b, 3.0)
        self.assertNotAlmostEqual(forced["ssim"], out["ssim"], places=9)

    def test_png_against_exr_encodes_the_exr(self):
        a = png_values(self.pngs["hi"])
        linear = read_exr(self.exrs["pert"])
        for exposure in (0.0, 1.0):
            with self.subTest(exposure=exposure):
                out = self.compare_json(self.pngs["hi"], self.exrs["pert"], ["--exposure", str(exposure)])
                self.assertEqual(out["values"], "srgb")
                self.assertEqual(out["exposure"], exposure)
                self.assert_metrics(out, a, srgb_encode(linear, exposure), 1.0)
        # The PNG and the EXR of one render hold the same picture: at the render's exposure, no difference.
        same = self.compare_json(self.exrs["hi"], self.pngs["hi"])
        self.assertEqual(same["mse"], 0.0)
        self.assertEqual(same["ssim"], 1.0)

    def test_identical_images(self):
        for image in (self.pngs["hi"], self.exrs["hi"]):
            with self.subTest(image=os.path.basename(image)):
                out = self.compare_json(image, image)
                self.assertEqual(out["mse"], 0.0)
                self.assertEqual(out["ssim"], 1.0)
                self.assertIsNone(out["psnr_db"], "identical images: PSNR is infinite, written as null")

    def test_synthetic_pngs_against_numpy(self):
        rng = np.random.default_rng(5)
        noise_a = rng.integers(0, 256, size=(30, 40, 3), dtype=np.uint8)
        noise_b = np.clip(noise_a.astype(int) + rng.integers(-40, 41, size=noise_a.shape), 0, 255).astype(np.uint8)
        flat = np.full((30, 40, 3), 100, dtype=np.uint8)
        pairs = {"noise": (noise_a, noise_b), "offset": (flat, flat + 10)}
        for name, (a8, b8) in sorted(pairs.items()):
            with self.subTest(pair=name):
                pa, pb = self.path(name + "_a.png"), self.path(name + "_b.png")
                write_png(pa, a8)
                write_png(pb, b8)
                out = self.compare_json(pa, pb)
                self.assert_metrics(out, a8 / 255.0, b8 / 255.0, 1.0)
        # The constant offset by hand: MSE (10/255)^2, PSNR 20 log10(25.5), SSIM the luminance term alone.
        out = self.compare_json(self.path("offset_a.png"), self.path("offset_b.png"))
        self.assert_close(out["mse"], (10 / 255.0) ** 2, "mse of a constant offset")
        self.assert_close(out["psnr_db"], 20 * np.log10(25.5), "psnr of a constant offset")
        x, y, c1 = 100 / 255.0, 110 / 255.0, 1e-4
        self.assert_close(out["ssim"], (2 * x * y + c1) / (x * x + y * y + c1), "ssim of a constant offset")

    def test_heatmap(self):
        a8 = np.full((16, 24, 3), 50, dtype=np.uint8)
        b8 = a8.copy()
        b8[3, 7] = (250, 50, 50)   # the largest difference
        b8[10, 2] = (150, 50, 50)  # half of it in R
        pa, pb, heat = self.path("heat_a.png"), self.path("heat_b.png"), self.path("heat.png")
        write_png(pa, a8)
        write_png(pb, b8)
        proc = self.ok(["compare", pa, pb, "--heatmap", heat])
        self.assertIn("heat map", proc.stdout)
        img = read_png(heat)
        self.assertEqual(img.shape, (16, 24, 3))
        purple, yellow = (68, 1, 84), (253, 231, 37)  # viridis at 0 and at 1
        self.assertTrue(np.all(np.abs(img[0, 0].astype(int) - purple) <= 1), img[0, 0])
        self.assertTrue(np.all(np.abs(img[3, 7].astype(int) - yellow) <= 1), img[3, 7])
        self.assertTrue(np.all(np.abs(img[10, 2].astype(int) - (33, 145, 140)) <= 2), img[10, 2])  # viridis 0.5
        self.assertEqual(int((np.abs(img.astype(int) - purple).max(axis=2) > 1).sum()), 2, "two pixels differ")
        out = self.compare_json(pa, pb, ["--heatmap", heat])
        self.assert_close(out["heatmap"]["scale_max"], 0.2126 * 200 / 255, "heat-map scale")
        self.assert_close(out["max_luminance_difference"], 0.2126 * 200 / 255, "max difference")

    def test_text_and_json_file(self):
        js = self.path("metrics.json")
        proc = self.ok(["compare", self.exrs["hi"], self.exrs["pert"], "--json", js])
        for word in ("MSE:", "RMSE:", "PSNR:", "SSIM:", "dynamic range L:", "max luminance of the reference A"):
            self.assertIn(word, proc.stdout)
        with open(js) as fh:
            written = json.load(fh)
        self.assertEqual(written, self.compare_json(self.exrs["hi"], self.exrs["pert"]))

    def test_under_mpirun_rank_zero_reports_once(self):
        alone = self.compare_json(self.pngs["hi"], self.pngs["pert"])
        self.assertEqual(self.compare_json(self.pngs["hi"], self.pngs["pert"], ranks=2), alone)
        self.expect_input_error(["compare", self.pngs["hi"], self.pngs["small"]], ["small.png"], ranks=2)

    def test_input_errors(self):
        text = self.path("notes.txt")
        with open(text, "w") as fh:
            fh.write("not an image\n")
        line = self.expect_input_error(["compare", self.pngs["hi"], self.pngs["small"]], ["small.png", "hi.png"])
        self.assertIn("same size", line)
        self.expect_input_error(["compare", self.exrs["hi"], self.pngs["small"]], ["small.png"])
        self.expect_input_error(["compare", self.path("missing.png"), self.pngs["hi"]], ["missing.png"])
        self.expect_input_error(["compare", self.pngs["hi"], self.path("missing.exr")], ["missing.exr"])
        self.expect_input_error(["compare", self.pngs["hi"], text], ["notes.txt"])
        self.expect_input_error(["compare", self.pngs["hi"], self.rad_hi], ["rad_hi.h5"])
        self.expect_input_error(["compare", self.pngs["hi"], self.pngs["pert"], "--range", "2"], ["--range"])
        missing_dir = os.path.join(self.tmp, "no_such_dir", "heat.png")
        self.expect_input_error(["compare", self.pngs["hi"], self.pngs["pert"], "--heatmap", missing_dir],
                                ["no_such_dir"])


class TestPatches(CompareTestCase):
    def expected(self, a_path, b_path):
        with h5py.File(a_path, "r") as f:
            A = f["radiosity/B"][...]
        with h5py.File(b_path, "r") as f:
            B = f["radiosity/B"][...]
        diff = np.abs(A - B)
        rel = np.where(A != 0, diff / np.where(A != 0, np.abs(A), 1), 0)
        return {"patches": A.shape[0],
                "relative_rmse": np.sqrt(np.mean(diff ** 2)) / np.sqrt(np.mean(A ** 2)),
                "max_abs_difference": diff.max(), "max_abs_patch": int(np.argmax(diff) // 3),
                "max_relative_difference": rel.max(), "max_relative_patch": int(np.argmax(rel) // 3)}

    def check(self, a_path, b_path):
        out = self.compare_json(a_path, b_path)
        e = self.expected(a_path, b_path)
        self.assertEqual(out["kind"], "patches")
        self.assertEqual(out["patches"], e["patches"])
        for key in ("relative_rmse", "max_abs_difference", "max_relative_difference"):
            self.assert_close(out[key], e[key], key)
        self.assertEqual(out["max_abs_patch"]["index"], e["max_abs_patch"])
        self.assertEqual(out["max_relative_patch"]["index"], e["max_relative_patch"])
        return out, e

    def test_two_tolerances_and_a_perturbed_solution(self):
        out, e = self.check(self.rad_hi, self.rad_lo)
        self.assertGreater(e["relative_rmse"], 0, "the loose solve must differ from the tight one")
        out, e = self.check(self.rad_hi, self.rad_pert)
        self.assertAlmostEqual(e["max_relative_difference"], 0.8, places=12)  # the patches scaled by 1.8
        proc = self.ok(["compare", self.rad_hi, self.rad_pert])
        self.assertIn("relative RMSE of B", proc.stdout)
        same = self.compare_json(self.rad_hi, self.rad_hi)
        self.assertEqual(same["relative_rmse"], 0.0)
        self.assertIsNone(same["max_abs_patch"])

    def test_different_patches_are_refused(self):
        moved = self.path("moved.h5")
        shutil.copy(self.rad_pert, moved)
        with h5py.File(moved, "r+") as f:
            f["patches/centroid"][3, 1] += 0.01
        line = self.expect_input_error(["compare", self.rad_hi, moved], ["moved.h5"])
        self.assertIn("centroid", line)
        coarse_ff, coarse = self.path("coarse_ff.h5"), self.path("coarse.h5")
        self.ok(["formfactors", "--input", CORNELL_BOX, "--subdiv", "0", "--shadow-rays", "4", "--output",
                 coarse_ff, "--quiet"])
        self.ok(["solve", "--formfactors", coarse_ff, "--output", coarse, "--quiet"])
        line = self.expect_input_error(["compare", self.rad_hi, coarse], ["coarse.h5"])
        self.assertIn("patches", line)
        # A form-factor file has no /radiosity/B.
        self.expect_input_error(["compare", self.rad_hi, coarse_ff], ["coarse_ff.h5"])
        self.expect_input_error(["compare", self.rad_hi, self.rad_lo, "--heatmap", self.path("h.png")], ["--heatmap"])


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__, mpi=False))
