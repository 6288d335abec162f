#!/usr/bin/python3
"""Exact view factors between the faces of a unit cube whose 6 walls are each split into n x n squares.

Closed-form rectangle-to-rectangle view factors by corner superposition (Howell's catalogue):
  * parallel, axis-aligned rectangles in planes a distance c apart (C-13 in superposition form),
  * perpendicular rectangles whose planes meet along a common line (C-17 in superposition form).

Canonical face numbering (used by the comparison script): wall w = 2*axis + side (axis 0,1,2 = x,y,z;
side 0 = the wall at coordinate 0, side 1 = at coordinate 1), and on the wall the face with in-plane cell
indices (i, j), where (u, v) are the two other axes in increasing order (x<y<z); index = w*n*n + i*n + j.

  /usr/bin/python3 exact_box.py          # self-test against Howell's values and the cube's closure
"""
import sys

import numpy as np

PI = np.pi


def _g_parallel(x, y, c):
    """Corner function of two parallel rectangles a distance c apart (x, y: coordinate differences)."""
    sy = np.sqrt(y * y + c * c)
    sx = np.sqrt(x * x + c * c)
    return (x * sy * np.arctan(x / sy) + y * sx * np.arctan(y / sx)
            - 0.5 * c * c * np.log(x * x + y * y + c * c)) / (2.0 * PI)


def _corner_sum(g, x1, x2, y1, y2, xi1, xi2, eta1, eta2):
    """The 16-corner superposition sum of a corner function g(x, y, xi, eta), per unit area of rectangle 1."""
    tot = 0.0
    for i, x in enumerate((x1, x2)):
        for j, y in enumerate((y1, y2)):
            for k, xi in enumerate((xi1, xi2)):
                for l, eta in enumerate((eta1, eta2)):
                    tot = tot + (-1.0) ** (i + j + k + l) * g(x, y, xi, eta)
    return tot / ((x2 - x1) * (y2 - y1))


def parallel(x1, x2, y1, y2, xi1, xi2, eta1, eta2, c):
    """F from rectangle [x1,x2]x[y1,y2] (plane z=0) to [xi1,xi2]x[eta1,eta2] (plane z=c), facing each
    other. All arguments broadcast (numpy arrays)."""
    return _corner_sum(lambda x, y, xi, eta: _g_parallel(x - xi, y - eta, c), x1, x2, y1, y2, xi1, xi2, eta1, eta2)


def _g_perp(x, y, eta):
    """Corner function of two perpendicular rectangles: x = difference along the common line, y and eta
    = distances of the corners from the common line, in each rectangle's own plane.
    G = 1/(2 pi) [x s atan(x/s) + (x^2 - s^2)/4 ln(x^2 + s^2)], s^2 = y^2 + eta^2 (terms independent of y or
    eta cancel in the corner sum and are dropped)."""
    r2 = y * y + eta * eta
    s = np.sqrt(r2)
    q = x * x + r2
    t1 = x * s * np.arctan2(x, s)  # 0 where s = 0 (|arctan2| <= pi/2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t2 = np.where(q > 0.0, 0.25 * (x * x - r2) * np.log(np.where(q > 0.0, q, 1.0)), 0.0)
    return (t1 + t2) / (2.0 * PI)


def perpendicular(x1, x2, y1, y2, xi1, xi2, eta1, eta2):
    """F from rectangle 1 = [x1,x2] (along the common line) x [y1,y2] (distance from the line in its plane)
    to rectangle 2 = [xi1,xi2] x [eta1,eta2] in the perpendicular plane (interior angle 90 degrees)."""
    return _corner_sum(lambda x, y, xi, eta: _g_perp(x - xi, y, eta), x1, x2, y1, y2, xi1, xi2, eta1, eta2)


def wall_axes(w):
    axis = w // 2
    u, v = [a for a in range(3) if a != axis]
    return axis, w % 2, u, v


def face_key(centroid, n, tol=1e-6):
    """Canonical index of the face whose centroid is given (array [N,3]); raises if not on the grid."""
    c = np.asarray(centroid, dtype=float)
    out = np.empty(len(c), dtype=np.int64)
    for r, p in enumerate(c):
        walls = [(a, s) for a in range(3) for s in (0, 1) if abs(p[a] - s) < tol]
        if len(walls) != 1:
            raise ValueError(f"centroid {p} is not on exactly one wall of the unit cube")
        a, s = walls[0]
        w = 2 * a + s
        _, _, u, v = wall_axes(w)
        fi, fj = p[u] * n - 0.5, p[v] * n - 0.5
        i, j = int(round(fi)), int(round(fj))
        if abs(fi - i) > 1e-4 or abs(fj - j) > 1e-4 or not (0 <= i < n and 0 <= j < n):
            raise ValueError(f"centroid {p} is not a centre of the {n} x {n} grid")
        out[r] = w * n * n + i * n + j
    return out


def block(n, w1, w2):
    """Exact F[n*n, n*n] from the faces of wall w1 to those of wall w2 (canonical order)."""
    h = 1.0 / n
    lo = np.arange(n) * h
    hi = lo + h
    a1, s1, u1, v1 = wall_axes(w1)
    a2, s2, u2, v2 = wall_axes(w2)
    m = n * n
    if w1 == w2:
        return np.zeros((m, m))
    # emitter face index p = i*n + j -> u-interval i, v-interval j; receiver q likewise.
    I1, J1 = np.divmod(np.arange(m), n)
    I2, J2 = np.divmod(np.arange(m), n)
    if a1 == a2:  # opposite walls, same in-plane axes
        X1, X2 = lo[I1][:, None], hi[I1][:, None]
        Y1, Y2 = lo[J1][:, None], hi[J1][:, None]
        XI1, XI2 = lo[I2][None, :], hi[I2][None, :]
        ETA1, ETA2 = lo[J2][None, :], hi[J2][None, :]
        return parallel(X1, X2, Y1, Y2, XI1, XI2, ETA1, ETA2, 1.0)
    # perpendicular walls: common axis t, wall 1 spans t and a2 (distance from the line |x_a2 - s2|),
    # wall 2 spans t and a1 (distance |x_a1 - s1|).
    t = 3 - a1 - a2

    def intervals(u, v, I, J, t, other, side):
        # along-line interval and distance-from-line interval of each face of a wall with in-plane axes u, v
        iu = {u: I, v: J}
        along = (lo[iu[t]], hi[iu[t]])
        o1, o2 = lo[iu[other]], hi[iu[other]]
        if side == 0:
            dist = (o1, o2)
        else:
            dist = (1.0 - o2, 1.0 - o1)
        return along, dist

    (x1, x2), (y1, y2) = intervals(u1, v1, I1, J1, t, a2, s2)
    (xi1, xi2), (eta1, eta2) = intervals(u2, v2, I2, J2, t, a1, s1)
    return perpendicular(x1[:, None], x2[:, None], y1[:, None], y2[:, None],
                         xi1[None, :], xi2[None, :], eta1[None, :], eta2[None, :])


def matrix(n):
    m = n * n
    F = np.zeros((6 * m, 6 * m))
    for w1 in range(6):
        for w2 in range(6):
            F[w1 * m:(w1 + 1) * m, w2 * m:(w2 + 1) * m] = block(n, w1, w2)
    return F


def centroids(n):
    """Canonical centroids [6*n*n, 3]."""
    out = np.empty((6 * n * n, 3))
    c = (np.arange(n) + 0.5) / n
    for w in range(6):
        a, s, u, v = wall_axes(w)
        I, J = np.divmod(np.arange(n * n), n)
        p = np.zeros((n * n, 3))
        p[:, a] = s
        p[:, u] = c[I]
        p[:, v] = c[J]
        out[w * n * n:(w + 1) * n * n] = p
    return out


def _selftest():
    ok = True

    def check(name, got, want, tol):
        nonlocal ok
        good = abs(got - want) <= tol
        ok &= good
        print(f"  {name:<58} {got:.10f}  (want {want}, tol {tol:g}) {'ok' if good else 'FAIL'}")

    print("exact_box self-test")
    check("opposed unit squares at distance 1 (Howell 0.1998248)",
          float(parallel(0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0)), 0.1998248, 1e-7)
    check("unit squares sharing an edge at 90 deg (Howell 0.2000438)",
          float(perpendicular(0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0)), 0.2000438, 1e-7)
    # Independent closed forms (Howell C-11, C-14) for unequal rectangles.
    a, b, c = 2.0, 0.5, 0.3
    X, Y = a / c, b / c
    c11 = 2 / (PI * X * Y) * (np.log(np.sqrt((1 + X * X) * (1 + Y * Y) / (1 + X * X + Y * Y)))
                              + X * np.sqrt(1 + Y * Y) * np.arctan(X / np.sqrt(1 + Y * Y))
                              + Y * np.sqrt(1 + X * X) * np.arctan(Y / np.sqrt(1 + X * X))
                              - X * np.arctan(X) - Y * np.arctan(Y))
    check("parallel 2 x 0.5 at 0.3 vs C-11 closed form", float(parallel(0, a, 0, b, 0, a, 0, b, c)), c11, 1e-12)
    l, h, w = 1.5, 0.4, 2.0  # common edge length l, rect 1 width h, rect 2 width w
    H, W = h / l, w / l
    c14 = 1 / (PI * W) * (W * np.arctan(1 / W) + H * np.arctan(1 / H) - np.sqrt(H * H + W * W)
                          * np.arctan(1 / np.sqrt(H * H + W * W)) + 0.25 * np.log(
                              (1 + W * W) * (1 + H * H) / (1 + W * W + H * H)
                              * (W * W * (1 + W * W + H * H) / ((1 + W * W) * (W * W + H * H))) ** (W * W)
                              * (H * H * (1 + H * H + W * W) / ((1 + H * H) * (H * H + W * W))) ** (H * H)))
    check("perpendicular w=2 -> h=0.4, common edge 1.5 vs C-14", float(perpendicular(0, l, 0, w, 0, l, 0, h)),
          c14, 1e-12)
    # Offset rectangles vs brute-force midpoint quadrature.
    def brute(p1, n1, e1u, e1v, p2, n2, e2u, e2v, k=60):
        g = (np.arange(k) + 0.5) / k
        P = p1 + g[:, None, None] * e1u + g[None, :, None] * e1v
        Q = p2 + g[:, None, None] * e2u + g[None, :, None] * e2v
        P = P.reshape(-1, 3)
        Q = Q.reshape(-1, 3)
        d = Q[None, :, :] - P[:, None, :]
        r2 = (d * d).sum(-1)
        k1 = (d @ n1) * (-(d @ n2)) / (PI * r2 * r2)
        A2 = np.linalg.norm(np.cross(e2u, e2v))
        return k1.mean() * A2
    z = np.zeros(3)
    got = float(perpendicular(0.2, 0.7, 0.3, 0.6, 0.5, 1.1, 0.4, 0.9))
    # rect1 in plane z=0 (x along line, y = distance), normal +z; rect2 in plane y=0 (x, z = distance), normal +y
    ref = brute(np.array([0.2, 0.3, 0]), np.array([0, 0, 1.0]), np.array([0.5, 0, 0]), np.array([0, 0.3, 0]),
                np.array([0.5, 0, 0.4]), np.array([0, 1.0, 0]), np.array([0.6, 0, 0]), np.array([0, 0, 0.5]))
    check("offset perpendicular rectangles vs brute-force quadrature", got, ref, 2e-4 * ref)
    got = float(parallel(0.1, 0.4, 0.0, 0.5, 0.6, 1.2, 0.2, 0.9, 0.7))
    ref = brute(np.array([0.1, 0, 0]), np.array([0, 0, 1.0]), np.array([0.3, 0, 0]), np.array([0, 0.5, 0]),
                np.array([0.6, 0.2, 0.7]), np.array([0, 0, -1.0]), np.array([0.6, 0, 0]), np.array([0, 0.7, 0]))
    check("offset parallel rectangles vs brute-force quadrature", got, ref, 2e-4 * ref)
    for n in (1, 2, 5):
        F = matrix(n)
        rs = np.abs(F.sum(1) - 1).max()
        A = np.full(len(F), 1.0 / (n * n))
        rec = np.abs(A[:, None] * F - (A[:, None] * F).T).max() / (A[:, None] * F).max()
        good = rs < 1e-11 and rec < 1e-10 and F.min() >= 0
        ok &= good
        print(f"  cube n={n} (N={len(F)}): max |row sum - 1| = {rs:.2e}, reciprocity (rel.) {rec:.2e}, "
              f"min F {F.min():.3e} {'ok' if good else 'FAIL'}")
    F = matrix(1)
    good = abs(F[0, 1] - 0.1998248) < 1e-7 and abs(F[0, 2] - 0.2000438) < 1e-7
    ok &= good
    print(f"  cube n=1: opposite {F[0, 1]:.7f}, adjacent {F[0, 2]:.7f} {'ok' if good else 'FAIL'}")
    # canonical numbering round trip
    for n in (3, 4):
        good = np.array_equal(face_key(centroids(n), n), np.arange(6 * n * n))
        ok &= good
    print("  canonical numbering round trip", "ok" if good else "FAIL")
    print("exact_box self-test:", "PASSED" if ok else "FAILED")
    return ok


if __name__ == "__main__":
    sys.exit(0 if _selftest() else 1)
