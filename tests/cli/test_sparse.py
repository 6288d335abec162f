#!/usr/bin/env python3
"""The sparse operator end to end (`--operator sparse --drop-below EPS` on formfactors and run), against the
dense operator on the same generated city (meshes/generate.py), computed by this test:
  - the CSR file holds exactly the pairs whose dense F_ij or F_ji reaches EPS, both entries together, with the
    dense operator's bits;
  - each row's kept sum plus its reported dropped sum is the dense row sum, and the sky view factor is 1 less
    both;
  - the same CSR datasets and B (Jacobi) from 1, 2 and 4 ranks, with as many pairs evaluated in all, whether
    sweeps exchange every row or only what each rank's rows read (--exchange);
  - B from the sparse run within 1e-3 relative RMS of the dense run's at a small threshold, closer as it
    shrinks;
  - `solve` reads the CSR file back as CSR (within a memory limit below the dense matrix) and gives that B;
  - the hierarchical operator (run only): far links carry what the sparse operator drops, so B is several
    times closer to the dense B at the same threshold, within 1e-3 at 1e-4, and the same (Jacobi) at 1, 2 and
    4 ranks, exchanging every row or only what the rows read;
  - a hierarchical file of polygons one patch each (no element links) is written and solved;
  - `solve --backend gpu` on CSR rows (with far links) gives the cores' B to 1e-9 (with a CUDA device);
  - options that cannot hold (--raw, --normalize-rows, hierarchical F to a file) and a memory limit too small
    exit 2 with one line.

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_SOURCE_DIR).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_sparse.py [-v]
"""

import json
import os
import re
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402
from test_cli import CliTestCase, describe, program_stderr_lines, run  # noqa: E402

SOURCE = os.environ.get("RAD_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GENERATE = os.path.join(SOURCE, "meshes", "generate.py")
PATCHES = "600"


def csr(path):
    with h5py.File(path, "r") as f:
        g = f["formfactors"]
        out = {k: g[k][:] if k in g else None
               for k in ("indptr", "indices", "data", "dropped_row_sum", "sky_view_factor")}
        out["operator"] = test_cli.attr_str(g.attrs["operator"])
        out["pairs_evaluated"] = float(g.attrs["pairs_evaluated"])
        out["B"] = f["radiosity/B"][:] if "radiosity" in f else None
    return out


def dense_of(c, n):
    m = np.zeros((n, n))
    for i in range(n):
        lo, hi = c["indptr"][i], c["indptr"][i + 1]
        m[i, c["indices"][lo:hi]] = c["data"][lo:hi]
    return m



def element_axes(normal):
    """The axes u, v of an element's plane from its first patch's normal, as the file's readers take them."""
    u = np.cross(normal, [1.0, 0.0, 0.0] if abs(normal[0]) < 0.9 else [0.0, 1.0, 0.0])
    u /= np.linalg.norm(u)
    return u, np.cross(normal, u)


def element_far_field(group, centroids, normals):
    """Per patch, what the links of the elements holding it give its row: each element's patches
    (element_order[first, first + count)) read value + g . d + d^T C d / 2, d the offset of the centroid from the
    element centre along the element's axes (element_axes), g the link's gradient and C the symmetric matrix of
    its curvature (uu, uv, vv), summed over its links."""
    ptr = group["element_link_ptr"][:]
    value, gradient = group["element_link_value"][:], group["element_link_gradient"][:].reshape(-1, 2)
    curvature = group["element_link_curvature"][:].reshape(-1, 3)
    full = curvature[:, [0, 1, 1, 2]].reshape(-1, 2, 2)
    order, first, count = group["element_order"][:], group["element_first"][:], group["element_count"][:]
    centre = group["element_centre"][:].reshape(-1, 3)
    far = np.zeros(len(centroids))
    for e in np.nonzero(ptr[1:] > ptr[:-1])[0]:
        patches = order[first[e]:first[e] + count[e]]
        links = slice(ptr[e], ptr[e + 1])
        u, v = element_axes(normals[order[first[e]]])
        d = np.stack([(centroids[patches] - centre[e]) @ u, (centroids[patches] - centre[e]) @ v], axis=1)
        far[patches] += (value[links].sum() + d @ gradient[links].sum(0) +
                         0.5 * np.einsum("pa,ab,pb->p", d, full[links].sum(0), d))
    return far

class SparseOperatorTest(CliTestCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.scenes = tempfile.mkdtemp(prefix="radiosity_sparse_")
        cls.city = os.path.join(cls.scenes, "city.obj")
        subprocess.run([sys.executable, GENERATE, "city", "--buildings", "3x3", "--sky-light", "--output", cls.city],
                       check=True, capture_output=True)
        cls.dense_run = os.path.join(cls.scenes, "dense")
        # The CPU backend's dense F: the sparse operator runs on the CPU cores, and keeps those bits.
        proc = run(["run", "--input", cls.city, "--patches", PATCHES, "--output-dir", cls.dense_run,
                    "--save-formfactors", "--backend", "cpu", "--quiet"])
        assert proc.returncode == 0, describe(proc)
        with h5py.File(os.path.join(cls.dense_run, "radiosity.h5"), "r") as f:
            cls.F = f["formfactors/F"][:]
            cls.B = f["radiosity/B"][:]

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.scenes, True)

    def sparse_run(self, name, drop_below, ranks=None, extra=()):
        out = self.path(name)
        self.rad_ok(["run", "--input", self.city, "--patches", PATCHES, "--operator", "sparse", "--drop-below",
                     str(drop_below), "--output-dir", out, "--save-formfactors", "--quiet"] + list(extra), ranks)
        return os.path.join(out, "radiosity.h5")

    def test_kept_pairs_bits_dropped_sums_and_sky(self):
        eps = 1e-3
        c = csr(self.sparse_run("s", eps))
        self.assertEqual(c["operator"], "sparse")
        F, n = self.F, self.F.shape[0]
        S = dense_of(c, n)
        kept = S != 0
        self.assertTrue(np.array_equal(S[kept], F[kept]), "kept entries differ from the dense operator's")
        above = (F >= eps) | (F.T >= eps)
        self.assertTrue(np.array_equal(kept, above & (F != 0)), "kept pattern is not {F_ij or F_ji >= eps}")
        self.assertTrue(np.array_equal(kept, kept.T), "pairs kept one way only")
        self.assertGreater(kept.sum(), 0)
        self.assertLess(kept.sum(), 0.5 * (F != 0).sum(), "the threshold should drop most pairs here")
        # What a row reports as dropped (exact where evaluated, estimated where skipped) against the dense row.
        truth = F.sum(1) - S.sum(1)
        self.assertGreater(truth.mean(), 1e-4)
        self.assertLess(abs(c["dropped_row_sum"].mean() - truth.mean()), 0.1 * truth.mean())
        self.assertLess(np.abs(c["dropped_row_sum"] - truth).max(), 0.05)
        np.testing.assert_allclose(c["sky_view_factor"], 1 - S.sum(1) - c["dropped_row_sum"], rtol=0, atol=1e-12)
        # The operator check (16 rows by default, the middles of 16 equal slices) says the same as the test.
        checked = [(2 * k + 1) * n // 32 for k in range(16)]
        error = np.abs(c["dropped_row_sum"][checked] - truth[checked])
        with h5py.File(self.path("s", "radiosity.h5"), "r") as f:
            a = f["formfactors"].attrs
            self.assertEqual(int(a["check_rows"]), 16)
            self.assertEqual(int(a["check_kept_entries_differing"]), 0)
            self.assertAlmostEqual(float(a["check_not_kept_mean"]), truth[checked].mean(), delta=1e-12)
            self.assertAlmostEqual(float(a["check_far_error_mean"]), error.mean(), delta=1e-12)
            # and the signed mean, where estimates too high and too low cancel
            self.assertAlmostEqual(float(a["check_far_bias"]),
                                   (c["dropped_row_sum"][checked] - truth[checked]).mean(), delta=1e-12)
            self.assertAlmostEqual(float(a["check_far_error_max"]), error.max(), delta=1e-12)
            self.assertEqual(int(a["check_far_error_max_row"]), checked[int(np.argmax(error))])

    def test_city_past_the_face_pair_lists_with_rays(self):
        """A city of 328 polygons: past 256 the occluders are found with the BVH, and a run of coplanar patches
        is cleared by one walk (as in the dense operator); shadow rays for the occluded pairs."""
        city = self.path("city6.obj")
        subprocess.run([sys.executable, GENERATE, "city", "--buildings", "6x6", "--output", city], check=True,
                       capture_output=True)
        common = ["formfactors", "--input", city, "--max-patch-size", "2", "--visibility", "rays", "--quiet"]
        self.rad_ok(common + ["--output", self.path("d.h5"), "--backend", "cpu"])
        self.rad_ok(common + ["--operator", "sparse", "--drop-below", "1e-4", "--output", self.path("s1.h5")])
        self.rad_ok(common + ["--operator", "sparse", "--drop-below", "1e-4", "--output", self.path("s2.h5")], 2)
        with h5py.File(self.path("d.h5"), "r") as f:
            F = f["formfactors/F"][:]
        n = F.shape[0]
        self.assertGreater(n, 1000)
        one, two = csr(self.path("s1.h5")), csr(self.path("s2.h5"))
        for key in ("indptr", "indices", "data", "dropped_row_sum"):
            self.assertTrue(np.array_equal(one[key], two[key]), "%s differs at 2 ranks" % key)
        S = dense_of(one, n)
        kept = S != 0
        self.assertTrue(np.array_equal(S[kept], F[kept]), "kept entries differ from the dense operator's")
        self.assertTrue(np.array_equal(kept, ((F >= 1e-4) | (F.T >= 1e-4)) & (F != 0)))

    def test_same_results_for_1_2_and_4_ranks(self):
        # Jacobi: Gauss-Seidel is rank-local, so its iterates depend on the rank count by design.
        # 2 ranks exchange every row between sweeps, 4 only what their rows read (--exchange).
        results = [csr(self.sparse_run("r%d" % p, 1e-3, ranks=p, extra=["--solver", "jacobi", "--exchange", x]))
                   for p, x in ((1, "auto"), (2, "all"), (4, "read"))]
        for p, other in zip((2, 4), results[1:]):
            for key in ("indptr", "indices", "data", "dropped_row_sum", "sky_view_factor", "B"):
                self.assertTrue(np.array_equal(results[0][key], other[key]), "%s differs at %d ranks" % (key, p))
            # Every pair evaluated once in all, whichever ranks hold its two rows (the pair exchange).
            self.assertEqual(results[0]["pairs_evaluated"], other["pairs_evaluated"], "at %d ranks" % p)

    def test_radiosity_converges_to_the_dense_one_and_solve_reads_csr(self):
        errors = []
        for eps in (1e-3, 1e-4, 1e-5):
            c = csr(self.sparse_run("b%g" % eps, eps))
            errors.append(np.sqrt(((c["B"] - self.B) ** 2).mean() / (self.B ** 2).mean()))
        self.assertLess(errors[2], 1e-3, errors)
        self.assertLess(errors[2], errors[1])
        self.assertLess(errors[1], errors[0])
        # `solve` on the CSR file written by the run.
        path = self.path("b1e-05", "radiosity.h5")
        out = self.path("solved.h5")
        proc = self.rad_ok(["solve", "--formfactors", path, "--output", out])
        self.assertIn("HDF5 CSR", proc.stderr)
        with h5py.File(out, "r") as f:  # the same CSR rows and sweeps as the run's solve, on one rank
            self.assertTrue(np.array_equal(f["radiosity/B"][:], csr(path)["B"]))
        # Held as CSR, the rows need far less than the dense N x N the memory check would otherwise ask for.
        n = self.F.shape[0]
        limit = str(int(n * n * 8 * 0.5)) + "B"
        coarse = self.path("b0.001", "radiosity.h5")
        self.rad_ok(["solve", "--formfactors", coarse, "--output", self.path("solved2.h5"), "--memory-limit", limit,
                     "--quiet"])
        self.expect_exit_2(["solve", "--formfactors", path, "--output", self.path("x.h5"), "--memory-limit", "64k"],
                           ["not enough memory", "CSR"])

    def expect_exit_2(self, args, words):
        proc = run(args, cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        lines = [l for l in program_stderr_lines(proc.stderr) if not l.startswith("Run with --help")]
        self.assertEqual(len(lines), 1, describe(proc))
        for w in words:
            self.assertIn(w, lines[0])
        self.assertFalse(os.path.exists(self.path("x.h5")))

    def hierarchical_b(self, name, tolerance, ranks=None, extra=(), check=None):
        out = self.path(name)
        proc = self.rad_ok(["run", "--input", self.city, "--patches", PATCHES, "--operator", "hierarchical",
                            "--operator-tolerance", str(tolerance), "--output-dir", out, "--quiet"] + list(extra),
                           ranks)
        if check is not None:  # the operator check's line: not kept, far-link error mean and max
            line = [l for l in (proc.stdout + proc.stderr).splitlines() if "far-link error mean/max" in l][0]
            check.extend(float(x) for x in line.split("max")[1].split("(")[0].replace("/", " ").split())
        with h5py.File(os.path.join(out, "radiosity.h5"), "r") as f:
            return f["radiosity/B"][:]

    def test_hierarchical_far_links_carry_what_sparse_drops(self):
        def rms(b):
            return np.sqrt(((b - self.B) ** 2).mean() / (self.B ** 2).mean())
        sparse = csr(self.sparse_run("s3", 1e-3))["B"]
        check = []
        linked = self.hierarchical_b("h3", 1e-3, check=check)
        self.assertLess(rms(linked), rms(sparse) / 3, (rms(linked), rms(sparse)))
        # The rows' memory as the report gives it: the entries (float64 value, column in 16 bits, int64 row
        # pointer and, past 65536 patches, a span table of 4 bytes per row and span after the first) and the rows'
        # far links (their targets' names in 16 bits, binary16 value, int64 pointer; no span table while the tree's
        # nodes, fewer than 2 N, and the N patches are at most 65536 names) from their counts; the elements' links
        # at least their 18 bytes each.
        with open(os.path.join(self.path("h3"), "timings.json")) as fh:
            parameters = json.load(fh)["parameters"]
        n, mib = int(parameters["patches"]), float(1 << 20)
        entries, links, elements, handed = (float(x) for x in parameters[
            "rows' MiB: entries/far links/element links/handed at most"].split("/"))
        spans = max(1, -(-n // 65536))
        self.assertAlmostEqual(entries, (int(parameters["nonzeros"]) * 10 + (n + 1) * 8 + n * (spans - 1) * 4) / mib,
                               delta=0.051)
        self.assertLessEqual(3 * n, 65536)
        self.assertAlmostEqual(links, (int(parameters["far links"]) * 4 + (n + 1) * 8) / mib, delta=0.051)
        self.assertGreaterEqual(elements, int(parameters["element links"]) * 18 / mib - 0.05)
        self.assertGreaterEqual(handed, 0)
        # The operator check: the far links carry most of what the exact kernel did not evaluate.
        not_kept, error_mean, error_max = check
        self.assertGreater(not_kept, 1e-3)
        self.assertLess(error_mean, 0.25 * not_kept, check)
        self.assertGreaterEqual(error_max, error_mean)
        finer = self.hierarchical_b("h4", 1e-4)
        self.assertLess(rms(finer), 1e-3, rms(finer))
        jacobi = ["--solver", "jacobi"]
        one = self.hierarchical_b("h4j", 1e-4, extra=jacobi)
        # Whatever the ranks exchange between sweeps (--exchange): every row, or only the patches and node sums
        # their rows read (node sums taken bottom-up, so the same bits on any rank).
        for ranks, exchange in ((2, "read"), (2, "all"), (4, "read")):
            name = "h4r%d%s" % (ranks, exchange)
            b = self.hierarchical_b(name, 1e-4, ranks=ranks, extra=jacobi + ["--exchange", exchange])
            self.assertTrue(np.array_equal(one, b), "B differs at %d ranks exchanging %s" % (ranks, exchange))
            with open(os.path.join(self.path(name), "timings.json")) as fh:
                counters = json.load(fh)["counters"]
            moved, everything = (counters["solve values %s per sweep" % k] for k in ("exchanged", "of all rows"))
            self.assertEqual(everything, 3 * len(one) * (ranks - 1))  # each rank receives the others' rows
            if exchange == "all":
                self.assertEqual(moved, everything)
            else:
                self.assertGreater(moved, 0)

    def test_gpu_solves_csr_rows_and_far_links_as_the_cores_do(self):
        """`solve --backend gpu` on a sparse and a hierarchical file (CSR rows; far links and element links): B
        within 1e-9 of the cores' B, both methods, one rank and two (Jacobi between them). Needs a CUDA device."""
        version = run(["--version"])
        if "gpu (CUDA" not in version.stdout or "devices: 0" in version.stdout:
            self.skipTest("no CUDA device: " + version.stdout.strip().splitlines()[-1])
        files = {"sparse": self.sparse_run("g_sparse", 1e-4)}
        files["hierarchical"] = self.path("g_h.h5")
        self.rad_ok(["formfactors", "--input", self.city, "--patches", PATCHES, "--operator", "hierarchical",
                     "--output", files["hierarchical"], "--quiet"])
        for operator, ff in files.items():
            for solver in ("jacobi", "gauss-seidel"):
                for ranks in (None, 2):
                    b = {}
                    for backend in ("cpu", "gpu"):
                        out = self.path("g_%s_%s_%s_%s.h5" % (operator, solver, ranks, backend))
                        self.rad_ok(["solve", "--formfactors", ff, "--output", out, "--solver", solver, "--backend",
                                     backend, "--tolerance", "1e-12", "--quiet"], ranks)
                        with h5py.File(out, "r") as f:
                            b[backend] = f["radiosity/B"][:]
                    np.testing.assert_allclose(b["gpu"], b["cpu"], rtol=1e-9, atol=1e-12,
                                               err_msg="%s, %s, ranks %s" % (operator, solver, ranks))

    def test_a_late_refusal_is_announced_before_the_rows(self):
        """The hierarchical rows are checked block by block against the memory limit, so a run can stop with
        exit 2 after hours of rows (a city of 999857 patches after 29 minutes). Where the rows' bound (every
        candidate kept, every possible far link made) is beyond the limit, a warning says so before the rows,
        with what to change. Limits are lowered until a run is refused: a warned run that fits still completes,
        and a run refused after some of its rows were done was warned about first."""
        limit = 48 << 20
        completed_warned = False
        while limit > (1 << 20):
            out = self.path("late_%d" % limit)
            proc = run(["run", "--input", self.city, "--patches", PATCHES, "--operator", "hierarchical",
                        "--output-dir", out, "--memory-limit", str(limit)], cwd=self.tmp)
            lines = program_stderr_lines(proc.stderr)
            warned = [i for i, l in enumerate(lines) if "warning: the rows may need up to" in l]
            for i in warned:
                self.assertIn("raise --operator-tolerance", lines[i])
            if proc.returncode == 0:
                if warned:
                    completed_warned = True
                    self.assertTrue(os.path.exists(os.path.join(out, "radiosity.h5")), describe(proc))
                limit = int(limit * 0.8)
                continue
            self.assertEqual(proc.returncode, 2, describe(proc))
            errors = [i for i, l in enumerate(lines) if "not enough memory" in l]
            self.assertEqual(len(errors), 1, describe(proc))
            if "rows done" in lines[errors[0]]:
                self.assertTrue(warned and warned[0] < errors[0], describe(proc))
            break
        self.assertTrue(completed_warned, "no run was warned about and completed")

    def test_bad_combinations_and_too_little_memory(self):
        base = ["formfactors", "--input", self.city, "--patches", PATCHES, "--operator", "sparse", "--output",
                self.path("x.h5")]
        self.expect_exit_2(base + ["--raw", self.path("x.raw")], ["--raw", "sparse"])
        self.expect_exit_2(base + ["--normalize-rows"], ["--normalize-rows"])
        self.expect_exit_2(base + ["--drop-below", "0"], ["--drop-below"])
        self.expect_exit_2(base + ["--memory-limit", "1M"], ["not enough memory", "sparse operator", "--drop-below"])

    def test_hierarchical_file_is_solved_as_run_solves_it(self):
        """`formfactors --operator hierarchical` writes the CSR entries and the far links (link_ptr, link_target,
        link_value, and the elements' element_link_* with the elements' patches and centres); their row sums are the
        dense rows' within the links' error; `solve` reads both back and gives
        run's hierarchical B bit for bit (Gauss-Seidel on 1 and 2 ranks, rows in blocks as run has them; Jacobi on
        1 and 2); export spreads the links
        into entries (the same operator); the dense readers refuse the file rather than leave out the far field."""
        ff = self.path("h.h5")
        self.rad_ok(["formfactors", "--input", self.city, "--patches", PATCHES, "--operator", "hierarchical",
                     "--operator-tolerance", "1e-4", "--output", ff, "--quiet"])
        n = self.F.shape[0]
        with h5py.File(ff, "r") as f:
            g = f["formfactors"]
            self.assertEqual(test_cli.attr_str(g.attrs["operator"]), "hierarchical")
            ptr, target, value = g["link_ptr"][:], g["link_target"][:], g["link_value"][:]
            self.assertEqual(len(ptr), n + 1)
            self.assertEqual(ptr[-1], len(target))
            self.assertEqual(int(g.attrs["far_links"]), len(target))
            self.assertGreater(len(target), 0)
            self.assertTrue(np.all(target < int(g.attrs["tree_nodes"])) and np.all(target >= -n))
            self.assertTrue(np.all(value > 0))
            # Each row's links in order of their targets, the tree's nodes first, then the patches (as the solver
            # sums them).
            nodes = int(g.attrs["tree_nodes"])
            name = np.where(target >= 0, target, nodes - (target + 1))
            for i in range(n):
                self.assertTrue(np.all(np.diff(name[ptr[i]:ptr[i + 1]]) >= 0), "row %d" % i)
            data, indptr = g["data"][:], g["indptr"][:]
            # The elements' links: each element's patches read them at their centroids.
            elements = element_far_field(g, f["patches/centroid"][:], f["patches/normal"][:])
            self.assertGreater(int(g.attrs["element_links"]), 0)
        near = np.array([data[indptr[i]:indptr[i + 1]].sum() for i in range(n)])
        far = np.array([value[ptr[i]:ptr[i + 1]].sum() for i in range(n)]) + elements
        exact = self.F.sum(1)
        self.assertLess(np.abs(near + far - exact).mean(), 0.1 * np.abs(exact - near).mean())
        # `solve` on the file, against `run` with the same operator.
        run_b = self.hierarchical_b("hr", 1e-4)
        out = self.path("hs.h5")
        proc = self.rad_ok(["solve", "--formfactors", ff, "--output", out, "--quiet"])
        with h5py.File(out, "r") as f:
            self.assertTrue(np.array_equal(f["radiosity/B"][:], run_b))
        # A file whose rows keep their links in another order (earlier versions wrote them in the walk's): read
        # back in order, the same B to the bit.
        import shutil
        shuffled = self.path("h_shuffled.h5")
        shutil.copy(ff, shuffled)
        with h5py.File(shuffled, "r+") as f:
            g = f["formfactors"]
            t, v = g["link_target"][:], g["link_value"][:]
            for i in range(n):
                t[ptr[i]:ptr[i + 1]] = t[ptr[i]:ptr[i + 1]][::-1].copy()
                v[ptr[i]:ptr[i + 1]] = v[ptr[i]:ptr[i + 1]][::-1].copy()
            self.assertFalse(np.array_equal(t, target))
            g["link_target"][:] = t
            g["link_value"][:] = v
        out = self.path("hs_shuffled.h5")
        self.rad_ok(["solve", "--formfactors", shuffled, "--output", out, "--quiet"])
        with h5py.File(out, "r") as f:
            self.assertTrue(np.array_equal(f["radiosity/B"][:], run_b))
        jacobi = self.hierarchical_b("hrj", 1e-4, extra=["--solver", "jacobi"])
        for ranks in (None, 2):
            out = self.path("hsj%s.h5" % ranks)
            self.rad_ok(["solve", "--formfactors", ff, "--output", out, "--solver", "jacobi", "--quiet"], ranks)
            with h5py.File(out, "r") as f:
                self.assertTrue(np.array_equal(f["radiosity/B"][:], jacobi), "ranks %s" % ranks)
        # Gauss-Seidel depends on how rows are split: `solve` splits a CSR file's rows in blocks, as `run` does,
        # unless told otherwise, so 2 ranks give run's B on 2 ranks.
        out = self.path("hs2.h5")
        self.rad_ok(["solve", "--formfactors", ff, "--output", out, "--quiet"], 2)
        with h5py.File(out, "r") as f:
            self.assertTrue(np.array_equal(f["radiosity/B"][:], self.hierarchical_b("hr2", 1e-4, ranks=2)))
        # `run --save-formfactors` writes the same operator beside B.
        saved = self.path("hsave")
        self.rad_ok(["run", "--input", self.city, "--patches", PATCHES, "--operator", "hierarchical",
                     "--operator-tolerance", "1e-4", "--save-formfactors", "--output-dir", saved, "--quiet"])
        with h5py.File(os.path.join(saved, "radiosity.h5"), "r") as f, h5py.File(ff, "r") as h:
            for key in ("indptr", "indices", "data", "link_ptr", "link_target", "link_value", "element_link_ptr",
                        "element_link_target", "element_link_value", "element_link_gradient",
                        "element_link_curvature"):
                self.assertTrue(np.array_equal(f["formfactors"][key][:], h["formfactors"][key][:]), key)
            self.assertTrue(np.array_equal(f["radiosity/B"][:], run_b))
        # export spreads each far link over its target's patches by area: the matrix the solver uses.
        spread = self.path("spread.h5")
        self.rad_ok(["export", "--formfactors", ff, "--format", "csr", "--output", spread, "--quiet"], 2)
        e = csr(spread)
        self.assertTrue(np.allclose(dense_of(e, n).sum(1), near + far, rtol=1e-12, atol=1e-15))
        with h5py.File(spread, "r") as f:
            self.assertEqual(int(f["formfactors"].attrs["far_links_spread"]), len(target))
        # Jacobi on the spread matrix: each far link read B as its target's area-weighted mean, and so does the
        # spread row, so B agrees with the solve of the links to rounding.
        out = self.path("spread_b.h5")
        self.rad_ok(["solve", "--formfactors", spread, "--output", out, "--solver", "jacobi", "--quiet"])
        with h5py.File(out, "r") as f:
            np.testing.assert_allclose(f["radiosity/B"][:], jacobi, rtol=1e-9, atol=1e-12)
        self.expect_exit_2(["export", "--formfactors", ff, "--format", "raw", "--output", self.path("x.h5")],
                           ["far field"])
        # A damaged file: one line naming the file and the dataset, exit 2, nothing written.
        first_element = int(np.nonzero(np.diff(h5py.File(ff, "r")["formfactors/element_link_ptr"][:]))[0][0])
        for name, damage, words in (("link_ptr", lambda a: a.__setitem__(5, a[6] + 3), ["link_ptr decreases"]),
                                    ("link_target", lambda a: a.__setitem__(0, 1 << 30), ["link_target"]),
                                    ("element_link_ptr", lambda a: a.__setitem__(first_element + 1, a[-1] + 5),
                                     ["element_link_ptr decreases"]),
                                    ("element_link_value", lambda a: a.__setitem__(0, np.nan),
                                     ["element_link_*", "element %d" % first_element]),
                                    # a gradient no binary16 shape holds (util/half.h): refused, not made infinite
                                    ("element_link_gradient", lambda a: a.__setitem__(0, 1e30),
                                     ["element_link_*", "element %d" % first_element, "65504"])):
            bad = self.path("bad_%s.h5" % name)
            shutil.copy(ff, bad)
            with h5py.File(bad, "r+") as f:
                a = f["formfactors"][name][:]
                damage(a)
                f["formfactors"][name][...] = a
            for ranks in (None, 2):
                proc = run(["solve", "--formfactors", bad, "--output", self.path("x.h5")], ranks, cwd=self.tmp)
                self.assertEqual(proc.returncode, 2, describe(proc))
                lines = program_stderr_lines(proc.stderr)
                self.assertEqual(len(lines), 1, describe(proc))
                for w in words + ["bad_%s.h5" % name]:
                    self.assertIn(w, lines[0])
                self.assertFalse(os.path.exists(self.path("x.h5")))
        # A file from before the element links' curvature holds each gradient in x, y, z (element_link_slope) and
        # no curvature: solved with linear links, so B moves a little (the curvature is a small part of each
        # link); a curvature of the wrong length is refused.
        older, short = self.path("older.h5"), self.path("bad_curvature.h5")
        for path in (older, short):
            shutil.copy(ff, path)
            with h5py.File(path, "r+") as f:
                g = f["formfactors"]
                if path == short:
                    del g["element_link_curvature"]
                    g["element_link_curvature"] = np.zeros(5)
                    continue
                ptr, gradient = g["element_link_ptr"][:], g["element_link_gradient"][:].reshape(-1, 2)
                normals, order, first = f["patches/normal"][:], g["element_order"][:], g["element_first"][:]
                slope = np.zeros((len(gradient), 3))
                for e in np.nonzero(ptr[1:] > ptr[:-1])[0]:
                    u, v = element_axes(normals[order[first[e]]])
                    links = slice(ptr[e], ptr[e + 1])
                    slope[links] = np.outer(gradient[links, 0], u) + np.outer(gradient[links, 1], v)
                del g["element_link_gradient"], g["element_link_curvature"]
                g["element_link_slope"] = slope.reshape(-1)
        out = self.path("older_b.h5")
        self.rad_ok(["solve", "--formfactors", older, "--output", out, "--quiet"])
        with h5py.File(out, "r") as f:
            linear_b = f["radiosity/B"][:]
        self.assertFalse(np.array_equal(linear_b, run_b))
        self.assertLess(np.abs(linear_b - run_b).max(), 1e-2 * np.abs(run_b).max())
        proc = run(["solve", "--formfactors", short, "--output", self.path("x.h5")], None, cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertIn("element_link_curvature", program_stderr_lines(proc.stderr)[0])
        self.assertFalse(os.path.exists(self.path("x.h5")))
        self.assertIn("CSR and far links", self.rad_ok(["info", ff]).stdout)
        self.assertIn("%d far links" % len(target), self.rad_ok(["info", ff]).stdout)

    def test_thermal_and_gmres_read_the_far_field(self):
        """`thermal` and `solve --solver gmres` on a hierarchical file spread its far links into entries, the
        operator the other solvers apply: thermal on the file gives the bits of thermal on `export --format csr` of
        it (the spread matrix written out; entries alone would differ), within 1e-2 RMS of thermal on the dense F;
        gmres gives the Gauss-Seidel B of the same file within the tolerance."""
        ff = self.path("h.h5")
        self.rad_ok(["formfactors", "--input", self.city, "--patches", PATCHES, "--operator", "hierarchical",
                     "--operator-tolerance", "1e-4", "--output", ff, "--quiet"])
        spread = self.path("spread.h5")
        self.rad_ok(["export", "--formfactors", ff, "--format", "csr", "--output", spread, "--quiet"])
        mtl = os.path.splitext(self.city)[0] + ".mtl"
        with open(mtl) as fh:
            names = [line.split()[1] for line in fh if line.startswith("newmtl")]
        properties = self.path("thermal.json")
        with open(properties, "w") as fh:
            json.dump({"materials": {name: {"emissivity": 0.8, "temperature": 300.0 + 10 * k}
                                     for k, name in enumerate(names)}}, fh)
        flux = {}
        dense = os.path.join(self.dense_run, "radiosity.h5")
        for name, source in (("file", ff), ("spread", spread), ("dense", dense)):
            out = self.path("thermal_%s.h5" % name)
            self.rad_ok(["thermal", "--formfactors", source, "--input", self.city, "--properties", properties,
                         "--output", out, "--tolerance", "1e-12", "--quiet"])
            with h5py.File(out, "r") as f:
                flux[name] = f["thermal/heat_flux"][:]
        self.assertTrue(np.array_equal(flux["file"], flux["spread"]))
        # And near the dense operator's fluxes (the far links' error is about 1e-3 of the rows).
        rms = np.sqrt(np.mean((flux["file"] - flux["dense"]) ** 2) / np.mean(flux["dense"] ** 2))
        self.assertLess(rms, 1e-2)
        self.assertGreater(np.abs(flux["dense"]).max(), 1.0)
        if "gmres" in run(["--version"]).stdout:
            b = {}
            for solver in ("gmres", "gauss-seidel"):
                out = self.path("b_%s.h5" % solver)
                self.rad_ok(["solve", "--formfactors", ff, "--output", out, "--solver", solver, "--tolerance", "1e-12",
                             "--quiet"])
                with h5py.File(out, "r") as f:
                    b[solver] = f["radiosity/B"][:]
            self.assertLess(np.abs(b["gmres"] - b["gauss-seidel"]).max() / np.abs(b["gauss-seidel"]).max(), 1e-9)

    def test_hierarchical_file_of_polygons_one_patch_each(self):
        """A mesh whose polygons are one patch each (facets of a triangulated model) has no element of two patches,
        so no element links: the file is still written (on 1 and 2 ranks, with empty element-link datasets), and
        `solve` gives `run`'s B from it bit for bit."""
        city = self.path("city8.obj")  # large enough for far links between single patches
        subprocess.run([sys.executable, GENERATE, "city", "--buildings", "8x8", "--sky-light", "--output", city],
                       check=True, capture_output=True)
        common = ["--input", city, "--max-patch-size", "1000", "--visibility", "rays", "--operator",
                  "hierarchical", "--quiet"]
        saved = self.path("one_patch_run")
        self.rad_ok(["run"] + common + ["--output-dir", saved])
        with h5py.File(os.path.join(saved, "radiosity.h5"), "r") as f:
            run_b = f["radiosity/B"][:]
            faces = f["patches/face"][:]
        self.assertEqual(len(np.unique(faces)), len(faces), "one patch per polygon")
        for ranks in (None, 2):
            ff = self.path("one_patch_%s.h5" % ranks)
            self.rad_ok(["formfactors"] + common + ["--output", ff], ranks)
            with h5py.File(ff, "r") as f:
                g = f["formfactors"]
                self.assertEqual(int(g.attrs["element_links"]), 0)
                self.assertEqual(len(g["element_link_target"]), 0)
                self.assertGreater(int(g.attrs["far_links"]), 0)
            out = self.path("one_patch_b_%s.h5" % ranks)
            self.rad_ok(["solve", "--formfactors", ff, "--output", out, "--quiet"])
            with h5py.File(out, "r") as f:
                self.assertTrue(np.array_equal(f["radiosity/B"][:], run_b), "ranks %s" % ranks)

    def dense_need(self, command_args):
        """The bytes a rank needs for dense F, from the dense operator's refusal of a 1 KiB limit."""
        proc = run(command_args + ["--operator", "dense", "--memory-limit", "1K"], cwd=self.tmp)
        self.assertEqual(proc.returncode, 2, describe(proc))
        return int(re.search(r"need (\d+) bytes per rank", proc.stderr).group(1))

    def test_auto_takes_dense_while_it_fits_and_a_tree_operator_beyond(self):
        """--operator auto, the default: dense F while it fits in the memory a rank may use; one byte less, and
        `run` takes the hierarchical operator (nothing dropped; saved with its far links), `formfactors` the
        sparse one (written as CSR), each saying so in one line; when neither fits, one error names both."""
        scene = ["--input", self.city, "--patches", PATCHES, "--quiet"]
        ff = ["formfactors"] + scene
        # Room enough: dense, as before.
        self.rad_ok(ff + ["--output", self.path("auto_dense.h5")])
        with h5py.File(self.path("auto_dense.h5"), "r") as f:
            self.assertIn("F", f["formfactors"])
        # One byte short of dense: sparse, a CSR file.
        limit = str(self.dense_need(ff + ["--output", self.path("x.h5")]) - 1)
        proc = self.rad_ok(ff + ["--output", self.path("auto_sparse.h5"), "--memory-limit", limit])
        notices = [l for l in proc.stderr.splitlines() if "--operator auto" in l]
        self.assertEqual(len(notices), 1, proc.stderr)
        self.assertIn("using the sparse operator", notices[0])
        c = csr(self.path("auto_sparse.h5"))
        self.assertEqual(c["operator"], "sparse")
        kept = dense_of(c, self.F.shape[0]) != 0
        self.assertTrue(np.array_equal(dense_of(c, self.F.shape[0])[kept], self.F[kept]))
        # `run`: far links, B close to the dense one. At 600 patches the hierarchical operator's bound (3.0 MiB:
        # its candidates, and twice the most links its rows may make, per row and appended) is just above dense
        # F's (2.9 MiB); at 1000 below, at 2000 (shadow rays, to be quick) far below.
        run_args = ["run", "--input", self.city, "--patches", "2000", "--visibility", "rays", "--quiet",
                    "--backend", "cpu"]
        dense_out = self.path("auto_run_dense")
        self.rad_ok(run_args + ["--output-dir", dense_out, "--operator", "dense"])
        with h5py.File(os.path.join(dense_out, "radiosity.h5"), "r") as f:
            dense_b = f["radiosity/B"][:]
        limit = str(self.dense_need(run_args + ["--output-dir", self.path("x.h5")]) - 1)
        out = self.path("auto_run")
        proc = self.rad_ok(run_args + ["--output-dir", out, "--memory-limit", limit])
        self.assertIn("using the hierarchical operator", proc.stderr)
        with h5py.File(os.path.join(out, "radiosity.h5"), "r") as f:
            b = f["radiosity/B"][:]
        self.assertLess(np.sqrt(((b - dense_b) ** 2).mean() / (dense_b ** 2).mean()), 2e-3)
        small = ["run", "--input", self.city, "--patches", "1000", "--quiet", "--backend", "cpu"]
        proc = self.rad_ok(small + ["--output-dir", self.path("auto_small"), "--memory-limit",
                                    str(self.dense_need(small + ["--output-dir", self.path("x.h5")]) - 1)])
        self.assertIn("using the hierarchical operator", proc.stderr)
        self.expect_exit_2(small + ["--output-dir", self.path("x"), "--memory-limit", "2M"],
                           ["not enough memory", "nor does the hierarchical operator fit"])
        out = self.path("auto_run_saved")
        proc = self.rad_ok(run_args + ["--output-dir", out, "--memory-limit", limit, "--save-formfactors"])
        self.assertIn("using the hierarchical operator", proc.stderr)
        self.assertEqual(csr(os.path.join(out, "radiosity.h5"))["operator"], "hierarchical")
        # Neither fits: one line, both operators' figures.
        self.expect_exit_2(ff + ["--output", self.path("x.h5"), "--memory-limit", "2M"],
                           ["not enough memory", "--operator auto", "nor does the sparse operator fit"])

    def test_export_of_a_csr_file_follows_its_entries(self):
        """`export` keeps a CSR source as CSR: under a memory limit below dense N x N it writes MatrixMarket,
        PETSc and CSR files holding exactly the source's entries (less those under its own --drop-below, whose
        dropped sums it reports), and keeps the sparse operator's figures as source_* attributes."""
        try:
            import scipy.io
        except ImportError:
            self.skipTest("scipy is not installed")
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from test_export import read_petsc
        source = self.sparse_run("ex", 1e-3)
        c = csr(source)
        n = self.F.shape[0]
        S = dense_of(c, n)
        limit = str(n * n * 8)  # dense F alone: reading it dense (with its buffers) cannot fit, CSR does
        for ranks in (None, 2):
            with self.subTest(ranks=ranks or 1):
                mtx, petsc, out = (self.path("ex%s.%s" % (ranks, ext)) for ext in ("mtx", "petsc", "h5"))
                for fmt, path in (("mtx", mtx), ("petsc", petsc), ("csr", out)):
                    self.rad_ok(["export", "--formfactors", source, "--format", fmt, "--output", path,
                                 "--memory-limit", limit, "--quiet"], ranks)
                self.assertTrue(np.array_equal(scipy.io.mmread(mtx).toarray(), S))
                self.assertTrue(np.array_equal(read_petsc(petsc)[0], S))
                e = csr(out)
                for key in ("indptr", "indices", "data"):
                    self.assertTrue(np.array_equal(e[key], c[key]), key)
                with h5py.File(out, "r") as f:
                    attrs = f["formfactors"].attrs
                    self.assertEqual(float(attrs["source_drop_below"]), 1e-3)
                    self.assertEqual(float(attrs["drop_below"]), 0.0)
        # The export's own threshold on top: entries under it go, and their sums per row are reported.
        proc = self.rad_ok(["export", "--formfactors", source, "--format", "csr", "--output", self.path("ex3.h5"),
                            "--drop-below", "1e-2", "--memory-limit", limit])
        e = csr(self.path("ex3.h5"))
        kept = np.where(np.abs(S) >= 1e-2, S, 0.0)
        self.assertTrue(np.array_equal(dense_of(e, n), kept))
        self.assertTrue(np.allclose(e["dropped_row_sum"], (S - kept).sum(axis=1), rtol=1e-12, atol=1e-15))
        self.assertIn("HDF5 CSR", proc.stderr)
        # Raw is dense: the same limit refuses it, saying so.
        self.expect_exit_2(["export", "--formfactors", source, "--format", "raw", "--output", self.path("x.h5"),
                            "--memory-limit", limit], ["not enough memory"])


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__, mpi=True))
