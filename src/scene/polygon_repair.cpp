#include "scene/polygon_repair.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "scene/patch.h"
#include "scene/scene.h"
#include "util/error.h"
#include "util/math_constants.h"

namespace rad {

namespace {

// All tolerances are relative so that the unit of the model (mm, m) does not matter.
constexpr double kZeroAreaFactor = 1e-12;       // times the scene's squared bounding-box diagonal
constexpr double kPlanarityFactor = 1e-6;       // times the polygon's diameter
constexpr double kRepeatedVertexFactor = 1e-9;  // times the polygon's diameter
constexpr double kCollinearSine = 1e-9;         // sine of the turn at a corner

Vec3 AreaVector(const std::vector<Vec3> &corners) { return NewellNormal(corners.data(), int(corners.size())); }

Vec3 Centre(const std::vector<Vec3> &corners) {
  Vec3 centre;
  for (Vec3 c : corners) centre += c;
  return centre / double(corners.size());
}

// The corner farthest from the polygon's mean plane and its distance, 0-based.
std::pair<size_t, double> WorstPlaneOffset(const std::vector<Vec3> &corners, Vec3 unitNormal) {
  const Vec3 centre = Centre(corners);
  std::pair<size_t, double> worst{0, 0.0};
  for (size_t i = 0; i < corners.size(); ++i) {
    const double offset = std::fabs(Dot(corners[i] - centre, unitNormal));
    if (offset > worst.second) worst = {i, offset};
  }
  return worst;
}

// The sine of the turn at corner i (times both edge lengths), signed about `normal`, and its collinearity limit.
double Turn(const std::vector<Vec3> &p, size_t i, Vec3 normal, double *limit) {
  const size_t n = p.size();
  const Vec3 in = p[i] - p[(i + n - 1) % n];
  const Vec3 out = p[(i + 1) % n] - p[i];
  *limit = kCollinearSine * Length(in) * Length(out);
  return Dot(Cross(in, out), normal);
}

// "file:line: problem" (OBJ) or "file: face N: problem" (formats without lines).
[[noreturn]] void Fail(const std::string &file, const Face &face, const std::string &problem) {
  ThrowInputError(file + (face.line > 0 ? ":" + std::to_string(face.line) : ": face " + std::to_string(face.polygon)),
                  problem);
}

// Today's refusals, unchanged, for --strict.
void CheckStrict(const std::string &file, const Face &face, double minArea) {
  const std::vector<Vec3> &p = face.corners;
  const size_t n = p.size();
  const double diameter = PolygonDiameter(p);
  for (size_t i = 0; i < n; ++i) {
    if (Length(p[(i + 1) % n] - p[i]) <= kRepeatedVertexFactor * diameter) {
      Fail(file, face, "degenerate polygon: repeated vertex (corners " + std::to_string(i + 1) + " and " +
                                std::to_string((i + 1) % n + 1) + " coincide)");
    }
  }
  const Vec3 newell = AreaVector(p);
  const double area = 0.5 * Length(newell);
  if (!(area > minArea)) {
    std::ostringstream problem;
    problem << "zero-area polygon (area " << area << ")";
    Fail(file, face, problem.str());
  }
  if (n == 3) return;
  const Vec3 normal = newell / Length(newell);
  const auto [corner, offset] = WorstPlaneOffset(p, normal);
  if (offset > kPlanarityFactor * diameter) {
    std::ostringstream problem;
    problem << "non-planar polygon (corner " << corner + 1 << " is " << offset << " off the plane, limit "
            << kPlanarityFactor * diameter << ")";
    Fail(file, face, problem.str());
  }
  // Every corner must turn the same way as the Newell normal; the turns must add up to one revolution, which
  // rules out star-shaped (self-intersecting) polygons whose turns all agree.
  double turning = 0;
  for (size_t i = 0; i < n; ++i) {
    double limit = 0;
    const double sine = Turn(p, i, normal, &limit);
    if (std::fabs(sine) <= limit) Fail(file, face, "degenerate polygon: collinear edges at corner " + std::to_string(i + 1));
    if (sine < 0) Fail(file, face, "non-convex polygon (reflex corner " + std::to_string(i + 1) + ")");
    turning += std::atan2(sine, Dot(p[i] - p[(i + n - 1) % n], p[(i + 1) % n] - p[i]));
  }
  if (turning > 3 * kPi) Fail(file, face, "non-convex polygon (self-intersecting)");
}

// Drops corners that add nothing to the region: one that repeats its predecessor, one whose neighbours it
// stands between on a straight line (or that turns back on it: a spike of no area). Returns true if any went.
bool DropEmptyCorners(std::vector<Vec3> *corners, double diameter) {
  std::vector<Vec3> &p = *corners;
  bool dropped = false;
  for (size_t i = 0; i < p.size() && p.size() > 1;) {
    if (Length(p[(i + 1) % p.size()] - p[i]) <= kRepeatedVertexFactor * diameter) {
      p.erase(p.begin() + long((i + 1) % p.size()));
      dropped = true;
      i = 0;
    } else {
      ++i;
    }
  }
  if (p.size() < 3) return true;
  const Vec3 normal = AreaVector(p);
  for (size_t i = 0; i < p.size() && p.size() >= 3;) {
    double limit = 0;
    const double sine = Turn(p, i, Normalize(normal), &limit);
    if (std::fabs(sine) <= limit) {
      p.erase(p.begin() + long(i));
      dropped = true;
      i = 0;
    } else {
      ++i;
    }
  }
  return dropped;
}

enum class Shape { kConvex, kConcave, kNonPlanar, kSelfIntersecting };

Shape Classify(const std::vector<Vec3> &p) {
  const size_t n = p.size();
  if (n == 3) return Shape::kConvex;
  const Vec3 normal = Normalize(AreaVector(p));
  if (WorstPlaneOffset(p, normal).second > kPlanarityFactor * PolygonDiameter(p)) return Shape::kNonPlanar;
  double turning = 0;
  bool reflex = false;
  for (size_t i = 0; i < n; ++i) {
    double limit = 0;
    const double sine = Turn(p, i, normal, &limit);
    reflex = reflex || sine < 0;
    turning += std::atan2(sine, Dot(p[i] - p[(i + n - 1) % n], p[(i + 1) % n] - p[i]));
  }
  if (turning > 3 * kPi || turning < kPi) return Shape::kSelfIntersecting;
  return reflex ? Shape::kConcave : Shape::kConvex;
}

// Shape quality of a triangle in [0, 1]: 1 for equilateral, 0 for a sliver (4 sqrt 3 area / sum of squared edges).
double TriangleQuality(Vec3 a, Vec3 b, Vec3 c, Vec3 normal) {
  const double twiceArea = Dot(Cross(b - a, c - a), normal);
  const double edges = LengthSquared(b - a) + LengthSquared(c - b) + LengthSquared(a - c);
  return edges > 0 ? 2 * std::sqrt(3.0) * twiceArea / edges : 0;
}

// The polygon as the order in which its corners index into `corners`, seen in the plane of `normal`.
struct PlaneFrame {
  Vec3 u, v;
  explicit PlaneFrame(Vec3 normal) {
    const Vec3 n = Normalize(normal);
    u = Normalize(std::fabs(n.x) < 0.6 ? Cross(n, Vec3(1, 0, 0)) : Cross(n, Vec3(0, 1, 0)));
    v = Cross(n, u);
  }
  double Cross2(Vec3 a, Vec3 b, Vec3 c) const {  // twice the signed area of abc seen along the normal
    const double ax = Dot(b - a, u), ay = Dot(b - a, v), bx = Dot(c - a, u), by = Dot(c - a, v);
    return ax * by - ay * bx;
  }
};

}  // namespace

void PolygonRepairCount::Add(int where) {
  ++count;
  if (first.size() < PolygonRepairs::kListed) first.push_back(where);
}

bool TriangulatePolygon(const std::vector<Vec3> &corners, Vec3 normal, std::vector<std::vector<Vec3>> *triangles) {
  const Vec3 unit = Normalize(normal);
  const size_t n = corners.size();
  if (n < 3) return false;
  if (n == 3) {
    triangles->push_back(corners);
    return true;
  }
  const PlaneFrame frame(unit);
  if (n == 4) {
    // Both diagonals; a concave quad has one that stays inside. Of two valid ones, the pair whose worse
    // triangle is better shaped (for a non-planar quad this is usually the shorter diagonal).
    double best = 0;
    int bestSplit = -1;
    for (int s = 0; s < 2; ++s) {
      const Vec3 &a = corners[size_t(s)], &b = corners[size_t(s + 1)], &c = corners[size_t(s + 2)],
                 &d = corners[size_t((s + 3) % 4)];
      if (frame.Cross2(a, b, c) <= 0 || frame.Cross2(a, c, d) <= 0) continue;
      const double quality = std::min(TriangleQuality(a, b, c, unit), TriangleQuality(a, c, d, unit));
      if (quality > best) best = quality, bestSplit = s;
    }
    if (bestSplit < 0) return false;
    const size_t s = size_t(bestSplit);
    triangles->push_back({corners[s], corners[s + 1], corners[s + 2]});
    triangles->push_back({corners[s], corners[s + 2], corners[(s + 3) % 4]});
    return true;
  }
  // Ear clipping: each step cuts off the best-shaped ear (a convex corner whose triangle holds no other corner),
  // which avoids the fans of slivers that taking the first ear makes.
  std::vector<size_t> ring(n);
  std::iota(ring.begin(), ring.end(), size_t(0));
  while (ring.size() > 3) {
    const size_t m = ring.size();
    double best = -1;
    size_t bestEar = m;
    size_t flat = m;  // a corner that no longer turns (its neighbours became collinear): dropped without a triangle
    for (size_t k = 0; k < m; ++k) {
      const Vec3 &a = corners[ring[(k + m - 1) % m]], &b = corners[ring[k]], &c = corners[ring[(k + 1) % m]];
      const double turn = frame.Cross2(a, b, c);
      const double scale = Length(b - a) * Length(c - b);
      if (std::fabs(turn) <= kCollinearSine * scale) {
        if (Dot(b - a, c - b) > 0 && flat == m) flat = k;
        continue;
      }
      if (turn < 0) continue;
      bool holds = false;
      for (size_t j = 0; j < m && !holds; ++j) {
        if (j == k || j == (k + 1) % m || j == (k + m - 1) % m) continue;
        const Vec3 &q = corners[ring[j]];
        holds = frame.Cross2(a, b, q) >= 0 && frame.Cross2(b, c, q) >= 0 && frame.Cross2(c, a, q) >= 0;
      }
      if (holds) continue;
      const double quality = TriangleQuality(a, b, c, unit);
      if (quality > best) best = quality, bestEar = k;
    }
    if (bestEar == m) {
      if (flat == m) return false;
      ring.erase(ring.begin() + long(flat));
      continue;
    }
    triangles->push_back({corners[ring[(bestEar + m - 1) % m]], corners[ring[bestEar]], corners[ring[(bestEar + 1) % m]]});
    ring.erase(ring.begin() + long(bestEar));
  }
  const Vec3 &a = corners[ring[0]], &b = corners[ring[1]], &c = corners[ring[2]];
  if (std::fabs(frame.Cross2(a, b, c)) > kCollinearSine * Length(b - a) * Length(c - b)) triangles->push_back({a, b, c});
  return !triangles->empty();
}

long long AddSurfaceRoles(Scene *scene) {
  for (Material &m : scene->materials)
    if (m.obstruction) m.reflectance = Vec3(0, 0, 0), m.emission = Vec3(0, 0, 0);
  long long added = 0;
  std::vector<Face> out;
  out.reserve(scene->faces.size());
  for (Face &face : scene->faces) {
    const bool twoSided = scene->materials[size_t(face.material)].twoSided;
    out.push_back(face);
    if (!twoSided) continue;
    std::reverse(face.corners.begin(), face.corners.end());
    out.push_back(std::move(face));
    ++added;
  }
  if (added > 0) scene->faces = std::move(out);
  return added;
}

void PolygonRepairs::Merge(const PolygonRepairs &other) {
  for (auto [mine, theirs] : {std::pair{&nonPlanar, &other.nonPlanar}, {&concave, &other.concave},
                              {&cornersDropped, &other.cornersDropped}, {&zeroArea, &other.zeroArea},
                              {&degenerate, &other.degenerate}, {&duplicates, &other.duplicates}}) {
    mine->count += theirs->count;
    for (int w : theirs->first)
      if (mine->first.size() < kListed) mine->first.push_back(w);
  }
  piecesAdded += other.piecesAdded;
}

std::vector<std::string> PolygonRepairs::Summary(const std::string &file) const {
  std::vector<std::string> lines;
  auto add = [&](const PolygonRepairCount &c, const std::string &what, const std::string &done) {
    if (c.count == 0) return;
    std::string text = file + ": " + std::to_string(c.count) + " " + what + (c.count == 1 ? "" : "s") + " " + done;
    std::string where;
    for (int w : c.first) where += (where.empty() ? "" : ", ") + std::to_string(w);
    const std::string unit = byLine ? "line" : "face";
    text += " (" + unit + (c.first.size() == 1 ? " " : "s ") + where +
            (c.count > static_cast<long long>(c.first.size()) ? ", ..." : "") + ")";
    lines.push_back(text);
  };
  add(nonPlanar, "non-planar polygon", "triangulated");
  add(concave, "concave polygon", "triangulated");
  add(cornersDropped, "polygon", "had repeated corners or corners on a straight edge, dropped");
  add(zeroArea, "zero-area polygon", "skipped");
  add(degenerate, "degenerate polygon", "skipped (fewer than 3 distinct corners, or self-intersecting)");
  add(duplicates, "duplicated face", "dropped (the same polygon as an earlier face, corner for corner)");
  return lines;
}

PolygonRepairs RepairPolygons(Scene *scene, bool strict) {
  PolygonRepairs repairs;
  std::vector<Face> &faces = scene->faces;
  if (faces.empty()) return repairs;
  Vec3 lo = faces.front().corners.front(), hi = lo;
  for (const Face &face : faces)
    for (Vec3 c : face.corners) lo = Min(lo, c), hi = Max(hi, c);
  const double minArea = kZeroAreaFactor * LengthSquared(hi - lo);
  const std::string &file = scene->path;
  repairs.byLine = faces.front().line > 0;
  auto where = [](const Face &face) { return face.line > 0 ? face.line : face.polygon; };

  if (strict) {
    for (const Face &face : faces) CheckStrict(file, face, minArea);
  }
  // Pass 1: every polygon cleaned of empty corners, or marked for skipping (an empty corner list).
  std::vector<std::vector<Vec3>> cleaned(faces.size());
  for (size_t f = 0; f < faces.size(); ++f) {
    std::vector<Vec3> p = faces[f].corners;
    if (!(0.5 * Length(AreaVector(p)) > minArea)) {
      repairs.zeroArea.Add(where(faces[f]));
      continue;
    }
    if (DropEmptyCorners(&p, PolygonDiameter(p))) repairs.cornersDropped.Add(where(faces[f]));
    if (p.size() < 3 || !(0.5 * Length(AreaVector(p)) > minArea)) {
      repairs.degenerate.Add(where(faces[f]));
      continue;
    }
    cleaned[f] = std::move(p);
  }
  // Pass 2: a face that repeats an earlier one, corner for corner from any start with the same winding.
  // Each corner list rotated to start at its smallest corner (by exact coordinates) is the polygon's key.
  auto lessCorner = [](Vec3 a, Vec3 b) { return a.x != b.x ? a.x < b.x : (a.y != b.y ? a.y < b.y : a.z < b.z); };
  std::vector<std::vector<Vec3>> keys(faces.size());
  std::vector<size_t> order;
  for (size_t f = 0; f < faces.size(); ++f) {
    if (cleaned[f].empty()) continue;
    keys[f] = cleaned[f];
    std::rotate(keys[f].begin(), std::min_element(keys[f].begin(), keys[f].end(), lessCorner), keys[f].end());
    order.push_back(f);
  }
  auto lessKey = [&](size_t a, size_t b) {
    if (keys[a].size() != keys[b].size()) return keys[a].size() < keys[b].size();
    for (size_t k = 0; k < keys[a].size(); ++k) {
      if (lessCorner(keys[a][k], keys[b][k])) return true;
      if (lessCorner(keys[b][k], keys[a][k])) return false;
    }
    return a < b;  // equal polygons in face order: the first is kept
  };
  std::sort(order.begin(), order.end(), lessKey);
  std::vector<bool> duplicate(faces.size(), false);
  for (size_t k = 1; k < order.size(); ++k) {
    const size_t a = order[k - 1], b = order[k];
    if (keys[a].size() != keys[b].size() || !std::equal(keys[a].begin(), keys[a].end(), keys[b].begin(),
                                                        [](Vec3 x, Vec3 y) { return x.x == y.x && x.y == y.y && x.z == y.z; }))
      continue;
    // b repeats a (and, along a run of equal keys, the first of the run, which sorted first)
    size_t original = a;
    for (size_t j = k - 1; j > 0 && duplicate[order[j]]; --j) original = order[j - 1];
    duplicate[b] = true;
    if (strict)
      Fail(file, faces[b], "duplicated face: the same polygon as " +
                               (faces[original].line > 0 ? "line " + std::to_string(faces[original].line)
                                                         : "face " + std::to_string(faces[original].polygon)));
  }
  for (size_t f = 0; f < faces.size(); ++f)
    if (duplicate[f]) repairs.duplicates.Add(where(faces[f]));

  // Pass 3: planar convex polygons kept whole, the others triangulated.
  std::vector<Face> out;
  out.reserve(faces.size());
  for (size_t f = 0; f < faces.size(); ++f) {
    if (cleaned[f].empty() || duplicate[f]) continue;
    Face face = faces[f];
    face.corners = std::move(cleaned[f]);
    const Shape shape = Classify(face.corners);
    if (shape == Shape::kConvex) {
      out.push_back(std::move(face));
      continue;
    }
    std::vector<std::vector<Vec3>> triangles;
    if (shape == Shape::kSelfIntersecting || !TriangulatePolygon(face.corners, AreaVector(face.corners), &triangles)) {
      repairs.degenerate.Add(where(face));
      continue;
    }
    (shape == Shape::kNonPlanar ? repairs.nonPlanar : repairs.concave).Add(where(face));
    repairs.piecesAdded += (long long)triangles.size() - 1;
    for (std::vector<Vec3> &triangle : triangles) {
      Face piece = face;
      piece.corners = std::move(triangle);
      out.push_back(std::move(piece));
    }
  }
  faces = std::move(out);
  return repairs;
}

}  // namespace rad
