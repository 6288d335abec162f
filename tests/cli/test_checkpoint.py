#!/usr/bin/env python3
"""Checkpoint and restart of `formfactors` and `run` (issue 17): a run killed at any moment continues with --restart.

Checked, against an uninterrupted run of the same command at 2 ranks (the Cornell box with a sphere, 736 patches,
a checkpoint after every round of rows):
  - killed with SIGKILL (the whole process group: no handler runs) once 30 % of the rows are in the checkpoint and
    restarted on 1 rank; at 60 % and restarted on 4 ranks; while the outputs are being written and restarted on
    2 ranks: the raw file is byte for byte the uninterrupted one's, the HDF5 file's F and the counts of work in
    its attributes are the same, the restart says how many rows it found, and the checkpoint is gone once the
    outputs are complete;
  - SIGTERM to a run with checkpoints (float rows) writes a checkpoint first, then stops with exit 143 and one
    line naming it; restarted on 2 ranks the float rows are the uninterrupted run's;
  - refused with exit 2 and one line: a folder holding a checkpoint without --restart, a checkpoint of another
    job (another seed: named; the sparse operator's), --restart without --checkpoint-dir, a second run on the
    checkpoint folder of a run under way (locked from the start, the folder new to both); with --restart on an
    empty folder the run starts from the beginning and ends as the uninterrupted one;
  - `run` (a Cornell box with a sphere of reflectance 0.95 to 0.97, solved to 1e-12: about a hundred sweeps, an
    iterate kept after each) killed with SIGKILL during the solve and restarted on 2 ranks continues from the kept
    iterate and writes the B, residual history and solver attributes of a run never stopped, bit for bit;
    restarted on 1 rank, it says the iterate is of another split of the rows and solves from B = E, to the
    tolerance; SIGTERM during the solve keeps the iterate, stops with exit 143 and one line naming the sweep, and
    the restart continues from that sweep to the same bits; `run --refine 1` (a folder per pass, each locked
    until the outputs are complete) killed at 30 % of the second pass's rows and restarted on 2 ranks reads the first pass's rows back, solves and refines to the
    same patches, continues the second pass, and writes the patches, B and residuals of a run never stopped.
  - the sparse and hierarchical operators (each row alone in checkpointed runs; the matrix an HDF5 CSR file with
    dropped sums and far links): hierarchical killed at 40 % on 2 ranks and restarted on 3, sparse float rows
    stopped by SIGTERM (one process) and restarted on 2: every /formfactors dataset is that of a run without
    checkpoints, bit for bit, and every attribute (counts of work included) that of a checkpointed run never
    stopped;
  - `--method hemicube` (CSR rows, each traced whole; the checkpoint's matrix an HDF5 CSR file): killed with
    SIGKILL at 40 % on 2 ranks and restarted on 3 (each rank's block then holds rows done and rows to trace), and
    stopped by SIGTERM (float rows, one process) and restarted on 2 ranks: indptr, indices, data and the summary
    attributes are the uninterrupted run's; `run` with hemicube rows killed during the solve continues from the
    CSR sweeps' kept iterate to the same B and residuals; refused with exit 2 and one line: `--hemicube-mode
    gather` with a checkpoint, a checkpoint of the kernel's rows (another job: the method named), a truncated
    matrix (named, "damaged").

On a machine with a GPU for every rank (`--backend auto`), the same runs check the GPU's rows in rounds and its
hemicubes.

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_SOURCE_DIR).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_checkpoint.py [-v]
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402
from test_cli import CliTestCase, describe, program_stderr_lines, run  # noqa: E402

PATCHES = 736
COUNTS = ("pairs_exact_visibility", "pairs_ray_traced", "pairs_over_occluder_capacity",
          "pairs_at_cubature_depth_limit")


def done_rows(checkpoint):
    """Rows whose pairs checkpoint.json says are done (0 while there is none)."""
    try:
        with open(checkpoint) as fh:
            ranges = json.load(fh)["done"]
    except (OSError, ValueError, KeyError):
        return 0
    return sum(b - a for a, b in ranges)


def scene_copy(prefix):
    """A new folder holding a copy of the Cornell box with a sphere (the runs' own, so that nothing they do
    touches meshes/), and the copy's OBJ."""
    shared = tempfile.mkdtemp(prefix=prefix)
    for ext in ("obj", "mtl"):
        shutil.copy(os.path.join(test_cli.MESHES, "cornell_sphere." + ext), shared)
    return shared, os.path.join(shared, "cornell_sphere.obj")


def descendants(root):
    """`root` and the processes under it, parents before children."""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name) as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(name))
    order, queue = [], [root]
    while queue:
        pid = queue.pop(0)
        order.append(pid)
        queue.extend(children.get(pid, []))
    return order


class Interrupting(CliTestCase):
    """Runs started in the background, waited on and killed."""

    def start(self, args, ranks):
        return subprocess.Popen(test_cli.command(args, ranks), cwd=self.tmp, env=test_cli.ENV, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, universal_newlines=True, start_new_session=True)

    def wait_for(self, proc, ready, what):
        deadline = time.time() + 120
        while not ready():
            if proc.poll() is not None:
                _, err = proc.communicate()
                self.fail("the run ended before %s (exit %s): %s" % (what, proc.returncode, err[-2000:]))
            self.assertLess(time.time(), deadline, "waited too long for " + what)
            time.sleep(0.002)

    def kill(self, proc):
        """SIGKILL to the launcher and every process under it (Open MPI's ranks have process groups of their
        own), ranks first: as a node failure or the scheduler would, no handler runs."""
        for pid in reversed(descendants(proc.pid)):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.communicate(timeout=60)


class UninterruptedFirst(Interrupting):
    """The Cornell box with a sphere, and the subclass's job (`job`, `read`) run uninterrupted on 2 ranks in double
    and float rows: the references a restarted run must equal."""

    @classmethod
    def setUpClass(cls):
        cls.shared, cls.scene = scene_copy("radiosity_checkpoint_")
        cls.reference = {}
        for precision in ("double", "float"):
            out = os.path.join(cls.shared, precision + ".h5")
            proc = run(cls.job(out, precision), ranks=2, cwd=cls.shared)
            if proc.returncode != 0:
                raise AssertionError("the uninterrupted run failed" + describe(proc))
            cls.reference[precision] = cls.read(out)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.shared, True)


class TestCheckpoint(UninterruptedFirst):
    @classmethod
    def job(cls, out, precision="double", folder=None):
        args = ["formfactors", "--input", cls.scene, "--subdiv", "2", "--precision", precision, "--output", out,
                "--raw", out[:-3] + ".raw"]
        if folder:
            args += ["--checkpoint-dir", folder, "--checkpoint-every", "0"]
        return args

    @staticmethod
    def read(out):
        with open(out[:-3] + ".raw", "rb") as fh:
            raw = fh.read()
        with h5py.File(out, "r") as f:
            F = f["formfactors/F"][...]
            counts = {name: float(f["formfactors/F"].attrs[name]) for name in COUNTS}
        return raw, F, counts

    def assertLikeUninterrupted(self, out, precision="double"):
        raw, F, counts = self.read(out)
        want_raw, want_F, want_counts = self.reference[precision]
        self.assertEqual(len(raw), len(want_raw))
        self.assertTrue(raw == want_raw, "the raw file differs from the uninterrupted run's")
        self.assertEqual(F.dtype, want_F.dtype)
        self.assertTrue(np.array_equal(F, want_F), "F differs from the uninterrupted run's")
        self.assertEqual(counts, want_counts)

    def restart(self, out, folder, ranks, precision="double", found=None):
        proc = run(self.job(out, precision, folder) + ["--restart"], ranks=ranks, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        said = [line for line in proc.stderr.splitlines() if "restart:" in line]
        self.assertEqual(len(said), 1, describe(proc))
        if found is not None:
            self.assertIn("the pairs of %d of %d rows" % (found, PATCHES), said[0])
        self.assertLikeUninterrupted(out, precision)
        self.assertEqual(sorted(os.listdir(folder)), [], "the checkpoint outlived the complete outputs")

    def killed_at(self, share, restart_ranks):
        out, folder = self.path("f.h5"), self.path("checkpoint")
        checkpoint = os.path.join(folder, "checkpoint.json")
        proc = self.start(self.job(out, folder=folder), 2)
        self.wait_for(proc, lambda: done_rows(checkpoint) >= share * PATCHES, "%d %% of the rows" % (100 * share))
        self.kill(proc)
        found = done_rows(checkpoint)
        self.assertGreaterEqual(found, share * PATCHES)
        self.assertLess(found, PATCHES, "the run finished its rows before it was killed")
        self.assertFalse(os.path.exists(out))
        self.restart(out, folder, restart_ranks, found=found)

    def test_killed_at_30_percent_restarted_on_1_rank(self):
        self.killed_at(0.3, 1)

    def test_killed_at_60_percent_restarted_on_4_ranks(self):
        self.killed_at(0.6, 4)

    def test_killed_while_writing_restarted_on_2_ranks(self):
        out, folder = self.path("f.h5"), self.path("checkpoint")
        partials = [out + ".partial", out[:-3] + ".raw.partial"]
        for attempt in range(5):  # the write lasts tens of milliseconds: caught by polling, almost always at once
            proc = self.start(self.job(out, folder=folder), 2)
            self.wait_for(proc, lambda: any(os.path.exists(p) for p in partials), "the outputs' write")
            self.kill(proc)
            if not os.path.exists(out[:-3] + ".raw"):
                break
            shutil.rmtree(folder)
            for name in (out, out[:-3] + ".raw"):
                if os.path.exists(name):
                    os.remove(name)
        else:
            self.skipTest("the outputs were complete before every kill")
        self.restart(out, folder, 2, found=PATCHES)

    def test_sigterm_writes_a_checkpoint_then_stops(self):
        out, folder = self.path("f.h5"), self.path("checkpoint")
        checkpoint = os.path.join(folder, "checkpoint.json")
        proc = self.start(self.job(out, "float", folder), None)
        self.wait_for(proc, lambda: done_rows(checkpoint) >= 0.2 * PATCHES, "20 % of the rows")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 143, err)
        said = [line for line in program_stderr_lines(err) if "SIGTERM" in line]
        self.assertEqual(len(said), 1, err)
        self.assertIn("checkpoint", said[0])
        self.assertIn("--restart", said[0])
        found = done_rows(checkpoint)
        self.assertGreater(found, 0)
        self.assertFalse(os.path.exists(out))
        self.assertEqual([name for name in os.listdir(folder) if name.endswith(".partial")], [])
        self.restart(out, folder, 2, "float", found=found)

    def refused(self, args, words, ranks=None):
        proc = run(args, ranks=ranks, cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        lines = [line for line in program_stderr_lines(proc.stderr) if not line.startswith("Run with --help")]
        self.assertEqual(len(lines), 1, describe(proc))
        for word in words:
            self.assertIn(word, lines[0], describe(proc))

    def test_refusals_and_a_restart_with_nothing_to_continue(self):
        out, folder = self.path("f.h5"), self.path("checkpoint")
        checkpoint = os.path.join(folder, "checkpoint.json")
        self.refused(self.job(out) + ["--restart"], ["--restart needs --checkpoint-dir"])
        # A checkpoint of the kernel's dense rows is not the sparse operator's.
        # Nothing to continue: a fresh start, ending as the uninterrupted run.
        self.restart(out, folder, 2)
        # A checkpoint left by a killed run: refused without --restart, and for another seed.
        proc = self.start(self.job(out, folder=folder), 2)
        self.wait_for(proc, lambda: done_rows(checkpoint) > 0, "a checkpoint")
        self.kill(proc)
        self.refused(self.job(out, folder=folder), ["add --restart"], ranks=2)
        self.refused(self.job(out, folder=folder) + ["--restart", "--seed", "7", "--quiet"], ["another job", "seed"])
        self.refused(["formfactors", "--input", self.scene, "--subdiv", "2", "--output", out, "--checkpoint-dir",
                      folder, "--restart", "--operator", "sparse", "--quiet"], ["another job", "operator"], ranks=2)
        self.assertTrue(os.path.exists(checkpoint), "a refused run removed the checkpoint")

    def test_two_runs_cannot_start_one_checkpoint(self):
        # The folder is new to both: the first makes it and locks its checkpoint before any row.
        folder = self.path("checkpoint")
        first = self.start(self.job(self.path("f.h5"), folder=folder), None)
        self.wait_for(first, lambda: done_rows(os.path.join(folder, "checkpoint.json")) > 0, "a checkpoint")
        self.refused(self.job(self.path("g.h5"), folder=folder) + ["--restart"],
                     ["another radiosity run (process %d" % first.pid, "checkpoint.json.lock"])
        _, err = first.communicate(timeout=300)
        self.assertEqual(first.returncode, 0, err)
        self.assertEqual(sorted(os.listdir(folder)), [], "the checkpoint or its lock outlived the outputs")
        self.assertFalse(os.path.exists(self.path("g.h5")))


def kept_sweep(solve_json):
    """The sweep whose iterate solve.json keeps (0 while there is none)."""
    try:
        with open(solve_json) as fh:
            return json.load(fh)["iteration"]
    except (OSError, ValueError, KeyError):
        return 0


class TestSolveCheckpoint(Interrupting):
    @classmethod
    def setUpClass(cls):
        cls.shared = tempfile.mkdtemp(prefix="radiosity_solve_checkpoint_")
        # Reflectance near 1: Gauss-Seidel needs about a hundred sweeps to 1e-12, time to stop it in between.
        with open(os.path.join(test_cli.MESHES, "cornell_sphere.mtl")) as fh:
            mtl = "".join("Kd 0.97 0.96 0.95\n" if line.startswith("Kd ") else line for line in fh)
        with open(os.path.join(cls.shared, "bright.mtl"), "w") as fh:
            fh.write(mtl)
        with open(os.path.join(test_cli.MESHES, "cornell_sphere.obj")) as fh:
            obj = fh.read().replace("mtllib cornell_sphere.mtl", "mtllib bright.mtl")
        cls.scene = os.path.join(cls.shared, "bright.obj")
        with open(cls.scene, "w") as fh:
            fh.write(obj)
        # Gauss-Seidel is rank-local: a run on 2 ranks and one of a single process (no launcher) make other bits.
        cls.reference = {}
        for ranks in (2, None):
            out = os.path.join(cls.shared, "reference-%s" % ranks)
            proc = run(cls.job(out), ranks=ranks, cwd=cls.shared)
            if proc.returncode != 0:
                raise AssertionError("the uninterrupted run failed" + describe(proc))
            cls.reference[ranks] = cls.read(out)
            sweeps = int(cls.reference[ranks][2]["iterations"])
            if sweeps < 40:
                raise AssertionError("the solve took %d sweeps: too few to be stopped in between" % sweeps)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.shared, True)

    @classmethod
    def job(cls, out, folder=None):
        args = ["run", "--input", cls.scene, "--subdiv", "2", "--tolerance", "1e-12", "--output-dir", out]
        if folder:
            args += ["--checkpoint-dir", folder, "--checkpoint-every", "0"]
        return args

    @staticmethod
    def read(out):
        with h5py.File(os.path.join(out, "radiosity.h5"), "r") as f:
            attrs = {k: v for k, v in f["radiosity"].attrs.items() if k != "ranks"}
            return f["radiosity/B"][...], f["radiosity/residual"][...], attrs

    def stopped_during_the_solve(self, folder, out, ranks=2):
        """A run with checkpoints, once its solve has kept the iterate of a sweep past the fifth."""
        proc = self.start(self.job(out, folder), ranks)
        solve_json = os.path.join(folder, "solve.json")
        self.wait_for(proc, lambda: kept_sweep(solve_json) >= 5, "the iterate of the fifth sweep")
        return proc

    def restart(self, out, folder, ranks):
        proc = run(self.job(out, folder) + ["--restart"], ranks=ranks, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(sorted(os.listdir(folder)), [], "the checkpoint outlived the complete outputs")
        return [line for line in program_stderr_lines(proc.stderr) if "restart:" in line]

    def assertAsNeverStopped(self, out, ranks=2):
        B, residual, attrs = self.read(out)
        want_B, want_residual, want_attrs = self.reference[ranks]
        self.assertTrue(np.array_equal(B, want_B), "B differs from the uninterrupted run's")
        self.assertTrue(np.array_equal(residual, want_residual), "the residual history differs")
        self.assertEqual(attrs, want_attrs)

    def test_killed_during_the_solve_restarted_on_2_ranks(self):
        out, folder = self.path("out"), self.path("checkpoint")
        proc = self.stopped_during_the_solve(folder, out)
        self.kill(proc)
        kept = kept_sweep(os.path.join(folder, "solve.json"))
        self.assertLess(kept, self.reference[2][2]["iterations"], "the solve ended before it was killed")
        said = self.restart(out, folder, 2)
        self.assertIn("nothing left to compute", said[0])
        self.assertEqual(len(said), 2, said)
        self.assertIn("before sweep %d; continuing the solve" % kept, said[1])
        self.assertAsNeverStopped(out)

    def test_restarted_on_1_rank_solves_from_the_beginning(self):
        out, folder = self.path("out"), self.path("checkpoint")
        self.kill(self.stopped_during_the_solve(folder, out))
        said = self.restart(out, folder, 1)
        self.assertEqual(len(said), 2, said)
        self.assertIn("another solve (ranks (2 there, 1 here)", said[1])
        self.assertIn("solving from B = E", said[1])
        B, _, attrs = self.read(out)
        self.assertEqual(attrs["converged"], 1)
        # Another split of the rows makes other Gauss-Seidel iterates: the same solution, to the tolerance.
        want = self.reference[2][0]
        self.assertLess(np.max(np.abs(B - want)) / np.max(np.abs(want)), 1e-9)

    def test_sigterm_during_the_solve_keeps_the_iterate_then_stops(self):
        # One process without a launcher: the signal reaches the program itself (mpirun would handle it first).
        out, folder = self.path("out"), self.path("checkpoint")
        proc = self.stopped_during_the_solve(folder, out, None)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 143, err)
        said = [line for line in program_stderr_lines(err) if "SIGTERM" in line]
        self.assertEqual(len(said), 1, err)
        kept = kept_sweep(os.path.join(folder, "solve.json"))
        self.assertIn("iterate before sweep %d" % kept, said[0])
        self.assertIn("--restart", said[0])
        self.assertFalse(os.path.exists(os.path.join(out, "radiosity.h5")))
        self.assertEqual([name for name in os.listdir(folder) if name.endswith(".partial")], [])
        said = self.restart(out, folder, None)
        self.assertIn("before sweep %d; continuing the solve" % kept, said[1])
        self.assertAsNeverStopped(out, None)

    def test_hemicube_rows_keep_the_rows_and_the_iterate(self):
        # CSR rows: the rows' checkpoint holds them in HDF5, and the CSR sweeps keep their iterate.
        hemicube = ["--method", "hemicube", "--hemicube", "64"]
        reference = self.path("reference")
        proc = run(self.job(reference) + hemicube, ranks=2, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        out, folder = self.path("out"), self.path("checkpoint")
        proc = self.start(self.job(out, folder) + hemicube, 2)
        self.wait_for(proc, lambda: kept_sweep(os.path.join(folder, "solve.json")) >= 5, "the iterate of the fifth sweep")
        self.kill(proc)
        kept = kept_sweep(os.path.join(folder, "solve.json"))
        proc = run(self.job(out, folder) + hemicube + ["--restart"], ranks=2, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        said = [line for line in program_stderr_lines(proc.stderr) if "restart:" in line]
        self.assertEqual(len(said), 2, said)
        self.assertIn("nothing left to compute", said[0])
        self.assertIn("before sweep %d; continuing the solve" % kept, said[1])
        self.assertEqual(sorted(os.listdir(folder)), [], "the checkpoint outlived the complete outputs")
        B, residual, attrs = self.read(out)
        want_B, want_residual, want_attrs = self.read(reference)
        self.assertTrue(np.array_equal(B, want_B), "B differs from the uninterrupted run's")
        self.assertTrue(np.array_equal(residual, want_residual), "the residual history differs")
        self.assertEqual(attrs, want_attrs)

    def test_refinement_passes_keep_their_rows_each(self):
        # `run --refine`: each pass's F on its own patches, checkpointed in a folder of its own. Killed while the
        # second pass computes its rows, the restart reads the first pass's rows back, continues its solve to the
        # same B, refines to the same patches and continues the second pass's rows.
        scene = os.path.join(test_cli.MESHES, "cornell_sphere.obj")
        reference, out, folder = self.path("reference"), self.path("out"), self.path("checkpoint")

        def job(output):
            return ["run", "--input", scene, "--subdiv", "2", "--refine", "1", "--output-dir", output]
        proc = run(job(reference), ranks=2, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        with h5py.File(os.path.join(reference, "radiosity.h5"), "r") as f:
            refined = len(f["patches/area"])
        self.assertGreater(refined, PATCHES, "the refinement split no patch")
        checkpointed = job(out) + ["--checkpoint-dir", folder, "--checkpoint-every", "0"]
        proc = self.start(checkpointed, 2)
        second = os.path.join(folder, "refine-pass-1", "checkpoint.json")
        self.wait_for(proc, lambda: done_rows(second) >= 0.3 * refined, "30 % of the second pass's rows")
        # The first pass's checkpoint is still the run's: another run may not continue it meanwhile.
        other = run(job(self.path("other")) + ["--checkpoint-dir", folder, "--restart", "--quiet"], cwd=self.tmp)
        self.assertEqual(other.returncode, 2, describe(other))
        self.assertIn(os.path.join(folder, "checkpoint.json.lock"), other.stderr)
        self.kill(proc)
        found = done_rows(second)
        self.assertLess(found, refined, "the second pass ended before it was killed")
        proc = run(checkpointed + ["--restart"], ranks=2, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        said = [line for line in program_stderr_lines(proc.stderr) if "restart:" in line]
        self.assertEqual(len(said), 3, said)
        self.assertIn("of %d of %d rows; nothing left to compute" % (PATCHES, PATCHES), said[0])
        self.assertIn("continuing the solve", said[1])
        self.assertIn("refine-pass-1", said[2])
        self.assertIn("of %d of %d rows; computing the rest" % (found, refined), said[2])
        self.assertEqual(sorted(os.listdir(folder)), [], "a checkpoint outlived the complete outputs")
        with h5py.File(os.path.join(reference, "radiosity.h5"), "r") as want, \
                h5py.File(os.path.join(out, "radiosity.h5"), "r") as got:
            for name in ("patches/area", "patches/corners", "radiosity/B", "radiosity/residual"):
                self.assertTrue(np.array_equal(got[name][...], want[name][...]), name + " differs")
            self.assertEqual({k: v for k, v in got["radiosity"].attrs.items() if k != "ranks"},
                             {k: v for k, v in want["radiosity"].attrs.items() if k != "ranks"})
        # A later pass's checkpoint left alone (the first pass's removed by hand): refused up front, not after
        # the first pass is computed again.
        stale = os.path.join(self.path("stale"), "refine-pass-1")
        os.makedirs(stale)
        with open(os.path.join(stale, "checkpoint.json"), "w") as fh:
            fh.write("{}")
        proc = run(job(self.path("fresh")) + ["--checkpoint-dir", self.path("stale")], cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        said = program_stderr_lines(proc.stderr)
        self.assertEqual(len(said), 1, describe(proc))
        self.assertIn(os.path.join(stale, "checkpoint.json") + ": the checkpoint of an earlier run", said[0])
        self.assertNotIn("patches", proc.stderr, "the run computed before it refused")


HEMICUBE_ATTRIBUTES = ("nonzeros", "hemicube_rays", "row_sum_min", "row_sum_mean", "row_sum_max",
                       "sky_view_factor_min", "sky_view_factor_mean", "sky_view_factor_max")


class TestHemicubeCheckpoint(UninterruptedFirst):
    """--method hemicube: the checkpoint holds CSR rows, each traced whole; a restart reads them back."""

    @classmethod
    def job(cls, out, precision="double", folder=None):
        args = ["formfactors", "--input", cls.scene, "--subdiv", "2", "--method", "hemicube", "--hemicube", "64",
                "--precision", precision, "--output", out]
        if folder:
            args += ["--checkpoint-dir", folder, "--checkpoint-every", "0"]
        return args

    @staticmethod
    def read(out):
        with h5py.File(out, "r") as f:
            g = f["formfactors"]
            arrays = tuple(g[name][...] for name in ("indptr", "indices", "data"))
            return arrays, {name: float(g.attrs[name]) for name in HEMICUBE_ATTRIBUTES}

    def restart(self, out, folder, ranks, precision="double", found=None):
        proc = run(self.job(out, precision, folder) + ["--restart"], ranks=ranks, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        said = [line for line in proc.stderr.splitlines() if "restart:" in line]
        self.assertEqual(len(said), 1, describe(proc))
        self.assertIn("the pairs of %d of %d rows" % (found, PATCHES), said[0])
        arrays, attributes = self.read(out)
        want_arrays, want_attributes = self.reference[precision]
        for name, got, want in zip(("indptr", "indices", "data"), arrays, want_arrays):
            self.assertEqual(got.dtype, want.dtype, name)
            self.assertTrue(np.array_equal(got, want), name + " differs from the uninterrupted run's")
        self.assertEqual(attributes, want_attributes)
        self.assertEqual(sorted(os.listdir(folder)), [], "the checkpoint outlived the complete outputs")

    def test_killed_at_40_percent_restarted_on_3_ranks(self):
        out, folder = self.path("f.h5"), self.path("checkpoint")
        checkpoint = os.path.join(folder, "checkpoint.json")
        proc = self.start(self.job(out, folder=folder), 2)
        self.wait_for(proc, lambda: done_rows(checkpoint) >= 0.4 * PATCHES, "40 % of the rows")
        self.kill(proc)
        found = done_rows(checkpoint)
        self.assertLess(found, PATCHES, "the run finished its rows before it was killed")
        self.assertTrue(any(name.endswith(".h5") for name in os.listdir(folder)), os.listdir(folder))
        self.assertFalse(os.path.exists(out))
        # 3 ranks split the rows otherwise: each rank's block holds rows done and rows to trace.
        self.restart(out, folder, 3, found=found)

    def test_sigterm_writes_a_checkpoint_then_stops(self):
        out, folder = self.path("f.h5"), self.path("checkpoint")
        checkpoint = os.path.join(folder, "checkpoint.json")
        proc = self.start(self.job(out, "float", folder), None)
        self.wait_for(proc, lambda: done_rows(checkpoint) >= 0.2 * PATCHES, "20 % of the rows")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 143, err)
        said = [line for line in program_stderr_lines(err) if "SIGTERM" in line]
        self.assertEqual(len(said), 1, err)
        self.assertIn("--restart", said[0])
        found = done_rows(checkpoint)
        self.assertGreater(found, 0)
        self.assertFalse(os.path.exists(out))
        self.assertEqual([name for name in os.listdir(folder) if name.endswith(".partial")], [])
        self.restart(out, folder, 2, "float", found=found)

    def test_refusals(self):
        out, folder = self.path("f.h5"), self.path("checkpoint")
        checkpoint = os.path.join(folder, "checkpoint.json")
        proc = run(["run", "--input", self.scene, "--method", "hemicube", "--hemicube-mode", "gather",
                    "--output-dir", self.path("out"), "--checkpoint-dir", folder], cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertIn("--hemicube-mode gather keeps no rows", proc.stderr)
        # A checkpoint of the kernel's rows is of another job.
        proc = self.start(TestCheckpoint.job.__func__(self, out, folder=folder), 2)
        self.wait_for(proc, lambda: done_rows(checkpoint) > 0, "a checkpoint")
        self.kill(proc)
        proc = run(self.job(out, folder=folder) + ["--restart", "--quiet"], ranks=2, cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertIn("another job", proc.stderr)
        self.assertIn("method", proc.stderr)
        self.assertTrue(os.path.exists(checkpoint), "a refused run removed the checkpoint")
        # A damaged matrix: refused, naming it.
        shutil.rmtree(folder)
        proc = self.start(self.job(out, folder=folder), 2)
        self.wait_for(proc, lambda: done_rows(checkpoint) > 0, "a checkpoint")
        self.kill(proc)
        matrix = [os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".h5")]
        self.assertEqual(len(matrix), 1, os.listdir(folder))
        with open(matrix[0], "r+b") as fh:
            fh.truncate(os.path.getsize(matrix[0]) // 2)
        proc = run(self.job(out, folder=folder) + ["--restart", "--quiet"], ranks=2, cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        lines = program_stderr_lines(proc.stderr)
        self.assertEqual(len(lines), 1, describe(proc))
        self.assertIn(matrix[0], lines[0])
        self.assertIn("damaged", lines[0])


class TestSparseCheckpoint(Interrupting):
    """The sparse and hierarchical operators: each row computed alone in checkpointed runs (every pair from both of
    its rows' sides), the checkpoint's matrix an HDF5 CSR file with the rows' dropped sums and far links."""

    @classmethod
    def setUpClass(cls):
        cls.shared, cls.scene = scene_copy("radiosity_sparse_checkpoint_")
        cls.reference, cls.checkpointed = {}, {}
        for operator, precision in (("hierarchical", "double"), ("sparse", "float")):
            for folder in (None, os.path.join(cls.shared, "ck")):
                out = os.path.join(cls.shared, "%s-%s.h5" % (operator, folder is not None))
                proc = run(cls.job(out, operator, precision, folder), ranks=2, cwd=cls.shared)
                if proc.returncode != 0:
                    raise AssertionError("the uninterrupted run failed" + describe(proc))
                (cls.checkpointed if folder else cls.reference)[operator] = cls.read(out)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.shared, True)

    @classmethod
    def job(cls, out, operator, precision, folder=None):
        args = ["formfactors", "--input", cls.scene, "--subdiv", "2", "--operator", operator, "--precision", precision,
                "--output", out]
        if folder:
            args += ["--checkpoint-dir", folder, "--checkpoint-every", "0"]
        return args

    @staticmethod
    def read(out):
        with h5py.File(out, "r") as f:
            g = f["formfactors"]
            datasets = {name: g[name][...] for name in g}
            return datasets, {k: v for k, v in g.attrs.items() if k != "ranks"}

    def assertAsNeverStopped(self, out, operator):
        datasets, attributes = self.read(out)
        want, _ = self.reference[operator]  # F, bit for bit, as computed without checkpoints
        self.assertEqual(sorted(datasets), sorted(want))
        if operator == "hierarchical":
            self.assertIn("link_value", datasets)
        self.assertIn("dropped_row_sum", datasets)
        for name in want:
            self.assertEqual(datasets[name].dtype, want[name].dtype, name)
            self.assertTrue(np.array_equal(datasets[name], want[name]), name + " differs from the run's without checkpoints")
        # The counts of work as a checkpointed run never stopped counts them (its rows evaluate pairs alone).
        _, want_attributes = self.checkpointed[operator]
        for name in want_attributes:
            self.assertEqual(str(attributes[name]), str(want_attributes[name]), name)

    def restart(self, out, folder, operator, precision, ranks, found):
        proc = run(self.job(out, operator, precision, folder) + ["--restart"], ranks=ranks, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        said = [line for line in proc.stderr.splitlines() if "restart:" in line]
        self.assertEqual(len(said), 1, describe(proc))
        self.assertIn("the pairs of %d of %d rows" % (found, PATCHES), said[0])
        self.assertAsNeverStopped(out, operator)
        self.assertEqual(sorted(os.listdir(folder)), [], "the checkpoint outlived the complete outputs")

    def test_hierarchical_killed_at_40_percent_restarted_on_3_ranks(self):
        out, folder = self.path("f.h5"), self.path("checkpoint")
        checkpoint = os.path.join(folder, "checkpoint.json")
        proc = self.start(self.job(out, "hierarchical", "double", folder), 2)
        self.wait_for(proc, lambda: done_rows(checkpoint) >= 0.4 * PATCHES, "40 % of the rows")
        self.kill(proc)
        found = done_rows(checkpoint)
        self.assertLess(found, PATCHES, "the run finished its rows before it was killed")
        self.restart(out, folder, "hierarchical", "double", 3, found)

    def test_sparse_float_stopped_by_sigterm_restarted_on_2_ranks(self):
        out, folder = self.path("f.h5"), self.path("checkpoint")
        checkpoint = os.path.join(folder, "checkpoint.json")
        proc = self.start(self.job(out, "sparse", "float", folder), None)
        self.wait_for(proc, lambda: done_rows(checkpoint) >= 0.2 * PATCHES, "20 % of the rows")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 143, err)
        found = done_rows(checkpoint)
        self.assertGreater(found, 0)
        self.assertFalse(os.path.exists(out))
        self.restart(out, folder, "sparse", "float", 2, found)


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__))
