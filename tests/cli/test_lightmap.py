#!/usr/bin/env python3
"""Lightmap texels as patches (`run --texel-size`, `--lightmap-resolution`) and the baked files they give.

Checked, against answers this test computes itself:
  - a white furnace made of texels: a closed regular tetrahedron whose walls all emit 1 and reflect 0.5 has
    B = 1 / (1 - 0.5) = 2 everywhere, so every texel patch (whole squares, and the parts the triangles' edges
    cut, some of them fans of several patches) must hold 2, and every texel of the PNG the sRGB code of 2
    after the exposure, gutters included (dilated for display);
  - each patch's texel (/lightmap/texel) lies in its page, and the patches of a texel lie within it;
  - the glTF scene (scene.glb), read by a reader written here: its two UV sets, the unlit material on UV set
    1, the embedded page equal to lightmap_0.png, its triangles covering the scene's area (also as Assimp
    reads the file), and every triangle's lightmap UV landing on a texel whose patches lie where the triangle is;
  - images drawn from the lightmap (--shading lightmap, in `run` and `render`): inside the furnace every pixel
    is the sRGB code of 2, and `render` draws the same bytes from radiosity.h5;
  - --lightmap-resolution alone fills one page;
  - 1 and 2 ranks give the same patches, B and lightmap bytes (Jacobi);
  - bad input (a polygon that is not planar, charts that cannot fit a page, --refine with texels) exits 2
    with one line and writes nothing;
  - hemicube rows (--method hemicube): a white furnace cube's rows sum to 1 to rounding and B is 2, and the
    rows are the same bits for 1, 2 and 4 ranks; gathering without rows (--hemicube-mode gather) gives the
    rows' B, the same bits on 1 and 2 ranks; bad hemicube options exit 2.

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_SOURCE_DIR).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_lightmap.py [-v]
"""

import json
import os
import struct
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402
from test_cli import CliTestCase, describe, program_stderr_lines, run  # noqa: E402

# The furnace's texels: quadrature tolerance 1e-7, so that every row of F sums to 1 within 1e-7 and B is 2 to 1e-6
# (at the default 1e-5, rows within 3e-5 and B within 4e-5).
TEXELS = ["--texel-size", "0.3", "--lightmap-resolution", "64", "--quadrature-tolerance", "1e-7"]
CORNERS = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], float)  # a regular tetrahedron


def tetrahedron_obj():
    """The tetrahedron's four faces, wound to face its centre (the origin)."""
    lines = ["mtllib furnace.mtl"] + ["v %g %g %g" % tuple(c) for c in CORNERS] + ["usemtl furnace"]
    for face in ((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)):
        a, b, c = (CORNERS[k] for k in face)
        if np.dot(np.cross(b - a, c - a), (a + b + c) / 3) > 0:  # faces out: turn it round
            face = (face[0], face[2], face[1])
        lines.append("f %d %d %d" % tuple(k + 1 for k in face))
    return "\n".join(lines) + "\n", "newmtl furnace\nKd 0.5 0.5 0.5\nKe 1 1 1\n"


def srgb8(linear):
    v = min(max(linear, 0.0), 1.0)
    v = 12.92 * v if v <= 0.0031308 else 1.055 * v ** (1 / 2.4) - 0.055
    return int(round(v * 255))


def read_glb(path):
    """A binary glTF's JSON and binary chunk, and each accessor as a numpy array."""
    with open(path, "rb") as fh:
        data = fh.read()
    magic, version, length = struct.unpack_from("<III", data, 0)
    assert magic == 0x46546C67 and version == 2 and length == len(data), "not a glTF 2.0 binary"
    json_length, json_type = struct.unpack_from("<II", data, 12)
    assert json_type == 0x4E4F534A
    document = json.loads(data[20:20 + json_length].decode())
    bin_at = 20 + json_length
    bin_length, bin_type = struct.unpack_from("<II", data, bin_at)
    assert bin_type == 0x004E4942
    binary = data[bin_at + 8:bin_at + 8 + bin_length]

    def view(index):
        v = document["bufferViews"][index]
        return binary[v.get("byteOffset", 0):v.get("byteOffset", 0) + v["byteLength"]]

    def accessor(index):
        a = document["accessors"][index]
        assert a["componentType"] == 5126, "float accessors expected"
        width = {"VEC2": 2, "VEC3": 3}[a["type"]]
        return np.frombuffer(view(a["bufferView"]), dtype="<f4").reshape(a["count"], width)

    return document, view, accessor


class TestLightmap(CliTestCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.dir = tempfile.mkdtemp(prefix="radiosity_lightmap_")
        cls.scene = os.path.join(cls.dir, "furnace.obj")
        obj, mtl = tetrahedron_obj()
        with open(cls.scene, "w") as fh:
            fh.write(obj)
        with open(os.path.join(cls.dir, "furnace.mtl"), "w") as fh:
            fh.write(mtl)
        cls.runs = {}

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.dir, True)

    def job(self, name, extra, ranks=None):
        """`run` on the tetrahedron, once per name; returns its output folder."""
        if name not in self.runs:
            out = os.path.join(self.dir, name)
            proc = run(["run", "--input", self.scene, "--output-dir", out, "--width", "16", "--height", "16",
                        "--exposure", "-2", "--quiet"] + list(extra), ranks)
            self.assertEqual(proc.returncode, 0, "run failed:" + describe(proc))
            self.runs[name] = out
        return self.runs[name]

    def test_a_white_furnace_of_texels_is_uniform_in_B_and_in_the_lightmap(self):
        out = self.job("texels", TEXELS)
        with h5py.File(os.path.join(out, "radiosity.h5"), "r") as f:
            b = f["radiosity/B"][:]
            area = f["patches/area"][:]
            texel = f["lightmap/texel"][:]
            attrs = dict(f["lightmap"].attrs)
        self.assertEqual(int(attrs["resolution"]), 64)
        self.assertEqual(int(attrs["pages"]), 1)
        self.assertEqual(int(attrs["charts"]), 4)
        # The texels tile the walls: their areas add up to the tetrahedron's surface, 4 (sqrt(3)/4)(2 sqrt(2))^2.
        self.assertAlmostEqual(area.sum() / (8 * np.sqrt(3)), 1.0, delta=1e-12)
        # More patches than texels cover: where a triangle's corner cuts a texel into 5 or more corners, it is
        # held as a fan, and the patches of one texel share its (page, column, row).
        keys = {tuple(t) for t in texel}
        self.assertLess(len(keys), len(b), "no texel was held as several patches: the fans go untested")
        self.assertLess(np.max(np.abs(b - 2.0)), 1e-6)
        self.assertTrue(((texel[:, 1:] >= 0) & (texel[:, 1:] < 64)).all())
        # The PNG: each covered texel and its dilated gutter show sRGB(2 * 2^-2); nothing else is lit.
        import matplotlib.image
        png = np.round(matplotlib.image.imread(os.path.join(out, "lightmap_0.png"))[:, :, :3] * 255).astype(int)
        expected = srgb8(0.5)
        for _, column, row in keys:
            self.assertTrue((png[row, column] == expected).all(), (row, column, png[row, column]))
        lit = (png[:, :, 0] > 0)
        self.assertEqual(set(np.unique(png[lit])), {expected})
        covered = np.zeros((64, 64), bool)
        for _, column, row in keys:
            covered[row, column] = True
        # Dilation: every texel next to a covered one is lit too, for display (the gutters).
        grown = covered.copy()
        grown[1:, :] |= covered[:-1, :]
        grown[:-1, :] |= covered[1:, :]
        grown[:, 1:] |= covered[:, :-1]
        grown[:, :-1] |= covered[:, 1:]
        self.assertTrue(lit[grown].all())
        self.assertGreater(lit.sum(), covered.sum())

    def test_the_gltf_scene_holds_the_polygons_and_the_lightmap_on_a_second_uv_set(self):
        out = self.job("texels", TEXELS)
        document, view, accessor = read_glb(os.path.join(out, "scene.glb"))
        self.assertIn("KHR_materials_unlit", document["extensionsUsed"])
        with open(os.path.join(out, "lightmap_0.png"), "rb") as fh:
            self.assertEqual(bytes(view(document["images"][0]["bufferView"])), fh.read())
        with h5py.File(os.path.join(out, "radiosity.h5"), "r") as f:
            centroid = f["patches/centroid"][:]
            texel = f["lightmap/texel"][:]
            texel_size = float(f["lightmap"].attrs["texel_size"])
        at_texel = {}
        for k, t in enumerate(texel):
            at_texel.setdefault(tuple(t), []).append(k)
        total_area = 0.0
        for primitive in document["meshes"][0]["primitives"]:
            material = document["materials"][primitive["material"]]
            self.assertEqual(material["pbrMetallicRoughness"]["baseColorTexture"]["texCoord"], 1)
            self.assertIn("KHR_materials_unlit", material["extensions"])
            page = document["textures"][material["pbrMetallicRoughness"]["baseColorTexture"]["index"]]["source"]
            attributes = primitive["attributes"]
            self.assertIn("TEXCOORD_0", attributes)
            position = accessor(attributes["POSITION"]).astype(float).reshape(-1, 3, 3)
            uv = accessor(attributes["TEXCOORD_1"]).astype(float).reshape(-1, 3, 2)
            self.assertTrue(((uv >= 0) & (uv <= 1)).all())
            total_area += 0.5 * np.linalg.norm(np.cross(position[:, 1] - position[:, 0],
                                                        position[:, 2] - position[:, 0]), axis=1).sum()
            # Points of each triangle land, through UV set 1, on a texel holding the patches that lie there.
            for weights in ((1 / 3, 1 / 3, 1 / 3), (0.6, 0.2, 0.2), (0.2, 0.6, 0.2), (0.2, 0.2, 0.6)):
                w = np.array(weights)
                x = np.einsum("k,tkc->tc", w, position)
                pixel = np.floor(np.einsum("k,tkc->tc", w, uv) * 64).astype(int)
                for t in range(len(x)):
                    patches = at_texel.get((page, pixel[t, 0], pixel[t, 1]))
                    self.assertIsNotNone(patches, "a point of the scene maps to a texel without patches")
                    nearest = np.min(np.linalg.norm(centroid[patches] - x[t], axis=1))
                    self.assertLess(nearest, 1.5 * texel_size)
        self.assertAlmostEqual(total_area / (8 * np.sqrt(3)), 1.0, delta=1e-5)  # float32 positions
        # Assimp, another reader (through radiosity's own glTF input), takes the file as the same surface.
        again = self.path("again.h5")
        self.rad_ok(["formfactors", "--input", os.path.join(out, "scene.glb"), "--subdiv", "0", "--output", again,
                     "--quiet"])
        with h5py.File(again, "r") as f:
            self.assertAlmostEqual(f["patches/area"][:].sum() / (8 * np.sqrt(3)), 1.0, delta=1e-5)

    def test_images_drawn_from_the_lightmap(self):
        # From inside the furnace every pixel sees a wall's front, B = 2: drawn from the lightmap with bilinear
        # filtering, every pixel is sRGB(2 * 2^-2), gutters and all (a texel read off its chart would be dark).
        import matplotlib.image
        camera = ["--camera-position", "0", "0", "0", "--camera-target", "1", "1", "1", "--fov-y", "100"]
        out = self.job("drawn", TEXELS + ["--shading", "lightmap"] + camera)
        png = np.round(matplotlib.image.imread(os.path.join(out, "image.png"))[:, :, :3] * 255).astype(int)
        self.assertEqual(set(np.unique(png)), {srgb8(0.5)})
        # `render` draws the same image from radiosity.h5's lightmap.
        again = self.path("again.png")
        self.rad_ok(["render", "--radiosity", os.path.join(out, "radiosity.h5"), "--output", again, "--shading",
                     "lightmap", "--width", "16", "--height", "16", "--exposure", "-2"] + camera)
        with open(again, "rb") as a, open(os.path.join(out, "image.png"), "rb") as b:
            self.assertEqual(a.read(), b.read())
        # A file without a lightmap cannot be drawn so.
        plain = self.path("plain")
        self.rad_ok(["run", "--input", self.scene, "--subdiv", "1", "--output-dir", plain, "--width", "8",
                     "--height", "8", "--quiet"])
        proc = run(["render", "--radiosity", os.path.join(plain, "radiosity.h5"), "--output", self.path("no.png"),
                    "--shading", "lightmap"], cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertIn("/lightmap", proc.stderr)

    def test_lightmap_resolution_alone_fills_one_page(self):
        out = self.job("resolution", ["--lightmap-resolution", "32"])
        with h5py.File(os.path.join(out, "radiosity.h5"), "r") as f:
            attrs = dict(f["lightmap"].attrs)
        self.assertEqual(int(attrs["pages"]), 1)
        self.assertGreater(attrs["texels"], 32 * 32 / 4)
        self.assertLessEqual(attrs["texels"], 32 * 32)
        with open(os.path.join(out, "summary.txt")) as fh:
            self.assertIn("texel size %.6g" % attrs["texel_size"], fh.read())
        info = self.rad_ok(["info", os.path.join(out, "radiosity.h5")]).stdout
        self.assertIn("lightmap: 1 page(s) of 32 x 32 texels", info)

    def test_ranks_do_not_show(self):
        # Jacobi: Gauss-Seidel sweeps each rank's rows in turn, so its iterates depend on the ranks by design.
        extra = ["--texel-size", "0.5", "--lightmap-resolution", "64", "--solver", "jacobi"]
        one, two = self.job("one", extra), self.job("two", extra, ranks=2)
        with h5py.File(os.path.join(one, "radiosity.h5"), "r") as a, \
                h5py.File(os.path.join(two, "radiosity.h5"), "r") as b:
            for name in ("patches/corners", "radiosity/B", "lightmap/texel"):
                self.assertTrue(np.array_equal(a[name][:], b[name][:]), name)
        for name in ("lightmap_0.png", "lightmap_0.exr", "scene.glb"):
            with open(os.path.join(one, name), "rb") as fa, open(os.path.join(two, name), "rb") as fb:
                self.assertEqual(fa.read(), fb.read(), name)

    def expect_refusal(self, args, words):
        out = self.path("refused")
        proc = run(["run", "--output-dir", out] + args, cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        errors = [line for line in program_stderr_lines(proc.stderr) if "error" in line or "excludes" in line]
        self.assertEqual(len(errors), 1, describe(proc))
        for word in words:
            self.assertIn(word, errors[0], describe(proc))
        self.assertFalse(os.path.exists(out), "nothing is written")

    def test_bad_input_exits_2_with_one_line(self):
        bent = self.path("bent.obj")
        with open(bent, "w") as fh:
            fh.write("v 0 0 0\nv 1 0 0\nv 1 1 0.3\nv 0 1 0\nf 1 2 3 4\n")
        self.expect_refusal(["--input", bent, "--texel-size", "0.1"], ["bent.obj", "line 5", "not planar"])
        many = self.path("many.obj")
        with open(many, "w") as fh:
            for k in range(100):
                fh.write("v %d 0 0\nv %d 0 0\nv %d 1 0\n" % (2 * k, 2 * k + 1, 2 * k))
            fh.write("".join("f %d %d %d\n" % (3 * k + 1, 3 * k + 2, 3 * k + 3) for k in range(100)))
        self.expect_refusal(["--input", many, "--lightmap-resolution", "16"], ["many.obj", "one lightmap page"])
        self.expect_refusal(["--input", self.scene, "--texel-size", "1e-4"], ["furnace.obj", "--texel-size"])
        # Texels that fit the patch count but not the memory: refused from a floor on their count, before any
        # is made.
        self.expect_refusal(["--input", self.scene, "--texel-size", "0.01", "--memory-limit", "64M"],
                            ["furnace.obj", "--texel-size 0.01", "larger --texel-size"])
        self.expect_refusal(["--input", self.scene, "--texel-size", "0.3", "--refine", "1"], ["--refine"])


class TestHemicube(CliTestCase):
    """`--method hemicube` on texels: rows that close a furnace exactly, the same for any rank count."""

    def formfactors(self, name, ranks=None, extra=()):
        out = self.path(name + ".h5")
        cube = os.path.join(test_cli.TEST_MESHES, "furnace_cube.obj")
        self.rad_ok(["formfactors", "--input", cube, "--texel-size", "0.15", "--method", "hemicube", "--hemicube",
                     "16", "--output", out, "--quiet"] + list(extra), ranks)
        return out

    def test_hemicube_rows_close_a_white_furnace(self):
        # Inside a closed cube every pixel sees a wall's front: each row sums to 1 to rounding (its multipliers
        # are the pixels' exact form factors), and B = 1 / (1 - 0.5) = 2 everywhere.
        with h5py.File(self.formfactors("one"), "r") as f:
            indptr, data = f["formfactors/indptr"][:], f["formfactors/data"][:]
            self.assertEqual(test_cli.attr_str(f["formfactors"].attrs["method"]), "hemicube")
            self.assertEqual(int(f["formfactors"].attrs["hemicube_resolution"]), 16)
        sums = np.add.reduceat(data, indptr[:-1])
        self.assertLess(np.max(np.abs(sums - 1)), 1e-12)
        cube = os.path.join(test_cli.TEST_MESHES, "furnace_cube.obj")
        out = self.path("furnace")
        self.rad_ok(["run", "--input", cube, "--texel-size", "0.15", "--method", "hemicube", "--hemicube", "16",
                     "--tolerance", "1e-12", "--output-dir", out, "--width", "8", "--height", "8", "--quiet"])
        with h5py.File(os.path.join(out, "radiosity.h5"), "r") as f:
            self.assertLess(np.max(np.abs(f["radiosity/B"][:] - 2.0)), 1e-9)

    def test_rows_are_the_same_for_1_2_and_4_ranks(self):
        files = [self.formfactors("ranks%d" % r, ranks=r) for r in (1, 2, 4)]
        with h5py.File(files[0], "r") as a:
            reference = {k: a["formfactors/" + k][:] for k in ("indptr", "indices", "data")}
        for other in files[1:]:
            with h5py.File(other, "r") as b:
                for k, v in reference.items():
                    self.assertTrue(np.array_equal(v, b["formfactors/" + k][:]), (other, k))

    def test_gathering_without_rows_gives_what_the_rows_give(self):
        # --hemicube-mode gather traces every hemicube again each iteration (Jacobi, no F): the same iterates as
        # Jacobi on the rows, but for the order of the sums, so B agrees to the solver's tolerance. The scene:
        # the tetrahedron with one wall lit and the others dark, so that B varies.
        scene = self.path("lit.obj")
        obj, _ = tetrahedron_obj()
        lines = obj.splitlines()
        faces = [k for k, line in enumerate(lines) if line.startswith("f ")]
        lines.insert(faces[1], "usemtl dark")
        with open(scene, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        with open(self.path("furnace.mtl"), "w") as fh:
            fh.write("newmtl furnace\nKd 0.5 0.5 0.5\nKe 1 1 1\nnewmtl dark\nKd 0.7 0.6 0.5\n")
        results = {}
        for mode in ("rows", "gather"):
            out = self.path(mode)
            for ranks in (None, 2):
                folder = out + ("_2" if ranks else "")
                self.rad_ok(["run", "--input", scene, "--texel-size", "0.4", "--method", "hemicube", "--hemicube",
                             "16", "--hemicube-mode", mode, "--solver", "jacobi", "--tolerance", "1e-12",
                             "--output-dir", folder, "--width", "8", "--height", "8", "--quiet"], ranks)
                with h5py.File(os.path.join(folder, "radiosity.h5"), "r") as f:
                    results[(mode, ranks)] = f["radiosity/B"][:]
        b = results[("rows", None)]
        self.assertGreater(np.ptp(b[:, 2]), 0.1, "B should vary over the texels")
        self.assertLess(np.max(np.abs(results[("gather", None)] - b)), 1e-10)
        self.assertTrue(np.array_equal(results[("gather", None)], results[("gather", 2)]), "gathering: ranks show")

    def test_bad_hemicube_options_exit_2(self):
        cube = os.path.join(test_cli.TEST_MESHES, "furnace_cube.obj")
        for extra, word in ((["--hemicube", "63"], "even"), (["--operator", "sparse"], "--operator sparse")):
            proc = run(["formfactors", "--input", cube, "--texel-size", "0.25", "--method", "hemicube",
                        "--output", self.path("bad.h5")] + extra, cwd=self.tmp)
            self.assertEqual(proc.returncode, 2, describe(proc))
            errors = [line for line in program_stderr_lines(proc.stderr) if "error" in line]
            self.assertEqual(len(errors), 1, describe(proc))
            self.assertIn(word, errors[0])
            self.assertFalse(os.path.exists(self.path("bad.h5")))


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__))
