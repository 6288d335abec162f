#!/usr/bin/env python3
"""The Python package (python/radiosity) against files the program writes, and the XDMF files beside them.

  - `pip install ./python` into a virtual environment (with the system's numpy, scipy and h5py) installs a package
    that imports from there;
  - F of the Cornell box read from the HDF5 file, the raw file and the MatrixMarket, PETSc and CSR exports is the
    same matrix, bit for bit; patches, radiosity and thermal results are what h5py reads; a file whose run did not
    finish is refused;
  - the view factors between the faces of a closed cube (group_view_factors over /patches/face, 16 patches a face)
    are Howell's C-11 for opposite faces (0.1998248957) and C-14 for adjacent ones (0.2000437761) to 1e-8, each
    face's row sums to 1 and reciprocity holds; group_sums of A q per material is the heat rate `thermal` prints;
  - the XDMF file beside each HDF5 output (formfactors, solve, run, thermal) opens with meshio, a Python XDMF
    reader, as quadrilaterals with B, row sums and heat flux as cell data equal to the HDF5 datasets.

Environment: RAD_EXE (the executable), as tests/cli/test_cli.py.
Run:  RAD_EXE=build/radiosity /usr/bin/python3 python/tests/test_package.py [-v]
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
ROOT = os.path.dirname(PACKAGE)
sys.path.insert(0, PACKAGE)
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
import radiosity as rd  # noqa: E402
import test_cli  # noqa: E402
from test_cli import describe, run  # noqa: E402

try:
    import meshio
except ImportError:
    meshio = None

F_OPPOSITE = 0.1998248957  # Howell C-11: directly opposed unit squares at distance 1
F_ADJACENT = 0.2000437761  # Howell C-14: perpendicular unit squares with a common edge


class TestPackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="radiosity_python_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def program(self, args, ranks=2):
        proc = run(args + ["--quiet"], ranks=ranks, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        return proc

    def test_pip_install_into_a_virtual_environment(self):
        env = self.path("venv")
        made = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", env], capture_output=True,
                              universal_newlines=True)
        if made.returncode != 0 or not os.path.exists(os.path.join(env, "bin", "pip")):
            self.skipTest("no venv with pip here (Debian: python3-venv python3-pip): " + made.stderr[-300:])
        python = os.path.join(env, "bin", "python")
        source = self.path("package")  # a copy: setuptools builds in the folder it is given
        shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info"))
        proc = subprocess.run([python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                               "--quiet", source], capture_output=True, universal_newlines=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        where = subprocess.run([python, "-c", "import radiosity; print(radiosity.__file__, radiosity.__version__)"],
                               capture_output=True, universal_newlines=True, cwd=self.tmp)
        self.assertEqual(where.returncode, 0, where.stderr)
        self.assertIn(os.path.join(env, "lib"), where.stdout)
        self.assertIn("0.1.0", where.stdout)

    def test_every_format_of_f_is_the_same_matrix(self):
        scene = os.path.join(test_cli.MESHES, "cornell_box.obj")
        h5, raw = self.path("box.h5"), self.path("box.raw")
        self.program(["formfactors", "--input", scene, "--subdiv", "1", "--output", h5, "--raw", raw])
        dense = rd.read_formfactors(h5)
        with h5py.File(h5, "r") as f:
            self.assertTrue(np.array_equal(dense, f["formfactors/F"][...]))
            self.assertTrue(np.array_equal(rd.read_patches(h5)["corners"], f["patches/corners"][...]))
            row_sum = f["formfactors/row_sum"][...]
        self.assertTrue(np.allclose(row_sum, dense.sum(axis=1), rtol=0, atol=1e-13))
        self.assertTrue(np.array_equal(rd.read_formfactors(raw), dense))
        for fmt in ("mtx", "petsc", "csr"):
            out = self.path("box_csr.h5" if fmt == "csr" else "box." + fmt)
            self.program(["export", "--formfactors", h5, "--format", fmt, "--output", out], ranks=None)
            got = rd.read_formfactors(out)
            self.assertTrue(hasattr(got, "toarray"), fmt + " is read as a scipy sparse matrix")
            self.assertTrue(np.array_equal(got.toarray(), dense), fmt + " differs from the dense F")

        rad = self.path("box_rad.h5")
        self.program(["solve", "--formfactors", h5, "--output", rad])
        B, residual, attrs = rd.read_radiosity(rad)
        with h5py.File(rad, "r") as f:
            self.assertTrue(np.array_equal(B, f["radiosity/B"][...]))
        self.assertEqual(attrs["solver"], "gauss-seidel")
        self.assertEqual(len(residual), attrs["iterations"])

        broken = self.path("broken.h5")
        shutil.copy(rad, broken)
        with h5py.File(broken, "a") as f:
            f.attrs["complete"] = 0
        with self.assertRaises(rd.FileError):
            rd.read_radiosity(broken)

    def test_view_factors_between_the_faces_of_a_cube_and_heat_rates_per_material(self):
        cube = os.path.join(test_cli.MESHES, "tests", "unit_cube.obj")
        h5 = self.path("cube.h5")
        self.program(["formfactors", "--input", cube, "--subdiv", "2", "--output", h5, "--quadrature-tolerance",
                      "1e-10"])
        p = rd.read_patches(h5)
        faces, G = rd.group_view_factors(rd.read_formfactors(h5), p["area"], p["face"])
        self.assertEqual(len(faces), 6)
        corners = p["corners"]
        normal = {}
        for k, face in enumerate(faces):
            normal[k] = p["normal"][p["face"] == face][0]
        _, area = rd.group_sums(p["area"], p["face"])
        for a in range(6):
            self.assertAlmostEqual(G[a].sum(), 1, delta=1e-8)
            self.assertEqual(G[a, a], 0)
            for b in range(6):
                if a == b:
                    continue
                want = F_OPPOSITE if np.dot(normal[a], normal[b]) < -0.5 else F_ADJACENT
                self.assertAlmostEqual(G[a, b], want, delta=1e-8)
                self.assertAlmostEqual(area[a] * G[a, b], area[b] * G[b, a], delta=1e-12)
        self.assertEqual(corners.shape, (96, 4, 3))

        # Heat rates per material: the cube's walls all one material, at one temperature: nothing exchanged.
        with open(self.path("props.json"), "w") as fh:
            json.dump({"materials": {m: {"emissivity": 0.7, "temperature": 500} for m in self.materials(cube)}}, fh)
        t_h5 = self.path("cube_thermal.h5")
        self.program(["thermal", "--input", cube, "--formfactors", h5, "--properties", self.path("props.json"),
                      "--output", t_h5])
        t = rd.read_thermal(t_h5)
        _, rates = rd.group_sums(t["heat_flux"] * p["area"], np.zeros(len(p["area"])))
        self.assertAlmostEqual(float(rates[0]), t["attrs"]["heat_rate_sum_w"], delta=1e-9)
        self.assertLess(np.max(np.abs(t["heat_flux"])), 1e-6 * 0.7 * 5.670374419e-8 * 500 ** 4)
        self.assertTrue(np.all(t["temperature"] == 500))

    @staticmethod
    def materials(obj):
        names = set()
        with open(obj) as fh:
            for line in fh:
                if line.startswith("usemtl "):
                    names.add(line.split()[1])
        return sorted(names) or ["default"]

    @unittest.skipIf(meshio is None, "meshio (Debian: python3-meshio) is not installed")
    def test_xdmf_beside_every_output_opens_with_meshio(self):
        scene = os.path.join(test_cli.MESHES, "cornell_box.obj")
        out = self.path("run")
        self.program(["run", "--input", scene, "--subdiv", "1", "--output-dir", out, "--save-formfactors"])
        h5 = os.path.join(out, "radiosity.h5")
        mesh = meshio.read(os.path.join(out, "radiosity.xmf"))
        with h5py.File(h5, "r") as f:
            n = len(f["patches/area"])
            self.assertEqual(len(mesh.cells), 1)
            self.assertEqual(mesh.cells[0].type, "quad")
            self.assertEqual(len(mesh.cells[0].data), n)
            self.assertTrue(np.array_equal(mesh.points.reshape(n, 4, 3), f["patches/corners"][...]))
            for name, path in (("radiosity_B", "radiosity/B"), ("formfactors_row_sum", "formfactors/row_sum"),
                               ("patches_area", "patches/area")):
                self.assertTrue(np.array_equal(mesh.cell_data[name][0], f[path][...]), name)
        # thermal: heat flux as cell data
        cube = os.path.join(test_cli.MESHES, "tests", "unit_cube.obj")
        ff = self.path("xcube.h5")
        self.program(["formfactors", "--input", cube, "--subdiv", "1", "--output", ff])
        self.assertTrue(os.path.exists(self.path("xcube.xmf")))
        with open(self.path("xprops.json"), "w") as fh:
            json.dump({"materials": {m: {"emissivity": 0.5, "temperature": 300} for m in self.materials(cube)}}, fh)
        t = self.path("xthermal.h5")
        self.program(["thermal", "--input", cube, "--formfactors", ff, "--properties", self.path("xprops.json"),
                      "--output", t])
        mesh = meshio.read(self.path("xthermal.xmf"))
        with h5py.File(t, "r") as f:
            for name in ("heat_flux", "temperature", "radiosity"):
                self.assertTrue(np.array_equal(mesh.cell_data["thermal_" + name][0], f["thermal/" + name][...]))


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__))
