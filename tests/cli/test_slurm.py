#!/usr/bin/env python3
"""The Slurm batch scripts and the strong-scaling study, tested against a real (throw-away) Slurm.

Starts munged, slurmctld and slurmd on localhost with every file in one temporary folder
(tests/cli/slurm_sandbox.py; the node advertises 4 CPUs), then:
  1. submits the strong-scaling study through sbatch (jobs/slurm/strong_scaling.sh --wait: `radiosity run
     --save-formfactors` on the paper's scene at subdivision 1, 184 patches, on 1, 2 and 4 tasks launched with
     srun and PMIx, and the collect job chained with --dependency=afterok), and checks every job completed, each
     run was one MPI world of P ranks, the matrix is bitwise the same for every rank count, and the tables and
     plots agree with the runs' own files (tests/cli/scaling_checks.py);
  2. submits jobs/slurm/formfactors.sbatch by hand with the mpirun launcher on 2 tasks, and checks it gives the
     study's matrix;
  3. submits a study whose run fails, and checks Slurm cancels its collect job (afterok) and --wait says so;
  4. submits jobs/slurm/formfactors.sbatch restartable (RAD_CHECKPOINT=1, --requeue) on 2 tasks, sends its steps
     SIGUSR1 once it has a checkpoint (as --signal=USR1@T does before the time limit), and checks the run wrote a
     checkpoint and stopped, the job requeued itself (Restarts=1) and completed, and its matrix is bitwise that
     of a run never stopped (the paper's 2944 patches, computed outside Slurm);
and stops Slurm, leaving no process and no file behind (checked), also when a check fails.

Environment: RAD_EXE, RAD_SOURCE_DIR, RAD_PYTHON (as test_scaling_local.py).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_slurm.py [-v]
Exit code 77 (CTest: skipped, with the reason printed) when slurmctld, slurmd or munged are not installed
(Debian: apt-get install slurm-wlm munge; jobs/setup.sh installs them), when not run as root (slurmd must
start job steps as the submitting user), or when matplotlib is missing.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scaling_checks  # noqa: E402
import slurm_sandbox  # noqa: E402

SOURCE_DIR = os.path.abspath(os.environ.get("RAD_SOURCE_DIR") or os.path.join(HERE, os.pardir, os.pardir))
EXE = os.path.abspath(os.environ.get("RAD_EXE") or os.path.join(SOURCE_DIR, "build", "radiosity"))
SCENE = "meshes/cornell_sphere.obj"
PATCHES = 46 * 4   # 46 polygons at subdivision 1
RANKS = (1, 2, 4)
SMALL_IMAGE = ["--width", "32", "--height", "32", "--spp", "1"]
TIMEOUT_S = 150


def SkipReason():
    missing = slurm_sandbox.MissingDaemons()
    if missing:
        return "Slurm is not installed (missing %s; Debian: apt-get install slurm-wlm munge)" % ", ".join(missing)
    if os.geteuid() != 0:
        return "needs root: a throw-away slurmd must start job steps as the submitting user"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "the analysis needs matplotlib (python3-matplotlib)"
    return None


class SlurmStudy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="rad-slurm-test-")
        cls.slurm = slurm_sandbox.SlurmSandbox(cpus=4)
        try:
            cls.slurm.start()
        except BaseException:
            cls.slurm.stop()
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise
        cls.sandbox_root = cls.slurm.root
        cls.daemons = dict(cls.slurm.procs)

    @classmethod
    def tearDownClass(cls):
        # Runs after the tests, whether they passed or not (and the test below checks it left nothing).
        cls.slurm.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def Env(self):
        env = self.slurm.env()
        env["RAD_EXE"] = EXE
        env.setdefault("RAD_PYTHON", sys.executable)
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
        return env

    def Submit(self, args):
        return subprocess.run(args, cwd=SOURCE_DIR, env=self.Env(), capture_output=True, text=True,
                              timeout=TIMEOUT_S)

    def StudyJobs(self, out):
        study = scaling_checks.ReadJson(os.path.join(out, "study.json"))
        return study, [r["job_id"] for r in study["runs"]], study["collect_job_id"]

    def test_1_strong_scaling_study(self):
        out = os.path.join(self.tmp, "strong")
        res = self.Submit(["bash", "jobs/slurm/strong_scaling.sh", "--scene", SCENE, "--subdiv", "1",
                           "--ranks", " ".join(map(str, RANKS)), "--command", "run", "--out", out, "--wait",
                           "--wait-timeout", "120", "--", "--save-formfactors", "--quiet"] + SMALL_IMAGE)
        self.assertEqual(res.returncode, 0, "study failed:\n%s\n%s\nslurmctld log:\n%s"
                         % (res.stdout, res.stderr, self.slurm.log("slurmctld")[-3000:]))
        study, run_ids, collect_id = self.StudyJobs(out)
        self.assertEqual((study["kind"], study["mode"]), ("strong", "slurm"))
        self.assertEqual(len(set(run_ids + [collect_id])), len(RANKS) + 1)
        for job_id in run_ids + [collect_id]:
            self.assertEqual(self.slurm.job_state(job_id), "COMPLETED", "job %s" % job_id)
            self.assertTrue(job_id.isdigit(), job_id)

        expected = [("strong-r%d" % p, p) for p in RANKS]
        timings = scaling_checks.CheckRuns(self, out, expected)
        for (name, ranks), job_id in zip(expected, run_ids):
            job = scaling_checks.ReadJson(os.path.join(out, name, "job.json"))
            self.assertEqual((job["slurm"], job["launcher"], job["job_id"], job["job_name"]),
                             (True, "srun", job_id, name))
            self.assertTrue(os.path.isfile(os.path.join(out, name, "slurm-%s.out" % job_id)))
            for output in ("radiosity.h5", "image.png", "image.exr", "summary.txt", "timings.json"):
                self.assertTrue(os.path.isfile(os.path.join(out, name, output)), "%s/%s" % (name, output))
        F = scaling_checks.CheckSameMatrix(self, out, [n for n, _ in expected])
        self.assertEqual(F.shape, (PATCHES, PATCHES))
        runs = scaling_checks.CheckTables(self, out, "strong", expected, timings, lambda name: PATCHES)
        for name, _ in expected[1:]:
            self.assertEqual(runs[name]["matrix_identical"], "yes", name)
        analysis = os.path.join(out, "analysis")
        for plot in ("strong_speedup.png", "strong_time_split.png", "residual.png", "formfactor_diagnostics.png"):
            scaling_checks.CheckPng(self, os.path.join(analysis, plot))
        self.assertIn("analysis of", scaling_checks.ReadText(os.path.join(out, "collect-%s.out" % collect_id)))

        # 2. The form-factor script by hand, mpirun inside the allocation: the same matrix as the study's.
        direct = os.path.join(self.tmp, "direct")
        env = self.Env()
        env.update(RAD_LAUNCHER="mpirun", RAD_RESULTS_ROOT=direct, RAD_ROOT=SOURCE_DIR)
        res = subprocess.run(["sbatch", "--parsable", "--job-name=ff-direct", "--ntasks=2", "--cpus-per-task=1",
                              "--time=00:05:00", "--output=%s/%%x-%%j.out" % self.tmp,
                              "jobs/slurm/formfactors.sbatch", "--input", SCENE, "--subdiv", "1", "--quiet"],
                             cwd=SOURCE_DIR, env=env, capture_output=True, text=True, timeout=30)
        self.assertEqual(res.returncode, 0, res.stderr)
        job_id = res.stdout.strip().split(";")[0]
        states = self.slurm.wait_for_jobs([job_id], timeout=90)
        log = os.path.join(self.tmp, "ff-direct-%s.out" % job_id)
        self.assertEqual(states[job_id], "COMPLETED", scaling_checks.ReadText(log) if os.path.exists(log) else "")
        folder = os.path.join(direct, "ff-direct-%s" % job_id)   # results folder named after the job
        job = scaling_checks.ReadJson(os.path.join(folder, "job.json"))
        self.assertEqual((job["launcher"], job["ranks"], job["exit_code"]), ("mpirun", 2, 0))
        self.assertEqual(scaling_checks.ReadJson(os.path.join(folder, "timings.json"))["ranks"], 2)
        import h5py
        import numpy as np
        with h5py.File(os.path.join(folder, "formfactors.h5"), "r") as f:
            self.assertTrue(np.array_equal(f["formfactors/F"][...], F))

    def test_2_failing_run_cancels_collect(self):
        out = os.path.join(self.tmp, "failing")
        res = self.Submit(["bash", "jobs/slurm/strong_scaling.sh", "--scene", SCENE, "--subdiv", "0", "--ranks", "1",
                           "--out", out, "--wait", "--wait-timeout", "60", "--", "--shadow-rays", "0"])
        self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
        self.assertIn("strong-r1 (job", res.stderr)
        _, run_ids, collect_id = self.StudyJobs(out)
        self.assertEqual(self.slurm.job_state(run_ids[0]), "FAILED")
        self.assertEqual(self.slurm.job_state(collect_id), "CANCELLED")
        self.assertEqual(scaling_checks.ReadJson(os.path.join(out, "strong-r1", "job.json"))["exit_code"], 2)
        self.assertFalse(os.path.exists(os.path.join(out, "analysis")))

    def test_2a_signal_checkpoint_requeue(self):
        import h5py
        import numpy as np
        scene = ["--input", SCENE, "--subdiv", "3", "--quadrature-tolerance", "1e-8", "--quiet"]
        reference = os.path.join(self.tmp, "uninterrupted.h5")
        env = self.Env()
        res = subprocess.run(["mpirun", "--oversubscribe", "--bind-to", "none", "-n", "2", EXE, "formfactors",
                              "--output", reference] + scene, cwd=SOURCE_DIR, env=env, capture_output=True,
                             text=True, timeout=TIMEOUT_S)
        self.assertEqual(res.returncode, 0, res.stderr)
        root = os.path.join(self.tmp, "restartable")
        env.update(RAD_CHECKPOINT="1", RAD_RESULTS_ROOT=root, RAD_ROOT=SOURCE_DIR)
        res = subprocess.run(["sbatch", "--parsable", "--job-name=ff-restart", "--ntasks=2", "--cpus-per-task=1",
                              "--requeue", "--time=00:05:00", "--output=%s/%%x-%%j.out" % self.tmp,
                              "--open-mode=append", "jobs/slurm/formfactors.sbatch", "--checkpoint-every", "0.05"]
                             + scene, cwd=SOURCE_DIR, env=env, capture_output=True, text=True, timeout=30)
        self.assertEqual(res.returncode, 0, res.stderr)
        job_id = res.stdout.strip().split(";")[0]
        folder = os.path.join(root, "ff-restart-%s" % job_id)
        checkpoint = os.path.join(folder, "checkpoint", "checkpoint.json")
        log = os.path.join(self.tmp, "ff-restart-%s.out" % job_id)
        deadline = time.time() + 90
        while not os.path.exists(checkpoint):
            self.assertLess(time.time(), deadline, "no checkpoint: " + (scaling_checks.ReadText(log)
                                                                          if os.path.exists(log) else ""))
            time.sleep(0.05)
        res = subprocess.run(["scancel", "--signal=USR1", job_id], env=self.Env(), capture_output=True, text=True,
                             timeout=30)
        self.assertEqual(res.returncode, 0, res.stderr)
        deadline = time.time() + 120
        while self.slurm.job_field(job_id, "Restarts") in (None, "0"):
            self.assertLess(time.time(), deadline, "not requeued: " + scaling_checks.ReadText(log))
            self.assertNotEqual(self.slurm.job_state(job_id), "COMPLETED",
                                "the job completed before the signal: " + scaling_checks.ReadText(log))
            time.sleep(0.2)
        states = self.slurm.wait_for_jobs([job_id], timeout=150)
        text = scaling_checks.ReadText(log)
        self.assertEqual(states[job_id], "COMPLETED", text)
        self.assertEqual(self.slurm.job_field(job_id, "Restarts"), "1")
        self.assertIn("signalled (SIGUSR1): stopped after writing a checkpoint", text)
        self.assertIn("requeueing it", text)
        self.assertEqual(scaling_checks.ReadJson(os.path.join(folder, "job.json"))["exit_code"], 0)
        self.assertEqual(os.listdir(os.path.join(folder, "checkpoint")), [])
        with h5py.File(os.path.join(folder, "formfactors.h5"), "r") as f, h5py.File(reference, "r") as g:
            self.assertTrue(np.array_equal(f["formfactors/F"][...], g["formfactors/F"][...]))

    def test_3_stop_leaves_nothing(self):
        # Stops the sandbox early (tearDownClass then has nothing left to do) and checks what remains.
        root, daemons = self.sandbox_root, self.daemons
        self.slurm.stop()
        for name, proc in daemons.items():
            self.assertIsNotNone(proc.poll(), "%s still running" % name)
        self.assertFalse(os.path.exists(root), "%s not removed" % root)
        marker = ("%s=%s" % (slurm_sandbox.ENV_MARKER, root)).encode()
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open("/proc/%s/environ" % pid, "rb") as fh:
                    self.assertNotIn(marker, fh.read().split(b"\0"), "process %s outlived the sandbox" % pid)
            except OSError:
                continue


if __name__ == "__main__":
    reason = SkipReason()
    if reason:
        print("SKIP: " + reason)
        sys.exit(77)
    unittest.main()
