#include "scene/texel_charts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "util/error.h"

namespace rad {

namespace {

struct Point2 {
  double u = 0, v = 0;
};

// Off its plane by more than this share of its size, a polygon is not planar: the loader's own threshold
// (polygon_repair.h), so that a polygon it kept whole is always planar here.
constexpr double kPlanarity = 1e-6;
// A part of a texel smaller than this share of the texel's area is no patch (MakeTexelPatches).
constexpr double kLeastPart = 1e-12;

double Cross2(Point2 a, Point2 b, Point2 c) { return (b.u - a.u) * (c.v - a.v) - (b.v - a.v) * (c.u - a.u); }

double Area2(const std::vector<Point2> &p) {
  double twice = 0;
  for (size_t k = 0; k < p.size(); ++k) {
    const Point2 &a = p[k], &b = p[(k + 1) % p.size()];
    twice += a.u * b.v - b.u * a.v;
  }
  return 0.5 * twice;
}

// Sutherland-Hodgman against one side of a texel: keeps the points whose coordinate `axis` (0: u, 1: v) is at
// least `bound` (`above`) or at most it. The polygon stays convex and counter-clockwise.
void ClipSide(const std::vector<Point2> &in, int axis, double bound, bool above, std::vector<Point2> &out) {
  out.clear();
  auto side = [&](const Point2 &p) { return (axis == 0 ? p.u : p.v) - bound; };
  auto inside = [&](double s) { return above ? s >= 0 : s <= 0; };
  for (size_t k = 0; k < in.size(); ++k) {
    const Point2 &a = in[k], &b = in[(k + 1) % in.size()];
    const double sa = side(a), sb = side(b);
    if (inside(sa)) out.push_back(a);
    if (inside(sa) != inside(sb)) {
      const double t = sa / (sa - sb);
      Point2 x{a.u + t * (b.u - a.u), a.v + t * (b.v - a.v)};
      (axis == 0 ? x.u : x.v) = bound;  // on the texel's edge exactly, as its neighbour has it
      out.push_back(x);
    }
  }
}

// Drops corners that repeat their predecessor or stand on a straight edge: clipping leaves them where the
// outline passes through a texel's corner or along its edge, and a patch needs real corners.
void DropFlatCorners(std::vector<Point2> &p, double eps) {
  for (bool changed = true; changed && p.size() >= 3;) {
    changed = false;
    for (size_t k = 0; k < p.size() && p.size() >= 3; ++k) {
      const Point2 &prev = p[(k + p.size() - 1) % p.size()], &next = p[(k + 1) % p.size()];
      const double before = std::hypot(p[k].u - prev.u, p[k].v - prev.v);
      const double after = std::hypot(next.u - p[k].u, next.v - p[k].v);
      if (before <= eps || std::fabs(Cross2(prev, p[k], next)) <= 1e-12 * before * after) {
        p.erase(p.begin() + long(k));
        changed = true;
        break;
      }
    }
  }
}

Vec3 FaceNormal(const Face &f) { return Normalize(NewellNormal(f.corners.data(), int(f.corners.size()))); }

std::string Where(const Scene &scene, size_t face) {
  return (scene.sources.size() > 1 ? std::string() : scene.path + " ") + FaceOrigin(scene, face);
}

// The chart's axes and grid: the smallest rectangle among the directions of its faces' edges.
void FitGrid(const Scene &scene, double texelSize, TexelChart &chart) {
  const Vec3 n = FaceNormal(scene.faces[size_t(chart.faces[0])]);
  const Vec3 base = scene.faces[size_t(chart.faces[0])].corners[0];
  double best = std::numeric_limits<double>::infinity();
  double lowU = 0, lowV = 0, highU = 0, highV = 0;
  for (int f : chart.faces) {
    const std::vector<Vec3> &c = scene.faces[size_t(f)].corners;
    for (size_t k = 0; k < c.size(); ++k) {
      Vec3 d = c[(k + 1) % c.size()] - c[k];
      d = d - n * Dot(d, n);
      if (!(Length(d) > 0)) continue;
      const Vec3 u = Normalize(d), v = Cross(n, u);
      double u0 = std::numeric_limits<double>::infinity(), v0 = u0, u1 = -u0, v1 = -u0;
      for (int g : chart.faces)
        for (const Vec3 &x : scene.faces[size_t(g)].corners) {
          const double pu = Dot(x - base, u), pv = Dot(x - base, v);
          u0 = std::min(u0, pu), u1 = std::max(u1, pu), v0 = std::min(v0, pv), v1 = std::max(v1, pv);
        }
      const double area = (u1 - u0) * (v1 - v0);
      if (area < best * (1 - 1e-12)) {
        best = area;
        chart.axisU = u, chart.axisV = v;
        lowU = u0, lowV = v0, highU = u1, highV = v1;
      }
    }
  }
  chart.origin = base + chart.axisU * lowU + chart.axisV * lowV;
  const double across = std::max(1.0, std::ceil((highU - lowU) / texelSize - 1e-9));
  const double up = std::max(1.0, std::ceil((highV - lowV) / texelSize - 1e-9));
  if (across * up > kMaxTexels)
    throw InputError(Where(scene, size_t(chart.faces[0])) + ": --texel-size " + std::to_string(texelSize) +
                     " gives one polygon more than 2^31 - 1 texels");
  chart.width = int(across), chart.height = int(up);
  chart.du = (highU - lowU) / across, chart.dv = (highV - lowV) / up;
}

void CheckPlanar(const Scene &scene, const TexelChart &chart) {
  const Face &first = scene.faces[size_t(chart.faces[0])];
  const Vec3 n = FaceNormal(first);
  std::vector<Vec3> all;
  for (int f : chart.faces) all.insert(all.end(), scene.faces[size_t(f)].corners.begin(), scene.faces[size_t(f)].corners.end());
  const double size = PolygonDiameter(all);
  double off = 0;
  for (const Vec3 &x : all) off = std::max(off, std::fabs(Dot(x - first.corners[0], n)));
  if (off > kPlanarity * size) {
    char text[96];
    std::snprintf(text, sizeof text, "%.3g of its size", off / size);
    throw InputError(Where(scene, size_t(chart.faces[0])) + ": polygon " + std::to_string(chart.polygon) +
                     " is not planar (its corners leave its plane by " + text +
                     "; the loader triangulated it): a lightmap chart needs one plane; triangulate it in the "
                     "file, or split it by --max-patch-size instead of --texel-size");
  }
}

// Calls part(face, chart, x, y, corners) for every part of a texel that a face covers, with its corners in the
// chart's coordinates (from its origin along U and V), counter-clockwise, at least 3 of them and no flat ones.
template <typename Part>
void ForEachTexelPart(const Scene &scene, const std::vector<TexelChart> &charts, Part part) {
  std::vector<Point2> outline, clipped, scratch;
  for (size_t c = 0; c < charts.size(); ++c) {
    const TexelChart &chart = charts[c];
    const double eps = 1e-9 * std::min(chart.du, chart.dv);
    const double least = kLeastPart * chart.du * chart.dv;
    for (int f : chart.faces) {
      outline.clear();
      double u0 = std::numeric_limits<double>::infinity(), v0 = u0, u1 = -u0, v1 = -u0;
      for (const Vec3 &x : scene.faces[size_t(f)].corners) {
        const Point2 p{Dot(x - chart.origin, chart.axisU), Dot(x - chart.origin, chart.axisV)};
        outline.push_back(p);
        u0 = std::min(u0, p.u), u1 = std::max(u1, p.u), v0 = std::min(v0, p.v), v1 = std::max(v1, p.v);
      }
      auto span = [](double low, double high, double d, int count, int &first, int &last) {
        first = std::clamp(int(std::floor(low / d)), 0, count - 1);
        last = std::clamp(int(std::ceil(high / d)) - 1, first, count - 1);
      };
      int a0, a1, b0, b1;
      span(u0, u1, chart.du, chart.width, a0, a1);
      span(v0, v1, chart.dv, chart.height, b0, b1);
      for (int b = b0; b <= b1; ++b)
        for (int a = a0; a <= a1; ++a) {
          // The grid's outer texels reach past it, so that nothing of the polygon is lost to rounding.
          clipped = outline;
          if (a > 0) ClipSide(clipped, 0, a * chart.du, true, scratch), clipped.swap(scratch);
          if (a + 1 < chart.width) ClipSide(clipped, 0, (a + 1) * chart.du, false, scratch), clipped.swap(scratch);
          if (b > 0) ClipSide(clipped, 1, b * chart.dv, true, scratch), clipped.swap(scratch);
          if (b + 1 < chart.height) ClipSide(clipped, 1, (b + 1) * chart.dv, false, scratch), clipped.swap(scratch);
          DropFlatCorners(clipped, eps);
          if (clipped.size() < 3 || Area2(clipped) <= least) continue;
          part(f, int32_t(c), a, b, clipped);
        }
    }
  }
}

// Parts of more than 4 corners as a fan of quads from the first corner, and a triangle when the count is odd:
// calls piece(corners, count) for each.
template <typename Piece>
void FanPieces(const std::vector<Point2> &p, Piece piece) {
  const size_t m = p.size();
  size_t k = 1;
  for (; m - k >= 3; k += 2) piece(std::initializer_list<size_t>{0, k, k + 1, k + 2});
  if (m - k == 2) piece(std::initializer_list<size_t>{0, k, k + 1});
}

size_t PieceCount(size_t corners) { return corners <= 4 ? 1 : (corners - 1) / 2; }

}  // namespace

std::vector<TexelChart> MakeTexelCharts(const Scene &scene, double texelSize) {
  if (!(texelSize > 0) || !std::isfinite(texelSize)) throw InputError("--texel-size must be a positive length");
  std::vector<TexelChart> charts;
  std::map<int, std::vector<size_t>> ofPolygon;  // charts by polygon
  for (size_t f = 0; f < scene.faces.size(); ++f) {
    const Face &face = scene.faces[f];
    if (scene.materials[size_t(face.material)].obstruction) continue;
    const Vec3 n = FaceNormal(face);
    std::vector<size_t> &mine = ofPolygon[face.polygon];
    size_t c = 0;
    while (c < mine.size() && !(Dot(FaceNormal(scene.faces[size_t(charts[mine[c]].faces[0])]), n) > 0)) ++c;
    if (c == mine.size()) {
      mine.push_back(charts.size());
      charts.emplace_back();
      charts.back().polygon = face.polygon;
    }
    charts[mine[c]].faces.push_back(int(f));
  }
  double texels = 0;
  for (TexelChart &chart : charts) {
    CheckPlanar(scene, chart);
    FitGrid(scene, texelSize, chart);
    texels += double(chart.width) * chart.height;
  }
  if (texels > kMaxTexels)
    throw InputError(scene.path + ": --texel-size " + std::to_string(texelSize) + " gives " +
                     std::to_string((long long)texels) + " texels, more than the 2^31 - 1 patches a scene may have");
  return charts;
}

void MakeTexelPatches(const Scene &scene, const std::vector<TexelChart> &charts, std::vector<Patch> *patches,
                      std::vector<TexelOf> *texels) {
  ForEachTexelPart(scene, charts, [&](int f, int32_t c, int a, int b, const std::vector<Point2> &part) {
    const Face &face = scene.faces[size_t(f)];
    const TexelChart &chart = charts[size_t(c)];
    const Vec3 normal = FaceNormal(face);
    FanPieces(part, [&](std::initializer_list<size_t> corners) {
      Vec3 at[4];
      int count = 0;
      for (size_t k : corners) at[count++] = chart.origin + chart.axisU * part[k].u + chart.axisV * part[k].v;
      patches->push_back(PatchOf(at, count, f, scene.materials[size_t(face.material)], normal));
      patches->back().polygon = face.polygon;
      if (texels) texels->push_back({c, a, b});
    });
  });
}

double TexelPatchFloor(const Scene &scene, const std::vector<TexelChart> &charts) {
  double floor = 0;
  for (const TexelChart &chart : charts)
    for (int f : chart.faces) {
      const Face &face = scene.faces[size_t(f)];
      floor += 0.5 * Length(NewellNormal(face.corners.data(), int(face.corners.size()))) / (chart.du * chart.dv);
    }
  return floor;
}

long long CountTexelPatches(const Scene &scene, const std::vector<TexelChart> &charts) {
  long long count = 0;
  ForEachTexelPart(scene, charts,
                   [&](int, int32_t, int, int, const std::vector<Point2> &part) { count += (long long)PieceCount(part.size()); });
  return count;
}

}  // namespace rad
