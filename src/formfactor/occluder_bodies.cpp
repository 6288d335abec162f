#include "formfactor/occluder_bodies.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "formfactor/full_occlusion.h"
#include "formfactor/geometry.h"

namespace rad {

namespace {

// Occluders joined into one body at most: a body's test reads one plane per face, and larger sets are meshes of
// a curved surface rather than a building.
constexpr size_t kMostBodyOccluders = 256;
// Distances within this share of the coordinates' size count as on a plane (the shaft's tolerance, shaft.h).
constexpr double kBodyOnPlane = 1e-9;

double Largest(const Vec3 &p) { return std::max(std::fabs(p.x), std::max(std::fabs(p.y), std::fabs(p.z))); }

double Offset(const Occluder &o) { return Dot(o.normal, o.polygon.v[0]); }

// Whether every corner of q lies on or behind o's plane.
bool Behind(const Occluder &q, const Occluder &o, double tolerance) {
  const double offset = Offset(o);
  for (int k = 0; k < q.polygon.n; ++k)
    if (Dot(o.normal, q.polygon.v[k]) - offset > tolerance) return false;
  return true;
}

int32_t Root(std::vector<int32_t> &parent, int32_t x) {
  while (parent[size_t(x)] != x) x = parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
  return x;
}

// The plane through `points` (their outward side away from `inside`), if they span one and all lie on it.
bool PlaneThrough(const std::vector<Vec3> &points, Vec3 inside, double tolerance, Vec3 &normal, double &offset) {
  if (points.size() < 3) return false;
  const Vec3 p0 = points[0];
  Vec3 p1 = p0;
  for (const Vec3 &p : points)
    if (LengthSquared(p - p0) > LengthSquared(p1 - p0)) p1 = p;
  Vec3 best{0, 0, 0};
  for (const Vec3 &p : points) {
    const Vec3 c = Cross(p1 - p0, p - p0);
    if (LengthSquared(c) > LengthSquared(best)) best = c;
  }
  if (!(Length(best) > 0)) return false;
  normal = Normalize(best);
  offset = Dot(normal, p0);
  for (const Vec3 &p : points)
    if (std::fabs(Dot(normal, p) - offset) > tolerance) return false;
  if (Dot(normal, inside) > offset) normal = normal * -1.0, offset = -offset;
  return true;
}

}  // namespace

OccluderBodies FindOccluderBodies(const std::vector<Occluder> &occluders) {
  OccluderBodies out;
  const int32_t n = int32_t(occluders.size());
  out.bodyOf.assign(size_t(n), -1);
  std::vector<double> size(size_t(n), 0);
  for (int32_t o = 0; o < n; ++o)
    for (int k = 0; k < occluders[size_t(o)].polygon.n; ++k)
      size[size_t(o)] = std::max(size[size_t(o)], Largest(occluders[size_t(o)].polygon.v[k]));
  // Occluders joined where they meet convexly.
  std::vector<int32_t> parent(static_cast<size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  auto joined = [&](int32_t o, int32_t q) {
    const double tolerance = kBodyOnPlane * std::max(size[size_t(o)], size[size_t(q)]);
    return Behind(occluders[size_t(q)], occluders[size_t(o)], tolerance) &&
           Behind(occluders[size_t(o)], occluders[size_t(q)], tolerance);
  };
  for (int32_t o = 0; o < n; ++o)
    for (int k = 0; k < occluders[size_t(o)].polygon.n; ++k) {
      const int32_t q = occluders[size_t(o)].across[k];
      if (q > o && joined(o, q)) parent[size_t(Root(parent, o))] = Root(parent, q);
    }
  std::vector<std::vector<int32_t>> members(static_cast<size_t>(n));
  for (int32_t o = 0; o < n; ++o) members[size_t(Root(parent, o))].push_back(o);

  for (const std::vector<int32_t> &m : members) {
    if (m.size() < 2 || m.size() > kMostBodyOccluders) continue;
    OccluderBody body;
    std::vector<Vec3> corners, open;
    for (int32_t o : m) {
      const Occluder &occ = occluders[size_t(o)];
      body.largestCoordinate = std::max(body.largestCoordinate, size[size_t(o)]);
      corners.insert(corners.end(), occ.polygon.v, occ.polygon.v + occ.polygon.n);
      for (int k = 0; k < occ.polygon.n; ++k) {
        const int32_t q = occ.across[k];
        if (q < 0 || Root(parent, q) != Root(parent, o) || !joined(o, q)) {
          open.push_back(occ.polygon.v[k]);
          open.push_back(occ.polygon.v[(k + 1) % occ.polygon.n]);
        }
      }
    }
    const double tolerance = kBodyOnPlane * body.largestCoordinate;
    Vec3 sum{0, 0, 0};
    for (const Vec3 &c : corners) sum = sum + c;
    body.centre = sum / double(corners.size());
    bool convex = true;
    for (int32_t o : m) {
      const Occluder &occ = occluders[size_t(o)];
      const double offset = Offset(occ);
      bool seen = false;
      for (size_t p = 0; p < body.normal.size() && !seen; ++p)
        seen = LengthSquared(body.normal[p] - occ.normal) < 1e-24 && std::fabs(body.offset[p] - offset) <= tolerance;
      if (!seen) {
        body.normal.push_back(occ.normal);
        body.offset.push_back(offset);
      }
    }
    if (int(body.normal.size()) > kMaxBodyPlanes) continue;
    // Every corner on or behind every plane, and the centre strictly inside (a flat set of tiles has no inside).
    for (size_t p = 0; p < body.normal.size() && convex; ++p) {
      for (const Vec3 &c : corners)
        if (Dot(body.normal[p], c) - body.offset[p] > tolerance) convex = false;
      if (!(Dot(body.normal[p], body.centre) - body.offset[p] < -1e3 * tolerance)) convex = false;
    }
    if (!convex) continue;
    if (!open.empty()) {
      if (!PlaneThrough(open, body.centre, tolerance, body.capNormal, body.capOffset)) continue;
      if (!(Dot(body.capNormal, body.centre) - body.capOffset < -1e3 * tolerance)) continue;
      bool behindCap = true;
      for (const Vec3 &c : corners) behindCap = behindCap && Dot(body.capNormal, c) - body.capOffset <= tolerance;
      if (!behindCap) continue;
      body.capped = true;
    }
    for (int32_t o : m) out.bodyOf[size_t(o)] = int32_t(out.bodies.size());
    out.bodies.push_back(std::move(body));
  }
  return out;
}

bool BodyHidesEverySegment(const OccluderBody &body, const Vec3 *a, int na, const Vec3 *b, int nb) {
  if (na <= 0 || nb <= 0 || na > ConvexPolygon::kCapacity || nb > ConvexPolygon::kCapacity) return false;
  double scale = body.largestCoordinate;
  Vec3 centreA{0, 0, 0}, centreB{0, 0, 0};
  for (int i = 0; i < na; ++i) scale = std::max(scale, Largest(a[i])), centreA = centreA + a[i];
  for (int j = 0; j < nb; ++j) scale = std::max(scale, Largest(b[j])), centreB = centreB + b[j];
  const double margin = kHiddenMargin * scale, onPlane = kBodyOnPlane * scale;
  const int planes = int(body.normal.size());
  // One end's region (p) outside P by the margin, beyond one of its faces' planes, far enough from that plane
  // that P lies within every segment's trimmed span (a segment from a point at distance s in front of the plane
  // to one at distance t behind it crosses the plane at s / (s + t) of its length, and leaves P no later), and
  // on P's side of the cap (or on its plane: a street's patches where the buildings stand): a segment through P
  // then leaves it toward p through one of its occluders. The other end may touch P, or lie in it.
  auto outside = [&](const Vec3 *p, int np, const Vec3 *q, int nq) {
    if (body.capped)
      for (int k = 0; k < np; ++k)
        if (Dot(body.capNormal, p[k]) - body.capOffset > onPlane) return false;
    for (int f = 0; f < planes; ++f) {
      double nearP = 1e300, farQ = 0;
      for (int k = 0; k < np; ++k) nearP = std::min(nearP, Dot(body.normal[size_t(f)], p[k]) - body.offset[size_t(f)]);
      if (!(nearP > margin)) continue;
      for (int k = 0; k < nq; ++k) farQ = std::max(farQ, body.offset[size_t(f)] - Dot(body.normal[size_t(f)], q[k]));
      if (nearP > kHiddenSpan * (nearP + farQ)) return true;
    }
    return false;
  };
  if (!outside(b, nb, a, na) && !outside(a, na, b, nb)) return false;
  // The plane through P's centre across the line between the regions' centres separates them.
  const Vec3 axis = centreB / double(nb) - centreA / double(na);
  if (!(LengthSquared(axis) > 0)) return false;
  const Vec3 d = Normalize(axis);
  double da[ConvexPolygon::kCapacity], db[ConvexPolygon::kCapacity];
  for (int i = 0; i < na; ++i)
    if (!((da[i] = Dot(d, a[i] - body.centre)) < -margin)) return false;
  for (int j = 0; j < nb; ++j)
    if (!((db[j] = Dot(d, b[j] - body.centre)) > margin)) return false;
  // Every corner-to-corner segment crosses that plane inside P, by the margin.
  for (int i = 0; i < na; ++i)
    for (int j = 0; j < nb; ++j) {
      const Vec3 crossing = a[i] + (b[j] - a[i]) * (da[i] / (da[i] - db[j]));
      if (body.capped && !(Dot(body.capNormal, crossing) - body.capOffset < -margin)) return false;
      for (int f = 0; f < planes; ++f)
        if (!(Dot(body.normal[size_t(f)], crossing) - body.offset[size_t(f)] < -margin)) return false;
    }
  return true;
}

}  // namespace rad
