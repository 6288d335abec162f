"""Checks of a finished scaling study folder, shared by test_scaling_local.py and test_slurm.py.

Everything the analysis wrote is checked against numbers the test computes itself from the runs' own files
(timings.json, the HDF5 matrices), never against the analysis code: phase sums, speedup and efficiency
formulas, row sums, reciprocity, matrices identical across rank counts, and PNG files that decode as images.
"""

import csv
import json
import os
import struct
import zlib

import h5py
import numpy as np

# The radiosity timers whose paper phase is fixed by the contract of the tables (analysis/README.md). Timers
# not listed (e.g. a future GPU backend's) are only checked through the sums.
KNOWN_PHASES = {"scene load": "I/O", "output I/O": "I/O", "image I/O": "I/O", "input I/O": "I/O",
                "acceleration": "visibility", "visibility rays": "visibility", "unoccluded kernel": "kernel", "form-factor kernel": "kernel",
                "pair exchange": "kernel",
                "solve setup": "solve", "solve sweeps": "solve", "solve exchange": "solve", "render": "render"}


def ReadJson(path):
    with open(path) as fh:
        return json.load(fh)


def ReadText(path):
    with open(path) as fh:
        return fh.read()


def ReadCsv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def CheckPng(test, path, min_size=100):
    """A PNG file whose chunks all have valid CRCs, with an image of at least min_size pixels a side."""
    test.assertTrue(os.path.isfile(path), "missing plot %s" % path)
    with open(path, "rb") as fh:
        data = fh.read()
    test.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n", "%s is not a PNG file" % path)
    pos, kinds = 8, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]
        test.assertEqual(zlib.crc32(kind + body) & 0xffffffff, crc, "%s: bad CRC in chunk %r" % (path, kind))
        kinds.append(kind)
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
            test.assertGreaterEqual(min(width, height), min_size, "%s: %d x %d image" % (path, width, height))
        pos += 12 + length
    test.assertEqual(kinds[0], b"IHDR", path)
    test.assertEqual(kinds[-1], b"IEND", path)
    test.assertIn(b"IDAT", kinds, path)


def MatrixFile(folder):
    for name in ("formfactors.h5", "radiosity.h5"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with h5py.File(path, "r") as f:
                if "formfactors/F" in f:
                    return path
    return None


def IndependentReciprocity(path):
    """Max over pairs i < j with light of |A_i F_ij - A_j F_ji| / max(...), from the whole matrix."""
    with h5py.File(path, "r") as f:
        F = f["formfactors/F"][...].astype(np.float64)
        A = f["patches/area"][...]
    AF = A[:, None] * F
    upper = np.triu_indices(len(A), k=1)
    a, b = AF[upper], AF.T[upper]
    big = np.maximum(a, b)
    keep = big > 0
    return float((np.abs(a - b)[keep] / big[keep]).max())


def CategorySums(timings):
    """Paper phase -> seconds (max over ranks) for the known timers, and the sum over all timers."""
    sums, everything = {}, 0.0
    for p in timings["phases"]:
        if p["name"] == "total":
            continue
        everything += p["max"]
        if p["name"] in KNOWN_PHASES:
            cat = KNOWN_PHASES[p["name"]]
            sums[cat] = sums.get(cat, 0.0) + p["max"]
    return sums, everything


def CheckRuns(test, study, expected):
    """Every run folder: job.json says it succeeded on P ranks, timings.json says one MPI world of P ranks.
    expected: list of (name, ranks). Returns {name: timings}."""
    timings = {}
    for name, ranks in expected:
        folder = os.path.join(study, name)
        job = ReadJson(os.path.join(folder, "job.json"))
        test.assertEqual(job["exit_code"], 0, "%s: job.json %s" % (name, job))
        test.assertEqual(job["ranks"], ranks, name)
        t = ReadJson(os.path.join(folder, "timings.json"))
        # A launcher that fails to connect the ranks (e.g. srun with the wrong PMI) starts P one-rank worlds.
        test.assertEqual(t["ranks"], ranks, "%s: radiosity saw %d rank(s), the job had %d" % (name, t["ranks"], ranks))
        timings[name] = t
    return timings


def CheckTables(test, study, kind, expected, timings, patches_of=None):
    """The analysis tables against the runs' own timings and matrices. expected: [(name, ranks)] in order."""
    analysis = os.path.join(study, "analysis")
    phases = ReadCsv(os.path.join(analysis, "%s_phases.csv" % kind))
    rows = {(r["run"], r["phase"]): r for r in phases}
    ref_name, ref_ranks = expected[0]
    ref_total = [p for p in timings[ref_name]["phases"] if p["name"] == "total"][0]["max"]
    ref_n = int(timings[ref_name]["parameters"]["patches"])
    for name, ranks in expected:
        t = timings[name]
        total = [p for p in t["phases"] if p["name"] == "total"][0]["max"]
        n = int(t["parameters"]["patches"])
        if patches_of is not None:
            test.assertEqual(n, patches_of(name), "%s: patches" % name)
        row = rows[(name, "total")]
        test.assertAlmostEqual(float(row["seconds"]), total, delta=2e-6, msg=name)
        test.assertEqual(int(row["ranks"]), ranks)
        test.assertEqual(int(row["patches"]), n)
        sums, everything = CategorySums(t)
        for cat, seconds in sums.items():
            test.assertAlmostEqual(float(rows[(name, cat)]["seconds"]), seconds, delta=2e-6,
                                   msg="%s: phase %s" % (name, cat))
            test.assertAlmostEqual(float(rows[(name, cat)]["share"]), seconds / total, delta=2e-6)
        # Every timer lands in exactly one phase ('other' also takes unknown timers and the untimed rest).
        listed = sum(float(r["seconds"]) for (run, phase), r in rows.items()
                     if run == name and phase not in ("total", "other"))
        other = float(rows[(name, "other")]["seconds"]) if (name, "other") in rows else 0.0
        test.assertLessEqual(listed, everything + 1e-5, "%s: phases vs timers" % name)
        test.assertGreaterEqual(listed + other, everything - 1e-5, "%s: phases vs timers" % name)
        # Speedup and efficiency of the total, from the definitions in analysis/README.md.
        ideal = ranks / ref_ranks
        if kind == "strong":
            speedup = ref_total / total
            efficiency = speedup / ideal
        else:
            efficiency = (ref_total / total) * (n * n / ranks) / (ref_n * ref_n / ref_ranks)
            speedup = efficiency * ideal
        test.assertAlmostEqual(float(row["speedup"]), speedup, delta=1e-5 * max(1, speedup), msg=name)
        test.assertAlmostEqual(float(row["efficiency"]), efficiency, delta=1e-5 * max(1, efficiency), msg=name)

    runs = {r["run"]: r for r in ReadCsv(os.path.join(analysis, "%s_runs.csv" % kind))}
    test.assertEqual(sorted(runs), sorted(name for name, _ in expected))
    first_of_size = {}
    for name, ranks in expected:
        r = runs[name]
        matrix = MatrixFile(os.path.join(study, name))
        if matrix is None:
            test.assertEqual(r["matrix_file"], "")
            continue
        with h5py.File(matrix, "r") as f:
            F = f["formfactors/F"][...]
        sums = F.astype(np.float64).sum(axis=1)
        test.assertAlmostEqual(float(r["row_sum_min"]), sums.min(), delta=1e-5)
        test.assertAlmostEqual(float(r["row_sum_max"]), sums.max(), delta=1e-5)
        rec = IndependentReciprocity(matrix)
        test.assertAlmostEqual(float(r["reciprocity_max_rel"]), rec, delta=1e-5 * rec + 1e-12)
        if F.shape[0] in first_of_size:
            ref_name, ref_F = first_of_size[F.shape[0]]
            identical = F.dtype == ref_F.dtype and np.array_equal(F, ref_F)
            test.assertEqual(r["compared_with"], ref_name)
            test.assertEqual(r["matrix_identical"], "yes" if identical else "no")
        else:
            first_of_size[F.shape[0]] = (name, F)
        rad = os.path.join(study, name, "radiosity.h5")
        if os.path.exists(rad):
            with h5py.File(rad, "r") as f:
                test.assertEqual(int(r["solver_iterations"]), f["radiosity/residual"].shape[0])

    md = ReadText(os.path.join(analysis, "%s_scaling.md" % kind))
    for name, ranks in expected:
        test.assertIn("| %d | " % ranks, md)
        test.assertIn("| %s | %d |" % (name, ranks), md)
    return runs


def CheckSameMatrix(test, study, names):
    """The form-factor matrix of every run is bitwise the one of the first (the test reads the files itself)."""
    first = None
    for name in names:
        path = MatrixFile(os.path.join(study, name))
        test.assertIsNotNone(path, "%s: no form-factor matrix" % name)
        with h5py.File(path, "r") as f:
            F = f["formfactors/F"][...]
        if first is None:
            first = F
            test.assertGreater(F.shape[0], 0)
        else:
            test.assertEqual(F.shape, first.shape, name)
            test.assertTrue(np.array_equal(F, first), "%s: F differs from %s's" % (name, names[0]))
    return first
