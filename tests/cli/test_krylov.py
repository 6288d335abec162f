#!/usr/bin/env python3
"""`--solver gmres` (issue 18): PETSc's Krylov solvers on the radiosity system, against the white furnace.

  - A closed cube of reflectance 0.95 and emission 1 on every wall (the white furnace): every patch's exact B is
    1 / (1 - 0.95) = 20. GMRES reaches it within the tolerance on 1 and 2 ranks, from dense rows and from the
    sparse operator's CSR rows. With one wall lit, GMRES gives Gauss-Seidel's B in a tenth of its sweeps or
    fewer (Gauss-Seidel needs hundreds there; jobs/bench/krylov.sh).
  - `--petsc-options` reach PETSc: "-ksp_type bcgs -ksp_monitor" changes the method (the status names it) and
    prints PETSc's monitor lines.
  - `thermal --solver gmres` gives the three-surface enclosure of test_thermal.py as Gauss-Seidel does.
Skipped where the build has no PETSc (`radiosity --version` does not list gmres).

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_SOURCE_DIR).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_krylov.py [-v]
"""

import os
import subprocess
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402
from test_cli import CliTestCase, describe, run  # noqa: E402

RHO = 0.95


def have_gmres():
    try:
        out = subprocess.run([test_cli.EXE, "--version"], capture_output=True, universal_newlines=True, timeout=60)
    except OSError:
        return False
    return "gmres" in out.stdout


@unittest.skipUnless(have_gmres(), "this build has no PETSc (--solver gmres): apt-get install petsc-dev")
class TestKrylov(CliTestCase):
    def furnace(self, operator, one_lit=False):
        """The furnace cube at reflectance RHO, every wall lit, or only its first (the sweeps' slow case)."""
        with open(self.path("bright.mtl"), "w") as fh:
            fh.write("newmtl furnace\nKd %g %g %g\nKe 1 1 1\n" % (RHO, RHO, RHO))
            fh.write("newmtl dark\nKd %g %g %g\nKe 0 0 0\n" % (RHO, RHO, RHO))
        with open(os.path.join(test_cli.MESHES, "tests", "furnace_cube.obj")) as fh:
            obj = fh.read().replace("mtllib furnace_cube.mtl", "mtllib bright.mtl")
        if one_lit:  # the first face stays "furnace", the others dark
            head, tail = obj.split("usemtl furnace\n")
            first, rest = tail.split("\n", 1)
            obj = head + "usemtl furnace\n" + first + "\nusemtl dark\n" + rest
        with open(self.path("bright.obj"), "w") as fh:
            fh.write(obj)
        out = self.path("F_%s%s.h5" % (operator, "_one" if one_lit else ""))
        args = ["formfactors", "--input", self.path("bright.obj"), "--subdiv", "2", "--quadrature-tolerance", "1e-11",
                "--output", out, "--operator", operator, "--quiet"]
        if operator == "sparse":
            args += ["--drop-below", "1e-12"]
        proc = run(args, ranks=2, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        return out

    def solve(self, F, solver, ranks, extra=()):
        out = self.path("B_%s_%s.h5" % (solver, ranks))
        proc = run(["solve", "--formfactors", F, "--output", out, "--solver", solver, "--tolerance", "1e-10",
                    "--max-iterations", "5000"] + list(extra), ranks=ranks, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        with h5py.File(out, "r") as f:
            return proc, f["radiosity/B"][...], dict(f["radiosity"].attrs)

    def test_white_furnace_and_far_fewer_iterations_than_gauss_seidel(self):
        exact = 1 / (1 - RHO)
        for operator in ("dense", "sparse"):
            F = self.furnace(operator)
            for ranks in (None, 2):
                with self.subTest(operator=operator, ranks=ranks or 1):
                    proc, B, attrs = self.solve(F, "gmres", ranks)
                    self.assertEqual(attrs["solver"], b"gmres")
                    self.assertEqual(attrs["converged"], 1)
                    self.assertLess(attrs["final_residual"], 1e-10)
                    # Closure of F to 1e-11 and the residual to 1e-10: the furnace's B to 1e-7.
                    self.assertLess(np.max(np.abs(B - exact)) / exact, 1e-7)
                    self.assertIn("PETSc: CONVERGED", proc.stderr)
            # One lit face: no closed form, but Gauss-Seidel's B, in a tenth of its sweeps or fewer.
            F = self.furnace(operator, one_lit=True)
            _, B_gs, gs = self.solve(F, "gauss-seidel", 2)
            for ranks in (None, 2):
                with self.subTest(operator=operator, ranks=ranks or 1, lit="one face"):
                    _, B, attrs = self.solve(F, "gmres", ranks)
                    self.assertEqual(attrs["converged"], 1)
                    self.assertLess(np.max(np.abs(B - B_gs)) / np.max(B_gs), 1e-8)
                    self.assertLess(attrs["iterations"] * 10, gs["iterations"],
                                    "GMRES %d iterations, Gauss-Seidel %d" % (attrs["iterations"], gs["iterations"]))

    def test_petsc_options_reach_petsc(self):
        F = self.furnace("dense")
        proc, B, attrs = self.solve(F, "gmres", 2, ["--petsc-options", "-ksp_type bcgs -ksp_monitor"])
        self.assertIn("KSP Residual norm", proc.stdout + proc.stderr)
        self.assertEqual(attrs["petsc_options"], b"-ksp_type bcgs -ksp_monitor")
        self.assertLess(np.max(np.abs(B - 1 / (1 - RHO))) * (1 - RHO), 1e-7)

    def test_thermal_with_gmres(self):
        import json
        import test_thermal
        with open(self.path("cube.mtl"), "w") as fh:
            fh.write("".join("newmtl %s\nKd 0.5 0.5 0.5\n" % m for m in ("hot", "cold", "side")))
        with open(self.path("cube.obj"), "w") as fh:
            fh.write(test_thermal.box_obj(1.0, 1.0, ["hot", "cold"] + ["side"] * 4, "cube.mtl"))
        F = self.path("cube_F.h5")
        proc = run(["formfactors", "--input", self.path("cube.obj"), "--subdiv", "0", "--quadrature-tolerance", "1e-11",
                    "--output", F, "--quiet"], ranks=2, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        with open(self.path("props.json"), "w") as fh:
            json.dump({"materials": {"hot": {"emissivity": 0.8, "temperature": 1000},
                                     "cold": {"emissivity": 0.5, "temperature": 300},
                                     "side": {"emissivity": 0.3, "adiabatic": True}}}, fh)
        out = self.path("T.h5")
        proc = run(["thermal", "--input", self.path("cube.obj"), "--formfactors", F, "--properties",
                    self.path("props.json"), "--output", out, "--solver", "gmres", "--tolerance", "1e-13"], ranks=2,
                   cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        f12 = test_thermal.f_parallel(1, 1, 1)
        q1, tr = test_thermal.three_surface(1000.0, 0.8, 300.0, 0.5, 1.0, 1.0, f12, 1 - f12, 1 - f12)
        with h5py.File(out, "r") as f:
            q, T = f["thermal/heat_flux"][...], f["thermal/temperature"][...]
        self.assertAlmostEqual(q[0] / q1, 1, delta=1e-8)
        self.assertAlmostEqual(T[2] / tr, 1, delta=1e-9)

    def test_without_gmres_options_are_refused(self):
        F = self.furnace("dense")
        proc = run(["solve", "--formfactors", F, "--output", self.path("x.h5"), "--solver", "krylov"], cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        # A method PETSc does not know: one line, exit 2 on every rank, nothing written.
        out = self.path("y.h5")
        proc = run(["solve", "--formfactors", F, "--output", out, "--solver", "gmres", "--petsc-options",
                    "-ksp_type nosuchmethod", "--quiet"], ranks=2, cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        lines = test_cli.program_stderr_lines(proc.stderr)
        self.assertEqual(len(lines), 1, describe(proc))
        self.assertIn("--petsc-options", lines[0])
        self.assertFalse(os.path.exists(out))
        self.assertFalse(os.path.exists(out + ".partial"))


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__))
