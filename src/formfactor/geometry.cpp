#include "formfactor/geometry.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "accel/bvh_builder.h"
#include "formfactor/occluder_merge.h"
#include "formfactor/shaft.h"
#include "formfactor/unoccluded.h"

namespace rad {


namespace {

// Numbers points by exact position: equal coordinates, equal numbers (a soup's repeated corners and a welded
// mesh's shared ones alike), dense from 0 in the order of position. By sorting: a mesh of a million polygons has
// four million corners, too many for a map.
std::vector<uint32_t> NumberByPosition(const std::vector<Vec3> &points) {
  auto before = [](const Vec3 &a, const Vec3 &b) { return std::tie(a.x, a.y, a.z) < std::tie(b.x, b.y, b.z); };
  std::vector<uint32_t> order(points.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return before(points[a], points[b]); });
  std::vector<uint32_t> number(points.size());
  uint32_t id = 0;
  for (size_t u = 0; u < order.size(); ++u) {
    if (u > 0 && before(points[order[u - 1]], points[order[u]])) ++id;
    number[order[u]] = id;
  }
  return number;
}

// The faces of each closed surface (ClosedSurfaceOfFace's numbers), in face order.
std::map<int, std::vector<int>> FacesBySurface(const std::vector<int> &closedSurface) {
  std::map<int, std::vector<int>> faces;
  for (size_t f = 0; f < closedSurface.size(); ++f)
    if (closedSurface[f] >= 0) faces[closedSurface[f]].push_back(int(f));
  return faces;
}

int FindRoot(std::vector<int> &parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

// Fills Occluder::across: corners are numbered by exact position, then each directed edge is looked up by its
// corners' numbers in a sorted array; an edge used more than once in one direction (a non-manifold edge) links
// to nothing.
void LinkOccluderEdges(std::vector<Occluder> &occluders) {
  std::vector<Vec3> corners;
  std::vector<size_t> first(occluders.size());  // occluder o's corners start at corners[first[o]]
  for (size_t o = 0; o < occluders.size(); ++o) {
    first[o] = corners.size();
    corners.insert(corners.end(), occluders[o].polygon.v, occluders[o].polygon.v + occluders[o].polygon.n);
  }
  const std::vector<uint32_t> number = NumberByPosition(corners);
  auto edgeKey = [&](size_t o, int from, int to) {
    return uint64_t(number[first[o] + size_t(from)]) << 32 | number[first[o] + size_t(to)];
  };
  std::vector<std::pair<uint64_t, int32_t>> edges;  // directed edge -> occluder, sorted
  for (size_t o = 0; o < occluders.size(); ++o) {
    const int n = occluders[o].polygon.n;
    for (int k = 0; k < n; ++k) edges.emplace_back(edgeKey(o, k, (k + 1) % n), int32_t(o));
  }
  std::sort(edges.begin(), edges.end());
  for (size_t o = 0; o < occluders.size(); ++o) {
    const int n = occluders[o].polygon.n;
    for (int k = 0; k < n; ++k) {
      const uint64_t reversed = edgeKey(o, (k + 1) % n, k);
      const auto match = std::lower_bound(edges.begin(), edges.end(), std::make_pair(reversed, int32_t(-1)));
      const bool single = match != edges.end() && match->first == reversed &&
                          (match + 1 == edges.end() || (match + 1)->first != reversed);
      occluders[o].across[k] = single ? match->second : -1;
    }
  }
}

void AddOccluders(const Scene &scene, FormFactorGeometry &g) {
  const std::vector<int> surface = ClosedSurfaceOfFace(scene, g.interpenetrations.passedThrough);
  const std::vector<int> convex = ConvexSurfaceOfFace(scene, surface);
  g.convexSurfaceOfFace.assign(convex.begin(), convex.end());
  g.enclosingRoomFace = EnclosingRoomFaces(scene, surface);
  g.occludersOfFace.resize(scene.faces.size());
  for (size_t f = 0; f < scene.faces.size(); ++f) {
    const auto &c = scene.faces[f].corners;
    const int n = int(c.size());
    const Vec3 normal = Normalize(NewellNormal(c.data(), n));
    auto add = [&](const Vec3 *corners, int count) {
      g.occludersOfFace[f].push_back(int(g.occluders.size()));
      Occluder o{MakeConvexPolygon(corners, count), normal, int(f), surface[f] >= 0, convex[f], {}};
      for (int32_t &a : o.across) a = -1;
      g.occluders.push_back(o);
    };
    if (n <= ConvexPolygon::kCapacity - 2) {  // leave room for clipping
      add(c.data(), n);
    } else {
      for (int k = 1; k + 1 < n; ++k) {
        const Vec3 tri[3] = {c[0], c[k], c[k + 1]};
        add(tri, 3);
      }
    }
  }
  MergeCoplanarOccluders(g);
  LinkOccluderEdges(g.occluders);
  g.bodies = FindOccluderBodies(g.occluders);
}

// Each convex surface's polygons and corners (once each: its polygons share them, in the order they list them)
// in CSR form by surface number (FormFactorGeometry::convexCorners).
void AddConvexSurfaceLists(FormFactorGeometry &g) {
  std::map<int, std::vector<int32_t>> faces;  // occluder indices per convex surface
  for (size_t o = 0; o < g.occluders.size(); ++o)
    if (g.occluders[o].convexSurface >= 0) faces[g.occluders[o].convexSurface].push_back(int32_t(o));
  if (faces.empty()) return;
  g.convexCornerStart.assign(size_t(g.faceCount) + 1, 0);
  g.convexFaceStart.assign(size_t(g.faceCount) + 1, 0);
  for (int f = 0; f < g.faceCount; ++f) {
    g.convexCornerStart[f] = int32_t(g.convexCorners.size());
    g.convexFaceStart[f] = int32_t(g.convexFaces.size());
    const auto it = faces.find(f);
    if (it == faces.end()) continue;
    std::vector<Vec3> all;
    for (int32_t o : it->second) {
      const ConvexPolygon &p = g.occluders[size_t(o)].polygon;
      all.insert(all.end(), p.v, p.v + p.n);
    }
    const std::vector<uint32_t> number = NumberByPosition(all);
    std::vector<bool> seen(all.size(), false);
    std::vector<Vec3> corners;  // each once, where it first appears
    for (size_t k = 0; k < all.size(); ++k)
      if (!seen[number[k]]) seen[number[k]] = true, corners.push_back(all[k]);
    if (corners.size() > size_t(kMaxConvexBodyCorners)) continue;  // no list: no fixed silhouette for it
    g.convexCorners.insert(g.convexCorners.end(), corners.begin(), corners.end());
    g.convexFaces.insert(g.convexFaces.end(), it->second.begin(), it->second.end());
  }
  g.convexCornerStart[size_t(g.faceCount)] = int32_t(g.convexCorners.size());
  g.convexFaceStart[size_t(g.faceCount)] = int32_t(g.convexFaces.size());
}

// The boxes of the BVH's child slots in double precision, from the occluders' polygons (FormFactorGeometry::
// occluderBvhBoxes). The single-precision boxes of the nodes may fall short of the polygons by a rounding, so a
// walk with them must keep every box within a margin of the shaft, and a run of tiles in the receiver's own
// plane is then always walked down to its leaves; these boxes let the walk drop them.
std::vector<SlotBox> ExactSlotBoxes(const FlatBvh &bvh, const std::vector<Occluder> &occluders) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<SlotBox> boxes(bvh.nodes.size() * 2, SlotBox{Vec3{inf, inf, inf}, Vec3{-inf, -inf, -inf}});
  for (size_t i = bvh.nodes.size(); i-- > 0;) {  // children after their parents: backwards, children first
    const BvhNode &n = bvh.nodes[i];
    for (int k = 0; k < 2; ++k) {
      SlotBox &box = boxes[2 * i + size_t(k)];
      if (n.child[k] >= 0) {
        for (int c = 0; c < 2; ++c) {
          const SlotBox &child = boxes[2 * size_t(n.child[k]) + size_t(c)];
          box.lo = Min(box.lo, child.lo);
          box.hi = Max(box.hi, child.hi);
        }
        continue;
      }
      for (int32_t t = ~n.child[k]; t < ~n.child[k] + n.count[k]; ++t) {
        const ConvexPolygon &p = occluders[size_t(bvh.triangles[size_t(t)].id)].polygon;
        for (int c = 0; c < p.n; ++c) box.lo = Min(box.lo, p.v[c]), box.hi = Max(box.hi, p.v[c]);
      }
    }
  }
  return boxes;
}

// For each ordered pair of faces (I, J) that can exchange light, the occluders that may reach into the hull
// of the two faces. A patch pair's shaft lies inside its faces' shaft, so only these need testing later.
void BuildFacePairCandidates(FormFactorGeometry &g) {
  const int nf = g.faceCount;
  std::vector<std::vector<int32_t>> lists(size_t(nf) * nf);
  tbb::parallel_for(0, nf, [&](int I) {
    for (int J = 0; J < nf; ++J) {
      if (I == J) continue;
      for (int a : g.occludersOfFace[I]) {
        for (int b : g.occludersOfFace[J]) {
          const Occluder &oa = g.occluders[a], &ob = g.occluders[b];
          const ClippedPair cp = ClipPair(oa.polygon, oa.normal, ob.polygon, ob.normal);
          if (cp.emitter.n == 0) continue;
          const Shaft shaft = MakeShaft(cp.emitter, oa.normal, cp.receiver, ob.normal);
          auto &list = lists[size_t(I) * nf + J];
          for (size_t o = 0; o < g.occluders.size(); ++o) {
            const Occluder &oc = g.occluders[o];
            if (oc.face == I || oc.face == J || g.enclosingRoomFace[size_t(oc.face)]) continue;
            if (!ShaftMayBeBlockedBy(shaft, oc.polygon.v, oc.polygon.n, oc.normal)) continue;
            bool seen = false;
            for (int32_t x : list) seen = seen || x == int32_t(o);
            if (!seen) list.push_back(int32_t(o));
          }
        }
      }
    }
  });
  g.candidateStart.assign(size_t(nf) * nf + 1, 0);
  for (size_t k = 0; k < lists.size(); ++k) g.candidateStart[k + 1] = g.candidateStart[k] + int64_t(lists[k].size());
  g.candidates.reserve(size_t(g.candidateStart.back()));
  for (const auto &l : lists) g.candidates.insert(g.candidates.end(), l.begin(), l.end());
  g.hasFacePairCandidates = true;
}

}  // namespace

std::vector<bool> ClosedSurfaceFaces(const Scene &scene, const std::vector<bool> &pierced) {
  const std::vector<int> surface = ClosedSurfaceOfFace(scene, pierced);
  std::vector<bool> closed(surface.size());
  for (size_t f = 0; f < surface.size(); ++f) closed[f] = surface[f] >= 0;
  return closed;
}

std::vector<int> ClosedSurfaceOfFace(const Scene &scene, const std::vector<bool> &pierced) {
  const int nf = int(scene.faces.size());
  // Corners welded by exact position: a soup and a welded mesh of the same surface give the same answer.
  std::vector<Vec3> corners;
  std::vector<size_t> first(static_cast<size_t>(nf));  // face f's corners start at corners[first[f]]
  for (int f = 0; f < nf; ++f) {
    first[size_t(f)] = corners.size();
    corners.insert(corners.end(), scene.faces[f].corners.begin(), scene.faces[f].corners.end());
  }
  const std::vector<uint32_t> number = NumberByPosition(corners);
  auto id = [&](int f, size_t k) { return int64_t(number[first[size_t(f)] + k]); };
  struct EdgeUse {
    int face;
    bool forward;  // runs from the lower corner id to the higher
  };
  std::unordered_map<uint64_t, std::vector<EdgeUse>> edges;
  std::vector<bool> degenerate(nf, false);
  for (int f = 0; f < nf; ++f) {
    const auto &c = scene.faces[f].corners;
    for (size_t k = 0; k < c.size(); ++k) {
      const int64_t a = id(f, k), b = id(f, (k + 1) % c.size());
      if (a == b) {
        degenerate[f] = true;
        continue;
      }
      const uint64_t key = uint64_t(std::min(a, b)) << 32 | uint64_t(std::max(a, b));
      edges[key].push_back(EdgeUse{f, a < b});
    }
  }
  // A face is closed locally when each of its edges has exactly one partner running the other way; a surface
  // is closed when all faces joined to it by edges are.
  std::vector<int> parent(nf);
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<bool> local(nf, true);
  for (int f = 0; f < nf; ++f) local[f] = !degenerate[f];
  for (const auto &[key, uses] : edges) {
    const bool paired = uses.size() == 2 && uses[0].forward != uses[1].forward && uses[0].face != uses[1].face;
    if (!paired)
      for (const EdgeUse &u : uses) local[u.face] = false;
    for (size_t k = 1; k < uses.size(); ++k) parent[FindRoot(parent, uses[k].face)] = FindRoot(parent, uses[0].face);
  }
  std::vector<bool> rootClosed(nf, true);
  for (int f = 0; f < nf; ++f)
    if (!local[f] || (size_t(f) < pierced.size() && pierced[size_t(f)])) rootClosed[FindRoot(parent, f)] = false;
  std::vector<int> surface(nf, -1);  // numbered by their root face
  for (int f = 0; f < nf; ++f)
    if (rootClosed[FindRoot(parent, f)]) surface[f] = FindRoot(parent, f);
  return surface;
}

std::vector<int> ConvexSurfaceOfFace(const Scene &scene, const std::vector<int> &closedSurface) {
  const int nf = int(scene.faces.size());
  std::vector<int> convex(nf, -1);
  for (const auto &[id, faces] : FacesBySurface(closedSurface)) {
    if (faces.size() > kMaxConvexSurfaceFaces) continue;
    // Convex with its fronts outside: every corner of the surface on or behind every face's plane.
    std::vector<Vec3> corners;
    for (int f : faces) corners.insert(corners.end(), scene.faces[f].corners.begin(), scene.faces[f].corners.end());
    Vec3 lo = corners[0], hi = corners[0];
    for (const Vec3 &c : corners) lo = Min(lo, c), hi = Max(hi, c);
    const double tolerance = 1e-9 * Length(hi - lo);
    bool isConvex = true;
    for (size_t k = 0; k < faces.size() && isConvex; ++k) {
      const auto &c = scene.faces[faces[k]].corners;
      const Vec3 normal = Normalize(NewellNormal(c.data(), int(c.size())));
      for (const Vec3 &p : corners) isConvex = isConvex && Dot(normal, p - c[0]) <= tolerance;
    }
    if (isConvex)
      for (int f : faces) convex[f] = id;
  }
  return convex;
}

std::vector<bool> EnclosingRoomFaces(const Scene &scene, const std::vector<int> &closedSurface) {
  const int nf = int(scene.faces.size());
  std::vector<bool> room(size_t(nf), false);
  if (nf == 0) return room;
  Vec3 lo = scene.faces[0].corners[0], hi = lo;
  for (const auto &f : scene.faces)
    for (const Vec3 &c : f.corners) lo = Min(lo, c), hi = Max(hi, c);
  const double tolerance = 1e-9 * Length(hi - lo);
  struct Plane {
    Vec3 normal;
    double offset;
  };
  for (const auto &[id, faces] : FacesBySurface(closedSurface)) {
    // The surface's distinct planes (its tiles share a few).
    std::vector<Plane> planes;
    for (int f : faces) {
      const auto &c = scene.faces[size_t(f)].corners;
      const Vec3 normal = Normalize(NewellNormal(c.data(), int(c.size())));
      const double offset = Dot(normal, c[0]);
      bool known = false;
      for (const Plane &p : planes)
        known = known || (LengthSquared(p.normal - normal) <= 1e-18 && std::fabs(p.offset - offset) <= tolerance);
      if (!known) planes.push_back(Plane{normal, offset});
      if (planes.size() > size_t(kMaxRoomPlanes)) break;
    }
    if (planes.size() > size_t(kMaxRoomPlanes)) continue;
    // Every corner of the scene (the surface's own included: it is then convex with its fronts inside) on or
    // in front of every plane.
    bool encloses = true;
    for (size_t f = 0; f < scene.faces.size() && encloses; ++f)
      for (const Vec3 &c : scene.faces[f].corners)
        for (const Plane &p : planes) encloses = encloses && Dot(p.normal, c) - p.offset >= -tolerance;
    if (encloses)
      for (int f : faces) room[size_t(f)] = true;
  }
  return room;
}

FormFactorGeometry BuildFormFactorGeometry(const Scene &scene, const Meshing &meshing) {
  FormFactorGeometry g;
  g.patches = MakePatches(scene, meshing);
  g.wholePatches.resize(g.patches.size());
  tbb::parallel_for(size_t(0), g.patches.size(),
                    [&](size_t i) { DescribeWholePatch(PatchPolygon(g.patches[i]), g.wholePatches[i]); });
  g.faceCount = int(scene.faces.size());
  g.interpenetrations = FindInterpenetrations(scene);
  AddOccluders(scene, g);
  AddConvexSurfaceLists(g);
  if (g.faceCount <= kMaxFacesForFacePairCulling) {
    BuildFacePairCandidates(g);
  } else {
    std::vector<BvhTriangle> triangles;
    for (size_t o = 0; o < g.occluders.size(); ++o) {
      if (g.enclosingRoomFace[size_t(g.occluders[o].face)]) continue;
      const ConvexPolygon &p = g.occluders[o].polygon;
      for (int k = 1; k + 1 < p.n; ++k) {
        BvhTriangle t;
        const Vec3 c[3] = {p.v[0], p.v[k], p.v[k + 1]};
        float *v[3] = {t.v0, t.v1, t.v2};
        for (int i = 0; i < 3; ++i) v[i][0] = float(c[i].x), v[i][1] = float(c[i].y), v[i][2] = float(c[i].z);
        t.id = int32_t(o);
        triangles.push_back(t);
      }
    }
    g.occluderBvh = BuildBvh(triangles);
    g.occluderBvhBoxes = ExactSlotBoxes(g.occluderBvh, g.occluders);
    g.clusters = ClusterPatches(g.patches);
  }
  return g;
}

}  // namespace rad
