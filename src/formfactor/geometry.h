// Everything a rank needs to compute rows of F, prepared once: the patches, the input polygons as occluders,
// and for every pair of input polygons the occluders that might stand between them (face-level shafts).
#pragma once

#include <cstdint>
#include <vector>

#include "accel/bvh.h"
#include "formfactor/convex_polygon.h"
#include "formfactor/interpenetration.h"
#include "formfactor/occluder_bodies.h"
#include "formfactor/patch_clusters.h"
#include "formfactor/whole_patch.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "util/hd.h"

namespace rad {

struct Occluder {
  ConvexPolygon polygon;  // an input polygon (n-gons above kCapacity are split into triangles)
  Vec3 normal;
  int face;               // the input polygon it belongs to
  // Part of a closed, consistently oriented surface (every edge shared, by position, with exactly one other
  // polygon of the surface running it the other way). A segment whose ends lie on the same side of such a
  // surface crosses it an even number of times, alternately into and out of the side its normals face, so
  // the polygons that face the segment's start already block every segment it blocks: the exact kernel
  // skips the others.
  bool closedSurface = false;
  // The closed surface it belongs to when that surface is convex with its fronts outside (every corner on or
  // behind every face's plane), -1 otherwise: seen from outside, such a surface's shadow is the convex hull of
  // its corners' shadows, one polygon instead of one per face (convex_body_shadow.h).
  int convexSurface = -1;
  // Per edge k (corner k to corner k + 1), the occluder that runs the same edge the other way (a neighbour
  // of a consistently oriented mesh, found by exact corner positions), or -1. Seen from a point toward which
  // both face the same way, the two lie on opposite sides of the edge, so the edge is no outline of their
  // shadows there (penumbra.h uses that to skip events that change nothing).
  int32_t across[ConvexPolygon::kCapacity];
};

// A box in double precision (lo > hi on an axis: empty).
struct SlotBox {
  Vec3 lo, hi;
};

struct FormFactorGeometry {
  std::vector<Patch> patches;
  std::vector<WholePatch> wholePatches;  // per patch, what the unoccluded kernel derives from it alone
  std::vector<Occluder> occluders;
  std::vector<std::vector<int>> occludersOfFace;  // occluder indices per input polygon
  OccluderBodies bodies;  // convex bodies of occluders (a building's walls and roof): occluder_bodies.h
  // The corners of each convex surface (Occluder::convexSurface, numbered by one of its polygons), each once,
  // in CSR form indexed by that number (faceCount + 1 entries; empty when there is no convex surface). A
  // surface with more than kMaxConvexBodyCorners corners gets an empty range (convex_body_shadow.h).
  std::vector<int32_t> convexCornerStart;
  std::vector<Vec3> convexCorners;
  std::vector<int32_t> convexFaceStart;  // and its polygons (occluder indices), alike
  std::vector<int32_t> convexFaces;
  // Per input polygon, its convex surface (Occluder::convexSurface) or -1: two patches of one convex surface
  // face away from each other and exchange nothing.
  std::vector<int32_t> convexSurfaceOfFace;
  // Per input polygon, whether it is a wall of a room holding the whole scene (EnclosingRoomFaces): such walls
  // occlude nothing and are in neither the candidate lists nor the BVH below.
  std::vector<bool> enclosingRoomFace;
  int faceCount = 0;
  // Face-pair candidate lists in CSR form, indexed by I * faceCount + J; empty when not precomputed.
  bool hasFacePairCandidates = false;
  std::vector<int64_t> candidateStart;
  std::vector<int32_t> candidates;
  // Without those lists: a BVH over the occluders (triangles, id = occluder index), walked with each pair's
  // shaft (shaft_query.h), and the boxes of its child slots in double precision (2 per node, slot k of node i
  // at 2 i + k), each holding its occluders' polygons exactly.
  FlatBvh occluderBvh;
  std::vector<SlotBox> occluderBvhBoxes;
  // With the BVH: runs of coplanar patches, whose pairs with one patch are cleared by one walk (patch_clusters.h).
  std::vector<PatchCluster> clusters;
  // Input polygons that pass through each other (interpenetration.h): reported, and their closed surfaces
  // lose the back-face shortcut, since a patch may then lie inside one.
  Interpenetrations interpenetrations;
};

// Above this many input polygons the face-pair lists (faces^3 work) are replaced by the occluder BVH.
constexpr int kMaxFacesForFacePairCulling = 256;

FormFactorGeometry BuildFormFactorGeometry(const Scene &scene, const Meshing &meshing);

// For each input polygon: whether it belongs to a closed, consistently oriented surface (Occluder::closedSurface).
// A surface with a polygon in `pierced` (one passing through, or passed through by, another polygon) does not
// count as closed: a point on the piercing polygon may lie inside it.
std::vector<bool> ClosedSurfaceFaces(const Scene &scene, const std::vector<bool> &pierced = {});

// The same as a number per input polygon: the closed surface it belongs to (numbered by one of its polygons),
// or -1.
std::vector<int> ClosedSurfaceOfFace(const Scene &scene, const std::vector<bool> &pierced = {});

// Closed surfaces of at most this many polygons are checked for convexity (the check is quadratic).
constexpr size_t kMaxConvexSurfaceFaces = 4096;

// Corners one convex surface's shadow is cast from at one point (convex_body_shadow.h): a surface with more
// keeps no corner list (FormFactorGeometry::convexCorners), and a point whose faces bring more casts them one
// by one.
constexpr int kMaxConvexBodyCorners = 96;

// Per input polygon, its closed surface (ClosedSurfaceOfFace) when that surface is convex with its fronts
// outside, or -1.
std::vector<int> ConvexSurfaceOfFace(const Scene &scene, const std::vector<int> &closedSurface);

// Per input polygon, whether it is a wall of a room that holds the whole scene: a closed surface, convex with
// its fronts inside, with every corner of the scene on or in front of each of its planes. A segment between two
// points of a convex region stays in it, so such walls occlude nothing (a closed box, the unit cube's tiled
// walls) and are left out of the occluder lists. Rooms of more than kMaxRoomPlanes distinct planes are not
// looked for.
std::vector<bool> EnclosingRoomFaces(const Scene &scene, const std::vector<int> &closedSurface);
constexpr int kMaxRoomPlanes = 64;

RAD_HD RAD_INLINE ConvexPolygon PatchPolygon(const Patch &p) { return MakeConvexPolygon(p.corners, p.cornerCount); }

}  // namespace rad
