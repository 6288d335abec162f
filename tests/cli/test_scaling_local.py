#!/usr/bin/env python3
"""The scaling studies in local mode (jobs/local/*.sh: the batch scripts run with mpirun) and their analysis.

A strong-scaling study (`formfactors`, 1 and 2 ranks) and a weak-scaling study (`run`, levels 0 and 1: 46 and
184 patches on 1 and 4 ranks) of the reference paper's scene, small enough to take seconds; then every table
and plot is checked against the runs' own files (tests/cli/scaling_checks.py). Also: a failing run stops the
study before the collect step (Slurm's afterok), and the analysis names the file it is missing.

Environment: RAD_EXE (the executable), RAD_SOURCE_DIR (repository root), RAD_PYTHON (a Python with numpy, h5py
and matplotlib, for the collect step; default: this interpreter).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_scaling_local.py [-v]
Exit code 77 (CTest: skipped) when matplotlib is missing.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scaling_checks  # noqa: E402

SOURCE_DIR = os.path.abspath(os.environ.get("RAD_SOURCE_DIR") or os.path.join(HERE, os.pardir, os.pardir))
EXE = os.path.abspath(os.environ.get("RAD_EXE") or os.path.join(SOURCE_DIR, "build", "radiosity"))
SCENE = "meshes/cornell_sphere.obj"   # 46 polygons: 46 * 4^s patches at subdivision s
POLYGONS = 46
TIMEOUT_S = 120


def Env():
    env = dict(os.environ)
    env["RAD_EXE"] = EXE
    env.setdefault("RAD_PYTHON", sys.executable)
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    # A Slurm allocation around the test run must not turn the local study into srun calls.
    for key in list(env):
        if key.startswith("SLURM_"):
            del env[key]
    return env


def Script(name, *args):
    return subprocess.run(["bash", os.path.join(SOURCE_DIR, "jobs", "local", name)] + list(args), cwd=SOURCE_DIR,
                          env=Env(), capture_output=True, text=True, timeout=TIMEOUT_S)


class LocalStudies(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="rad-scaling-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def Run(self, name, *args):
        res = Script(name, *args)
        self.assertEqual(res.returncode, 0, "%s failed:\n%s\n%s" % (name, res.stdout, res.stderr))
        return res

    def test_strong_formfactors(self):
        out = os.path.join(self.tmp, "strong")
        self.Run("strong_scaling.sh", "--scene", SCENE, "--subdiv", "1", "--ranks", "1 2", "--out", out,
                 "--", "--quiet")
        expected = [("strong-r1", 1), ("strong-r2", 2)]
        study = scaling_checks.ReadJson(os.path.join(out, "study.json"))
        self.assertEqual((study["kind"], study["mode"], study["command"]), ("strong", "local", "formfactors"))
        self.assertEqual([(r["name"], r["ranks"], r["subdiv"]) for r in study["runs"]],
                         [("strong-r1", 1, 1), ("strong-r2", 2, 1)])
        timings = scaling_checks.CheckRuns(self, out, expected)
        F = scaling_checks.CheckSameMatrix(self, out, [n for n, _ in expected])
        self.assertEqual(F.shape, (POLYGONS * 4, POLYGONS * 4))
        runs = scaling_checks.CheckTables(self, out, "strong", expected, timings, lambda name: POLYGONS * 4)
        self.assertEqual(runs["strong-r2"]["matrix_identical"], "yes")
        analysis = os.path.join(out, "analysis")
        for plot in ("strong_speedup.png", "strong_time_split.png", "formfactor_diagnostics.png"):
            scaling_checks.CheckPng(self, os.path.join(analysis, plot))
        # formfactors solves nothing: no residual plot, and the collect log says why.
        self.assertFalse(os.path.exists(os.path.join(analysis, "residual.png")))
        self.assertIn("skipped", scaling_checks.ReadText(os.path.join(out, "collect.out")))

        # The analysis of an incomplete study names what is missing (exit 2, one line).
        broken = os.path.join(self.tmp, "broken")
        shutil.copytree(out, broken)
        shutil.rmtree(os.path.join(broken, "analysis"))
        os.remove(os.path.join(broken, "strong-r2", "timings.json"))
        res = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "analysis", "scaling_tables.py"), broken],
                             capture_output=True, text=True, timeout=TIMEOUT_S)
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        self.assertIn(os.path.join("strong-r2", "timings.json"), res.stderr)

    def test_weak_run(self):
        out = os.path.join(self.tmp, "weak")
        self.Run("weak_scaling.sh", "--scene", SCENE, "--levels", "0 1", "--command", "run", "--out", out,
                 "--", "--save-formfactors", "--width", "32", "--height", "32", "--spp", "1", "--quiet")
        expected = [("weak-s0-r1", 1), ("weak-s1-r4", 4)]   # level s: subdivision s on 4^s ranks
        timings = scaling_checks.CheckRuns(self, out, expected)
        patches = {"weak-s0-r1": POLYGONS, "weak-s1-r4": POLYGONS * 4}
        runs = scaling_checks.CheckTables(self, out, "weak", expected, timings, patches.get)
        self.assertEqual(runs["weak-s1-r4"]["compared_with"], "")   # different sizes are not compared
        for name in patches:
            self.assertNotEqual(runs[name]["solver_iterations"], "", name)
        analysis = os.path.join(out, "analysis")
        for plot in ("weak_speedup.png", "weak_time_split.png", "formfactor_diagnostics.png", "residual.png"):
            scaling_checks.CheckPng(self, os.path.join(analysis, plot))
        for name in patches:
            scaling_checks.CheckPng(self, os.path.join(out, name, "image.png"), min_size=32)

    def test_failing_run_stops_the_study(self):
        out = os.path.join(self.tmp, "failing")
        res = Script("strong_scaling.sh", "--scene", SCENE, "--subdiv", "0", "--ranks", "1 2", "--out", out,
                     "--", "--shadow-rays", "0")
        self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
        self.assertIn("strong-r1 failed", res.stderr)
        job = scaling_checks.ReadJson(os.path.join(out, "strong-r1", "job.json"))
        self.assertEqual(job["exit_code"], 2)   # radiosity's exit code for a bad option, kept by the job
        self.assertFalse(os.path.exists(os.path.join(out, "strong-r2")))
        self.assertFalse(os.path.exists(os.path.join(out, "analysis")))

    def test_bad_options(self):
        for args in (["--ranks", "1 x"], ["--command", "solve"], ["--scene", "no/such.obj"], ["--bogus"]):
            res = Script("strong_scaling.sh", "--out", os.path.join(self.tmp, "bad"), *args)
            self.assertEqual(res.returncode, 2, "%s: %s" % (args, res.stderr))
            self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)


if __name__ == "__main__":
    try:
        import matplotlib  # noqa: F401
        import h5py  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        print("SKIP: the analysis needs numpy, h5py and matplotlib (%s)" % e)
        sys.exit(77)
    unittest.main()
