// What the tests of visibility proofs check a proof against, written without the code under test: random
// points of polygons, random quads, and whether a segment crosses a polygon.
#pragma once

#include <cmath>
#include <random>
#include <vector>

#include "formfactor/convex_polygon.h"
#include "util/vec3.h"

namespace rad::test {

inline ConvexPolygon PolygonOf(const std::vector<Vec3> &corners) {
  return MakeConvexPolygon(corners.data(), int(corners.size()));
}

// A uniform point of a convex polygon: a fan triangle picked by area, then a uniform point in it.
inline Vec3 PointIn(const ConvexPolygon &p, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> areas;
  double total = 0;
  for (int k = 1; k + 1 < p.n; ++k) {
    total += Length(Cross(p.v[k] - p.v[0], p.v[k + 1] - p.v[0]));
    areas.push_back(total);
  }
  const double pick = u(rng) * total;
  int k = 0;
  while (k + 1 < int(areas.size()) && areas[size_t(k)] < pick) ++k;
  double s = u(rng), t = u(rng);
  if (s + t > 1) {
    s = 1 - s;
    t = 1 - t;
  }
  return p.v[0] + (p.v[k + 1] - p.v[0]) * s + (p.v[k + 2] - p.v[0]) * t;
}

// Whether the segment from x to y crosses the plane of o at a point inside o: the crossing's angle sum about
// o's corners is 2 pi inside and 0 outside.
inline bool CrossesInside(const ConvexPolygon &o, Vec3 normal, Vec3 x, Vec3 y) {
  const double dx = Dot(normal, x - o.v[0]), dy = Dot(normal, y - o.v[0]);
  if (!(dx * dy < 0)) return false;
  const Vec3 c = x + (y - x) * (dx / (dx - dy));
  double angle = 0;
  for (int k = 0; k < o.n; ++k) {
    const Vec3 a = o.v[k] - c, b = o.v[(k + 1) % o.n] - c;
    angle += std::atan2(Dot(Cross(a, b), normal), Dot(a, b));
  }
  return std::fabs(std::fabs(angle) - 2 * M_PI) < 1e-6;
}

// A random convex quad (a rotated, sheared rectangle) about `centre`, in the plane with normal `n`.
inline std::vector<Vec3> RandomQuad(Vec3 centre, Vec3 n, double size, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> u(0.2, 1.0), angle(0, 2 * M_PI);
  n = Normalize(n);
  const Vec3 t = Normalize(Cross(n, std::fabs(n.x) < 0.9 ? Vec3{1, 0, 0} : Vec3{0, 1, 0}));
  const Vec3 b = Cross(n, t);
  const double r = angle(rng);
  const Vec3 e1 = (t * std::cos(r) + b * std::sin(r)) * (size * u(rng));
  const Vec3 e2 = (t * -std::sin(r) + b * std::cos(r)) * (size * u(rng)) + e1 * (0.5 * u(rng) - 0.25);
  return {centre - e1 - e2, centre + e1 - e2, centre + e1 + e2, centre - e1 + e2};
}

}  // namespace rad::test
