#include "render/smooth_mesh.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <unordered_map>

#include "util/error.h"

namespace rad {

namespace {

// Corner points closer than this fraction of the scene's diagonal are one point: patches of one polygon share
// their corners exactly, coplanar neighbours from an OBJ file only up to rounding.
constexpr double kRelativePointTolerance = 1e-7;
// Unit normals of one plane, computed from different polygons, agree to rounding; a crease differs by far more.
constexpr double kNormalTolerance = 1e-6;

struct VertexKey {
  Vec3 point, normal;
  double offset;  // plane offset normal . point of the patch that created the vertex
};

using Cell = std::array<int64_t, 3>;

struct CellHash {
  size_t operator()(const Cell &c) const {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int64_t v : c) h = (h ^ uint64_t(v)) * 0x100000001B3ull + (h >> 29);
    return size_t(h);
  }
};

// Finds or creates the vertex for one corner. Points are binned in cells of the point tolerance and the 27
// cells around a point are searched, so two points within tolerance are found whichever side of a cell border
// they fall on. Of all matching vertices the lowest index wins, so the result does not depend on the order in
// which the hash table yields them.
class VertexIndex {
 public:
  VertexIndex(Vec3 origin, double pointTolerance, double offsetTolerance)
      : origin_(origin), pointTolerance_(pointTolerance), offsetTolerance_(offsetTolerance) {}

  int FindOrAdd(Vec3 point, Vec3 normal, double offset) {
    const int best = Find(point, normal, offset);
    if (best >= 0) return best;
    keys_.push_back({point, normal, offset});
    const int index = int(keys_.size()) - 1;
    cells_[CellOf(point)].push_back(index);
    return index;
  }

  // The vertex at that point of that plane, or -1.
  int Find(Vec3 point, Vec3 normal, double offset) const {
    const Cell home = CellOf(point);
    int best = -1;
    for (int dx = -1; dx <= 1; ++dx) {
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dz = -1; dz <= 1; ++dz) {
          const auto it = cells_.find(Cell{home[0] + dx, home[1] + dy, home[2] + dz});
          if (it == cells_.end()) continue;
          for (int v : it->second) {
            if ((best < 0 || v < best) && Matches(keys_[size_t(v)], point, normal, offset)) best = v;
          }
        }
      }
    }
    return best;
  }

  const std::vector<VertexKey> &Keys() const { return keys_; }

 private:
  Cell CellOf(Vec3 p) const {
    Cell c;
    for (int k = 0; k < 3; ++k) c[size_t(k)] = int64_t(std::floor((p[k] - origin_[k]) / pointTolerance_));
    return c;
  }

  bool Matches(const VertexKey &key, Vec3 point, Vec3 normal, double offset) const {
    for (int k = 0; k < 3; ++k) {
      if (std::fabs(key.point[k] - point[k]) > pointTolerance_) return false;
      if (std::fabs(key.normal[k] - normal[k]) > kNormalTolerance) return false;
    }
    return std::fabs(key.offset - offset) <= offsetTolerance_;
  }

  Vec3 origin_;
  double pointTolerance_, offsetTolerance_;
  std::vector<VertexKey> keys_;
  std::unordered_map<Cell, std::vector<int>, CellHash> cells_;
};

// Corners of patches that lie inside another patch's edge (T-junctions: beside a patch that adaptive refinement
// split, or a coplanar polygon split finer) take the value the edge interpolates there, so shading is
// continuous across the edge: the mean of the patches that have the point as a corner would leave a seam
// along the larger patch's edge. Such corners lie at the edge's midpoint, or inside one of its halves, and so on.
// Longer edges first, so that an edge's ends (which may lie inside a longer edge) are final before the points
// inside it are set.
void InterpolateAlongEdges(const std::vector<Patch> &patches, const VertexIndex &index, SmoothMesh &mesh) {
  struct Edge {
    double length;
    uint32_t patch, k;
  };
  std::vector<Edge> edges;
  edges.reserve(4 * patches.size());
  for (size_t i = 0; i < patches.size(); ++i)
    for (int k = 0; k < patches[i].cornerCount; ++k)
      edges.push_back({Length(patches[i].corners[(k + 1) % patches[i].cornerCount] - patches[i].corners[k]),
                       uint32_t(i), uint32_t(k)});
  std::sort(edges.begin(), edges.end(), [](const Edge &a, const Edge &b) {
    return a.length != b.length ? a.length > b.length : (a.patch != b.patch ? a.patch < b.patch : a.k < b.k);
  });
  std::vector<double> &value = mesh.vertexRadiance;
  for (const Edge &e : edges) {
    const Patch &p = patches[e.patch];
    const double offset = Dot(p.normal, p.centroid);
    struct Span {
      int a, b;
      int depth;
    };
    std::vector<Span> spans{{mesh.patchCorners[4 * e.patch + e.k],
                             mesh.patchCorners[4 * e.patch + (e.k + 1) % uint32_t(p.cornerCount)], 0}};
    while (!spans.empty()) {
      const Span s = spans.back();
      spans.pop_back();
      const Vec3 middle = (mesh.vertices[size_t(s.a)] + mesh.vertices[size_t(s.b)]) * 0.5;
      const int m = index.Find(middle, p.normal, offset);
      if (m < 0 || m == s.a || m == s.b) continue;
      for (size_t c = 0; c < 3; ++c)
        value[3 * size_t(m) + c] = 0.5 * (value[3 * size_t(s.a) + c] + value[3 * size_t(s.b) + c]);
      if (s.depth < 40) {
        spans.push_back({s.a, m, s.depth + 1});
        spans.push_back({m, s.b, s.depth + 1});
      }
    }
  }
}

}  // namespace

SmoothMesh BuildSmoothMesh(const std::vector<Patch> &patches, const std::vector<double> &radiance) {
  RAD_CHECK(radiance.size() == 3 * patches.size(), "BuildSmoothMesh: radiance must hold 3 values per patch");
  SmoothMesh mesh;
  if (patches.empty()) return mesh;

  Vec3 lo = patches[0].corners[0], hi = lo;
  for (const Patch &p : patches) {
    for (int k = 0; k < p.cornerCount; ++k) {
      lo = Min(lo, p.corners[k]);
      hi = Max(hi, p.corners[k]);
    }
  }
  const double diagonal = Length(hi - lo);
  // A point-sized scene still needs a positive cell size.
  const double pointTolerance = diagonal > 0 ? kRelativePointTolerance * diagonal : 1e-300;
  // The offset n.p of one plane, seen from two polygons, differs by the point tolerance plus the normal's
  // rounding times the distance from the origin.
  const double reach = std::max(Length(lo), Length(hi));
  const double offsetTolerance = pointTolerance + kNormalTolerance * reach;
  VertexIndex index(lo, pointTolerance, offsetTolerance);

  const size_t n = patches.size();
  mesh.patchCorners.resize(4 * n);
  mesh.cornerCount.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const Patch &p = patches[i];
    RAD_CHECK(p.cornerCount == 3 || p.cornerCount == 4, "BuildSmoothMesh: a patch has 3 or 4 corners");
    const double offset = Dot(p.normal, p.centroid);
    for (int k = 0; k < p.cornerCount; ++k) {
      mesh.patchCorners[4 * i + size_t(k)] = index.FindOrAdd(p.corners[k], p.normal, offset);
    }
    if (p.cornerCount == 3) mesh.patchCorners[4 * i + 3] = mesh.patchCorners[4 * i + 2];
    mesh.cornerCount[i] = p.cornerCount;
  }

  const size_t vertexCount = index.Keys().size();
  mesh.vertices.resize(vertexCount);
  for (size_t v = 0; v < vertexCount; ++v) mesh.vertices[v] = index.Keys()[v].point;
  // Sums in patch order, so the values do not depend on anything but the input.
  std::vector<double> weighted(3 * vertexCount, 0.0), plain(3 * vertexCount, 0.0);
  std::vector<double> area(vertexCount, 0.0), count(vertexCount, 0.0);
  for (size_t i = 0; i < n; ++i) {
    for (int k = 0; k < patches[i].cornerCount; ++k) {
      const size_t v = size_t(mesh.patchCorners[4 * i + size_t(k)]);
      for (size_t c = 0; c < 3; ++c) {
        weighted[3 * v + c] += patches[i].area * radiance[3 * i + c];
        plain[3 * v + c] += radiance[3 * i + c];
      }
      area[v] += patches[i].area;
      count[v] += 1;
    }
  }
  mesh.vertexRadiance.resize(3 * vertexCount);
  for (size_t v = 0; v < vertexCount; ++v) {
    for (size_t c = 0; c < 3; ++c) {
      // Only zero-area patches meet here: no area to weight by, fall back to the plain mean.
      mesh.vertexRadiance[3 * v + c] = area[v] > 0 ? weighted[3 * v + c] / area[v] : plain[3 * v + c] / count[v];
    }
  }
  InterpolateAlongEdges(patches, index, mesh);
  return mesh;
}

}  // namespace rad
