#!/usr/bin/python3
"""Write the inputs of the peer benchmark for the unit cube with each wall split into n x n squares.

  make_inputs.py foam CASE_DIR N     OpenFOAM case (before blockMesh): system/, constant/ dictionaries
  make_inputs.py agglom CASE_DIR N   constant/finalAgglom after blockMesh: one coarse face per face
  make_inputs.py obj FILE.obj N      the same geometry for radiosity: one quad per wall face, counter-clockwise
                                     seen from inside the cube (normals point inward)

The OpenFOAM patches are the 6 walls, in the order of exact_box's canonical numbering: x0 x1 y0 y1 z0 z1.
"""
import os
import sys

HEADER = """/*--------------------------------*- C++ -*----------------------------------*\\
  written by jobs/bench/peer/make_inputs.py (radiosity peer benchmark)
\\*---------------------------------------------------------------------------*/
FoamFile
{{
    version     2.0;
    format      ascii;
    class       {cls};
    location    "{loc}";
    object      {obj};
}}
"""

PATCHES = [  # name, blockMesh face (vertex labels of the hex 0..7)
    ("x0", "(0 4 7 3)"),
    ("x1", "(1 2 6 5)"),
    ("y0", "(0 1 5 4)"),
    ("y1", "(3 7 6 2)"),
    ("z0", "(0 3 2 1)"),
    ("z1", "(4 5 6 7)"),
]


def write(path, cls, loc, obj, body):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(HEADER.format(cls=cls, loc=loc, obj=obj))
        f.write(body)


def foam_case(case, n):
    write(f"{case}/system/controlDict", "dictionary", "system", "controlDict", """
application     viewFactorsGen;
startFrom       startTime;
startTime       0;
stopAt          endTime;
endTime         1;
deltaT          1;
writeControl    timeStep;
writeInterval   1;
writeFormat     ascii;       // F, globalFaceFaces are parsed as text
writePrecision  17;          // full double precision in F
writeCompression off;
timeFormat      general;
timePrecision   6;
runTimeModifiable false;
""")
    write(f"{case}/system/fvSchemes", "dictionary", "system", "fvSchemes", """
ddtSchemes      { default steadyState; }
gradSchemes     { default Gauss linear; }
divSchemes      { default none; }
laplacianSchemes { default Gauss linear corrected; }
interpolationSchemes { default linear; }
snGradSchemes   { default corrected; }
""")
    write(f"{case}/system/fvSolution", "dictionary", "system", "fvSolution", "\n")
    patches = "".join(f"""    {name}
    {{
        type wall;
        inGroups (wall viewFactorWall);
        faces ({face});
    }}
""" for name, face in PATCHES)
    write(f"{case}/system/blockMeshDict", "dictionary", "system", "blockMeshDict", f"""
scale 1;
vertices
(
    (0 0 0) (1 0 0) (1 1 0) (0 1 0)
    (0 0 1) (1 0 1) (1 1 1) (0 1 1)
);
blocks ( hex (0 1 2 3 4 5 6 7) ({n} {n} {n}) simpleGrading (1 1 1) );
edges ();
boundary
(
{patches});
mergePatchPairs ();
""")
    # viewFactorsGen reads only this dictionary (and constant/polyMesh/finalAgglom).
    write(f"{case}/constant/viewFactorsDict", "dictionary", "constant", "viewFactorsDict", """
writeViewFactorMatrix true;    // also writes <time>/viewFactorField: each face's row sum
writeFacesAgglomeration false;
dumpRays        false;
debug           1;             // prints the patch-to-patch sums F_pq
maxDynListLength 2000000000;   // default 100000 rays aborts beyond ~50 faces
""")
    # Not read by viewFactorsGen: the radiation set-up a solver would use with these view factors.
    write(f"{case}/constant/radiationProperties", "dictionary", "constant", "radiationProperties", """
radiation       on;
radiationModel  viewFactor;
viewFactorCoeffs
{
    smoothing       false;     // no renormalisation of the rows of F
    constantEmissivity true;
}
solverFreq      1;
absorptionEmissionModel none;
scatterModel    none;
sootModel       none;
""")
    write(f"{case}/constant/boundaryRadiationProperties", "dictionary", "constant",
          "boundaryRadiationProperties", """
".*"
{
    type            opaqueDiffusive;
    wallAbsorptionEmissionModel
    {
        type            multiBandAbsorption;
        absorptivity    (1);
        emissivity      (1);
    }
}
""")


def finalagglom(case, n):
    # One list per patch of the mesh (all 6 are view-factor walls): face f of the patch -> coarse face f.
    m = n * n
    body = f"\n{len(PATCHES)}\n(\n"
    for _ in PATCHES:
        body += f"{m}\n(\n" + "\n".join(str(i) for i in range(m)) + "\n)\n"
    body += ")\n"
    write(f"{case}/constant/finalAgglom", "labelListList", "constant", "finalAgglom", body)


def obj(path, n):
    """One quad per wall face, counter-clockwise seen from inside (normal into the cube)."""
    h = 1.0 / n
    lines = [f"# unit cube, each wall split into {n} x {n} squares ({6 * n * n} quads), normals inward",
             "# written by jobs/bench/peer/make_inputs.py (radiosity peer benchmark); default material"]
    nv = 0
    for axis in range(3):
        u, v = [a for a in range(3) if a != axis]
        for side in (0, 1):
            base = nv
            for i in range(n + 1):
                for j in range(n + 1):
                    p = [0.0, 0.0, 0.0]
                    p[axis] = float(side)
                    p[u] = i * h
                    p[v] = j * h
                    lines.append("v %.17g %.17g %.17g" % tuple(p))
                    nv += 1
            # e_u x e_v = +e_axis for (u, v) in increasing order with axis the remaining one? Only for axis 1
            # is (u, v) = (x, z) with x x z = -y. Inward normal = +e_axis on side 0, -e_axis on side 1.
            uxv = 1 if axis != 1 else -1
            inward = 1 if side == 0 else -1
            ccw_uv = (uxv == inward)  # corners in order (i,j),(i+1,j),(i+1,j+1),(i,j+1) give normal u x v
            for i in range(n):
                for j in range(n):
                    a = base + i * (n + 1) + j + 1  # OBJ is 1-based
                    b = base + (i + 1) * (n + 1) + j + 1
                    c = base + (i + 1) * (n + 1) + j + 2
                    d = base + i * (n + 1) + j + 2
                    q = (a, b, c, d) if ccw_uv else (a, d, c, b)
                    lines.append("f %d %d %d %d" % q)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    what, target, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    {"foam": foam_case, "agglom": finalagglom, "obj": obj}[what](target, n)
