// Polygons as published made into what the physics needs: planar, convex, with area, each once.
// Published scenes are routinely a little non-planar (a scanned statue, a Cornell box quad 0.25 % off its plane),
// have concave outlines (an L-shaped floor), corners repeated or standing on a straight edge, zero-area triangles,
// and faces written twice. Each is mended the least invasive way and counted, so a summary can say what was done:
// - a repeated corner or one on a straight edge (collinear neighbours) is dropped: the region is unchanged;
// - a non-planar or concave polygon is triangulated (a quad along its better diagonal, others by ear clipping in
//   the polygon's plane); every piece keeps the polygon's number and line;
// - a zero-area polygon, or one left with fewer than 3 corners, or a self-intersecting one, is skipped;
// - a face that repeats an earlier one corner for corner (whatever corner it starts at, same winding) is dropped.
//   A coincident face of the opposite winding is kept: back to back, the two are a thin plate's two sides.
// `strict` turns every one of these into the error that names the file, the line and the problem.
#pragma once

#include <string>
#include <vector>

#include "util/vec3.h"

namespace rad {

struct Scene;

// What the mending did, by kind: how many input polygons, and the OBJ lines (or, for formats without lines,
// the 0-based face numbers in the file) of the first few.
struct PolygonRepairCount {
  long long count = 0;
  std::vector<int> first;  // at most kListed
  void Add(int where);
};

struct PolygonRepairs {
  static constexpr size_t kListed = 5;
  PolygonRepairCount nonPlanar;      // triangulated: corners off the plane by more than 1e-6 of the diameter
  PolygonRepairCount concave;        // triangulated: a reflex corner
  PolygonRepairCount cornersDropped; // repeated corners or corners on a straight edge removed
  PolygonRepairCount zeroArea;       // skipped
  PolygonRepairCount degenerate;     // skipped: fewer than 3 corners left, self-intersecting, or not triangulable
  PolygonRepairCount duplicates;     // dropped: the same polygon as an earlier face
  long long piecesAdded = 0;         // faces made by triangulation beyond the polygons they replace
  bool byLine = true;                // `first` holds OBJ lines (else face numbers)
  void Merge(const PolygonRepairs &other);  // the counts of several files together
  // One warning line per kind that happened (naming `file`), for Scene::warnings.
  std::vector<std::string> Summary(const std::string &file) const;
};

// Mends scene->faces in place (each Face::polygon keeps the input polygon's number) and returns what it did.
// With `strict`, the first polygon that would need mending is an InputError instead.
PolygonRepairs RepairPolygons(Scene *scene, bool strict);

// Surface roles: every face of a `twoSided` material gets its back side, the same polygon in reverse order,
// right after it (the two are back to back, each with its own patches; both keep the polygon's number and line);
// an `obstruction` material is made black (Kd 0, Ke 0: it absorbs what reaches it, as F, which has no column
// for it, says) and its faces make no patches (MakePatches skips them) while they still occlude.
// Returns the number of back sides added.
long long AddSurfaceRoles(Scene *scene);

// Splits a simple polygon (corners counter-clockwise about `normal`, planar or nearly) into triangles of the
// same winding by ear clipping in its plane; a quad is split along the diagonal that gives the better pair of
// triangles. Returns false if the outline, seen along `normal`, is not simple.
bool TriangulatePolygon(const std::vector<Vec3> &corners, Vec3 normal, std::vector<std::vector<Vec3>> *triangles);

}  // namespace rad
