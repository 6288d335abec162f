#!/usr/bin/env python3
"""Memory checked before it is used: `--memory-limit` on formfactors, run, solve and export, at 1 and 2 ranks.

A job whose F does not fit in the memory a rank may use stops at once on every rank with exit code 2 and one
line giving the bytes needed and available per rank, leaving nothing in the output folder; a limit of exactly
the bytes needed lets it run; `--precision float` halves the F memory of `formfactors` and `run`, whose solver
then works from the float32 rows. These are the checks of the dense operator (`--operator dense`): the
default, auto, takes a sparse or hierarchical operator where dense F does not fit (test_sparse.py).

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_MPIEXEC_FLAGS, RAD_SOURCE_DIR).

Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_memory.py [-v] [unittest options]
"""

import os
import re
import subprocess
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402  (helpers shared with the CLI tests)
from test_cli import CliTestCase, describe, program_stderr_lines, read_f  # noqa: E402

CORNELL_BOX = os.path.join(test_cli.MESHES, "cornell_box.obj")  # 17 polygons: 17 x 4^K patches at --subdiv K

NEED = re.compile(r"need (\d+) bytes per rank")
AVAILABLE = re.compile(r"(\d+) bytes per rank are available")
FLOAT_FITS = re.compile(r"--precision float: (yes|no) \((\d+) bytes per rank\)")
# The progress line: "..., 9.0 MiB of F per rank (float64, 9.5 MiB needed in all; limit 512.0 MiB from ...)".
PROGRESS = re.compile(r"(\d+\.\d) MiB of F per rank \((float32|float64), (\d+\.\d) MiB needed in all; limit (.*)\)")
RANK_SECONDS = re.compile(r"^rank-seconds (\d+\.\d+)$")

# Each rank's radiosity process timed from inside the job, so that the launcher's own start and teardown
# (1-2 s for mpiexec to report a failed job on a loaded machine) are not counted.
TIMER = ("import subprocess, sys, time\n"
         "t = time.monotonic()\n"
         "code = subprocess.call(sys.argv[1:])\n"
         "sys.stderr.write('rank-seconds %.3f\\n' % (time.monotonic() - t))\n"
         "sys.exit(code)\n")


def timed_run(args, ranks, cwd):
    """Runs radiosity alone (ranks None) or under mpiexec; returns the process and the slowest rank's seconds.

    The rank-seconds lines are removed from proc.stderr."""
    if ranks is None:
        start = time.monotonic()
        proc = test_cli.run(args, None, cwd=cwd)
        return proc, time.monotonic() - start
    cmd = ([test_cli.MPIEXEC] + test_cli.MPIEXEC_FLAGS + ["-n", str(ranks), sys.executable, "-c", TIMER,
                                                           test_cli.EXE] + list(args))
    proc = subprocess.run(cmd, cwd=cwd, env=test_cli.ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=test_cli.COMMAND_TIMEOUT_S)
    seconds, kept = [], []
    for line in proc.stderr.splitlines():
        m = RANK_SECONDS.match(line.strip())
        if m:
            seconds.append(float(m.group(1)))
        else:
            kept.append(line)
    proc.stderr = "\n".join(kept) + "\n"
    if len(seconds) != ranks:
        raise AssertionError("expected %d rank-seconds lines, got %d:%s" % (ranks, len(seconds), describe(proc)))
    return proc, max(seconds)


def progress_of(proc):
    for line in proc.stderr.splitlines():
        m = PROGRESS.search(line)
        if m:
            return float(m.group(1)), m.group(2), float(m.group(3)), m.group(4)
    raise AssertionError("no '... MiB of F per rank (...)' progress line:" + describe(proc))


class MemoryTestCase(CliTestCase):
    def cornell_job(self, command, ranks):
        """A fresh output folder and the arguments of `formfactors` or `run` on the Cornell box at subdiv 2."""
        out_dir = self.path("%s%d" % (command, ranks or 1))
        os.mkdir(out_dir)
        if command == "formfactors":
            return out_dir, ["formfactors", "--operator", "dense", "--input", CORNELL_BOX, "--subdiv", "2", "--output",
                             os.path.join(out_dir, "F.h5")]
        return out_dir, ["run", "--operator", "dense", "--input", CORNELL_BOX, "--subdiv", "2", "--output-dir", out_dir,
                         "--width", "32", "--height", "32"]

    def refused(self, args, ranks, out_dir, limit_bytes=None, names=()):
        """Exit code 2 within 2 s, one line with the bytes needed and available, nothing in out_dir.

        Returns (needed, available, line)."""
        proc, seconds = timed_run(args, ranks, self.tmp)
        self.assertEqual(proc.returncode, 2, "expected exit code 2:" + describe(proc))
        lines = program_stderr_lines(proc.stderr)
        self.assertEqual(len(lines), 1, "expected exactly one line on stderr:" + describe(proc))
        line = lines[0]
        self.assertTrue(line.startswith("radiosity: error: "), line)
        for name in names:
            self.assertIn(name, line)
        need, available = NEED.search(line), AVAILABLE.search(line)
        self.assertTrue(need and available, "the line must give the bytes needed and available per rank: " + line)
        need, available = int(need.group(1)), int(available.group(1))
        self.assertGreater(need, available, line)
        if limit_bytes is not None:
            self.assertEqual(available, limit_bytes, line)
        self.assertLess(seconds, 2.0,
                        "a refused job must stop at once, not after %.2f s:%s" % (seconds, describe(proc)))
        self.assertEqual(sorted(os.listdir(out_dir)), [], "files left behind:" + describe(proc))
        return need, available, line


class TestTooLittleMemory(MemoryTestCase):
    def test_formfactors_refused_at_one_and_two_ranks(self):
        # --subdiv 4: 4352 patches, 145 MiB of F on one rank and minutes of work: refused before any of it.
        for ranks in (None, 2):
            with self.subTest(ranks=ranks or 1):
                out_dir = self.path("ff%d" % (ranks or 1))
                os.mkdir(out_dir)
                need, _, line = self.refused(
                    ["formfactors", "--operator", "dense",
                     "--input", CORNELL_BOX, "--subdiv", "4", "--output", os.path.join(out_dir, "F.h5"),
                     "--raw", os.path.join(out_dir, "F.raw"), "--memory-limit", "16M"],
                    ranks, out_dir, limit_bytes=16 << 20, names=["cornell_box.obj", "--memory-limit"])
                n = 17 * 4 ** 4
                rows = -(-n // (ranks or 1))
                self.assertGreaterEqual(need, rows * n * 8, "the rows of F alone are more than that: " + line)
                # What would fit: more ranks, float32 (not enough here), a coarser subdivision.
                self.assertRegex(line, r"what would fit: \d+ ranks with as much memory each")
                self.assertIn("--precision float: no", line)
                self.assertIn("--subdiv 3 (1088 patches)", line)

    def test_run_refused_at_one_and_two_ranks_and_leaves_no_folder(self):
        for ranks in (None, 2):
            with self.subTest(ranks=ranks or 1):
                parent = self.path("parent%d" % (ranks or 1))
                os.mkdir(parent)
                # A folder run would create: not created, or removed again.
                self.refused(["run", "--operator", "dense",
                              "--input", CORNELL_BOX, "--output-dir", os.path.join(parent, "out"),
                              "--memory-limit", "4MiB"], ranks, parent, limit_bytes=4 << 20,
                             names=["cornell_box.obj"])
                # A folder that exists stays, empty.
                existing = self.path("existing%d" % (ranks or 1))
                os.mkdir(existing)
                self.refused(["run", "--operator", "dense",
                              "--input", CORNELL_BOX, "--output-dir", existing, "--memory-limit", "4194304"],
                             ranks, existing, limit_bytes=4 << 20)
                self.assertTrue(os.path.isdir(existing))

    def test_solve_and_export_refused(self):
        source = self.formfactors(CORNELL_BOX, "F", 2, extra=["--precision", "float"])
        out_dir = self.path("out")
        os.mkdir(out_dir)
        for ranks in (None, 2):
            with self.subTest(ranks=ranks or 1):
                _, _, line = self.refused(["solve", "--formfactors", source, "--output", os.path.join(out_dir, "B.h5"),
                                           "--memory-limit", "64K"], ranks, out_dir, limit_bytes=64 << 10,
                                          names=["F.h5"])
                self.assertRegex(line, r"a matrix of at most \d+ patches")
                self.refused(["export", "--formfactors", source, "--format", "raw", "--output",
                              os.path.join(out_dir, "F.raw"), "--memory-limit", "256K"], ranks, out_dir,
                             limit_bytes=256 << 10, names=["F.h5"])

    def test_bad_sizes(self):
        out_dir = self.path("out")
        os.mkdir(out_dir)
        for size, operator in [(s, "dense") for s in ("12X", "0", "-5G", "1.5", "lots")] + [("lots", "auto")]:
            with self.subTest(size=size, operator=operator):  # auto says it once, not for each operator it tries
                proc = test_cli.run(["formfactors", "--operator", operator,
                                     "--input", CORNELL_BOX, "--output", os.path.join(out_dir, "F.h5"),
                                     "--memory-limit", size], None, cwd=self.tmp)
                self.assertEqual(proc.returncode, 2, describe(proc))
                lines = program_stderr_lines(proc.stderr)
                self.assertEqual(len(lines), 1, describe(proc))
                self.assertEqual(lines[0].count("--memory-limit '%s'" % size), 1, lines[0])
                self.assertEqual(os.listdir(out_dir), [])


def memory_and_swap_bytes():
    """MemTotal + SwapTotal of this machine, or None where /proc/meminfo cannot be read."""
    try:
        with open("/proc/meminfo") as fh:
            fields = dict(line.split(":", 1) for line in fh if ":" in line)
        return sum(int(fields[k].split()[0]) * 1024 for k in ("MemTotal", "SwapTotal"))
    except (OSError, KeyError, ValueError):
        return None


class TestAllocationFailure(MemoryTestCase):
    def test_an_allocation_that_fails_after_the_check_is_one_line_and_exit_2(self):
        # --memory-limit 1P lets the check pass; the rows then cannot be had. Only where the kernel refuses an
        # allocation larger than memory and swap (vm.overcommit_memory 0 or 2): with 1 it would grant it, and
        # filling it would bring the OOM killer instead.
        try:
            with open("/proc/sys/vm/overcommit_memory") as fh:
                mode = int(fh.read())
        except (OSError, ValueError):
            self.skipTest("/proc/sys/vm/overcommit_memory unreadable")
        if mode == 1:
            self.skipTest("vm.overcommit_memory is 1: an allocation larger than memory would be granted")
        total = memory_and_swap_bytes()
        if total is None:
            self.skipTest("/proc/meminfo unreadable")
        for ranks in (None, 2):
            with self.subTest(ranks=ranks or 1):
                # The coarsest --subdiv whose rows on one rank are twice memory and swap.
                subdiv = next((k for k in range(5, 10) if (17 * 4 ** k) ** 2 * 8 // (ranks or 1) > 2 * total), None)
                if subdiv is None:
                    self.skipTest("this machine has more memory than --subdiv 9 of the Cornell box needs")
                out_dir = self.path("oom%d" % (ranks or 1))
                os.mkdir(out_dir)
                proc, _ = timed_run(["formfactors", "--operator", "dense",
                                     "--input", CORNELL_BOX, "--subdiv", str(subdiv), "--output",
                                     os.path.join(out_dir, "F.h5"), "--memory-limit", "1P", "--quiet"], ranks,
                                    self.tmp)
                self.assertEqual(proc.returncode, 2, describe(proc))
                lines = program_stderr_lines(proc.stderr)
                self.assertEqual(len(lines), 1, "expected exactly one line on stderr:" + describe(proc))
                self.assertRegex(lines[0], r"^radiosity: error: out of memory on rank \d+ allocating the rank's rows")
                self.assertNotIn("bad_alloc", proc.stderr)
                self.assertEqual(os.listdir(out_dir), [], describe(proc))


class TestJustEnoughMemory(MemoryTestCase):
    def test_the_bytes_needed_are_enough_and_one_less_is_not(self):
        # The need the refusal names is the exact boundary, at 1 and 2 ranks, for formfactors and run.
        for command in ("formfactors", "run"):
            for ranks in (None, 2):
                with self.subTest(command=command, ranks=ranks or 1):
                    out_dir, args = self.cornell_job(command, ranks)
                    need, _, _ = self.refused(args + ["--memory-limit", "1K"], ranks, out_dir)
                    self.refused(args + ["--memory-limit", str(need - 1)], ranks, out_dir, limit_bytes=need - 1)
                    proc, _ = timed_run(args + ["--memory-limit", str(need)], ranks, self.tmp)
                    self.assertEqual(proc.returncode, 0, "a limit of exactly the need must run:" + describe(proc))
                    f_mib, dtype, total_mib, limit = progress_of(proc)
                    self.assertEqual(dtype, "float64")
                    self.assertAlmostEqual(total_mib, need / 2.0 ** 20, delta=0.051)
                    self.assertIn("from --memory-limit", limit)
                    n = 17 * 16
                    self.assertAlmostEqual(f_mib, -(-n // (ranks or 1)) * n * 8 / 2.0 ** 20, delta=0.051)
                    expected = ["F.h5", "F.xmf"] if command == "formfactors" else [
                        "image.exr", "image.png", "radiosity.h5", "radiosity.xmf", "summary.txt", "timings.json"]
                    self.assertEqual(sorted(os.listdir(out_dir)), expected)

    def test_default_limit_is_the_nodes_memory(self):
        proc = self.rad_ok(["formfactors", "--operator", "dense",
                            "--input", CORNELL_BOX, "--subdiv", "1", "--output", self.path("F.h5")], 2)
        _, _, _, limit = progress_of(proc)
        self.assertRegex(limit, r"from the node's available memory \(.*\) shared by 2 rank\(s\)")


class TestFloatHalvesTheMemory(MemoryTestCase):
    def test_gpu_refusal_names_what_float_needs_there(self):
        """On the GPU backend float rows also take a fixed staging buffer (larger than this small F): the float64
        refusal's figure for float32 includes it. Needs a CUDA device."""
        version = test_cli.run(["--version"])
        if "gpu (CUDA" not in version.stdout or "devices: 0" in version.stdout:
            self.skipTest("no CUDA device: " + version.stdout.strip().splitlines()[-1])
        out_dir, args = self.cornell_job("formfactors", None)
        args += ["--backend", "gpu"]
        _, _, line = self.refused(args + ["--memory-limit", "256K"], None, out_dir)
        need32, _, _ = self.refused(args + ["--memory-limit", "256K", "--precision", "float"], None, out_dir)
        predicted = FLOAT_FITS.search(line)
        self.assertTrue(predicted, line)
        self.assertEqual(int(predicted.group(2)), need32)

    def test_formfactors_and_run_need_half_the_f_memory(self):
        for command in ("formfactors", "run"):
            for ranks in (None, 2):
                with self.subTest(command=command, ranks=ranks or 1):
                    out_dir, args = self.cornell_job(command, ranks)
                    # The CPU backend's accounting (the GPU's: test_gpu_refusal_names_what_float_needs_there).
                    args += ["--backend", "cpu"]
                    # The refusals give exact bytes: float64's names what float32 would need, and that is what
                    # float32 needs; F is then half, and so is the pair exchange at 2 ranks.
                    need64, _, line = self.refused(args + ["--memory-limit", "256K"], ranks, out_dir)
                    need32, _, _ = self.refused(args + ["--memory-limit", "256K", "--precision", "float"], ranks,
                                                out_dir)
                    predicted = FLOAT_FITS.search(line)
                    self.assertTrue(predicted, line)
                    self.assertEqual(int(predicted.group(2)), need32)
                    n = 17 * 16
                    rows = -(-n // (ranks or 1))
                    f64 = rows * n * 8
                    if ranks is None:
                        self.assertEqual(need64 - need32, f64 // 2)
                    else:  # and the exchange's buffers, which hold F's type too
                        self.assertGreater(need64 - need32, f64 // 2)
                        self.assertLess(need64 - need32, f64)
                    # A limit between the two: float64 refused, saying float32 fits; float32 runs.
                    between = str((need32 + need64) // 2)
                    _, _, line = self.refused(args + ["--memory-limit", between], ranks, out_dir)
                    self.assertIn("--precision float: yes (%d bytes per rank)" % need32, line)
                    proc, _ = timed_run(args + ["--memory-limit", between, "--precision", "float"], ranks, self.tmp)
                    self.assertEqual(proc.returncode, 0, describe(proc))
                    # The progress line: half the MiB of F, as float32.
                    f32_mib, dtype, _, _ = progress_of(proc)
                    self.assertEqual(dtype, "float32")
                    self.assertAlmostEqual(f32_mib, f64 / 2 / 2.0 ** 20, delta=0.051)

    def test_run_solves_from_the_float_rows(self):
        # run --precision float keeps F in float32 and solves from it: the same B as solve on that F, and F
        # itself the float64 matrix rounded once.
        out = self.path("run")
        self.rad_ok(["run", "--operator", "dense",
                     "--input", CORNELL_BOX, "--subdiv", "2", "--output-dir", out, "--precision", "float",
                     "--save-formfactors", "--width", "16", "--height", "16", "--quiet"], 2)
        f32 = read_f(os.path.join(out, "radiosity.h5"))
        self.assertEqual(f32.dtype, np.float32)
        f64 = read_f(self.formfactors(CORNELL_BOX, "F64", 2, ranks=2))
        self.assertTrue(np.array_equal(f32, f64.astype(np.float32)))
        solved = self.path("B.h5")
        self.rad_ok(["solve", "--formfactors", os.path.join(out, "radiosity.h5"), "--output", solved, "--quiet"], 2)
        with h5py.File(os.path.join(out, "radiosity.h5"), "r") as a, h5py.File(solved, "r") as b:
            self.assertTrue(np.array_equal(a["radiosity/B"][...], b["radiosity/B"][...]))
            self.assertTrue(np.array_equal(a["radiosity/residual"][...], b["radiosity/residual"][...]))

    def test_float_rows_identical_at_any_rank_count(self):
        # Shadow rays and the pair exchange in float32: the same bits at 1, 2 and 3 ranks, cyclic and block, and
        # those of the float64 matrix rounded once.
        base = ["formfactors", "--operator", "dense",
                "--input", test_cli.CORNELL_SPHERE, "--subdiv", "1", "--visibility", "rays",
                "--shadow-rays", "8", "--quiet"]
        reference = read_f(self.formfactors(test_cli.CORNELL_SPHERE, "d", 1,
                                            extra=["--visibility", "rays", "--shadow-rays", "8"]))
        for ranks, extra in ((None, []), (2, []), (3, []), (2, ["--distribution", "block"])):
            with self.subTest(ranks=ranks or 1, extra=extra):
                out = self.path("f%d%s.h5" % (ranks or 1, "".join(extra)))
                self.rad_ok(base + ["--output", out, "--precision", "float"] + extra, ranks)
                F = read_f(out)
                self.assertEqual(F.dtype, np.float32)
                self.assertTrue(np.array_equal(F, reference.astype(np.float32)))


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__, announce=True))
