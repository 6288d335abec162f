#!/usr/bin/env python3
"""End-to-end tests of `radiosity export` and of `solve` reading the exported files back.

The exported matrices are read by independent readers and compared with /formfactors/F read by h5py:
MatrixMarket by scipy.io.mmread, PETSc's binary format by a numpy reader written here from PETSc's MatLoad
documentation (big-endian int32 header, row lengths, column indices, float64 values), CSR by h5py and
scipy.sparse, the raw file by numpy. Exports at 1 and 2 ranks must be byte-identical.

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_MPIEXEC_FLAGS, RAD_SOURCE_DIR).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_export.py [-v]
"""

import os
import re
import shutil
import sys
import tempfile

import h5py
import numpy as np
import scipy.io
import scipy.sparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402
from test_cli import attr_int, attr_str, describe, read_raw, run  # noqa: E402
from test_pipeline import PipelineTestCase, read_b  # noqa: E402

CORNELL_BOX = os.path.join(test_cli.MESHES, "cornell_box.obj")
SUBDIV = "1"
SCENE_ARGS = ["--input", CORNELL_BOX, "--subdiv", SUBDIV]
PETSC_CLASSID = 1211216


def read_petsc(path):
    """A PETSc binary matrix (MatView layout, 32-bit indices, float64 values) as a dense numpy array."""
    with open(path, "rb") as fh:
        data = fh.read()
    classid, m, n, nnz = np.frombuffer(data, dtype=">i4", count=4)
    if classid != PETSC_CLASSID:
        raise ValueError("%s: class id %d, not MAT_FILE_CLASSID" % (path, classid))
    if len(data) != 16 + 4 * m + 12 * nnz:
        raise ValueError("%s: %d bytes for m=%d nnz=%d" % (path, len(data), m, nnz))
    lengths = np.frombuffer(data, dtype=">i4", count=m, offset=16).astype(np.int64)
    columns = np.frombuffer(data, dtype=">i4", count=nnz, offset=16 + 4 * m).astype(np.int64)
    values = np.frombuffer(data, dtype=">f8", count=nnz, offset=16 + 4 * m + 4 * nnz).astype(np.float64)
    if lengths.sum() != nnz:
        raise ValueError("%s: row lengths add up to %d, nnz %d" % (path, lengths.sum(), nnz))
    rows = np.repeat(np.arange(m), lengths)
    dense = np.zeros((m, n))
    dense[rows, columns] = values
    return dense, lengths, columns


def read_csr(path):
    with h5py.File(path, "r") as f:
        g = f["formfactors"]
        indptr, indices, data = g["indptr"][...], g["indices"][...], g["data"][...]
        n = f["patches/area"].shape[0]
        return scipy.sparse.csr_matrix((data, indices, indptr), shape=(n, n)), dict(g.attrs), g


class ExportTestCase(PipelineTestCase):
    """Form factors of the Cornell box (subdivision 1, 68 patches) computed once, at 2 ranks."""

    @classmethod
    def setUpClass(cls):
        cls.shared = tempfile.mkdtemp(prefix="radiosity_export_")
        cls.ff = os.path.join(cls.shared, "ff.h5")
        proc = run(["formfactors", "--output", cls.ff, "--quiet"] + SCENE_ARGS, 2, cwd=cls.shared)
        if proc.returncode != 0:
            shutil.rmtree(cls.shared, True)
            raise AssertionError("formfactors failed:" + describe(proc))
        with h5py.File(cls.ff, "r") as f:
            cls.F = f["formfactors/F"][...].astype(np.float64)
            cls.patches = {k: f["patches"][k][...] for k in f["patches"]}
        cls.n = cls.F.shape[0]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.shared, True)

    def export(self, fmt, name, ranks=None, extra=(), source=None):
        out = self.path(name)
        proc = self.rad_ok(["export", "--formfactors", source or self.ff, "--format", fmt, "--output", out,
                            "--quiet"] + list(extra), ranks)
        self.assertFalse(os.path.exists(out + ".partial"), "partial file left behind")
        return out, proc

    def export_at_1_and_2_ranks(self, fmt, extra=()):
        """Exports at 1 and 2 ranks; asserts the two files are byte-identical; returns the 2-rank file."""
        one, _ = self.export(fmt, "one." + fmt, None, extra)
        two, _ = self.export(fmt, "two." + fmt, 2, extra)
        if fmt != "csr":  # HDF5 files may differ in metadata placement; their contents are compared instead
            with open(one, "rb") as a, open(two, "rb") as b:
                self.assertTrue(a.read() == b.read(), "%s export differs between 1 and 2 ranks" % fmt)
        return one, two

    def assert_same_matrix(self, got, expected, what):
        self.assertEqual(got.shape, expected.shape, what)
        if not np.array_equal(got, expected):
            diff = np.abs(got - expected)
            self.fail("%s differs from /formfactors/F: max |diff| %g at %s, %d entries"
                      % (what, diff.max(), np.unravel_index(diff.argmax(), diff.shape), int((diff != 0).sum())))


class TestExportFormats(ExportTestCase):
    def test_matrix_is_sparse_enough_to_matter(self):
        # The Cornell box has exact zeros (F_ii, coplanar and back-facing pairs): the sparse formats leave them out.
        zeros = int((self.F == 0).sum())
        self.assertGreater(zeros, self.n)
        self.assertLess(zeros, self.n * self.n)

    def test_matrix_market_read_by_scipy(self):
        for path in self.export_at_1_and_2_ranks("mtx"):
            with self.subTest(file=os.path.basename(path)):
                with open(path) as fh:
                    self.assertEqual(fh.readline().strip(), "%%MatrixMarket matrix coordinate real general")
                    self.assertIn(self.ff, fh.read(4096), "a comment names the source file")
                rows, cols, entries, fmt, field, symmetry = scipy.io.mminfo(path)
                self.assertEqual((rows, cols, fmt, field, symmetry),
                                 (self.n, self.n, "coordinate", "real", "general"))
                self.assertEqual(entries, int((self.F != 0).sum()), "every nonzero, and only those")
                self.assert_same_matrix(scipy.io.mmread(path).toarray(), self.F, "mmread(%s)" % path)

    def test_petsc_binary_read_by_independent_reader(self):
        for path in self.export_at_1_and_2_ranks("petsc"):
            with self.subTest(file=os.path.basename(path)):
                dense, lengths, columns = read_petsc(path)
                self.assert_same_matrix(dense, self.F, "PETSc file %s" % path)
                self.assertTrue(np.array_equal(lengths, (self.F != 0).sum(axis=1)))
                starts = np.concatenate([[0], np.cumsum(lengths)])
                for i in range(self.n):
                    row = columns[starts[i]:starts[i + 1]]
                    self.assertTrue(np.all(np.diff(row) > 0), "columns ascend in row %d" % i)

    def test_csr_read_by_h5py_and_scipy(self):
        for path in self.export_at_1_and_2_ranks("csr"):
            with self.subTest(file=os.path.basename(path)):
                csr, attrs, _ = read_csr(path)
                self.assert_same_matrix(csr.toarray(), self.F, "CSR %s" % path)
                with h5py.File(path, "r") as f:
                    self.assertEqual(attr_int(f.attrs["complete"]), 1)
                    self.assertEqual(attr_str(f.attrs["format"]), "radiosity")
                    g = f["formfactors"]
                    self.assertEqual(g["indptr"].dtype, np.int64)
                    self.assertEqual(g["indices"].dtype, np.int64)
                    self.assertEqual(g["data"].dtype, np.float64)
                    self.assertEqual(g["indptr"].shape, (self.n + 1,))
                    self.assertTrue(np.all(g["dropped_row_sum"][...] == 0))
                    for k, v in self.patches.items():
                        self.assertTrue(np.array_equal(f["patches"][k][...], v), "/patches/%s copied" % k)
                self.assertEqual(attr_str(attrs["layout"]), "csr")
                self.assertEqual(attr_int(attrs["nnz"]), int((self.F != 0).sum()))
                self.assertIn("method", attrs, "the source's method attributes are kept")

    def test_csr_float_precision(self):
        path, _ = self.export("csr", "float.h5", 2, ["--precision", "float"])
        csr, attrs, _ = read_csr(path)
        self.assertEqual(csr.dtype, np.float32)
        self.assertTrue(np.array_equal(csr.toarray(), self.F.astype(np.float32)))
        self.assertEqual(attr_str(attrs["precision"]), "float")

    def test_raw_read_by_numpy(self):
        path, _ = self.export("raw", "ff.raw", 2)
        header, values, _ = read_raw(path)
        self.assertEqual(header, self.n)
        self.assertEqual(values.size, self.n * self.n)
        self.assert_same_matrix(values.reshape(self.n, self.n), self.F, "raw file")


class TestDropBelow(ExportTestCase):
    def test_drop_removes_exactly_the_small_entries_and_reports_their_energy(self):
        nonzero = np.abs(self.F[self.F != 0])
        x = float(np.quantile(nonzero, 0.3))  # drops about 30 % of the nonzeros
        x_text = repr(x)
        small = (np.abs(self.F) < x) & (self.F != 0)
        self.assertGreater(int(small.sum()), 10)
        kept = np.where(np.abs(self.F) < x, 0.0, self.F)
        dropped_rows = np.where(small, self.F, 0.0).sum(axis=1)

        mtx, proc = self.export("mtx", "drop.mtx", 2, ["--drop-below", x_text])
        self.assert_same_matrix(scipy.io.mmread(mtx).toarray(), kept, "mtx with --drop-below")
        self.assertEqual(scipy.io.mminfo(mtx)[2], int((kept != 0).sum()))

        # The report on stdout: counts and per-row min / mean / max with the row of the max.
        m = re.search(r"(\d+) entries dropped; energy dropped per row \(sum of dropped F_ij\): min (\S+) mean (\S+) "
                      r"max (\S+) \(row (\d+)\); total (\S+)", proc.stdout)
        self.assertIsNotNone(m, "no drop report on stdout:" + describe(proc))
        self.assertEqual(int(m.group(1)), int(small.sum()))
        np.testing.assert_allclose([float(m.group(k)) for k in (2, 3, 4, 6)],
                                   [dropped_rows.min(), dropped_rows.mean(), dropped_rows.max(), dropped_rows.sum()],
                                   rtol=1e-8, atol=0)
        self.assertEqual(int(m.group(5)), int(np.argmax(dropped_rows)))

        csr_path, _ = self.export("csr", "drop.h5", 2, ["--drop-below", x_text])
        csr, attrs, _ = read_csr(csr_path)
        self.assert_same_matrix(csr.toarray(), kept, "CSR with --drop-below")
        with h5py.File(csr_path, "r") as f:
            per_row = f["formfactors/dropped_row_sum"][...]
        np.testing.assert_allclose(per_row, dropped_rows, rtol=1e-12, atol=1e-300)
        self.assertEqual(float(attrs["drop_below"]), x)
        self.assertEqual(attr_int(attrs["dropped_entries"]), int(small.sum()))
        self.assertEqual(attr_int(attrs["nnz"]), int((kept != 0).sum()))

        for fmt, name in (("petsc", "drop.petsc"), ("raw", "drop.raw")):
            path, _ = self.export(fmt, name, 2, ["--drop-below", x_text])
            got = read_petsc(path)[0] if fmt == "petsc" else read_raw(path)[1].reshape(self.n, self.n)
            self.assert_same_matrix(got, kept, "%s with --drop-below" % fmt)

        # The dropped matrix is what solve then uses: its B is the dense solution of the dropped system.
        rad = self.solve(csr_path, self.path("rad_drop.h5"), ranks=2, extra=["--tolerance", "1e-13"])
        rho, E = self.patches["reflectance"], self.patches["emission"]
        exact = np.stack([np.linalg.solve(np.eye(self.n) - rho[:, c:c + 1] * kept, E[:, c]) for c in range(3)], 1)
        self.assertLessEqual(float(np.abs(read_b(rad) - exact).max()), 1e-9)


class TestSolveReadsExports(ExportTestCase):
    def test_solve_gives_the_same_b_from_every_format(self):
        # The same rows on the same ranks make the same iterates: B must agree far below the solver's tolerance.
        configs = ((2, "cyclic"), (3, "block"))
        reference = {}
        for ranks, distribution in configs:
            out = self.path("ref_%d.h5" % ranks)
            self.solve(self.ff, out, ranks=ranks, extra=["--distribution", distribution])
            reference[ranks] = read_b(out)
        files = {
            "mtx": (self.export("mtx", "ff.mtx", 2)[0], SCENE_ARGS),
            "petsc": (self.export("petsc", "ff.petsc", 2)[0], SCENE_ARGS),
            "raw": (self.export("raw", "ff.raw", 2)[0], SCENE_ARGS),
            "csr": (self.export("csr", "csr.h5", 2)[0], []),
        }
        # A CSR file written by a third-party tool: scipy's int32 indices, through h5py.
        third = self.path("scipy_csr.h5")
        shutil.copy(files["csr"][0], third)
        with h5py.File(third, "r+") as f:
            sp = scipy.sparse.csr_matrix(self.F)
            del f["formfactors/indptr"], f["formfactors/indices"], f["formfactors/data"]
            f["formfactors/indptr"] = sp.indptr.astype(np.int32)
            f["formfactors/indices"] = sp.indices.astype(np.int32)
            f["formfactors/data"] = sp.data
        files["csr from scipy"] = (third, [])
        for label, (path, extra) in sorted(files.items()):
            for ranks, distribution in configs:
                if ranks == 3 and label not in ("mtx", "petsc", "csr"):
                    continue  # the readers whose row selection differs with the distribution
                with self.subTest(format=label, ranks=ranks):
                    out = self.path("rad_%s_%d.h5" % (label.replace(" ", "_"), ranks))
                    self.solve(path, out, ranks=ranks, extra=list(extra) + ["--distribution", distribution])
                    worst = float(np.abs(read_b(out) - reference[ranks]).max())
                    self.assertLessEqual(worst, 1e-12, "B from %s differs from B from HDF5 by %g" % (label, worst))
        # export reads any format solve reads: a MatrixMarket file back to CSR gives the same matrix.
        back, _ = self.export("csr", "back.h5", 2, SCENE_ARGS, source=files["mtx"][0])
        self.assert_same_matrix(read_csr(back)[0].toarray(), self.F, "mtx -> csr")


class TestExportErrors(ExportTestCase):
    def setUp(self):
        super().setUp()
        self.outputs = self.path("out")
        os.mkdir(self.outputs)

    def test_bad_export_arguments(self):
        out = os.path.join(self.outputs, "OUT")
        cases = [
            ("missing source", ["--formfactors", self.path("nope.h5"), "--format", "mtx"], ["nope.h5"]),
            ("negative threshold", ["--formfactors", self.ff, "--format", "mtx", "--drop-below", "-1"], []),
            ("precision with mtx", ["--formfactors", self.ff, "--format", "mtx", "--precision", "float"], []),
            ("raw source without scene", ["--formfactors", self.export("raw", "src.raw")[0], "--format", "csr"],
             ["src.raw"]),
        ]
        # Under mpiexec a failing job takes ~2 s to end: two ranks only where ranks must agree on the failure.
        for label, args, names in cases:
            for ranks in ((None, 2) if label == "raw source without scene" else (None,)):
                with self.subTest(case=label, ranks=ranks or 1):
                    self.expect_error(["export", "--output", out, "--quiet"] + args, 2, ranks=ranks, names=names,
                                      clean_dir=self.outputs)
        # A value CLI11 rejects: its own usage message, exit 2, nothing written.
        proc = self.run_args(["export", "--formfactors", self.ff, "--format", "npz", "--output", out])
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertIn("npz", proc.stderr)
        self.assertEqual(os.listdir(self.outputs), [])
        self.expect_error(["export", "--formfactors", self.ff, "--format", "mtx", "--quiet", "--output",
                           os.path.join(self.outputs, "no_such_dir", "OUT.mtx")], 2, ranks=2, names=["no_such_dir"],
                          clean_dir=self.outputs)

    def test_malformed_files_are_input_errors(self):
        mtx = self.export("mtx", "good.mtx")[0]
        petsc = self.export("petsc", "good.petsc")[0]
        csr = self.export("csr", "good.h5")[0]
        with open(mtx) as fh:
            lines = fh.read().splitlines(True)
        with open(petsc, "rb") as fh:
            petsc_bytes = fh.read()
        bad = {}

        def write(name, content, mode="w"):
            p = self.path(name)
            with open(p, mode) as fh:
                fh.write(content)
            bad[name] = p

        write("truncated.mtx", "".join(lines[:-3]))
        write("garbled.mtx", "".join(lines[:-1]) + "1 x 0.5\n")
        write("outside.mtx", "".join(lines[:-1]) + "%d 1 0.5\n" % (self.n + 1))
        write("truncated.petsc", petsc_bytes[:-20], "wb")
        bad_csr = self.path("broken_csr.h5")
        shutil.copy(csr, bad_csr)
        with h5py.File(bad_csr, "r+") as f:
            ptr = f["formfactors/indptr"][...]
            ptr[5] = ptr[6] + 1
            f["formfactors/indptr"][...] = ptr
        bad["broken_csr.h5"] = bad_csr
        for name, path in sorted(bad.items()):
            extra = [] if name.endswith(".h5") else SCENE_ARGS
            # Two ranks for one file per reader (each reader's ranks must agree on the failure).
            for ranks in ((None, 2) if name in ("garbled.mtx", "truncated.petsc", "broken_csr.h5") else (None,)):
                with self.subTest(file=name, ranks=ranks or 1):
                    self.expect_error(["solve", "--formfactors", path, "--output", os.path.join(self.outputs, "r.h5"),
                                       "--quiet"] + extra, 2, ranks=ranks, names=[name], clean_dir=self.outputs)
        # The wrong scene for the file, and no scene at all.
        for label, extra in (("wrong --subdiv", ["--input", CORNELL_BOX, "--subdiv", "0"]), ("no --input", [])):
            for path in (mtx, petsc):
                with self.subTest(case=label, file=os.path.basename(path)):
                    self.expect_error(["solve", "--formfactors", path, "--output",
                                       os.path.join(self.outputs, "r.h5"), "--quiet"] + extra, 2,
                                      names=[os.path.basename(path)], clean_dir=self.outputs)


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__))
