#!/usr/bin/env python3
"""End-to-end tests of the scene formats other than OBJ (STL, PLY, OFF, glTF), --materials and several --input
files: the same box written in each format gives bitwise the same form factors as its OBJ, materials reach
/patches, two files give the matrix of their union, and every bad file ends with exit code 2, one line naming it
and nothing written.

The files are written by this test (numpy for the binary ones). The loader's own details (node transforms,
material names, truncated files) are tested by the C++ suite MeshLoader (tests/mesh_loader_test.cpp).

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_MPIEXEC_FLAGS, RAD_SOURCE_DIR).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_formats.py [-v] [unittest options]
"""

import base64
import json
import os
import struct
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402  (helpers shared with the CLI tests)
from test_cli import CliTestCase, attr_str, describe, program_stderr_lines, read_f, run  # noqa: E402

# A closed box [0,2] x [0,1] x [0,1.5], moved by (-0.5, 0.25, -1.25), fronts facing inward. Every coordinate is
# a float exactly (and read exactly by tinyobjloader, the OBJ reader's parser), so each format gives the same
# doubles.
BOX = [(-0.5, 0.25, 0.25), (1.5, 0.25, 0.25), (1.5, 0.25, -1.25), (-0.5, 0.25, -1.25),
       (-0.5, 1.25, -1.25), (1.5, 1.25, -1.25), (1.5, 1.25, 0.25), (-0.5, 1.25, 0.25)]
QUADS = [(0, 1, 2, 3), (4, 5, 6, 7), (3, 2, 5, 4), (7, 6, 1, 0), (3, 4, 7, 0), (1, 6, 5, 2)]
TRIANGLES = [t for q in QUADS for t in ((q[0], q[1], q[2]), (q[0], q[2], q[3]))]


def write_obj(path, faces, header=""):
    with open(path, "w") as fh:
        fh.write(header)
        for v in BOX:
            fh.write("v %r %r %r\n" % v)
        for f in faces:
            fh.write("f " + " ".join(str(i + 1) for i in f) + "\n")


def write_ascii_stl(path, triangles, solid="box"):
    with open(path, "w") as fh:
        fh.write("solid %s\n" % solid)
        for t in triangles:
            fh.write(" facet normal 0 0 0\n  outer loop\n")
            for i in t:
                fh.write("   vertex %r %r %r\n" % BOX[i])
            fh.write("  endloop\n endfacet\n")
        fh.write("endsolid %s\n" % solid)


def binary_stl(triangles):
    data = b"binary box".ljust(80, b" ") + struct.pack("<I", len(triangles))
    for t in triangles:
        p = [np.array(BOX[i]) for i in t]
        n = np.cross(p[1] - p[0], p[2] - p[0])
        data += struct.pack("<3f", *(n / np.linalg.norm(n)))
        data += b"".join(struct.pack("<3f", *BOX[i]) for i in t) + b"\0\0"
    return data


def ply_header(fmt, faces):
    return ("ply\nformat %s 1.0\nelement vertex %d\nproperty float x\nproperty float y\nproperty float z\n"
            "element face %d\nproperty list uchar int vertex_indices\nend_header\n" % (fmt, len(BOX), len(faces)))


def write_ply(path, faces, binary):
    with open(path, "wb") as fh:
        fh.write(ply_header("binary_little_endian" if binary else "ascii", faces).encode())
        for v in BOX:
            fh.write(struct.pack("<3f", *v) if binary else ("%r %r %r\n" % v).encode())
        for f in faces:
            fh.write(struct.pack("<B%di" % len(f), len(f), *f) if binary
                     else (" ".join(map(str, (len(f),) + tuple(f))) + "\n").encode())


def write_off(path, faces):
    with open(path, "w") as fh:
        fh.write("OFF\n%d %d 0\n" % (len(BOX), len(faces)))
        for v in BOX:
            fh.write("%r %r %r\n" % v)
        for f in faces:
            fh.write(" ".join(map(str, (len(f),) + tuple(f))) + "\n")


LAMP = {"name": "lamp", "pbrMetallicRoughness": {"baseColorFactor": [0.25, 0.5, 0.75, 1]},
        "emissiveFactor": [1, 0.5, 0.25], "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 4}}}


def gltf(triangles, glb=False):
    """One mesh of the triangles with material LAMP, under node "walls" under node "room"."""
    blob = np.array(BOX, dtype="<f4").tobytes() + np.array(triangles, dtype="<u4").tobytes()
    doc = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
           "nodes": [{"name": "room", "children": [1]}, {"name": "walls", "mesh": 0}],
           "meshes": [{"name": "wallmesh", "primitives": [{"attributes": {"POSITION": 0}, "indices": 1,
                                                           "material": 0}]}],
           "materials": [LAMP], "extensionsUsed": ["KHR_materials_emissive_strength"],
           "buffers": [{"byteLength": len(blob)}],
           "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 12 * len(BOX)},
                           {"buffer": 0, "byteOffset": 12 * len(BOX), "byteLength": 12 * len(triangles)}],
           "accessors": [{"bufferView": 0, "componentType": 5126, "count": len(BOX), "type": "VEC3",
                          "min": [-0.5, 0.25, -1.25], "max": [1.5, 1.25, 0.25]},
                         {"bufferView": 1, "componentType": 5125, "count": 3 * len(triangles), "type": "SCALAR"}]}
    if not glb:
        doc["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(blob).decode()
        return json.dumps(doc).encode()
    text = json.dumps(doc).encode()
    text += b" " * (-len(text) % 4)
    blob += b"\0" * (-len(blob) % 4)
    return (b"glTF" + struct.pack("<II", 2, 12 + 8 + len(text) + 8 + len(blob)) + struct.pack("<I", len(text))
            + b"JSON" + text + struct.pack("<I", len(blob)) + b"BIN\0" + blob)


def write_bytes(path, data):
    with open(path, "wb") as fh:
        fh.write(data)


class TestFormats(CliTestCase):
    def formfactors_of(self, inputs, name, subdiv=1, ranks=None, extra=()):
        out = self.path(name + ".h5")
        self.rad_ok(["formfactors", "--input"] + list(inputs) + ["--subdiv", str(subdiv), "--output", out, "--quiet"]
                    + list(extra), ranks)
        return out

    def assert_same_bits(self, a, b, what):
        fa, fb = read_f(a), read_f(b)
        self.assertEqual(fa.shape, fb.shape, what)
        self.assertEqual(fa.tobytes(), fb.tobytes(), "%s: F differs from the OBJ's" % what)
        with h5py.File(a) as ha, h5py.File(b) as hb:
            for key in ("corners", "area", "normal", "face"):
                self.assertEqual(ha["patches"][key][...].tobytes(), hb["patches"][key][...].tobytes(),
                                 "%s: /patches/%s differs" % (what, key))

    def test_every_format_gives_the_objs_form_factors_bit_for_bit(self):
        quads_obj, tris_obj = self.path("quads.obj"), self.path("tris.obj")
        write_obj(quads_obj, QUADS)
        write_obj(tris_obj, TRIANGLES)
        write_ascii_stl(self.path("box.stl"), TRIANGLES)
        write_bytes(self.path("binary.STL"), binary_stl(TRIANGLES))
        write_ply(self.path("box.ply"), QUADS, binary=False)
        write_ply(self.path("binary.ply"), QUADS, binary=True)
        write_off(self.path("box.off"), QUADS)
        write_bytes(self.path("box.gltf"), gltf(TRIANGLES))
        write_bytes(self.path("box.glb"), gltf(TRIANGLES, glb=True))
        quads = self.formfactors_of([quads_obj], "quads")
        tris = self.formfactors_of([tris_obj], "tris")
        self.assertEqual(read_f(quads).shape, (24, 24))
        for name, reference in (("box.stl", tris), ("binary.STL", tris), ("box.ply", quads),
                                ("binary.ply", quads), ("box.off", quads), ("box.gltf", tris), ("box.glb", tris)):
            with self.subTest(file=name):
                out = self.formfactors_of([self.path(name)], name)
                self.assert_same_bits(out, reference, name)
                with h5py.File(out) as f:
                    self.assertEqual(attr_str(f.attrs["input"]), self.path(name))
        # Every row of the closed box sums to 1.
        self.assertLess(abs(read_f(quads).sum(axis=1) - 1).max(), 1e-5)

    def test_gltf_material_and_materials_file_reach_the_patches(self):
        write_bytes(self.path("lamp.gltf"), gltf(TRIANGLES))
        with h5py.File(self.formfactors_of([self.path("lamp.gltf")], "gltf", subdiv=0)) as f:
            # base colour -> Kd, emissive x strength -> Ke
            self.assertTrue((f["patches/reflectance"][...] == [0.25, 0.5, 0.75]).all())
            self.assertTrue((f["patches/emission"][...] == [4.0, 2.0, 1.0]).all())
        # Two solids: the walls by the file's name, the lamp by the solid's; the glTF by its node's name.
        write_ascii_stl(self.path("walls.stl"), TRIANGLES[:10], solid="sides")
        write_ascii_stl(self.path("ceiling.stl"), TRIANGLES[10:], solid="ceiling")
        with open(self.path("room.stl"), "w") as out:
            for part in ("walls.stl", "ceiling.stl"):
                with open(self.path(part)) as fh:
                    out.write(fh.read())
        materials = self.path("m.json")
        with open(materials, "w") as fh:
            json.dump({"ceiling": {"Kd": [0.75, 0.75, 0.75], "Ke": [17, 12, 4]}, "room.stl": {"Kd": 0.25},
                       "walls": {"Kd": [0.125, 0.25, 0.5]}}, fh)
        out = self.formfactors_of([self.path("room.stl"), self.path("lamp.gltf")], "json", subdiv=0,
                                  extra=["--materials", materials])
        with h5py.File(out) as f:
            kd, ke = f["patches/reflectance"][...], f["patches/emission"][...]
            self.assertTrue((kd[:10] == 0.25).all() and (ke[:10] == 0).all(), kd[:10])
            self.assertTrue((kd[10:12] == 0.75).all() and (ke[10:12] == [17, 12, 4]).all())
            self.assertTrue((kd[12:] == [0.125, 0.25, 0.5]).all() and (ke[12:] == 0).all())  # node "walls"
            self.assertEqual(attr_str(f.attrs["materials"]), materials)
            self.assertEqual(attr_str(f.attrs["input"]).splitlines(), [self.path("room.stl"), self.path("lamp.gltf")])

    def test_two_inputs_give_the_form_factors_of_the_whole_box(self):
        whole = self.path("whole.obj")
        write_obj(whole, QUADS)
        write_obj(self.path("first.obj"), QUADS[:3])
        write_ply(self.path("second.ply"), QUADS[3:], binary=True)
        reference = self.formfactors_of([whole], "whole")
        # --input A B and --input A --input B; 1 and 2 ranks.
        out = self.formfactors_of([self.path("first.obj"), self.path("second.ply")], "both")
        self.assert_same_bits(out, reference, "two inputs")
        out2 = self.path("both2.h5")
        self.rad_ok(["formfactors", "--input", self.path("first.obj"), "--input", self.path("second.ply"),
                     "--subdiv", "1", "--output", out2, "--quiet"], ranks=2)
        self.assert_same_bits(out2, reference, "two --input options at 2 ranks")
        with h5py.File(out) as f:
            self.assertEqual(attr_str(f.attrs["input"]).splitlines(), [self.path("first.obj"), self.path("second.ply")])
            self.assertEqual(list(f["patches/face"][::4]), list(range(6)))  # faces numbered across the files
        # The whole pipeline on two files: the summary names both.
        out_dir = self.path("run")
        self.rad_ok(["run", "--input", self.path("first.obj"), self.path("second.ply"), "--subdiv", "0",
                     "--output-dir", out_dir, "--width", "16", "--height", "16", "--quiet"])
        with open(os.path.join(out_dir, "summary.txt")) as fh:
            self.assertIn("input: %s, %s (subdiv 0)" % (self.path("first.obj"), self.path("second.ply")), fh.read())

    def expect_bad(self, args, name, ranks=None):
        """Exit code 2, one stderr line naming `name`, nothing in the output folder."""
        out_dir = self.path("out")
        os.makedirs(out_dir, exist_ok=True)
        proc = run(args + ["--output", os.path.join(out_dir, "OUT.h5"), "--quiet"], ranks, cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, "expected exit code 2:" + describe(proc))
        lines = program_stderr_lines(proc.stderr)
        self.assertEqual(len(lines), 1, "expected one error line:" + describe(proc))
        self.assertIn(name, lines[0], describe(proc))
        self.assertEqual(os.listdir(out_dir), [], "files left behind:" + describe(proc))
        return lines[0]

    def test_bad_files_exit_2_naming_the_file(self):
        good = self.path("good.obj")
        write_obj(good, QUADS)
        stl = binary_stl(TRIANGLES)
        bad = {
            "truncated.stl": (stl[:-20], "binary STL of 12 triangles should have 684 bytes"),
            "malformed.ply": (b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n", "end_header"),
            "garbage.ply": (b"not a ply file\n", "not a PLY file"),
            "empty.off": (b"", "empty file"),
            "empty.glb": (b"", "empty file"),
            "nofaces.stl": (b"solid none\nendsolid none\n", ""),
            "index.off": (b"OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n", "out of range"),
            "box.dae": (b"<COLLADA/>", "unknown scene format '.dae'"),
        }
        for name, (data, words) in sorted(bad.items()):
            with self.subTest(file=name):
                write_bytes(self.path(name), data)
                line = self.expect_bad(["formfactors", "--input", self.path(name)], name)
                self.assertIn(words, line)
        # A bad file second in the list, and at 2 ranks.
        self.expect_bad(["formfactors", "--input", good, self.path("truncated.stl")], "truncated.stl", ranks=2)
        # A bad materials file.
        write_bytes(self.path("m.json"), b'{"box": {"Kd": [2, 0, 0]}}')
        write_ascii_stl(self.path("box.stl"), TRIANGLES)
        line = self.expect_bad(["formfactors", "--input", self.path("box.stl"), "--materials", self.path("m.json")],
                               "m.json")
        self.assertIn("outside [0,1]", line)
        self.assertIn(".obj, .stl, .ply, .off, .gltf, .glb",
                      self.expect_bad(["formfactors", "--input", self.path("box.dae")], "box.dae"))

    def test_other_commands_take_the_formats(self):
        """pathtrace and vpl read an STL with a materials file; the box's lamp lights it."""
        write_ascii_stl(self.path("room.stl"), TRIANGLES[:10], solid="walls")
        write_ascii_stl(self.path("lamp.stl"), TRIANGLES[10:], solid="lamp")
        materials = self.path("m.json")
        with open(materials, "w") as fh:
            json.dump({"lamp": {"Kd": 0.5, "Ke": 1}}, fh)
        common = ["--input", self.path("room.stl"), self.path("lamp.stl"), "--materials", materials,
                  "--width", "8", "--height", "8", "--quiet"]
        self.rad_ok(["pathtrace"] + common + ["--output", self.path("p.png"), "--spp", "4"])
        self.rad_ok(["vpl"] + common + ["--output", self.path("v.png"), "--vpls", "16"])
        self.assertTrue(os.path.getsize(self.path("p.png")) > 0 and os.path.getsize(self.path("v.png")) > 0)


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__))
