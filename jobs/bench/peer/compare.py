#!/usr/bin/python3
"""Compare view-factor matrices of the n x n-per-wall unit cube with the exact values (exact_box.py).

  compare.py foam CASE N TIME.txt RESULTS.tsv [EXACT.npy]   OpenFOAM viewFactorsGen output of CASE
  compare.py rad  F.h5 N TIME.txt RESULTS.tsv [EXACT.npy]   radiosity formfactors output
  compare.py table RESULTS.tsv                               the summary table

TIME.txt is the stderr of `/usr/bin/time -v`. Each comparison prints its details and appends one row to
RESULTS.tsv. EXACT.npy caches the exact matrix (canonical face order, see exact_box.py) between the tools.
"""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exact_box  # noqa: E402


# ---------------------------------------------------------------- measurements
def read_time(path):
    t = open(path).read()

    def grab(label):
        m = re.search(re.escape(label) + r"\s*:\s*(\S+)", t)
        if not m:
            raise ValueError(f"{path}: no '{label}' (not the output of /usr/bin/time -v?)")
        return m.group(1)
    el = grab("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    wall = 0.0
    for part in el.split(":"):
        wall = wall * 60 + float(part)
    cpu = float(grab("User time (seconds)")) + float(grab("System time (seconds)"))
    peak = float(grab("Maximum resident set size (kbytes)")) / 1024.0
    status = int(grab("Exit status"))
    return wall, cpu, peak, status


# ---------------------------------------------------------------- exact values
def exact(n, cache=None):
    if cache and os.path.exists(cache):
        E = np.load(cache, mmap_mode="r")
        if E.shape == (6 * n * n, 6 * n * n):
            return E
    E = exact_box.matrix(n)
    if cache:
        np.save(cache, E)
    return E


# ---------------------------------------------------------------- OpenFOAM ascii files
def _foam_body(path):
    """Bytes after the FoamFile header of an OpenFOAM ascii file, without the comment lines around them."""
    with open(path, "rb") as f:
        raw = f.read()
    m = re.search(rb"FoamFile\s*\{[^}]*\}", raw[:4096])
    if not m:
        raise ValueError(f"{path}: no FoamFile header")
    if re.search(rb"format\s+binary", m.group(0)):
        raise ValueError(f"{path}: binary format; the case must be written with writeFormat ascii")
    start = m.end()
    head = re.sub(rb"//[^\n]*", b" ", raw[start:start + 4096])  # the "// * * *" line after the header
    tail_at = max(start + 4096, len(raw) - 4096)
    tail = re.sub(rb"//[^\n]*", b" ", raw[tail_at:])  # the "// *****" line at the end
    if tail_at >= len(raw):
        return head[:len(raw) - start]
    return head + raw[start + 4096:tail_at] + tail


def read_list_list(path):
    """An ascii List<List<scalar or label>>: returns (row lengths, concatenated values as float64)."""
    body = _foam_body(path)
    if b"{" in body:  # uniform rows written as n{value}: expand them (rare; slow path)
        body = re.sub(rb"(\d+)\s*\{\s*([^}\s]+)\s*\}",
                      lambda m: b"(" + b" ".join([m.group(2)] * int(m.group(1))) + b")", body)
    body = body.translate(bytes.maketrans(b"()", b"  "))
    flat = np.fromstring(body, sep=" ")
    del body
    nrows = int(flat[0])
    lens = np.empty(nrows, dtype=np.int64)
    starts = np.empty(nrows, dtype=np.int64)
    pos = 1
    for r in range(nrows):
        k = int(flat[pos])
        lens[r] = k
        starts[r] = pos + 1
        pos += k + 1
    if pos != len(flat):
        raise ValueError(f"{path}: parsed {pos} numbers of {len(flat)}: unexpected layout")
    # concatenated values without the per-row counts
    mask = np.ones(len(flat), dtype=bool)
    mask[0] = False
    mask[starts - 1] = False
    return lens, flat[mask]


def foam_mesh_boundary(case):
    """Centroids, area vectors of the faces of every patch, in patch order (OpenFOAM's coarse-face order
    when each face is its own agglomerate), and the patch names."""
    pts_txt = _foam_body(f"{case}/constant/polyMesh/points").decode()
    pts = np.array(re.findall(r"\(\s*([-+0-9.eE]+)\s+([-+0-9.eE]+)\s+([-+0-9.eE]+)\s*\)", pts_txt), dtype=float)
    faces_txt = _foam_body(f"{case}/constant/polyMesh/faces").decode()
    faces = [list(map(int, f.split())) for f in re.findall(r"\d+\s*\(([\d\s]+)\)", faces_txt)[0:]]
    bnd = _foam_body(f"{case}/constant/polyMesh/boundary").decode()
    patches = re.findall(r"(\w+)\s*\{[^}]*?nFaces\s+(\d+);\s*startFace\s+(\d+);[^}]*\}", bnd)
    cents, areas, names = [], [], []
    for name, nf, sf in patches:
        for fi in range(int(sf), int(sf) + int(nf)):
            p = pts[faces[fi]]
            # quads: centroid of the (planar, convex) polygon by triangle fan
            c0 = p[0]
            A = np.zeros(3)
            C = np.zeros(3)
            for k in range(1, len(p) - 1):
                a = 0.5 * np.cross(p[k] - c0, p[k + 1] - c0)
                A += a
                C += np.linalg.norm(a) * (c0 + p[k] + p[k + 1]) / 3
            cents.append(C / np.linalg.norm(A))
            areas.append(A)
        names.append(name)
    return np.array(cents), np.array(areas), names


def load_foam(case, n):
    """OpenFOAM's F (dense, canonical order), its visibility pattern, and the check of the face mapping."""
    cent, area, _ = foam_mesh_boundary(case)
    N = len(cent)
    key = exact_box.face_key(cent, n)
    lensF, valsF = read_list_list(f"{case}/constant/F")
    lensG, cols = read_list_list(f"{case}/constant/globalFaceFaces")
    if len(lensF) != N or not np.array_equal(lensF, lensG):
        raise ValueError(f"{case}: F has {len(lensF)} rows, mesh has {N} wall faces (agglomerated?)")
    rows = np.repeat(np.arange(N, dtype=np.int32), lensF)
    cols = cols.astype(np.int32)
    # Check of the row/column -> face mapping: with one face per coarse face, viewFactorsGen's F_ij is the
    # point kernel at the face centres, cos_i cos_j A_j / (pi r^2).
    unit = area / np.linalg.norm(area, axis=1)[:, None]
    amag = np.linalg.norm(area, axis=1)
    mapping_err = 0.0
    F = np.zeros((N, N))
    chunk = 1 << 22
    for s in range(0, len(valsF), chunk):  # in chunks: 77 M pairs at n = 40
        r, c, v = rows[s:s + chunk], cols[s:s + chunk], valsF[s:s + chunk]
        d = cent[c] - cent[r]
        r2 = np.einsum("ij,ij->i", d, d)
        kern = (np.abs(np.einsum("ij,ij->i", d, unit[r])) * np.abs(np.einsum("ij,ij->i", d, unit[c]))
                * amag[c] / (np.pi * r2 * r2))
        mapping_err = max(mapping_err, float(np.abs(kern - v).max()))
        F[key[r], key[c]] = v
    return F, mapping_err, len(valsF)


def load_rad(path, n):
    import h5py
    with h5py.File(path, "r") as f:
        if int(f.attrs.get("complete", 0)) != 1:
            raise ValueError(f"{path}: not complete")
        cent = f["patches/centroid"][:]
        normal = f["patches/normal"][:]
        Fr = f["formfactors/F"][:].astype(np.float64)
    key = exact_box.face_key(cent, n)
    if len(np.unique(key)) != len(key):
        raise ValueError(f"{path}: two patches map to the same face")
    # inward normals expected: normal . (centre of cube - centroid) > 0
    inward = ((0.5 - cent) * normal).sum(1)
    if (inward <= 0).any():
        raise ValueError(f"{path}: {int((inward <= 0).sum())} patches face outward")
    F = np.zeros_like(Fr)
    F[np.ix_(key, key)] = Fr
    return F


# ---------------------------------------------------------------- comparison
def report(tool, F, E, n, timefile, results, extra=""):
    N = 6 * n * n
    m = n * n
    err = np.abs(F - E)
    maxerr = float(err.max())
    imax = np.unravel_index(int(err.argmax()), err.shape)
    rs = F.sum(1)
    maxrs = float(np.abs(rs - 1).max())
    # by kind of face pair: same wall (exact 0), opposite walls, adjacent (perpendicular) walls
    kinds = {"same wall": [], "opposite walls": [], "adjacent walls": []}
    W = np.zeros((6, 6))
    for w1 in range(6):
        for w2 in range(6):
            blk = err[w1 * m:(w1 + 1) * m, w2 * m:(w2 + 1) * m]
            kind = "same wall" if w1 == w2 else ("opposite walls" if w1 // 2 == w2 // 2 else "adjacent walls")
            kinds[kind].append(float(blk.max()))
            W[w1, w2] = F[w1 * m:(w1 + 1) * m, w2 * m:(w2 + 1) * m].sum() / m
    f_opp = float(exact_box.parallel(0, 1, 0, 1, 0, 1, 0, 1, 1.0))
    f_adj = float(exact_box.perpendicular(0, 1, 0, 1, 0, 1, 0, 1))
    Wex = np.array([[0.0 if a == b else (f_opp if a // 2 == b // 2 else f_adj) for b in range(6)] for a in range(6)])
    # relative error where the exact value is not tiny, and at touching pairs (sharing an edge across walls)
    big = E > 1e-3 * E.max()
    rel = float((err[big] / E[big]).max())
    A = 1.0 / m
    recip = float(np.abs(F - F.T).max() * A / (A * E.max()))
    wall, cpu, peak, status = read_time(timefile)
    print(f"{tool}, n = {n} (N = {N}): wall {wall:.2f} s, CPU {cpu:.2f} s, peak {peak:.0f} MiB, exit {status}")
    print(f"  max |F - exact| = {maxerr:.3e} at faces {imax[0]} -> {imax[1]} (exact {E[imax]:.6e}, got "
          f"{F[imax]:.6e}); max relative error where exact > 1e-3 max: {rel:.3e}")
    print("  max |F - exact| by pair kind: " + ", ".join(f"{k} {max(v):.3e}" for k, v in kinds.items()))
    print(f"  row sums: min {rs.min():.6f}, max {rs.max():.6f}, max |row sum - 1| = {maxrs:.3e}")
    print(f"  wall-to-wall sums F_pq: max |F_pq - exact| = {np.abs(W - Wex).max():.3e} "
          f"(opposite {W[0, 1]:.7f} vs {Wex[0, 1]:.7f}, adjacent {W[0, 2]:.7f} vs {Wex[0, 2]:.7f})")
    print(f"  reciprocity (equal areas: max |F_ij - F_ji| / max F) = {recip:.3e}")
    if extra:
        print("  " + extra)
    with open(results, "a") as f:
        f.write(f"{tool}\t{N}\t{wall:.2f}\t{cpu:.2f}\t{peak:.0f}\t{maxerr:.3e}\t{maxrs:.3e}\t"
                f"{np.abs(W - Wex).max():.3e}\n")


def table(results):
    rows = [line.rstrip("\n").split("\t") for line in open(results) if line.strip()]
    head = ["tool", "N", "wall s", "CPU s", "peak MiB", "max|F-exact|", "max|rowsum-1|", "max|Fwall-exact|"]
    w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print("  ".join(h.rjust(w[i]) if i else h.ljust(w[i]) for i, h in enumerate(head)))
    for r in rows:
        print("  ".join(c.rjust(w[i]) if i else c.ljust(w[i]) for i, c in enumerate(r)))


def main(argv):
    if argv[1] == "table":
        table(argv[2])
        return
    what, src, n, timefile, results = argv[1], argv[2], int(argv[3]), argv[4], argv[5]
    cache = argv[6] if len(argv) > 6 else None
    E = np.asarray(exact(n, cache))
    if what == "foam":
        F, maperr, nnz = load_foam(src, n)
        extra = (f"F stored for {nnz} face pairs ({nnz / (6 * n * n):.0f} per face); face mapping check: "
                 f"max |F - centre-point kernel| = {maperr:.2e}")
        report("OpenFOAM viewFactorsGen", F, E, n, timefile, results, extra)
    elif what == "rad":
        F = load_rad(src, n)
        report("radiosity formfactors", F, E, n, timefile, results)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
