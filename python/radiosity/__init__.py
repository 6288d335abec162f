"""Read the files of the radiosity program (patches, form factors, radiosity, thermal results) into numpy/scipy.

The HDF5 layout is the program's format_version 1 (docs/user-guide.md, "Files"): /patches, /formfactors (dense F
or CSR indptr/indices/data), /radiosity, /thermal. Files that are not complete (a run that stopped) are refused.
"""

import struct

import h5py
import numpy as np
import scipy.io
import scipy.sparse

__all__ = ["read_patches", "read_formfactors", "read_radiosity", "read_thermal", "read_raw", "read_petsc",
           "group_sums", "group_view_factors", "FileError"]

__version__ = "0.1.0"

_PETSC_MAT_CLASSID = 1211216


class FileError(ValueError):
    """A file that is not a complete file of the program, or not of the kind asked for."""


def _open(path):
    f = h5py.File(path, "r")
    if f.attrs.get("format") not in (b"radiosity", "radiosity"):
        f.close()
        raise FileError("%s: not a radiosity file (no format = radiosity attribute)" % path)
    if int(f.attrs.get("complete", 0)) != 1:
        f.close()
        raise FileError("%s: incomplete (the run that wrote it did not finish)" % path)
    return f


def _attrs(obj):
    out = {}
    for k, v in obj.attrs.items():
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, np.ndarray) and v.size == 1:
            v = v.item()
        elif isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out


def read_patches(path):
    """The patches of an HDF5 file: area [N], centroid [N,3], normal [N,3], corners [N,4,3], face [N] (the input
    polygon), reflectance [N,3], emission [N,3]."""
    with _open(path) as f:
        if "patches" not in f:
            raise FileError("%s: no /patches" % path)
        return {k: f["patches"][k][...] for k in f["patches"]}


def read_formfactors(path, near_only=False):
    """F as numpy [N,N] (a dense HDF5 file, a raw file) or scipy.sparse.csr_matrix (a CSR HDF5 file, MatrixMarket,
    PETSc binary). The format is found from the file's first bytes. A file of the hierarchical operator holds far
    links beside its CSR entries: refused unless near_only=True (then the CSR entries alone)."""
    with open(path, "rb") as fh:
        head = fh.read(16)
    if head.startswith(b"\x89HDF\r\n\x1a\n"):
        with _open(path) as f:
            if "formfactors" not in f:
                raise FileError("%s: no /formfactors" % path)
            g = f["formfactors"]
            if "F" in g:
                return g["F"][...]
            if "link_ptr" in g and not near_only:
                raise FileError("%s: F of the hierarchical operator (far links beside the CSR entries): not read "
                                "here; `radiosity export --format csr` spreads the links into entries (the same "
                                "operator), or pass near_only=True for the CSR entries alone" % path)
            n = len(g["indptr"]) - 1
            return scipy.sparse.csr_matrix((g["data"][...], g["indices"][...], g["indptr"][...]), shape=(n, n))
    if head.startswith(b"%%MatrixMarket"):
        return scipy.sparse.csr_matrix(scipy.io.mmread(path))
    if len(head) >= 4 and struct.unpack(">i", head[:4])[0] == _PETSC_MAT_CLASSID:
        return read_petsc(path)
    return read_raw(path)


def read_raw(path):
    """A raw matrix file: little-endian int32 N, then N*N float64, row-major."""
    with open(path, "rb") as fh:
        header = fh.read(4)
        if len(header) != 4:
            raise FileError("%s: too short for a raw matrix" % path)
        n = struct.unpack("<i", header)[0]
        values = np.fromfile(fh, dtype="<f8")
    if n < 0 or values.size != n * n:
        raise FileError("%s: %d values after the header, not N*N for N = %d" % (path, values.size, n))
    return values.reshape(n, n)


def read_petsc(path):
    """A PETSc binary matrix (MatView layout, big-endian, 32-bit indices) as scipy.sparse.csr_matrix."""
    with open(path, "rb") as fh:
        data = fh.read()
    classid, m, n, nnz = struct.unpack(">4i", data[:16])
    if classid != _PETSC_MAT_CLASSID:
        raise FileError("%s: not a PETSc binary matrix" % path)
    offset = 16
    lengths = np.frombuffer(data, dtype=">i4", count=m, offset=offset)
    offset += 4 * m
    columns = np.frombuffer(data, dtype=">i4", count=nnz, offset=offset)
    offset += 4 * nnz
    values = np.frombuffer(data, dtype=">f8", count=nnz, offset=offset)
    indptr = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    return scipy.sparse.csr_matrix((values.astype(np.float64), columns.astype(np.int64), indptr), shape=(m, n))


def read_radiosity(path):
    """(B [N,3], residual history, the solver's attributes)."""
    with _open(path) as f:
        if "radiosity" not in f:
            raise FileError("%s: no /radiosity" % path)
        g = f["radiosity"]
        return g["B"][...], g["residual"][...], _attrs(g)


def read_thermal(path):
    """`radiosity thermal`'s results per patch (W/m^2 and K): radiosity, irradiation, heat_flux (net, leaving),
    temperature, emissivity; and `attrs` (solver, heat_rate_sum_w, ...)."""
    with _open(path) as f:
        if "thermal" not in f:
            raise FileError("%s: no /thermal" % path)
        g = f["thermal"]
        out = {k: g[k][...] for k in g}
        out["attrs"] = _attrs(g)
        return out


def group_sums(values, groups):
    """(group labels ascending, sums of `values` over the patches of each group): e.g. A q per polygon (W)."""
    labels, index = np.unique(np.asarray(groups), return_inverse=True)
    values = np.asarray(values, dtype=np.float64)
    out = np.zeros((len(labels),) + values.shape[1:])
    np.add.at(out, index, values)
    return labels, out


def group_view_factors(F, area, groups):
    """(group labels, G) with G[a, b] the view factor from group a to group b: the area-weighted mean over a's
    patches of their rows summed over b's columns, sum_{i in a} A_i sum_{j in b} F_ij / A_a. Reciprocity holds as
    for patches (A_a G_ab = A_b G_ba), and a group's row sums to the area-weighted mean of its patches' rows."""
    labels, index = np.unique(np.asarray(groups), return_inverse=True)
    k = len(labels)
    area = np.asarray(area, dtype=np.float64)
    P = scipy.sparse.csr_matrix((np.ones(len(index)), (np.arange(len(index)), index)), shape=(len(index), k))
    weighted = scipy.sparse.diags(area) @ (F if scipy.sparse.issparse(F) else scipy.sparse.csr_matrix(F))
    G = (P.T @ weighted @ P).toarray()
    group_area = P.T @ area
    return labels, G / group_area[:, None]
