#include "formfactor/patch_clusters.h"

#include <algorithm>
#include <cmath>

namespace rad {

namespace {

struct Point2 {
  double x, y;
};

double Turn(const Point2 &o, const Point2 &a, const Point2 &b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

// Convex hull of coplanar points (Andrew's monotone chain), counter-clockwise about `normal`, without
// collinear corners; empty when it has more than `capacity` corners.
ConvexPolygon Hull(const std::vector<Vec3> &points, Vec3 normal, int capacity) {
  const Vec3 u = Normalize(std::fabs(normal.x) < 0.9 ? Cross(normal, Vec3{1, 0, 0}) : Cross(normal, Vec3{0, 1, 0}));
  const Vec3 v = Cross(normal, u);
  const Vec3 origin = points[0];
  std::vector<std::pair<Point2, Vec3>> p;
  for (const Vec3 &q : points) p.push_back({{Dot(q - origin, u), Dot(q - origin, v)}, q});
  std::sort(p.begin(), p.end(), [](const auto &a, const auto &b) {
    return a.first.x < b.first.x || (a.first.x == b.first.x && a.first.y < b.first.y);
  });
  std::vector<std::pair<Point2, Vec3>> hull(2 * p.size());
  size_t k = 0;
  for (size_t i = 0; i < p.size(); ++i) {  // lower chain
    while (k >= 2 && Turn(hull[k - 2].first, hull[k - 1].first, p[i].first) <= 0) --k;
    hull[k++] = p[i];
  }
  for (size_t i = p.size() - 1, lower = k + 1; i-- > 0;) {  // upper chain
    while (k >= lower && Turn(hull[k - 2].first, hull[k - 1].first, p[i].first) <= 0) --k;
    hull[k++] = p[i];
  }
  ConvexPolygon out;
  if (k < 4 || int(k - 1) > capacity) return out;  // degenerate, or too many corners
  for (size_t i = 0; i + 1 < k; ++i) out.v[out.n++] = hull[i].second;
  return out;
}

bool Coplanar(const Patch &a, const Patch &b) {
  if (Dot(a.normal, b.normal) < 1 - 1e-12) return false;
  const double scale = std::sqrt(std::max(a.area, b.area));
  for (int k = 0; k < b.cornerCount; ++k)
    if (std::fabs(Dot(a.normal, b.corners[k] - a.corners[0])) > 1e-9 * scale) return false;
  return true;
}

}  // namespace

std::vector<PatchCluster> ClusterPatches(const std::vector<Patch> &patches, int maxPatches) {
  std::vector<PatchCluster> clusters;
  const long long n = (long long)patches.size();
  for (long long first = 0; first < n;) {
    PatchCluster c;
    c.first = first;
    c.normal = patches[size_t(first)].normal;
    c.hull = MakeConvexPolygon(patches[size_t(first)].corners, patches[size_t(first)].cornerCount);
    std::vector<Vec3> corners(c.hull.v, c.hull.v + c.hull.n);
    double area = patches[size_t(first)].area;
    // Grow while coplanar and the hull has room; keep the longest run whose hull is tight (rows of tiles in
    // file order are tight only once a row is complete, so the check cannot stop at the first loose hull).
    long long end = first + 1;
    ConvexPolygon tightHull = c.hull;
    long long tightEnd = end;
    for (; end < n && end - first < maxPatches; ++end) {
      const Patch &p = patches[size_t(end)];
      if (!Coplanar(patches[size_t(first)], p)) break;
      corners.insert(corners.end(), p.corners, p.corners + p.cornerCount);
      const ConvexPolygon hull = Hull(corners, c.normal, ConvexPolygon::kCapacity - 2);
      if (hull.n == 0) break;
      corners.assign(hull.v, hull.v + hull.n);  // the hull of the hull and the next patch is the next hull
      area += p.area;
      if (PolygonArea(hull) <= 1.25 * area) tightHull = hull, tightEnd = end + 1;
    }
    c.hull = tightHull;
    end = tightEnd;
    c.count = end - first;
    clusters.push_back(c);
    first = end;
  }
  return clusters;
}

ConvexPolygon RegionOfPatches(const PatchCluster &c, const std::vector<Patch> &patches, const int32_t *ids,
                              long long count) {
  if (count >= c.count || c.hull.n < 3) return c.hull;
  // Axes in the plane: u along the hull's first edge, v = n x u, so that (u, v, n) turn counter-clockwise.
  const Vec3 origin = c.hull.v[0];
  const Vec3 u = Normalize(c.hull.v[1] - origin), v = Cross(c.normal, u);
  double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
  for (long long k = 0; k < count; ++k) {
    const Patch &p = patches[size_t(ids[k])];
    for (int q = 0; q < p.cornerCount; ++q) {
      const double s = Dot(p.corners[q] - origin, u), t = Dot(p.corners[q] - origin, v);
      lo[0] = std::min(lo[0], s), hi[0] = std::max(hi[0], s);
      lo[1] = std::min(lo[1], t), hi[1] = std::max(hi[1], t);
    }
  }
  const double pad = 1e-9 * std::max(hi[0] - lo[0], hi[1] - lo[1]);
  for (int a = 0; a < 2; ++a) lo[a] -= pad, hi[a] += pad;
  // The hull where the rectangle would be as large (a run of patches as wide as the cluster).
  if ((hi[0] - lo[0]) * (hi[1] - lo[1]) >= PolygonArea(c.hull)) return c.hull;
  const Vec3 corners[4] = {origin + u * lo[0] + v * lo[1], origin + u * hi[0] + v * lo[1],
                           origin + u * hi[0] + v * hi[1], origin + u * lo[0] + v * hi[1]};
  return MakeConvexPolygon(corners, 4);
}

}  // namespace rad
