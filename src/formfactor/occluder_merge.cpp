#include "formfactor/occluder_merge.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <vector>

namespace rad {

namespace {

double PlanarArea(const std::vector<Vec3> &c, Vec3 normal) {
  Vec3 twice(0, 0, 0);
  for (size_t k = 0; k < c.size(); ++k) twice = twice + Cross(c[k], c[(k + 1) % c.size()]);
  return 0.5 * Dot(twice, normal);
}

// The convex hull of points of one plane, counter-clockwise about `normal`, collinear corners left out
// (Andrew's monotone chain in the plane's own axes).
std::vector<Vec3> PlanarHull(std::vector<Vec3> points, Vec3 normal) {
  const Vec3 u = Normalize(std::fabs(normal.x) < 0.9 ? Cross(normal, Vec3(1, 0, 0)) : Cross(normal, Vec3(0, 1, 0)));
  const Vec3 w = Cross(normal, u);
  std::sort(points.begin(), points.end(), [&](const Vec3 &a, const Vec3 &b) {
    const double ax = Dot(a, u), bx = Dot(b, u);
    return ax < bx || (ax == bx && Dot(a, w) < Dot(b, w));
  });
  // A turn counts when it is more than a rounding of the lengths involved: collinear corners are dropped.
  auto turnsLeft = [&](const Vec3 &o, const Vec3 &a, const Vec3 &b) {
    return Dot(Cross(a - o, b - o), normal) > 1e-12 * LengthSquared(b - o);
  };
  std::vector<Vec3> hull(2 * points.size() + 1);
  size_t k = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    while (k >= 2 && !turnsLeft(hull[k - 2], hull[k - 1], points[i])) --k;
    hull[k++] = points[i];
  }
  for (size_t i = points.size() - 1, lower = k + 1; i-- > 0;) {
    while (k >= lower && !turnsLeft(hull[k - 2], hull[k - 1], points[i])) --k;
    hull[k++] = points[i];
  }
  hull.resize(k > 0 ? k - 1 : 0);
  return hull;
}

// Whether every corner of `a` is on or behind the line through p -> q (about `normal`) and every corner of `b`
// on or in front of it, or the other way round: then their interiors are disjoint.
bool OnOppositeSides(const std::vector<Vec3> &a, const std::vector<Vec3> &b, Vec3 p, Vec3 q, Vec3 normal) {
  const Vec3 across = Cross(normal, q - p);
  const double t = 1e-12 * LengthSquared(q - p);
  auto side = [&](const std::vector<Vec3> &poly, double sign) {
    for (const Vec3 &c : poly)
      if (sign * Dot(across, c - p) < -t) return false;
    return true;
  };
  return (side(a, 1) && side(b, -1)) || (side(a, -1) && side(b, 1));
}

using Point = std::tuple<double, double, double>;

}  // namespace

int MergeCoplanarOccluders(FormFactorGeometry &g) {
  std::vector<Occluder> &occluders = g.occluders;
  // Occluders by plane and role.
  using Key = std::tuple<long long, long long, long long, long long, bool, int, bool>;
  std::map<Key, std::vector<int>> groups;
  for (size_t o = 0; o < occluders.size(); ++o) {
    const Occluder &x = occluders[o];
    const size_t face = size_t(x.face);
    if (face < g.interpenetrations.passedThrough.size() && g.interpenetrations.passedThrough[face]) continue;
    const double offset = Dot(x.normal, x.polygon.v[0]);
    groups[Key{std::llround(x.normal.x * 1e9), std::llround(x.normal.y * 1e9), std::llround(x.normal.z * 1e9),
               std::llround(offset * 1e9), x.closedSurface, x.convexSurface, bool(g.enclosingRoomFace[face])}]
        .push_back(int(o));
  }
  std::vector<int> joinedInto(occluders.size(), -1);
  int joined = 0;
  for (const auto &[key, members] : groups) {
    if (members.size() < 2) continue;
    const Vec3 normal = occluders[size_t(members[0])].normal;
    std::vector<std::vector<Vec3>> polygon(members.size());
    std::vector<double> area(members.size());
    std::vector<bool> alive(members.size(), true);
    for (size_t m = 0; m < members.size(); ++m) {
      const ConvexPolygon &p = occluders[size_t(members[m])].polygon;
      polygon[m].assign(p.v, p.v + p.n);
      area[m] = PlanarArea(polygon[m], normal);
    }
    for (bool changed = true; changed;) {
      changed = false;
      std::map<std::pair<Point, Point>, std::vector<size_t>> edges;  // by corner positions, unordered
      for (size_t m = 0; m < polygon.size(); ++m) {
        if (!alive[m]) continue;
        for (size_t c = 0; c < polygon[m].size(); ++c) {
          const Vec3 &a = polygon[m][c], &b = polygon[m][(c + 1) % polygon[m].size()];
          Point pa{a.x, a.y, a.z}, pb{b.x, b.y, b.z};
          if (pb < pa) std::swap(pa, pb);
          edges[{pa, pb}].push_back(m);
        }
      }
      for (const auto &[edge, users] : edges) {
        if (users.size() != 2 || users[0] == users[1]) continue;
        const size_t a = users[0], b = users[1];
        if (!alive[a] || !alive[b]) continue;
        // The triangles of one polygon split for its many corners stay as they are.
        if (occluders[size_t(members[a])].face == occluders[size_t(members[b])].face) continue;
        const Vec3 p(std::get<0>(edge.first), std::get<1>(edge.first), std::get<2>(edge.first));
        const Vec3 q(std::get<0>(edge.second), std::get<1>(edge.second), std::get<2>(edge.second));
        if (!OnOppositeSides(polygon[a], polygon[b], p, q, normal)) continue;
        std::vector<Vec3> corners = polygon[a];
        corners.insert(corners.end(), polygon[b].begin(), polygon[b].end());
        std::vector<Vec3> hull = PlanarHull(corners, normal);
        if (hull.size() < 3 || hull.size() > size_t(ConvexPolygon::kCapacity - 2)) continue;
        const double hullArea = PlanarArea(hull, normal);
        if (std::fabs(hullArea - area[a] - area[b]) > 1e-12 * (area[a] + area[b])) continue;
        polygon[a] = std::move(hull);
        area[a] = hullArea;
        alive[b] = false;
        joinedInto[size_t(members[b])] = members[a];
        ++joined;
        changed = true;
      }
    }
    for (size_t m = 0; m < members.size(); ++m)
      if (alive[m]) occluders[size_t(members[m])].polygon = MakeConvexPolygon(polygon[m].data(), int(polygon[m].size()));
  }
  if (joined == 0) return 0;
  // The survivors, renumbered; each face's list points at the occluders that now hold its polygons.
  std::vector<int> index(occluders.size(), -1);
  std::vector<Occluder> kept;
  for (size_t o = 0; o < occluders.size(); ++o)
    if (joinedInto[o] < 0) index[o] = int(kept.size()), kept.push_back(occluders[o]);
  auto survivor = [&](int o) {
    while (joinedInto[size_t(o)] >= 0) o = joinedInto[size_t(o)];
    return index[size_t(o)];
  };
  for (std::vector<int> &list : g.occludersOfFace) {
    std::vector<int> now;
    for (int o : list) {
      const int s = survivor(o);
      if (std::find(now.begin(), now.end(), s) == now.end()) now.push_back(s);
    }
    list = std::move(now);
  }
  occluders = std::move(kept);
  return joined;
}

}  // namespace rad
