// Input polygons that pass through each other (an object sunk into the floor, a wall through a ceiling). Their
// form factors are still computed, and the exact kernel treats every occluder as opaque from both sides, but a
// point of one polygon may then lie inside a closed surface: such surfaces lose the back-face shortcut of
// Occluder::closedSurface, and the user is told which polygons cross (a mesh error more often than intent).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "scene/scene.h"

namespace rad {

struct Interpenetrations {
  int64_t pairCount = 0;                   // unordered pairs of input polygons that cross (kCross)
  std::vector<std::pair<int, int>> first;  // the first few such pairs (lower face index first), in face order
  // Per input polygon: part of a pair that crosses or meets in a T (either may put a patch inside a closed
  // surface: a block sunk into a floor of tiles along the tiles' edges crosses none of them).
  std::vector<bool> passedThrough;
  // Pairs of polygons in one plane, facing the same way, whose interiors overlap (not just touching along an
  // edge): a patch there is counted twice, so rows that reach it sum above 1. Back-to-back polygons (a plate's
  // two sides) face opposite ways and are not counted.
  int64_t overlapPairCount = 0;
  std::vector<std::pair<int, int>> firstOverlaps;
};

enum class PolygonContact {
  kNone,   // apart, or meeting along an edge or at a corner without passing through
  kTee,    // one passes through the other's plane along the other's edge (a wall continuing past a floor's edge)
  kCross,  // one passes through the other's interior (an object sunk into the floor)
};

// The crossing pairs, the polygons in crossings or tees (PolygonsCross below) and the coplanar overlaps. Candidates come from a BVH
// over the polygons, so the cost is about O(n log n) for n polygons; the result
// does not depend on the thread count. Only crossings are reported; tees are common in sound meshes.
Interpenetrations FindInterpenetrations(const Scene &scene, size_t listed = 5);

// True when two convex planar polygons lie in one plane, face the same way, and their interiors overlap by more
// than a sliver of 1e-9 of their size.
bool CoplanarOverlap(const std::vector<Vec3> &p, const std::vector<Vec3> &q);

// How two convex planar polygons meet: one has corners strictly on both sides of the other's plane, and the
// chord where it meets that plane runs through the other's interior (kCross) or along its boundary (kTee).
PolygonContact PolygonsCross(const std::vector<Vec3> &p, const std::vector<Vec3> &q);

}  // namespace rad
