#!/usr/bin/env python3
"""Hostile and careless use (issue 17, first part): what the program refuses before it works, and how it stops.

Checked:
  - every numeric option refuses NaN and infinities (CLI11's range checks let NaN through: a NaN quadrature
    tolerance ran forever), and a field of view of 0 degrees is refused: exit 2, one line, nothing written;
  - an output that is an input (the scene, its materials, the F or radiosity file read) or another output is
    refused up front, and the input is left as it was;
  - hostile HDF5 files are refused with one line, not read out of bounds or followed: F of the wrong shape
    (N x (N - 1), 20000 x 1, 1-D), a 2-D /patches/area, a negative reflectance or emission, NaN in B, and an
    external link to another file;
  - the inputs kept for the fuzzers (tests/fuzz/) end with exit 0, or 2 and one line, never a crash;
  - a raw, MatrixMarket or PETSc matrix of another scene with the same patch count is refused by its scene stamp
    ("<matrix>.scene.json", written by --raw and export), one without a stamp is read by size and patch count,
    and a negative or NaN entry of F (raw or HDF5) is refused naming the entry;
  - a full disk (a 2 MiB tmpfs, where root may mount one) stops a raw, MatrixMarket or HDF5 write (1 and 2
    ranks), and a PNG, EXR, PLY or timings JSON of `render`, with exit 2 and one line, leaving neither a truncated file nor its temporary, and a previous file of
    that name as it was (MPI I/O reported success for the writes the disk cut short: exit 0 and a truncated
    file before; HDF5 aborted the job with pages of diagnostics);
  - two runs on one output cannot mix: the second is refused up front while the first holds "<output>.lock",
    the first finishes and leaves no lock; a lock whose process is gone is stale and taken over;
  - SIGINT and SIGTERM stop a run at once with exit 130 and 143, one line on stderr, and leave neither the
    outputs nor their temporaries ("<path>.partial").

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_SOURCE_DIR).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_hostile.py [-v]
"""

import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402
from test_cli import CliTestCase, describe, program_stderr_lines, run  # noqa: E402


class TestHostile(CliTestCase):
    def scene(self):
        """A copy of the Cornell box (with its MTL) in the test's folder."""
        for ext in ("obj", "mtl"):
            shutil.copy(os.path.join(test_cli.MESHES, "cornell_box." + ext), self.path("cornell_box." + ext))
        return self.path("cornell_box.obj")

    def refused(self, args, words, absent=()):
        proc = run(args, cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        # One line, and for an option CLI11 refuses, its usual pointer to --help.
        lines = [line for line in program_stderr_lines(proc.stderr) if not line.startswith("Run with --help")]
        self.assertEqual(len(lines), 1, describe(proc))
        for word in words:
            self.assertIn(word, lines[0], describe(proc))
        for path in absent:
            self.assertFalse(os.path.exists(path), path + " should not exist")

    def test_numbers_must_be_finite(self):
        scene = self.scene()
        out = self.path("out.h5")
        for option, value in (("--quadrature-tolerance", "nan"), ("--seed", "inf"), ("--operator-tolerance", "nan"),
                              ("--drop-below", "-inf"), ("--shadow-rays", "nan")):
            with self.subTest(option=option):
                self.refused(["formfactors", "--input", scene, "--output", out, option, value], [option], [out])
        folder = self.path("run")
        for extra in (["--exposure", "inf"], ["--tolerance", "nan"], ["--camera-position", "nan", "0", "0",
                                                                      "--camera-target", "1", "1", "1"],
                      ["--fov-y", "0"], ["--fov-y", "180"], ["--refine-contrast", "nan"]):
            with self.subTest(extra=extra):
                self.refused(["run", "--input", scene, "--output-dir", folder] + extra, [extra[0]], [folder])

    def test_outputs_never_overwrite_inputs_or_each_other(self):
        scene = self.path("cornell_box.obj")
        self.scene()
        with open(scene, "rb") as fh:
            before = fh.read()
        self.refused(["formfactors", "--input", scene, "--output", scene], ["--output would overwrite the input"])
        self.refused(["formfactors", "--input", scene, "--output", self.path("cornell_box.mtl"),
                      "--materials", self.path("cornell_box.mtl")], ["--materials"])
        self.refused(["formfactors", "--input", scene, "--output", self.path("f.h5"), "--raw",
                      os.path.join(self.tmp, ".", "f.h5")], ["--raw and --output name the same file"])
        with open(scene, "rb") as fh:
            self.assertEqual(fh.read(), before, "the scene was changed")
        f = self.path("f.h5")
        self.rad_ok(["formfactors", "--input", scene, "--output", f, "--quiet"])
        with open(f, "rb") as fh:
            matrix = fh.read()
        self.refused(["solve", "--formfactors", f, "--output", os.path.join(self.tmp, "x", "..", "f.h5")],
                     ["would overwrite the input --formfactors"])
        self.refused(["export", "--formfactors", f, "--format", "raw", "--output", f], ["--formfactors"])
        with open(f, "rb") as fh:
            self.assertEqual(fh.read(), matrix, "the F file was changed")

    def test_hostile_hdf5_files_are_refused(self):
        import h5py
        import numpy as np
        good = self.path("good.h5")
        self.rad_ok(["formfactors", "--input", self.scene(), "--output", good, "--quiet"])
        solved = self.path("solved.h5")
        self.rad_ok(["solve", "--formfactors", good, "--output", solved, "--quiet"])

        def altered(name, source, change):
            path = self.path(name + ".h5")
            shutil.copy(source, path)
            with h5py.File(path, "r+") as f:
                change(f)
            return path

        def replace(f, name, data):
            del f[name]
            f[name] = data

        n = 17
        cases = [
            ("f_short", good, lambda f: replace(f, "formfactors/F", np.zeros((n, n - 1))), ["info"], "16"),
            ("f_column", good, lambda f: replace(f, "formfactors/F", np.zeros((20000, 1))), ["info"], "20000 x 1"),
            ("f_flat", good, lambda f: replace(f, "formfactors/F", np.zeros(n * n)), ["info"], "1-dimensional"),
            ("area_2d", good, lambda f: replace(f, "patches/area", np.ones((n, 1))), ["info"], "/patches/area"),
            ("rho", solved, lambda f: f["patches/reflectance"].__setitem__((3, 0), -0.5), ["render"], "reflectance"),
            ("emission", solved, lambda f: f["patches/emission"].__setitem__((2, 1), -1), ["render"], "emission"),
            ("b_nan", solved, lambda f: f["radiosity/B"].__setitem__((5, 2), np.nan), ["render"], "/radiosity/B"),
            ("linked", good, lambda f: (f.__delitem__("patches/area"),
                                        f["patches"].__setitem__("area", h5py.ExternalLink("/etc/passwd", "/x"))),
             ["info"], "link to elsewhere"),
        ]
        for name, source, change, command, word in cases:
            with self.subTest(case=name):
                path = altered(name, source, change)
                if command == ["info"]:
                    args = ["info", path]
                else:
                    args = ["render", "--radiosity", path, "--output", self.path(name + ".png")]
                proc = run(args, cwd=self.tmp)
                self.assertEqual(proc.returncode, 2, describe(proc))
                said = [line for line in program_stderr_lines(proc.stderr) if "error" in line]
                self.assertEqual(len(said), 1, describe(proc))
                self.assertIn(word, said[0], describe(proc))
                self.assertFalse(os.path.exists(self.path(name + ".png")))

    def test_matrices_of_another_scene_or_with_bad_entries_are_refused(self):
        import h5py
        import numpy as np

        def squares(name, gap):
            """Two unit squares facing each other `gap` apart: the same patch count for every gap."""
            path = self.path(name + ".obj")
            with open(path, "w") as fh:
                fh.write("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 %g\nv 1 0 %g\nv 1 1 %g\nv 0 1 %g\n"
                         "f 1 2 3 4\nf 5 8 7 6\n" % (gap, gap, gap, gap))
            return path

        near, far = squares("near", 1), squares("far", 2)
        raw, h5 = self.path("near.raw"), self.path("near.h5")
        self.rad_ok(["formfactors", "--input", near, "--subdiv", "1", "--output", h5, "--raw", raw, "--quiet"])
        self.assertTrue(os.path.exists(raw + ".scene.json"), "--raw wrote no scene stamp")
        solve = ["solve", "--subdiv", "1", "--quiet", "--output"]
        self.rad_ok(solve + [self.path("ok.h5"), "--formfactors", raw, "--input", near])
        # The same patch count, another scene: refused for the raw file and for its MatrixMarket and PETSc exports
        # (the stamp passes from the HDF5 file's attributes to theirs).
        for fmt in ("mtx", "petsc"):
            self.rad_ok(["export", "--formfactors", h5, "--format", fmt, "--output", self.path("near." + fmt),
                         "--quiet"])
        for matrix in (raw, self.path("near.mtx"), self.path("near.petsc")):
            with self.subTest(matrix=os.path.basename(matrix)):
                out = self.path("refused.h5")
                proc = run(solve + [out, "--formfactors", matrix, "--input", far], cwd=self.tmp)
                self.assertEqual(proc.returncode, 2, describe(proc))
                said = [line for line in program_stderr_lines(proc.stderr) if "error" in line]
                self.assertEqual(len(said), 1, describe(proc))
                self.assertIn("another scene", said[0])
                self.assertIn("scene_files_fnv1a", said[0])
                self.assertFalse(os.path.exists(out))
        # Without its stamp a raw file is checked by size and patch count alone.
        os.remove(raw + ".scene.json")
        self.rad_ok(solve + [self.path("unstamped.h5"), "--formfactors", raw, "--input", far])
        # Entries that are no share of light: a negative one in a raw file, a NaN in an HDF5 file.
        with open(raw, "rb") as fh:
            data = bytearray(fh.read())
        data[4 + 8 * (2 * 8 + 5):4 + 8 * (2 * 8 + 6)] = np.float64(-0.25).tobytes()
        bad_raw = self.path("bad.raw")
        with open(bad_raw, "wb") as fh:
            fh.write(data)
        bad_h5 = self.path("bad.h5")
        shutil.copy(h5, bad_h5)
        with h5py.File(bad_h5, "r+") as f:
            f["formfactors/F"][3, 4] = np.nan
        for args, word in ((["--formfactors", bad_raw, "--input", near], "F[2][5] is -0.25"),
                           (["--formfactors", bad_h5], "F[3][4] is nan")):
            with self.subTest(word=word):
                proc = run(solve + [self.path("refused.h5")] + args, cwd=self.tmp)
                self.assertEqual(proc.returncode, 2, describe(proc))
                said = [line for line in program_stderr_lines(proc.stderr) if "error" in line]
                self.assertEqual(len(said), 1, describe(proc))
                self.assertIn(word, said[0])

    def test_the_kept_hostile_corpus_never_crashes(self):
        """The inputs kept for the fuzzers (tests/fuzz/: OBJ+MTL seeds and bad meshes, OpenFOAM cases, hostile HDF5 files) through
        the program as users run it: each ends with exit 0, or 2 and one line naming the file; never a crash."""
        corpus = os.path.join(test_cli.SOURCE_DIR, "tests", "fuzz")
        cases = []
        for name in sorted(os.listdir(os.path.join(corpus, "obj"))):
            with open(os.path.join(corpus, "obj", name), "rb") as fh:
                obj, _, mtl = fh.read().partition(b"\0")
            folder = self.path("obj_" + name)
            os.mkdir(folder)
            with open(os.path.join(folder, "fuzz.obj"), "wb") as fh:
                fh.write(obj)
            if mtl:
                with open(os.path.join(folder, "fuzz.mtl"), "wb") as fh:
                    fh.write(mtl)
            cases.append((name, ["formfactors", "--input", os.path.join(folder, "fuzz.obj"), "--output",
                                 os.path.join(folder, "f.h5"), "--quiet"], folder))
        for name in sorted(os.listdir(os.path.join(corpus, "openfoam"))):
            with open(os.path.join(corpus, "openfoam", name), "rb") as fh:
                parts = fh.read().split(b"\0")
            case = self.path("openfoam_" + name)
            os.makedirs(os.path.join(case, "constant", "polyMesh"))
            for file, part in zip(("boundary", "points", "faces"), parts):
                with open(os.path.join(case, "constant", "polyMesh", file), "wb") as fh:
                    fh.write(part)
            cases.append((name, ["formfactors", "--input", case, "--output", os.path.join(case, "f.h5"), "--quiet"],
                          case))
        for name in sorted(os.listdir(os.path.join(corpus, "hdf5_files"))):
            path = os.path.join(corpus, "hdf5_files", name)
            cases.append((name + " info", ["info", path], self.tmp))
            cases.append((name + " solve", ["solve", "--formfactors", path, "--output", self.path(name + ".out.h5"),
                                            "--quiet"], self.tmp))
        refused = 0
        for name, args, cwd in cases:
            with self.subTest(case=name):
                proc = run(args, cwd=cwd)
                if args[0] == "info" and "complete: NO" in proc.stdout:
                    self.assertEqual(proc.returncode, 1, describe(proc))  # info's verdict on an unfinished file
                    continue
                self.assertIn(proc.returncode, (0, 2), describe(proc))
                if proc.returncode == 2:
                    refused += 1
                    said = [line for line in program_stderr_lines(proc.stderr) if "error" in line]
                    self.assertEqual(len(said), 1, describe(proc))
        self.assertGreater(refused, 10, "the corpus should hold hostile inputs")

    def test_a_full_disk_loses_nothing_silently(self):
        tiny = self.path("tiny")
        os.mkdir(tiny)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", tiny], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, universal_newlines=True)
        if mounted.returncode != 0:
            self.skipTest("cannot mount a small tmpfs here (needs root): " + mounted.stderr.strip())
        self.addCleanup(subprocess.run, ["umount", tiny])
        previous = os.path.join(tiny, "f.raw")
        with open(previous, "wb") as fh:
            fh.write(b"an earlier result")
        scene = self.scene()
        f = self.path("f.h5")
        for args, target in ((["formfactors", "--input", scene, "--subdiv", "3", "--output", f, "--raw", previous],
                              previous),
                             (["export", "--formfactors", f, "--format", "mtx", "--output",
                               os.path.join(tiny, "f.mtx")], os.path.join(tiny, "f.mtx"))):
            with self.subTest(command=args[0]):
                proc = run(args + ["--quiet"], cwd=self.tmp)
                self.assertEqual(proc.returncode, 2, describe(proc))
                said = [line for line in proc.stderr.splitlines() if line.startswith("radiosity: error:")]
                self.assertEqual(len(said), 1, describe(proc))
                self.assertIn("reached the disk", said[0])
                self.assertIn(target, said[0])
                self.assertFalse(os.path.exists(target + ".partial"))
        with open(previous, "rb") as fh:
            self.assertEqual(fh.read(), b"an earlier result")
        self.assertFalse(os.path.exists(os.path.join(tiny, "f.mtx")))
        # HDF5 onto the full disk, on 1 and 2 ranks: one line and exit 2 where HDF5's failure aborted the job
        # with pages of diagnostics (and the crash of closing the file HDF5 could not flush).
        for ranks in (None, 2):
            with self.subTest(hdf5_ranks=ranks):
                target = os.path.join(tiny, "f.h5")
                proc = run(["formfactors", "--input", scene, "--subdiv", "3", "--output", target, "--quiet"], ranks,
                           cwd=self.tmp)
                self.assertEqual(proc.returncode, 2, describe(proc))
                said = [line for line in proc.stderr.splitlines() if line.startswith("radiosity: ")]
                self.assertEqual(len(said), 1, describe(proc))
                self.assertIn("cannot write the HDF5 file", said[0])
                self.assertNotIn("HDF5-DIAG", proc.stderr)
                self.assertEqual(sorted(os.listdir(tiny)), ["f.raw"])
        # Images, the PLY mesh and the timings JSON onto the disk once it is full: exit 2, one line naming the file,
        # nothing of it left (a 0-byte PNG was left before).
        solved = self.path("solved.h5")
        self.rad_ok(["solve", "--formfactors", f, "--output", solved, "--quiet"])
        try:
            with open(os.path.join(tiny, "filler"), "wb") as fh:
                fh.write(b"\0" * (4 << 20))
        except OSError:
            pass  # full: what the rest needs
        render = ["render", "--radiosity", solved, "--width", "64", "--height", "48", "--quiet"]
        for option, name in (("--output", "image.png"), ("--exr", "image.exr"), ("--ply", "mesh.ply"),
                             ("--timings", "timings.json")):
            with self.subTest(output=name):
                target = os.path.join(tiny, name)
                args = render + (["--output", target] if option == "--output" else
                                 ["--output", self.path("image.png"), option, target])
                proc = run(args, cwd=self.tmp)
                self.assertEqual(proc.returncode, 2, describe(proc))
                said = [line for line in proc.stderr.splitlines() if line.startswith("radiosity: error:")]
                self.assertEqual(len(said), 1, describe(proc))
                self.assertIn(target, said[0])
                self.assertEqual(sorted(os.listdir(tiny)), ["f.raw", "filler"])

    def test_two_runs_on_one_output_cannot_mix(self):
        scene = self.scene()
        out = self.path("f.h5")
        first = subprocess.Popen(test_cli.command(["formfactors", "--input", scene, "--subdiv", "4", "--output", out]),
                                 cwd=self.tmp, env=test_cli.ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 universal_newlines=True)
        self.assertIn("patches", first.stderr.readline())  # it holds its lock from before this line
        self.refused(["formfactors", "--input", scene, "--subdiv", "1", "--output", out],
                     ["another radiosity run (process %d" % first.pid, "f.h5.lock"])
        _, stderr = first.communicate(timeout=300)
        self.assertEqual(first.returncode, 0, stderr)
        self.assertEqual(sorted(n for n in os.listdir(self.tmp) if n.startswith("f.")), ["f.h5", "f.xmf"])
        # A lock left by a run that was killed (its process gone) is stale: taken over, and given back.
        stale = self.path("g.h5.lock")
        with open(stale, "w") as fh:
            fh.write("%s %d\n" % (os.uname().nodename, 2 ** 22 + 12345))
        self.rad_ok(["formfactors", "--input", scene, "--output", self.path("g.h5"), "--quiet"])
        self.assertFalse(os.path.exists(stale))
        self.assertTrue(os.path.exists(self.path("g.h5")))

    def interrupt(self, sig, code, word):
        out = self.path("f.h5")
        cmd = test_cli.command(["formfactors", "--input", self.scene(), "--subdiv", "4", "--output", out,
                                "--raw", self.path("f.raw")])
        proc = subprocess.Popen(cmd, cwd=self.tmp, env=test_cli.ENV, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, universal_newlines=True)
        # Its first line comes after the handlers are in place (they are installed right after MPI_Init).
        first = proc.stderr.readline()
        self.assertIn("patches", first)
        time.sleep(0.5)
        self.assertIsNone(proc.poll(), "the run ended before it could be interrupted")
        proc.send_signal(sig)
        _, rest = proc.communicate(timeout=60)
        stderr = first + rest
        self.assertEqual(proc.returncode, code, stderr)
        said = [line for line in stderr.splitlines() if word in line]
        self.assertEqual(len(said), 1, stderr)
        self.assertEqual([name for name in os.listdir(self.tmp) if name.startswith("f.")], [])

    def test_sigint_stops_at_once_with_130(self):
        self.interrupt(signal.SIGINT, 130, "interrupted (SIGINT)")

    def test_sigterm_stops_at_once_with_143(self):
        self.interrupt(signal.SIGTERM, 143, "terminated (SIGTERM)")


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__))
