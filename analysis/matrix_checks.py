"""Checks of form-factor matrices in HDF5 files (/formfactors/F, /patches/area), read in blocks.

A matrix of N = 47104 patches is 17 GB in float64, so nothing here holds more than a few blocks of
`BLOCK_BYTES` at a time: row sums stream over row blocks, reciprocity pairs block (I, J) with block (J, I), and
two files are compared row block by row block.
"""

import h5py
import numpy as np

BLOCK_BYTES = 64 << 20

# Reciprocity errors are binned by log10 from 1e-16 to 1 (quarter decades); exact zeros are counted apart.
RECIPROCITY_EDGES = np.arange(-16.0, 0.0001, 0.25)


def _Block(n, itemsize, width=None):
    """Rows per block such that a block of `width` (default n) columns stays within BLOCK_BYTES."""
    width = n if width is None else width
    return int(max(1, min(n, BLOCK_BYTES // max(1, width * itemsize))))


def MatrixSize(path):
    with h5py.File(path, "r") as f:
        return int(f["formfactors/F"].shape[0])


def RowSums(path):
    """Sum of every row of F (float64), in row order."""
    with h5py.File(path, "r") as f:
        F = f["formfactors/F"]
        n = F.shape[0]
        step = _Block(n, F.dtype.itemsize)
        out = np.empty(n)
        for i0 in range(0, n, step):
            out[i0:i0 + step] = F[i0:i0 + step, :].astype(np.float64).sum(axis=1)
        return out


def Reciprocity(path):
    """Relative reciprocity error of every pair i < j that exchanges light:
    |A_i F_ij - A_j F_ji| / max(A_i F_ij, A_j F_ji).

    Returns a dict: pairs (that exchange light), exact (pairs with error exactly 0), max, mean, and counts /
    edges (histogram of log10 of the non-zero errors over RECIPROCITY_EDGES; errors below 1e-16 go to the first
    bin)."""
    counts = np.zeros(len(RECIPROCITY_EDGES) - 1, dtype=np.int64)
    pairs = exact = 0
    worst = total = 0.0
    with h5py.File(path, "r") as f:
        F = f["formfactors/F"]
        area = f["patches/area"][:].astype(np.float64)
        n = F.shape[0]
        if area.shape != (n,):
            raise ValueError("%s: /patches/area has shape %s, /formfactors/F is %d x %d" % (path, area.shape, n, n))
        step = int(max(1, min(n, np.sqrt(BLOCK_BYTES / (2.0 * F.dtype.itemsize)))))
        for i0 in range(0, n, step):
            i1 = min(n, i0 + step)
            for j0 in range(i0, n, step):
                j1 = min(n, j0 + step)
                a = F[i0:i1, j0:j1].astype(np.float64) * area[i0:i1, None]       # A_i F_ij
                b = (F[j0:j1, i0:i1].astype(np.float64) * area[j0:j1, None]).T   # A_j F_ji, as [i, j]
                if i0 == j0:  # diagonal block: each pair once (i < j)
                    mask = np.triu(np.ones(a.shape, dtype=bool), k=1)
                    a, b = a[mask], b[mask]
                else:
                    a, b = a.ravel(), b.ravel()
                big = np.maximum(np.abs(a), np.abs(b))
                keep = big > 0
                if not keep.any():
                    continue
                rel = np.abs(a[keep] - b[keep]) / big[keep]
                pairs += rel.size
                zero = rel == 0
                exact += int(zero.sum())
                worst = max(worst, float(rel.max()))
                total += float(rel.sum())
                nonzero = np.log10(np.maximum(rel[~zero], 10.0 ** RECIPROCITY_EDGES[0]))
                counts += np.histogram(np.minimum(nonzero, RECIPROCITY_EDGES[-1]), bins=RECIPROCITY_EDGES)[0]
    return {"pairs": pairs, "exact": exact, "max": worst, "mean": total / pairs if pairs else 0.0,
            "counts": counts, "edges": RECIPROCITY_EDGES}


def Compare(path_a, path_b):
    """(identical, max |F_a - F_b|) of two files' matrices; (False, inf) when their sizes differ."""
    with h5py.File(path_a, "r") as fa, h5py.File(path_b, "r") as fb:
        A, B = fa["formfactors/F"], fb["formfactors/F"]
        if A.shape != B.shape:
            return False, float("inf")
        n = A.shape[0]
        step = _Block(n, max(A.dtype.itemsize, B.dtype.itemsize))
        identical, worst = A.dtype == B.dtype, 0.0
        for i0 in range(0, n, step):
            a = A[i0:i0 + step, :]
            b = B[i0:i0 + step, :]
            if identical and not np.array_equal(a, b):
                identical = False
            d = np.abs(a.astype(np.float64) - b.astype(np.float64))
            worst = max(worst, float(d.max()) if d.size else 0.0)
        return identical, worst
