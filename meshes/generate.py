#!/usr/bin/env python3
"""Procedural scenes whose size is a parameter, for tests and benchmarks at 1e3 to 1e6 patches (issue 15).

  room:  a closed room with a ceiling light and K floating boxes on a grid (6 K + 10 polygons). Every polygon faces into the air
         of the room, so every row of F sums to 1 (a closed scene's check at any size).
  city:  a grid of NX x NZ buildings (four walls and a roof each, heights from a seeded generator) on ground
         that stops at their walls, open to the sky (9 NX NZ + 4 polygons); optionally an emitting square above it (--sky-light) so that `run`
         makes a picture. The shape of the urban models of radiative heat transfer.

Writes OUTPUT (OBJ) and OUTPUT with .mtl beside it; prints the polygon count. Coordinates are multiples of 1/8,
so every vertex is exact in binary and the same on every machine. Standard library only.

  python3 meshes/generate.py room --objects 64 --output room.obj
  python3 meshes/generate.py city --buildings 10x10 --seed 7 --output city.obj [--sky-light]
Then e.g.  radiosity formfactors --input city.obj --patches 20000 --output city.h5
"""

import argparse
import os
import sys


def newell(corners):
    n = [0.0, 0.0, 0.0]
    for k, a in enumerate(corners):
        b = corners[(k + 1) % len(corners)]
        n[0] += (a[1] - b[1]) * (a[2] + b[2])
        n[1] += (a[2] - b[2]) * (a[0] + b[0])
        n[2] += (a[0] - b[0]) * (a[1] + b[1])
    return n


def facing(corners, normal):
    """The corners in the order whose right-hand normal points along `normal` (the polygon's front)."""
    n = newell(corners)
    return corners if sum(x * y for x, y in zip(n, normal)) > 0 else corners[::-1]


def box_faces(lo, hi, inward=False, bottom=True):
    """The faces of the box [lo, hi], each as (corners, normal), fronts outward (or inward)."""
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    faces = [
        ([(x0, y0, z0), (x1, y0, z0), (x1, y0, z1), (x0, y0, z1)], (0, -1, 0)),
        ([(x0, y1, z0), (x1, y1, z0), (x1, y1, z1), (x0, y1, z1)], (0, 1, 0)),
        ([(x0, y0, z0), (x1, y0, z0), (x1, y1, z0), (x0, y1, z0)], (0, 0, -1)),
        ([(x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)], (0, 0, 1)),
        ([(x0, y0, z0), (x0, y1, z0), (x0, y1, z1), (x0, y0, z1)], (-1, 0, 0)),
        ([(x1, y0, z0), (x1, y1, z0), (x1, y1, z1), (x1, y0, z1)], (1, 0, 0)),
    ]
    if not bottom:
        faces = faces[1:]
    return [(c, tuple(-v for v in n) if inward else n) for c, n in faces]


def frame(outer, inner, y, normal):
    """Four quads at height y covering the rectangle `outer` = (x0, x1, z0, z1) less `inner` (a, b, c, d)."""
    (x0, x1, z0, z1), (a, b, c, d) = outer, inner
    quads = ([(x0, y, z0), (x1, y, z0), (x1, y, c), (x0, y, c)], [(x0, y, d), (x1, y, d), (x1, y, z1), (x0, y, z1)],
             [(x0, y, c), (a, y, c), (a, y, d), (x0, y, d)], [(b, y, c), (x1, y, c), (x1, y, d), (b, y, d)])
    return [(q, normal) for q in quads]


class atomic:
    """A text file written as PATH.partial and renamed to PATH on success; removed on failure."""

    def __init__(self, path):
        self.path, self.partial = path, path + ".partial"

    def __enter__(self):
        self.fh = open(self.partial, "w")
        return self.fh

    def __exit__(self, kind, value, traceback):
        self.fh.close()
        if kind is None:
            os.replace(self.partial, self.path)
        elif os.path.exists(self.partial):
            os.remove(self.partial)
        return False


class Scene:
    def __init__(self):
        self.vertices, self.index, self.groups = [], {}, {}

    def add(self, material, corners, normal):
        ids = []
        for v in facing(corners, normal):
            key = tuple(float(x) for x in v)
            if key not in self.index:
                self.index[key] = len(self.vertices) + 1
                self.vertices.append(key)
            ids.append(self.index[key])
        self.groups.setdefault(material, []).append(ids)

    def polygons(self):
        return sum(len(f) for f in self.groups.values())

    def write(self, path, materials, comment):
        """Writes the MTL, then the OBJ, each as PATH.partial renamed when complete (as radiosity writes its
        files): a failed write leaves no file that looks whole."""
        mtl = os.path.splitext(path)[0] + ".mtl"
        with atomic(mtl) as fh:
            fh.write("# Materials of %s (meshes/generate.py). Kd: diffuse reflectance, Ke: emitted radiance.\n"
                     % os.path.basename(path))
            for name, (kd, ke) in materials.items():
                fh.write("newmtl %s\nKd %g %g %g\nKe %g %g %g\n" % ((name,) + kd + ke))
        with atomic(path) as fh:
            fh.write("# %s\n# Written by meshes/generate.py: %d polygons.\n\nmtllib %s\n\n"
                     % (comment, self.polygons(), os.path.basename(mtl)))
            for v in self.vertices:
                fh.write("v %r %r %r\n" % v)
            for name, faces in self.groups.items():
                fh.write("\nusemtl %s\n" % name)
                for ids in faces:
                    fh.write("f %s\n" % " ".join(str(i) for i in ids))


def room(objects):
    """A W x H x D room (fronts inward), a ceiling light in a frame of four quads, and `objects` floating cubes."""
    side = 1
    while side * side < objects:
        side += 1
    cell, size = 2.0, 1.0  # a cube of 1 in each 2 x 2 cell
    width = depth = cell * side + 2.0
    height = 4.0
    s = Scene()
    faces = box_faces((0, 0, 0), (width, height, depth), inward=True)
    for corners, normal in faces:
        if normal != (0, -1, 0):  # all but the ceiling
            s.add("wall", corners, normal)
    # The ceiling (y = height, facing down): a light square in the middle, framed by four quads.
    a, b = width / 2 - 1.0, width / 2 + 1.0
    c, d = depth / 2 - 1.0, depth / 2 + 1.0
    y, down = height, (0, -1, 0)
    s.add("light", [(a, y, c), (b, y, c), (b, y, d), (a, y, d)], down)
    for corners, normal in frame((0, width, 0, depth), (a, b, c, d), y, down):
        s.add("wall", corners, normal)
    for k in range(objects):
        i, j = k % side, k // side
        x0, z0 = 1.0 + cell * i + (cell - size) / 2, 1.0 + cell * j + (cell - size) / 2
        for corners, normal in box_faces((x0, 1.0, z0), (x0 + size, 1.0 + size, z0 + size)):
            s.add("object", corners, normal)
    materials = {"wall": ((0.7, 0.7, 0.7), (0, 0, 0)), "light": ((0, 0, 0), (10, 10, 10)),
                 "object": ((0.5, 0.4, 0.3), (0, 0, 0))}
    return s, materials, "A closed room with a ceiling light and %d floating cubes." % objects


def city(nx, nz, seed, sky_light):
    """nx x nz buildings (walls and roof; heights 1 to 8 in steps of 1/2) on 4 x 4 lots, and the ground around
    them: each lot a frame of four quads around its footprint (no ground under a building), and a border."""
    state = seed * 2654435761 % 2 ** 32 or 1

    def next_height():  # xorshift32: the same heights on every machine and Python
        nonlocal state
        state ^= (state << 13) & 0xFFFFFFFF
        state ^= state >> 17
        state ^= (state << 5) & 0xFFFFFFFF
        return 1.0 + 0.5 * (state % 15)

    lot, footprint = 4.0, 2.5
    s = Scene()
    extent_x, extent_z = lot * nx, lot * nz
    up = (0, 1, 0)
    for corners, normal in frame((-lot, extent_x + lot, -lot, extent_z + lot), (0, extent_x, 0, extent_z), 0, up):
        s.add("ground", corners, normal)
    for i in range(nx):
        for j in range(nz):
            x0, z0 = lot * i + (lot - footprint) / 2, lot * j + (lot - footprint) / 2
            for corners, normal in frame((lot * i, lot * (i + 1), lot * j, lot * (j + 1)),
                                         (x0, x0 + footprint, z0, z0 + footprint), 0, up):
                s.add("ground", corners, normal)
            for corners, normal in box_faces((x0, 0, z0), (x0 + footprint, next_height(), z0 + footprint),
                                             bottom=False):
                s.add("roof" if normal == (0, 1, 0) else "facade", corners, normal)
    materials = {"ground": ((0.3, 0.3, 0.3), (0, 0, 0)), "facade": ((0.5, 0.45, 0.4), (0, 0, 0)),
                 "roof": ((0.2, 0.2, 0.2), (0, 0, 0))}
    if sky_light:
        y = 40.0
        s.add("sky", [(-lot, y, -lot), (extent_x + lot, y, -lot), (extent_x + lot, y, extent_z + lot),
                      (-lot, y, extent_z + lot)], (0, -1, 0))
        materials["sky"] = ((0, 0, 0), (1, 1, 1))
    return s, materials, "A city of %d x %d buildings on a ground plane (seed %d)." % (nx, nz, seed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="kind", required=True)
    p_room = sub.add_parser("room", help="closed room with floating cubes (every row of F sums to 1)")
    p_room.add_argument("--objects", type=int, default=8, help="floating cubes (6 polygons each)")
    p_city = sub.add_parser("city", help="ground plane with a grid of buildings, open to the sky")
    p_city.add_argument("--buildings", default="4x4", help="NXxNZ buildings (9 polygons each with their lot)")
    p_city.add_argument("--seed", type=int, default=1, help="seed of the building heights")
    p_city.add_argument("--sky-light", action="store_true", help="an emitting square above the city")
    for p in (p_room, p_city):
        p.add_argument("--output", required=True, help="OBJ file to write (its .mtl is written beside it)")
    args = parser.parse_args()

    def fail(message):
        sys.stderr.write("generate.py: error: %s\n" % message)
        sys.exit(2)

    folder = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(folder):
        fail("%s: folder '%s' does not exist" % (args.output, folder))
    if not args.output.endswith(".obj"):
        fail("%s: the output must end in .obj" % args.output)
    if args.kind == "room":
        if args.objects < 0:
            fail("--objects must be 0 or more, not %d" % args.objects)
        scene, materials, comment = room(args.objects)
    else:
        parts = args.buildings.lower().split("x")
        if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
            fail("--buildings must be NXxNZ with positive whole numbers, not '%s'" % args.buildings)
        if args.seed < 0:
            fail("--seed must be 0 or more, not %d" % args.seed)
        scene, materials, comment = city(int(parts[0]), int(parts[1]), args.seed, args.sky_light)
    try:
        scene.write(args.output, materials, comment)
    except OSError as e:
        fail("%s: cannot write the scene (%s)" % (args.output, e.strerror or e))
    print("%s: %d polygons" % (args.output, scene.polygons()))


if __name__ == "__main__":
    main()
