#include "formfactor/interpenetration.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "accel/bvh_builder.h"
#include "scene/patch.h"

namespace rad {

namespace {

// True when q passes through p's plane along a chord that runs through p's interior (grown by `boundary`:
// positive to count a chord along p's edge, negative to count only a chord clear of it).
bool CrossesPlaneWithin(const std::vector<Vec3> &p, const std::vector<Vec3> &q, double tolerance, double boundary) {
  const Vec3 normal = Normalize(NewellNormal(p.data(), int(p.size())));
  const size_t n = q.size();
  std::vector<double> d(n);
  bool below = false, above = false;
  for (size_t k = 0; k < n; ++k) {
    d[k] = Dot(normal, q[k] - p[0]);
    if (std::fabs(d[k]) <= tolerance) d[k] = 0;
    below = below || d[k] < 0;
    above = above || d[k] > 0;
  }
  if (!below || !above) return false;  // touching the plane or on one side
  // The chord: corners on the plane and edges crossing it (two points for a convex polygon).
  Vec3 ends[2];
  int found = 0;
  for (size_t k = 0; k < n && found < 2; ++k) {
    const size_t next = (k + 1) % n;
    if (d[k] == 0) ends[found++] = q[k];
    else if ((d[k] < 0 && d[next] > 0) || (d[k] > 0 && d[next] < 0))
      ends[found++] = q[k] + (q[next] - q[k]) * (d[k] / (d[k] - d[next]));
  }
  if (found < 2) return false;
  // Clip the chord to p grown by `boundary`: p's corners run counter-clockwise about its Newell normal, so
  // Cross(normal, edge) points inwards.
  double t0 = 0, t1 = 1;
  const Vec3 chord = ends[1] - ends[0];
  for (size_t k = 0; k < p.size() && t0 < t1; ++k) {
    const Vec3 edge = p[(k + 1) % p.size()] - p[k];
    const Vec3 inward = Normalize(Cross(normal, edge));
    const double start = Dot(inward, ends[0] - p[k]) + boundary, rate = Dot(inward, chord);
    if (rate == 0) {
      if (start < 0) return false;
    } else if (rate > 0) {
      t0 = std::max(t0, -start / rate);
    } else {
      t1 = std::min(t1, -start / rate);
    }
  }
  return (t1 - t0) * Length(chord) > tolerance;
}

// The interval a polygon covers along `axis`.
std::pair<double, double> Extent(const std::vector<Vec3> &p, Vec3 axis) {
  double lo = Dot(axis, p[0]), hi = lo;
  for (const Vec3 &c : p) lo = std::min(lo, Dot(axis, c)), hi = std::max(hi, Dot(axis, c));
  return {lo, hi};
}

}  // namespace

bool CoplanarOverlap(const std::vector<Vec3> &p, const std::vector<Vec3> &q) {
  const double tolerance = 1e-9 * std::max(PolygonDiameter(p), PolygonDiameter(q));
  const Vec3 np = Normalize(NewellNormal(p.data(), int(p.size())));
  const Vec3 nq = Normalize(NewellNormal(q.data(), int(q.size())));
  if (Dot(np, nq) < 1 - 1e-9) return false;
  for (const Vec3 &c : q)
    if (std::fabs(Dot(np, c - p[0])) > tolerance) return false;
  // Separating axes in the plane: the edge normals of both (convex polygons overlap unless one separates them).
  for (const std::vector<Vec3> *polygon : {&p, &q}) {
    const std::vector<Vec3> &r = *polygon;
    for (size_t k = 0; k < r.size(); ++k) {
      const Vec3 axis = Normalize(Cross(np, r[(k + 1) % r.size()] - r[k]));
      const auto [pLo, pHi] = Extent(p, axis);
      const auto [qLo, qHi] = Extent(q, axis);
      if (std::min(pHi, qHi) - std::max(pLo, qLo) <= tolerance) return false;
    }
  }
  return true;
}

PolygonContact PolygonsCross(const std::vector<Vec3> &p, const std::vector<Vec3> &q) {
  const double tolerance = 1e-9 * std::max(PolygonDiameter(p), PolygonDiameter(q));
  if (CrossesPlaneWithin(p, q, tolerance, -tolerance) || CrossesPlaneWithin(q, p, tolerance, -tolerance))
    return PolygonContact::kCross;
  if (CrossesPlaneWithin(p, q, tolerance, tolerance) || CrossesPlaneWithin(q, p, tolerance, tolerance))
    return PolygonContact::kTee;
  return PolygonContact::kNone;
}

Interpenetrations FindInterpenetrations(const Scene &scene, size_t listed) {
  Interpenetrations out;
  const int nf = int(scene.faces.size());
  out.passedThrough.assign(size_t(nf), false);
  if (nf < 2) return out;
  const FlatBvh bvh = BuildBvh(SceneTriangles(scene));
  double extent = 0;
  for (const Face &f : scene.faces)
    for (const Vec3 &c : f.corners) extent = std::max({extent, std::fabs(c.x), std::fabs(c.y), std::fabs(c.z)});
  const double margin = 1e-6 * extent;  // the BVH's boxes are single precision

  // Per face, the later faces it crosses or meets in a T (each unordered pair once, from its lower face), and
  // those it overlaps in its plane.
  std::vector<std::vector<std::pair<int, PolygonContact>>> crossed(static_cast<size_t>(nf));
  std::vector<std::vector<int>> overlapped(static_cast<size_t>(nf));
  tbb::parallel_for(0, nf, [&](int f) {
    const auto &corners = scene.faces[size_t(f)].corners;
    Vec3 lo = corners[0], hi = corners[0];
    for (const Vec3 &c : corners) lo = Min(lo, c), hi = Max(hi, c);
    const double boxLo[3] = {lo.x - margin, lo.y - margin, lo.z - margin};
    const double boxHi[3] = {hi.x + margin, hi.y + margin, hi.z + margin};
    std::vector<int> candidates;
    std::vector<int32_t> stack = {0};
    while (!stack.empty()) {
      const BvhNode &node = bvh.nodes[size_t(stack.back())];
      stack.pop_back();
      for (int k = 0; k < 2; ++k) {
        bool overlaps = node.lo[0][k] <= node.hi[0][k];  // an empty slot has lo > hi
        for (int a = 0; a < 3 && overlaps; ++a) overlaps = node.lo[a][k] <= boxHi[a] && node.hi[a][k] >= boxLo[a];
        if (!overlaps) continue;
        if (node.child[k] >= 0) {
          stack.push_back(node.child[k]);
          continue;
        }
        for (int32_t t = ~node.child[k]; t < ~node.child[k] + node.count[k]; ++t)
          if (bvh.triangles[size_t(t)].id > f) candidates.push_back(bvh.triangles[size_t(t)].id);
      }
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    for (int g : candidates) {
      const PolygonContact contact = PolygonsCross(corners, scene.faces[size_t(g)].corners);
      if (contact != PolygonContact::kNone) crossed[size_t(f)].emplace_back(g, contact);
      else if (CoplanarOverlap(corners, scene.faces[size_t(g)].corners)) overlapped[size_t(f)].push_back(g);
    }
  });
  for (int f = 0; f < nf; ++f)
    for (int g : overlapped[size_t(f)]) {
      ++out.overlapPairCount;
      if (out.firstOverlaps.size() < listed) out.firstOverlaps.emplace_back(f, g);
    }
  for (int f = 0; f < nf; ++f)
    for (const auto &[g, contact] : crossed[size_t(f)]) {
      out.passedThrough[size_t(f)] = out.passedThrough[size_t(g)] = true;
      if (contact != PolygonContact::kCross) continue;
      ++out.pairCount;
      if (out.first.size() < listed) out.first.emplace_back(f, g);
    }
  return out;
}

}  // namespace rad
