// Convex bodies made of occluders: a building's walls and roof, a closed box. One wall hides a node behind the
// building only where the node's shadow falls on that wall; the building as a whole hides it wherever every
// segment passes through the building (hidden_node.h).
//
// A body is a set of occluders joined across their shared edges (Occluder::across) where the two meet convexly
// (each lies behind the other's plane), all of whose corners lie behind every one of its planes, and whose
// edges joined to nothing (the open edges: a building's foot, where it stands on the ground or meets nothing)
// lie in one plane, the cap: the occluders and the cap bound a convex polyhedron P, and the occluders are all of
// its faces but the cap. A closed convex surface has no cap.
//
// Why every segment between two regions A and B is then blocked (BodyHidesEverySegment): if a plane separates A
// from B, every segment crosses it within the convex hull of the crossings of the corner-to-corner segments
// (full_occlusion.h); if those lie inside P, so does a point of every segment. A segment from a point outside
// P to one inside enters P through a face, and not through the cap when its ends lie on P's side of the cap's
// plane (a line crosses a plane once, and the segment would have to come from the cap's far side): so it
// enters through an occluder, which blocks it; likewise on the way out. One of the two suffices, so only one
// end's region need lie outside P (a street's patches at a building's foot touch it). The margins are those of
// the one-occluder proof: every crossing lies inside P by kHiddenMargin times the coordinates' size, that end's
// region outside by as much, and P well within the rays' trimmed span.
#pragma once

#include <cstdint>
#include <vector>

#include "formfactor/convex_polygon.h"
#include "util/vec3.h"

namespace rad {

struct Occluder;

struct OccluderBody {
  // The planes of its occluders, one per distinct plane, outward: P is where Dot(normal, x) <= offset for all.
  std::vector<Vec3> normal;
  std::vector<double> offset;
  bool capped = false;  // open edges that lie in one plane: P also lies behind the cap
  Vec3 capNormal{0, 0, 0};
  double capOffset = 0;
  Vec3 centre{0, 0, 0};  // the mean of its corners, inside P
  double largestCoordinate = 0;
};

struct OccluderBodies {
  std::vector<OccluderBody> bodies;
  std::vector<int32_t> bodyOf;  // per occluder: its body, or -1
};

// Bodies of at most this many distinct planes are kept (each crossing is tested against every plane).
constexpr int kMaxBodyPlanes = 32;

// The bodies among `occluders` (their `across` links filled).
OccluderBodies FindOccluderBodies(const std::vector<Occluder> &occluders);

// True when every segment from the convex hull of a[0, na) to that of b[0, nb) passes through `body` and so is
// blocked by its occluders (see above). False says nothing.
bool BodyHidesEverySegment(const OccluderBody &body, const Vec3 *a, int na, const Vec3 *b, int nb);

}  // namespace rad
