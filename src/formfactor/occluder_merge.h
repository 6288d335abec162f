// Coplanar occluders joined into one where their union is convex: the cells of a CFD mesh or the tiles of a
// wall cast one shadow instead of one each.
//
// Why: the exact visible-region sum costs about (edges of all shadows) x (shadows). An obstacle meshed into
// n x n cells per side (a box standing on a floor is open, so not a closed convex surface whose shadow is one
// polygon) casts up to n^2 shadows per side whose shared edges all cancel. Occlusion by a union is occlusion by
// each of its parts, so one polygon for a convex union changes what is hidden by nothing at all.
//
// Two occluders are joined when they lie in one plane (the same unit normal and offset to 1e-9), share an edge
// (by exact corner positions), lie on opposite sides of that edge's line (so their interiors are disjoint), and
// the convex hull of their corners has their summed area to 1e-12 (so the union is that hull), with at most
// ConvexPolygon::kCapacity - 2 corners; pass after pass, until no pair joins (cells into strips, strips into
// rectangles). Only occluders of different input polygons (the triangles of a polygon split for its many
// corners stay apart) alike in every role join: the same closed and convex surface, both or neither a
// wall of an enclosing room, neither passing through another polygon. The joined occluder keeps the first one's
// face. An occluder that holds a pair's own patch needs no rule of its own: it lies in that patch's plane, and
// ShaftMayBeBlockedBy keeps only occluders with shaft points on both sides of their plane.
#pragma once

#include "formfactor/geometry.h"

namespace rad {

// Joins g.occluders in place and points g.occludersOfFace at the joined ones (a face's list then holds the
// polygon that contains it: the face-pair candidate lists built from it only grow). Before LinkOccluderEdges.
// Returns how many occluders were joined into others.
int MergeCoplanarOccluders(FormFactorGeometry &g);

}  // namespace rad
