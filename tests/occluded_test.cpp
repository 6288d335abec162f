// Occluded form factors by the exact visibility kernel (pair.h, visible_region.h), against answers computed here
// independently: closed-form point-to-rectangle factors integrated by Gauss-Legendre, closed rooms, reciprocity.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "formfactor/cpu_form_factors.h"
#include "formfactor/pair.h"
#include "formfactor/visible_region.h"
#include "tests/exact_rectangles.h"
#include "tests/test_scenes.h"
#include "util/thread_limit.h"

namespace rad {
namespace {

using test::BoxFaces;
using test::RectZ;
using test::SceneOf;

// Howell B-3 by superposition: from a point at the origin (normal +z) to the parallel rectangle
// [x0,x1] x [y0,y1] at height c.
double PointToParallelRect(double x0, double x1, double y0, double y1, double c) {
  auto corner = [c](double a, double b) {  // signed: rectangle [0,a] x [0,b], negative extents flip the sign
    const double A = a / c, B = b / c;
    return 1 / (2 * kPi) *
           (A / std::sqrt(1 + A * A) * std::atan(B / std::sqrt(1 + A * A)) +
            B / std::sqrt(1 + B * B) * std::atan(A / std::sqrt(1 + B * B)));
  };
  return corner(x1, y1) - corner(x0, y1) - corner(x1, y0) + corner(x0, y0);
}

// Gauss-Legendre nodes and weights on [0, 1] (Newton on the Legendre recurrence).
void GaussLegendre01(int n, std::vector<double> &x, std::vector<double> &w) {
  x.resize(n);
  w.resize(n);
  for (int i = 0; i < n; ++i) {
    double z = std::cos(kPi * (i + 0.75) / (n + 0.5)), dp = 0;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1, p1 = z;
      for (int k = 2; k <= n; ++k) {
        const double p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = n * (z * p1 - p0) / (z * z - 1);
      const double dz = p1 / dp;
      z -= dz;
      if (std::fabs(dz) < 1e-16) break;
    }
    x[i] = 0.5 * (1 - z);
    w[i] = 1 / ((1 - z * z) * dp * dp);
  }
}

// Unit squares at z = 0 (up) and z = 1 (down), a 0.5 x 0.5 square over one corner ([0, 0.5]^2) at z = 0.5.
// From x = (u, v, 0) the blocker's shadow on the top square is the corner rectangle [0, 1-u] x [0, 1-v]
// (the blocker scaled by 2 about x), so the visible factor is smooth in x and Gauss-Legendre converges fast.
double CornerObstructionExact() {
  std::vector<double> x, w;
  GaussLegendre01(48, x, w);
  double sum = 0;
  for (size_t a = 0; a < x.size(); ++a)
    for (size_t b = 0; b < x.size(); ++b) {
      const double u = x[a], v = x[b];
      const double open = PointToParallelRect(-u, 1 - u, -v, 1 - v, 1);
      const double shadow = PointToParallelRect(-u, 1 - 2 * u, -v, 1 - 2 * v, 1);
      sum += w[a] * w[b] * (open - shadow);
    }
  return sum;
}

TEST(ExactVisibility, IndependentReferenceMatchesThePublishedValue) {
  EXPECT_NEAR(CornerObstructionExact(), 0.1498686718, 1e-9);
}

TEST(ExactVisibility, CornerObstructionToOneMillionth) {
  const Scene s = SceneOf({RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 1, false), RectZ(0, 0.5, 0, 0.5, 0.5, true)});
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
  const double exact = CornerObstructionExact();
  PairSettings settings;
  const PairResult forward = FormFactorPair(g, 0, 1, settings), backward = FormFactorPair(g, 1, 0, settings);
  EXPECT_TRUE(forward.occluded);
  EXPECT_FALSE(forward.needsRays);
  EXPECT_NEAR(forward.value / exact - 1, 0, 1e-6) << forward.value << " evaluations " << forward.evaluations;
  EXPECT_EQ(forward.value, backward.value);  // equal areas: reciprocity is equality
}

// The same squares with the 0.5 x 0.5 blocker at height t < 1 instead of 0.5: from x = (u, v, 0) its shadow
// on the top square is [0, u + (0.5 - u) / t] in x (and alike in y), clipped to the square, which it leaves at
// u = (0.5 - t) / (1 - t) and whose far edge passes 0 at u = 0.5 / (1 - t): Gauss-Legendre between those.
double CornerObstructionAt(double t) {
  std::vector<double> x, w;
  GaussLegendre01(32, x, w);
  std::vector<double> breaks = {0, 1};
  for (double b : {(0.5 - t) / (1 - t), 0.5 / (1 - t)})
    if (b > 0 && b < 1) breaks.push_back(b);
  std::sort(breaks.begin(), breaks.end());
  auto far = [t](double u) { return std::min(1.0, u + (0.5 - u) / t); };
  double sum = 0;
  for (size_t i = 0; i + 1 < breaks.size(); ++i)
    for (size_t j = 0; j + 1 < breaks.size(); ++j)
      for (size_t a = 0; a < x.size(); ++a)
        for (size_t b = 0; b < x.size(); ++b) {
          const double du = breaks[i + 1] - breaks[i], dv = breaks[j + 1] - breaks[j];
          const double u = breaks[i] + du * x[a], v = breaks[j] + dv * x[b];
          const double open = PointToParallelRect(-u, 1 - u, -v, 1 - v, 1);
          const double shadow = far(u) > 0 && far(v) > 0 ? PointToParallelRect(-u, far(u) - u, -v, far(v) - v, 1) : 0;
          sum += du * dv * w[a] * w[b] * (open - shadow);
        }
  return sum;
}

// A blocker near one of the squares: the pair is integrated over the square farther from it
// (IntegrateOverReceiver), whichever is its canonical emitter, and stays exact either way.
TEST(ExactVisibility, BlockerNearOneSideIsIntegratedFromTheOther) {
  EXPECT_NEAR(CornerObstructionAt(0.5), CornerObstructionExact(), 1e-12);  // the reference agrees with itself
  for (double t : {0.2, 0.8}) {
    const Scene s =
        SceneOf({RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 1, false), RectZ(0, 0.5, 0, 0.5, t, true)});
    const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
    const GeometryView view = ViewOf(g);
    const ClippedPair cp = ClipPair(PatchPolygon(g.patches[0]), g.patches[0].normal, PatchPolygon(g.patches[1]),
                                    g.patches[1].normal);
    const int32_t blocker[1] = {2};
    EXPECT_EQ(IntegrateOverReceiver(cp, g.patches[0], g.patches[1], view, blocker, 1), t < 0.5) << t;
    const double exact = CornerObstructionAt(t);
    const PairResult forward = FormFactorPair(g, 0, 1, PairSettings{}), backward = FormFactorPair(g, 1, 0, PairSettings{});
    EXPECT_TRUE(forward.occluded);
    EXPECT_NEAR(forward.value / exact - 1, 0, 1e-6) << "t " << t << ": " << forward.value << " exact " << exact;
    EXPECT_EQ(forward.value, backward.value);
  }
}

// The whole matrix on this rank, and the geometry it was computed on.
std::vector<double> AllRows(const Scene &s, const FormFactorGeometry &g, FormFactorCounters &counters,
                            FormFactorOptions options = {}) {
  EmbreeScene embree(s);
  std::vector<long long> rows;
  for (long long i = 0; i < (long long)g.patches.size(); ++i) rows.push_back(i);
  std::vector<double> F;
  PhaseTimers timers;
  ComputeRowsCpu(g, embree, rows, options, F, timers, counters, false);
  return F;
}

TEST(ExactVisibility, BlockerSplitIntoTrianglesLeaksNoLight) {
  // The same corner blocker as two triangles, and as four quads written as a soup (each with its own corners):
  // the shadows' shared edges must let nothing through, so the value is the quad's.
  const auto base = {RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 1, false)};
  std::vector<std::vector<Vec3>> triangles(base), soup(base);
  triangles.push_back({{0, 0, 0.5}, {0.5, 0, 0.5}, {0.5, 0.5, 0.5}});
  triangles.push_back({{0, 0, 0.5}, {0.5, 0.5, 0.5}, {0, 0.5, 0.5}});
  for (double x : {0.0, 0.25})
    for (double y : {0.0, 0.25}) soup.push_back(RectZ(x, x + 0.25, y, y + 0.25, 0.5, false));
  const double exact = CornerObstructionExact();
  for (const auto &polygons : {triangles, soup}) {
    const FormFactorGeometry g = BuildFormFactorGeometry(SceneOf(polygons), 0);
    const PairResult r = FormFactorPair(g, 0, 1, PairSettings{});
    EXPECT_TRUE(r.occluded);
    EXPECT_NEAR(r.value / exact - 1, 0, 1e-6) << polygons.size() << " polygons";
  }
}

// A blocker just above the emitter's plane and beside it: unit square emitter at z = 0 (up), receiver
// [-1, 0] x [0, 1] at z = 1 (down), blocker [-1, 0] x [-1, 2] at height eps. Only points of the emitter within
// about eps of its edge x = 0 lose light, to x_r < -u (1 - eps) / eps, so the blocked region is a strip 1e-3
// wide that a rule sampling the whole emitter steps over. Exact: Gauss-Legendre over u, split where the
// shadow leaves the receiver, of the factor to the visible rectangle.
TEST(ExactVisibility, ThinPenumbraBesideTheEmitterIsIntegrated) {
  const double eps = 1e-3, edge = eps / (1 - eps);
  std::vector<double> x, w;
  GaussLegendre01(48, x, w);
  double exact = 0, open = 0;
  for (const auto &[lo, hi] : {std::pair<double, double>{0, edge}, {edge, 1}})
    for (size_t a = 0; a < x.size(); ++a)
      for (size_t b = 0; b < x.size(); ++b) {
        const double u = lo + (hi - lo) * x[a], v = x[b];
        const double from = std::max(-1.0, -u * (1 - eps) / eps);
        exact += (hi - lo) * w[a] * w[b] * PointToParallelRect(from - u, -u, -v, 1 - v, 1);
        open += (hi - lo) * w[a] * w[b] * PointToParallelRect(-1 - u, -u, -v, 1 - v, 1);
      }
  ASSERT_LT(exact, open * (1 - 1e-4));  // the strip matters at the tolerance asserted below
  const Scene s = SceneOf({RectZ(0, 1, 0, 1, 0, true), RectZ(-1, 0, 0, 1, 1, false), RectZ(-1, 0, -1, 2, eps, true)});
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
  const PairResult r = FormFactorPair(g, 0, 1, PairSettings{});
  EXPECT_TRUE(r.occluded);
  EXPECT_NEAR(r.value / exact - 1, 0, 1e-6) << r.value << " exact " << exact << " evaluations " << r.evaluations;
}

// The factor from a point at height c below the plane of a convex polygon (corners (x, y) in that plane, the
// point at the origin of x and y) to the polygon: c^2 / (pi (rho^2 + c^2)^2) integrated by Gauss-Legendre on
// each triangle of a fan, each mapped from the unit square (smooth: c is several times the polygon's size).
double PointToParallelPolygon(const std::vector<std::pair<double, double>> &polygon, double c) {
  std::vector<double> x, w;
  GaussLegendre01(16, x, w);
  double sum = 0;
  for (size_t k = 1; k + 1 < polygon.size(); ++k) {
    const auto [ax, ay] = polygon[0];
    const auto [bx, by] = polygon[k];
    const auto [cx, cy] = polygon[k + 1];
    const double twiceArea = std::fabs((bx - ax) * (cy - ay) - (by - ay) * (cx - ax));
    for (size_t i = 0; i < x.size(); ++i)
      for (size_t j = 0; j < x.size(); ++j) {
        const double s = x[i], t = x[j];  // (s, t) -> a + s (b - a) + s t (c - b), Jacobian s * twiceArea
        const double px = ax + s * (bx - ax) + s * t * (cx - bx), py = ay + s * (by - ay) + s * t * (cy - by);
        const double rho2 = px * px + py * py;
        sum += w[i] * w[j] * s * twiceArea * c * c / (kPi * (rho2 + c * c) * (rho2 + c * c));
      }
  }
  return sum;
}

// The unit square emitter at z = 0 (up), a blocker filling x < edge at height eps, and a diamond receiver (half-
// diagonal 0.8, larger than the emitter, so that the cubature runs over the emitter) centred at (cx, 0.5) at
// height 3, facing down. From (u, v) the blocker hides the diamond's part with x_r < threshold(u) =
// edge 3 / eps + u (1 - 3 / eps): the factor to the rest, by Gauss-Legendre over u split where the threshold
// passes the diamond's corners. Also the unoccluded factor (`open`).
struct DiamondPair {
  double exact = 0, open = 0;
};
DiamondPair DiamondBesideBlocker(double eps, double edge, double cx) {
  const double height = 3, cy = 0.5, half = 0.8, slope = 1 - height / eps, offset = edge * height / eps;
  const std::vector<std::pair<double, double>> diamond = {
      {cx, cy - half}, {cx + half, cy}, {cx, cy + half}, {cx - half, cy}};
  std::vector<double> breaks = {0, 1};
  for (double corner : {cx - half, cx, cx + half}) {
    const double u = (corner - offset) / slope;
    if (u > 0 && u < 1) breaks.push_back(u);
  }
  std::sort(breaks.begin(), breaks.end());
  std::vector<double> x, w;
  GaussLegendre01(24, x, w);
  DiamondPair out;
  for (size_t piece = 0; piece + 1 < breaks.size(); ++piece) {
    const double lo = breaks[piece], hi = breaks[piece + 1];
    for (size_t a = 0; a < x.size(); ++a) {
      const double u = lo + (hi - lo) * x[a], threshold = offset + u * slope;
      std::vector<std::pair<double, double>> visible;  // the diamond clipped to x_r >= threshold
      for (size_t k = 0; k < diamond.size(); ++k) {
        const auto [px, py] = diamond[k];
        const auto [qx, qy] = diamond[(k + 1) % diamond.size()];
        if (px >= threshold) visible.push_back({px, py});
        if ((px - threshold) * (qx - threshold) < 0) {
          const double t = (threshold - px) / (qx - px);
          visible.push_back({threshold, py + t * (qy - py)});
        }
      }
      for (size_t b = 0; b < x.size(); ++b) {
        const double v = x[b];
        auto shifted = [&](std::vector<std::pair<double, double>> p) {
          for (auto &[px, py] : p) px -= u, py -= v;
          return p;
        };
        const double weight = (hi - lo) * w[a] * w[b];
        if (visible.size() >= 3) out.exact += weight * PointToParallelPolygon(shifted(visible), height);
        out.open += weight * PointToParallelPolygon(shifted(diamond), height);
      }
    }
  }
  return out;
}

PairResult DiamondBesideBlockerByKernel(double eps, double edge, double cx) {
  const double height = 3, cy = 0.5, half = 0.8;
  const std::vector<Vec3> receiver = {{cx - half, cy, height}, {cx, cy + half, height}, {cx + half, cy, height},
                                      {cx, cy - half, height}};  // clockwise from above: facing down
  const Scene s = SceneOf({RectZ(0, 1, 0, 1, 0, true), receiver, RectZ(edge - 6, edge, -3, 4, eps, true)});
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
  return FormFactorPair(g, 0, 1, PairSettings{});
}

// The blocker's edge above the emitter's edge x = 0 and the receiver on the blocker's side: the blocker hides
// part of the receiver only from a strip about 1e-3 wide along that edge. No edge of the diamond is parallel
// to the blocker's, so none of the kernel's own cuts runs along the strip: before the cubature was aimed at
// it, the pair came out at the unoccluded value, 1.3e-3 too high at every tolerance.
TEST(ExactVisibility, ThinPenumbraIsFoundWhateverTheReceiverShape) {
  const DiamondPair reference = DiamondBesideBlocker(1e-3, 0, -3);
  ASSERT_LT(reference.exact, reference.open * (1 - 1e-3));  // the strip matters at the tolerance asserted below
  const PairResult r = DiamondBesideBlockerByKernel(1e-3, 0, -3);
  EXPECT_TRUE(r.occluded);
  EXPECT_NEAR(r.value / reference.exact - 1, 0, 1e-6) << r.value << " exact " << reference.exact;
}

// The blocker covering the whole emitter up to its edge x = 1 and the receiver beyond that edge: the emitter sees
// the receiver only from a strip about 1e-3 wide along it (a ceiling patch under a light panel, seeing the
// wall past the panel's edge). Before, the pair came out 0 or 40 % high, depending on where samples fell.
// The tolerance is relative to the unoccluded factor.
TEST(ExactVisibility, ThinLitStripBesideAnUmbraIsFound) {
  const DiamondPair reference = DiamondBesideBlocker(1e-3, 1, 4);
  ASSERT_GT(reference.exact, 1e-4 * reference.open);
  ASSERT_LT(reference.exact, 1e-2 * reference.open);
  const PairResult r = DiamondBesideBlockerByKernel(1e-3, 1, 4);
  EXPECT_TRUE(r.occluded);
  EXPECT_NEAR(r.value, reference.exact, 1e-6 * reference.open) << "exact " << reference.exact;
}

// Lambert's formula for the factor from point x (unit normal n) to a planar polygon: the sum over its edges of
// the angle each subtends times the cosine between n and the normal of the plane through x and the edge.
double LambertPointToPolygon(Vec3 x, Vec3 n, const std::vector<Vec3> &polygon) {
  double sum = 0;
  for (size_t k = 0; k < polygon.size(); ++k) {
    const Vec3 a = Normalize(polygon[k] - x), b = Normalize(polygon[(k + 1) % polygon.size()] - x);
    const Vec3 g = Cross(a, b);
    const double sine = Length(g);
    if (sine == 0) continue;
    sum += std::atan2(sine, Dot(a, b)) * Dot(g / sine, n);
  }
  return std::fabs(sum) / (2 * kPi);
}

// A light panel 1e-3 below the ceiling (y = 1) over [0.375, 0.625]^2 in x and z, a ceiling patch above it
// ([0.375, 0.5]^2) and a wall patch at x = 0 touching the ceiling (y in [0.875, 1], z in [0.25, 0.375]), as in
// the Cornell box at subdiv 3. The wall sees the ceiling patch only past the panel's edges: from a wall point
// below the panel's level, through a sliver of the patch along x = 0.375 and one along z = 0.375 (where the
// segment meets the panel's level outside it), from the 1e-3 above that level, all of it. The kernel
// integrates over the ceiling patch (equal areas, lower number), this reference over the wall: with t the
// fraction of the way from the wall point to the ceiling at which the panel's level is crossed, the hidden part
// is x_r >= 0.375 / t and z_r >= z_0 + (0.375 - z_0) / t, a rectangle, so what is seen is two rectangles.
// Gauss-Legendre over y_0 and z_0, split where those bounds reach the patch's far edges. Where the receiver
// touches the emitter's plane, the emitter was not cut along these events and the pair was 3e-4 of its
// unoccluded factor off.
TEST(ExactVisibility, LightPanelBelowTheCeilingSeenFromATouchingWall) {
  const double level = 0.999, near = 0.375, far = 0.5;
  auto ceiling = [](double x0, double x1, double z0, double z1) {
    return std::vector<Vec3>{{x0, 1, z0}, {x1, 1, z0}, {x1, 1, z1}, {x0, 1, z1}};
  };
  const Vec3 wallNormal{1, 0, 0};
  std::vector<double> x, w;
  GaussLegendre01(20, x, w);
  auto integrate = [&](double lo, double hi, const auto &f) {
    double sum = 0;
    for (size_t k = 0; k < x.size(); ++k) sum += (hi - lo) * w[k] * f(lo + (hi - lo) * x[k]);
    return sum;
  };
  auto seen = [&](double y0, double z0) {  // the factor from wall point (0, y0, z0) to what it sees
    const Vec3 p{0, y0, z0};
    if (y0 >= level) return LambertPointToPolygon(p, wallNormal, ceiling(near, far, near, far));
    const double t = (level - y0) / (1 - y0);
    const double xBound = std::min(far, near / t), zBound = std::min(far, z0 + (near - z0) / t);
    double f = LambertPointToPolygon(p, wallNormal, ceiling(near, xBound, near, far));
    if (xBound < far) f += LambertPointToPolygon(p, wallNormal, ceiling(xBound, far, near, zBound));
    return f;
  };
  double exact = 0, open = 0;
  const double yBreaks[] = {0.875, 1 - (1 - level) / (1 - near / far), level, 1};  // x bound reaches `far` at 0.996
  for (int b = 0; b < 3; ++b)
    exact += integrate(yBreaks[b], yBreaks[b + 1], [&](double y0) {
      if (y0 >= level) return integrate(0.25, near, [&](double z0) { return seen(y0, z0); });
      // z bound = far where z0 (1 - 1/t) = far - near / t
      const double t = (level - y0) / (1 - y0), split = (far - near / t) / (1 - 1 / t);
      if (!(split > 0.25 && split < near)) return integrate(0.25, near, [&](double z0) { return seen(y0, z0); });
      return integrate(0.25, split, [&](double z0) { return seen(y0, z0); }) +
             integrate(split, near, [&](double z0) { return seen(y0, z0); });
    });
  for (int b = 0; b < 3; ++b)
    open += integrate(yBreaks[b], yBreaks[b + 1], [&](double y0) {
      return integrate(0.25, near, [&](double z0) {
        return LambertPointToPolygon({0, y0, z0}, wallNormal, ceiling(near, far, near, far));
      });
    });
  const double area = 0.125 * 0.125;
  exact /= area;
  open /= area;
  ASSERT_LT(exact, 0.1 * open);  // mostly hidden
  const std::vector<Vec3> patch = ceiling(near, far, near, far);  // facing down
  std::vector<Vec3> panel = ceiling(near, 0.625, near, 0.625);
  for (Vec3 &c : panel) c.y = level;
  const std::vector<Vec3> wall = {{0, 0.875, 0.25}, {0, 1, 0.25}, {0, 1, near}, {0, 0.875, near}};
  const FormFactorGeometry g = BuildFormFactorGeometry(SceneOf({patch, wall, panel}), 0);
  ASSERT_LT(g.patches[0].normal.y, -0.99);  // the ceiling patch faces down
  ASSERT_GT(g.patches[1].normal.x, 0.99);   // the wall faces the room
  const PairResult r = FormFactorPair(g, 0, 1, PairSettings{});
  EXPECT_TRUE(r.occluded);
  EXPECT_NEAR(r.value, exact, 1e-6 * open) << "exact " << exact << " open " << open;
}

// A closed box [0, 0.5]^2 x [0.45, 0.55] between a square [0, 0.5]^2 at z = 0 (up) and the unit square at z = 1
// (down): a convex body, whose shadow the kernel casts as the hull of its faces' shadows
// (convex_body_shadow.h). From x = (u, v, 0) below the box, the box's corner c at height z falls at
// u + (c - u) / z on the top square: the bottom face's shadow contains the top face's, so the shadow is the
// square [u - u / 0.45, u + (0.5 - u) / 0.45] x (the same in v), clipped to the unit square, whose bound
// reaches the square's edge at u = 1/11.
double BoxAboveASquareExact() {
  const double z = 0.45, edge = (1 - 0.5 / z) / (1 - 1 / z);
  const double breaks[] = {0, edge, 0.5};
  std::vector<double> x, w;
  GaussLegendre01(24, x, w);
  double sum = 0;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (size_t i = 0; i < x.size(); ++i)
        for (size_t j = 0; j < x.size(); ++j) {
          const double u = breaks[a] + (breaks[a + 1] - breaks[a]) * x[i];
          const double v = breaks[b] + (breaks[b + 1] - breaks[b]) * x[j];
          const double xlo = std::max(0.0, u - u / z), xhi = std::min(1.0, u + (0.5 - u) / z);
          const double ylo = std::max(0.0, v - v / z), yhi = std::min(1.0, v + (0.5 - v) / z);
          const double f = PointToParallelRect(-u, 1 - u, -v, 1 - v, 1) -
                           PointToParallelRect(xlo - u, xhi - u, ylo - v, yhi - v, 1);
          sum += (breaks[a + 1] - breaks[a]) * (breaks[b + 1] - breaks[b]) * w[i] * w[j] * f;
        }
  return sum / 0.25;  // per unit emitter area
}

TEST(ExactVisibility, ConvexBoxCastsOneShadowAndMatchesItsClosedForm) {
  std::vector<std::vector<Vec3>> polygons = {RectZ(0, 0.5, 0, 0.5, 0, true), RectZ(0, 1, 0, 1, 1, false),
                                             RectZ(0, 1, 0, 1, 0, true)};
  for (auto &f : BoxFaces({0, 0, 0.45}, {0.5, 0.5, 0.55}, true)) polygons.push_back(f);
  const FormFactorGeometry g = BuildFormFactorGeometry(SceneOf(polygons), 0);
  for (size_t o = 3; o < g.occluders.size(); ++o) EXPECT_GE(g.occluders[o].convexSurface, 0) << "box face " << o;
  const double exact = BoxAboveASquareExact();
  const PairResult r = FormFactorPair(g, 0, 1, PairSettings{});
  EXPECT_TRUE(r.occluded);
  EXPECT_NEAR(r.value / exact - 1, 0, 1e-6) << r.value << " exact " << exact;
  // From the whole unit square (polygon 2), up to three faces of the box face a point, and the hull of their
  // shadows is an octagon: cast one by one (no convex body), the faces give the same value to rounding.
  FormFactorGeometry faceByFace = g;
  for (Occluder &o : faceByFace.occluders) o.convexSurface = -1;
  for (int emitter : {0, 2}) {
    const double hull = FormFactorPair(g, emitter, 1, PairSettings{}).value;
    EXPECT_NEAR(FormFactorPair(faceByFace, emitter, 1, PairSettings{}).value / hull - 1, 0, 1e-9) << emitter;
  }
}

// A UV sphere (`segments` around, `rings` from pole to pole) of radius r about c, fronts outward: triangle fans
// at the poles and quads between, as the Cornell scene's sphere.
std::vector<std::vector<Vec3>> SphereFaces(Vec3 c, double r, int segments, int rings) {
  auto at = [&](int ring, int segment) {  // the poles and the seam exactly shared
    if (ring == 0 || ring == rings) return c + Vec3{0, 0, ring == 0 ? r : -r};
    const double theta = kPi * ring / rings, phi = 2 * kPi * (segment % segments) / segments;
    return c + Vec3{r * std::sin(theta) * std::cos(phi), r * std::sin(theta) * std::sin(phi), r * std::cos(theta)};
  };
  std::vector<std::vector<Vec3>> faces;
  for (int ring = 0; ring < rings; ++ring)
    for (int s = 0; s < segments; ++s) {
      std::vector<Vec3> f = {at(ring, s), at(ring + 1, s), at(ring + 1, s + 1), at(ring, s + 1)};
      if (ring == 0) f.erase(f.begin() + 3);              // the north pole once
      if (ring == rings - 1) f.erase(f.begin() + 1);      // the south pole once
      Vec3 mid{0, 0, 0}, normal{0, 0, 0};
      for (size_t k = 0; k < f.size(); ++k) mid += f[k] / double(f.size());
      for (size_t k = 0; k < f.size(); ++k) normal += Cross(f[k], f[(k + 1) % f.size()]);
      if (Dot(normal, mid - c) < 0) std::reverse(f.begin(), f.end());
      faces.push_back(f);
    }
  return faces;
}

// The exact kernel casts a convex body's shadow three ways: through its silhouette, found once for a piece of
// the emitter that no face's plane crosses (FixedSilhouette); as the hull of its faces' shadows at each point
// (ConvexBodyShadow); or face by face. At a point, the fixed silhouette's shadow is checked against the hull of
// all the sphere's corners cast here (gift wrapping) with Lambert's formula; over the pair, the three agree.
TEST(ExactVisibility, SphereShadowThroughItsFixedSilhouette) {
  std::vector<std::vector<Vec3>> polygons = {RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 1, false)};
  const Vec3 centre{0.5, 0.45, 0.5};
  const double radius = 0.1;  // its shadows fall inside the receiver, whole
  for (auto &f : SphereFaces(centre, radius, 8, 5)) polygons.push_back(f);
  const FormFactorGeometry g = BuildFormFactorGeometry(SceneOf(polygons), 0);
  const GeometryView view = ViewOf(g);
  const int body = g.occluders[2].convexSurface;
  ASSERT_GE(body, 0);
  int cornerCount, faceCount;
  const Vec3 *corners = ConvexCorners(view, body, cornerCount);
  ConvexFaces(view, body, faceCount);
  ASSERT_EQ(cornerCount, 8 * 4 + 2);  // four rings of eight and two poles, each once
  ASSERT_EQ(faceCount, 40);

  const ConvexPolygon receiver = PatchPolygon(g.patches[1]);
  const ReceiverFrame frame = MakeReceiverFrame(receiver, g.patches[1].normal);
  const std::vector<Vec3> small = RectZ(0.45, 0.55, 0.4, 0.5, 0, true);
  const ConvexPolygon piece = MakeConvexPolygon(small.data(), 4);
  FixedSilhouette silhouette;
  ASSERT_TRUE(FindFixedSilhouette(frame, piece, view, body, 1e-12, silhouette));
  EXPECT_GE(silhouette.n, 6);
  // The whole emitter is crossed by the planes of the sphere's faces: its silhouette changes over it.
  const ConvexPolygon whole = PatchPolygon(g.patches[0]);
  FixedSilhouette none;
  EXPECT_FALSE(FindFixedSilhouette(frame, whole, view, body, 1e-12, none));

  for (Vec3 x : {Vec3{0.46, 0.41, 0}, Vec3{0.5, 0.45, 0}, Vec3{0.54, 0.49, 0}, Vec3{0.47, 0.48, 0}}) {
    Polygon2 shadow;
    CastFixedSilhouette(frame, x, 1, silhouette, shadow);
    double hidden = 0;
    ASSERT_TRUE(DisjointShadowsFactor(InFrame(frame, x, {0, 0, 1}), frame, &shadow, 1, hidden));
    // Independently: every corner cast onto z = 1 from x, their hull by gift wrapping, Lambert's formula.
    std::vector<Vec3> cast;
    for (int k = 0; k < cornerCount; ++k) cast.push_back(x + (corners[k] - x) * (1 / corners[k].z));
    std::vector<Vec3> hull;
    size_t start = 0;
    for (size_t k = 1; k < cast.size(); ++k)
      if (cast[k].x < cast[start].x) start = k;
    for (size_t current = start;;) {
      hull.push_back(cast[current]);
      size_t next = (current + 1) % cast.size();
      for (size_t k = 0; k < cast.size(); ++k)
        if (Cross(cast[next] - cast[current], cast[k] - cast[current]).z < 0) next = k;
      current = next;
      if (current == start || hull.size() > cast.size()) break;
    }
    const double expected = LambertPointToPolygon(x, {0, 0, 1}, hull);
    EXPECT_NEAR(hidden / expected - 1, 0, 1e-12) << "x " << x.x << " " << x.y;
  }

  // The pair three ways: as built (fixed silhouettes where a piece allows, the hull elsewhere), without the
  // corner lists (the hull at every point), and face by face.
  // The pair four ways: as built (fixed silhouettes where a piece allows, the hull elsewhere), without the
  // corner lists (the hull at every point), face by face, and with no edge links (so that every edge of every
  // face counts as an outline and cuts the emitter).
  FormFactorGeometry hullOnly = g, faceByFace = g, unlinked = g;
  hullOnly.convexCornerStart.clear();
  hullOnly.convexFaceStart.clear();
  for (Occluder &o : faceByFace.occluders) o.convexSurface = -1;
  for (Occluder &o : unlinked.occluders)
    for (int32_t &a : o.across) a = -1;
  const PairResult built = FormFactorPair(g, 0, 1, PairSettings{});
  EXPECT_TRUE(built.occluded);
  EXPECT_GT(built.value, 0.0);
  for (const FormFactorGeometry *other : {&hullOnly, &faceByFace, &unlinked})
    EXPECT_NEAR(FormFactorPair(*other, 0, 1, PairSettings{}).value / built.value - 1, 0, 1e-9);
}

TEST(OccluderEdges, NeighboursAcrossEdgesAndTheOutlinesTheyRuleOut) {
  // A block above a floor tile, and a lone octagon (split into a fan of triangles, whose diagonals link them).
  std::vector<std::vector<Vec3>> polygons = {RectZ(0, 4, 0, 4, 0, true)};
  for (auto &f : BoxFaces({1, 1, 1}, {2, 2, 2}, true)) polygons.push_back(f);
  std::vector<Vec3> octagon;
  for (int k = 0; k < 8; ++k) octagon.push_back({10 + std::cos(k * kPi / 4), std::sin(k * kPi / 4), 3});
  polygons.push_back(octagon);
  const FormFactorGeometry g = BuildFormFactorGeometry(SceneOf(polygons), 0);
  ASSERT_EQ(g.occluders.size(), 1u + 6u + 6u);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(g.occluders[0].across[k], -1) << "floor edge " << k;
  for (size_t o = 1; o < g.occluders.size(); ++o) {
    const ConvexPolygon &p = g.occluders[o].polygon;
    for (int k = 0; k < p.n; ++k) {
      const int a = g.occluders[o].across[k];
      const bool octagonRim = o >= 7 && ((k == 0 && o == 7) || k == 1 || (k == 2 && o == 12));
      if (octagonRim) {
        EXPECT_EQ(a, -1) << "occluder " << o << " edge " << k;
        continue;
      }
      ASSERT_GE(a, 1) << "occluder " << o << " edge " << k;
      // The neighbour runs the same edge the other way.
      const ConvexPolygon &q = g.occluders[size_t(a)].polygon;
      auto same = [](Vec3 u, Vec3 v) { return u.x == v.x && u.y == v.y && u.z == v.z; };
      bool reversed = false;
      for (int m = 0; m < q.n; ++m)
        reversed = reversed || (same(q.v[m], p.v[(k + 1) % p.n]) && same(q.v[(m + 1) % q.n], p.v[k]));
      EXPECT_TRUE(reversed) << "occluder " << o << " edge " << k;
    }
  }
  // Seen from above the block's middle, its top's edges are its outline (the sides face away), the sides'
  // vertical edges are not (both sides face away), and of its corners only the top ones show.
  const Vec3 above{1.5, 1.5, 5};
  const Occluder &top = g.occluders[2], &side = g.occluders[3];
  for (int k = 0; k < 4; ++k) {
    EXPECT_FALSE(penumbra_detail::EdgeInsideShadows(g.occluders.data(), top, k, above)) << "top edge " << k;
    EXPECT_FALSE(penumbra_detail::CornerInsideShadows(g.occluders.data(), top, k, above, above)) << "top corner " << k;
  }
  int insideEdges = 0, insideCorners = 0;
  for (int k = 0; k < 4; ++k) {
    insideEdges += penumbra_detail::EdgeInsideShadows(g.occluders.data(), side, k, above);
    insideCorners += penumbra_detail::CornerInsideShadows(g.occluders.data(), side, k, above, above + Vec3{0.2, 0, 0});
  }
  EXPECT_EQ(insideEdges, 3);    // its bottom edge and its two vertical edges; its top edge is the outline
  EXPECT_EQ(insideCorners, 2);  // its two bottom corners
  // From beside the block, level with its middle, the side toward the point and its neighbours differ.
  const Vec3 beside{1.5, 1.5 - 3, 1.5};
  int outlineEdges = 0;
  for (const Occluder *o : {&g.occluders[1], &top})
    for (int k = 0; k < 4; ++k) outlineEdges += !penumbra_detail::EdgeInsideShadows(g.occluders.data(), *o, k, beside);
  EXPECT_EQ(outlineEdges, 2);  // the bottom's and the top's edges shared with the side toward the point
}

TEST(ConvexSurfaces, OnlyClosedSurfacesConvexTowardsTheirFronts) {
  auto convexCount = [](const std::vector<std::vector<Vec3>> &polygons) {
    const Scene s = SceneOf(polygons);
    int count = 0;
    for (int id : ConvexSurfaceOfFace(s, ClosedSurfaceOfFace(s))) count += id >= 0;
    return count;
  };
  EXPECT_EQ(convexCount(BoxFaces({0, 0, 0}, {1, 1, 1}, true)), 6);   // a block seen from outside
  EXPECT_EQ(convexCount(BoxFaces({0, 0, 0}, {1, 1, 1}, false)), 0);  // a room: fronts inside
  auto open = BoxFaces({0, 0, 0}, {1, 1, 1}, true);
  open.pop_back();
  EXPECT_EQ(convexCount(open), 0);  // not closed
  // Two blocks sharing a face's plane, welded into an L-shaped closed surface: closed but not convex.
  std::vector<std::vector<Vec3>> ell = {
      {{0, 0, 0}, {0, 2, 0}, {1, 2, 0}, {1, 1, 0}, {2, 1, 0}, {2, 0, 0}},  // bottom, facing down
      {{0, 0, 1}, {2, 0, 1}, {2, 1, 1}, {1, 1, 1}, {1, 2, 1}, {0, 2, 1}},  // top, facing up
      {{0, 0, 0}, {2, 0, 0}, {2, 0, 1}, {0, 0, 1}},                      // y = 0
      {{2, 0, 0}, {2, 1, 0}, {2, 1, 1}, {2, 0, 1}},                      // x = 2
      {{2, 1, 0}, {1, 1, 0}, {1, 1, 1}, {2, 1, 1}},                      // y = 1 (inner corner)
      {{1, 1, 0}, {1, 2, 0}, {1, 2, 1}, {1, 1, 1}},                      // x = 1 (inner corner)
      {{1, 2, 0}, {0, 2, 0}, {0, 2, 1}, {1, 2, 1}},                      // y = 2
      {{0, 2, 0}, {0, 0, 0}, {0, 0, 1}, {0, 2, 1}},                      // x = 0
  };
  const Scene s = SceneOf(ell);
  const std::vector<int> closed = ClosedSurfaceOfFace(s);
  for (int id : closed) EXPECT_GE(id, 0);
  EXPECT_EQ(convexCount(ell), 0);
}

TEST(ConvexSurfaces, EnclosingRoomWallsOnlyWhenTheRoomHoldsEverything) {
  // A room holding a block: its walls can occlude nothing (EnclosingRoomFaces) and leave the occluder lists;
  // the block's faces stay. A polygon outside the room, an open room, a room seen from outside (a block alone)
  // and the L-shaped closed room (not convex) keep every wall.
  auto roomWalls = [](const std::vector<std::vector<Vec3>> &polygons) {
    const Scene s = SceneOf(polygons);
    int count = 0;
    for (bool wall : EnclosingRoomFaces(s, ClosedSurfaceOfFace(s))) count += wall;
    return count;
  };
  auto room = BoxFaces({0, 0, 0}, {4, 4, 4}, false);
  const auto block = BoxFaces({1, 1, 1}, {2, 2, 2}, true);
  auto roomAndBlock = room;
  roomAndBlock.insert(roomAndBlock.end(), block.begin(), block.end());
  EXPECT_EQ(roomWalls(roomAndBlock), 6);
  EXPECT_EQ(roomWalls(block), 0);
  auto outside = roomAndBlock;
  outside.push_back(test::RectZ(0, 1, 0, 1, 4.5, false));  // a tile above the ceiling
  EXPECT_EQ(roomWalls(outside), 0);
  auto open = room;
  open.pop_back();
  EXPECT_EQ(roomWalls(open), 0);
  std::vector<std::vector<Vec3>> ell = {
      {{0, 0, 0}, {2, 0, 0}, {2, 1, 0}, {1, 1, 0}, {1, 2, 0}, {0, 2, 0}},  // floor, facing up (inside)
      {{0, 0, 1}, {0, 2, 1}, {1, 2, 1}, {1, 1, 1}, {2, 1, 1}, {2, 0, 1}},  // ceiling, facing down
      {{0, 0, 0}, {0, 0, 1}, {2, 0, 1}, {2, 0, 0}},                      // y = 0, facing +y
      {{2, 0, 0}, {2, 0, 1}, {2, 1, 1}, {2, 1, 0}},                      // x = 2, facing -x
      {{2, 1, 0}, {2, 1, 1}, {1, 1, 1}, {1, 1, 0}},                      // y = 1, facing -y
      {{1, 1, 0}, {1, 1, 1}, {1, 2, 1}, {1, 2, 0}},                      // x = 1, facing -x
      {{1, 2, 0}, {1, 2, 1}, {0, 2, 1}, {0, 2, 0}},                      // y = 2, facing -y
      {{0, 2, 0}, {0, 2, 1}, {0, 0, 1}, {0, 0, 0}},                      // x = 0, facing +x
  };
  const Scene s = SceneOf(ell);
  for (int id : ClosedSurfaceOfFace(s)) EXPECT_GE(id, 0);  // closed, so only convexity rules it out
  EXPECT_EQ(roomWalls(ell), 0);
  // No wall is anyone's candidate occluder, and the walls' rows still sum to 1 (the block's shadows exact).
  const Scene scene = SceneOf(roomAndBlock);
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, 1);
  ASSERT_TRUE(g.hasFacePairCandidates);
  for (int32_t c : g.candidates) EXPECT_GE(g.occluders[size_t(c)].face, 6);
  FormFactorCounters counters;
  const std::vector<double> F = AllRows(scene, g, counters);
  const size_t n = g.patches.size();
  for (size_t i = 0; i < n; ++i) {
    if (g.patches[i].face >= 6) continue;
    double sum = 0;
    for (size_t j = 0; j < n; ++j) sum += F[i * n + j];
    EXPECT_NEAR(sum, 1, 1e-6) << "patch " << i;
  }
  EXPECT_EQ(counters.pairsRayTraced, 0);
}

TEST(ExactVisibility, HalfBlockedPairIsExactlyHalf) {
  // A blocker covering exactly the half x < 0.5 of the gap between opposed unit squares: by the symmetry
  // x -> 1 - x, the pair's factor is half the open value (Howell C-11), to the cubature's tolerance.
  const Scene s = SceneOf({RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 1, false), RectZ(-5, 0.5, -5, 6, 0.5, true)});
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
  const PairResult r = FormFactorPair(g, 0, 1, PairSettings{});
  EXPECT_NEAR(r.value / (0.5 * 0.1998248956677173) - 1, 0, 1e-6);
}

TEST(ExactVisibility, FullyBlockedPairIsExactlyZero) {
  const Scene s = SceneOf({RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 1, false), RectZ(-1, 2, -1, 2, 0.5, true)});
  for (int subdiv : {0, 1}) {
    const FormFactorGeometry g = BuildFormFactorGeometry(s, subdiv);
    const int per = subdiv == 0 ? 1 : 4;
    for (int i = 0; i < per; ++i)
      for (int j = per; j < 2 * per; ++j) {
        const PairResult r = FormFactorPair(g, i, j, PairSettings{});
        EXPECT_TRUE(r.hidden);  // proved hidden by the blocker before any integral (full_occlusion.h)
        EXPECT_EQ(r.value, 0.0) << i << " " << j;
        EXPECT_EQ(FormFactorPair(g, j, i, PairSettings{}).value, 0.0);
        // The exact kernel, asked itself, finds the receiver wholly in shadow too.
        const GeometryView view = ViewOf(g);
        const Patch &e = g.patches[size_t(i)], &x = g.patches[size_t(j)];
        const ClippedPair cp = ClipPair(PatchPolygon(e), e.normal, PatchPolygon(x), x.normal);
        int32_t candidates[kMaxPairOccluders];
        const int count = PairOccluders(view, e, x, cp, candidates, kMaxPairOccluders);
        ASSERT_EQ(count, 1);
        EXPECT_EQ(OccludedFormFactor(cp, e, x, view, candidates, count, QuadratureSettings{}).formFactor, 0.0);
      }
  }
}

TEST(ExactVisibility, RoomWithABlockIsClosedAndReciprocal) {
  // A closed room with a closed block floating in it: every patch of either sees only the two surfaces, so
  // every row sums to 1; reciprocity holds to rounding because each pair is integrated once.
  std::vector<std::vector<Vec3>> polygons = BoxFaces({0, 0, 0}, {1, 1, 1}, false);
  for (auto &f : BoxFaces({0.3, 0.35, 0.2}, {0.7, 0.65, 0.6}, true)) polygons.push_back(f);
  const Scene s = SceneOf(polygons);
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 1);
  FormFactorCounters counters;
  const std::vector<double> F = AllRows(s, g, counters);
  const size_t n = g.patches.size();
  double worstRow = 0, worstReciprocity = 0;
  for (size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (size_t j = 0; j < n; ++j) {
      sum += F[i * n + j];
      const double a = g.patches[i].area * F[i * n + j], b = g.patches[j].area * F[j * n + i];
      if (std::max(a, b) > 0) worstReciprocity = std::max(worstReciprocity, std::fabs(a - b) / std::max(a, b));
    }
    worstRow = std::max(worstRow, std::fabs(sum - 1));
  }
  EXPECT_LT(worstRow, 1e-6);
  EXPECT_LT(worstReciprocity, 1e-9);
  EXPECT_GT(counters.pairsOccluded, 100);
  EXPECT_EQ(counters.rays, 0);
  // Pairs whose cubature stopped at its cell limit are counted; here the few mostly blocked pairs whose
  // tolerance is relative to a small value (they still agree with their mirror images to 1e-8).
  EXPECT_LT(counters.pairsAtDepthLimit, counters.pairsOccluded / 10);
}

TEST(ExactVisibility, RowsDoNotDependOnThreadCount) {
  std::vector<std::vector<Vec3>> polygons = BoxFaces({0, 0, 0}, {1, 1, 1}, false);
  for (auto &f : BoxFaces({0.3, 0.35, 0.2}, {0.7, 0.65, 0.6}, true)) polygons.push_back(f);
  const Scene s = SceneOf(polygons);
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 1);
  std::vector<double> one, four;
  FormFactorCounters counters;
  {
    ThreadLimit c(1);
    one = AllRows(s, g, counters);
  }
  {
    ThreadLimit c(4);
    four = AllRows(s, g, counters);
  }
  EXPECT_EQ(one, four);
}

TEST(ClosedSurfaces, WeldedOrSoupClosedOrientedBoxesOnly) {
  const auto box = BoxFaces({0, 0, 0}, {1, 1, 1}, true);
  for (bool closed : ClosedSurfaceFaces(SceneOf(box))) EXPECT_TRUE(closed);
  // One face missing: the rest is open.
  const auto open = std::vector<std::vector<Vec3>>(box.begin(), box.end() - 1);
  for (bool closed : ClosedSurfaceFaces(SceneOf(open))) EXPECT_FALSE(closed);
  // One face turned over: the orientation is not consistent.
  auto flipped = box;
  std::reverse(flipped[0].begin(), flipped[0].end());
  for (bool closed : ClosedSurfaceFaces(SceneOf(flipped))) EXPECT_FALSE(closed);
  // A closed box next to an open square: only the box is closed.
  auto mixed = box;
  mixed.push_back(RectZ(3, 4, 0, 1, 0, true));
  const std::vector<bool> m = ClosedSurfaceFaces(SceneOf(mixed));
  for (size_t f = 0; f < 6; ++f) EXPECT_TRUE(m[f]);
  EXPECT_FALSE(m[6]);
}

TEST(ClosedSurfaces, SkippingBackFacesChangesNothing) {
  // The room's block seen through its front faces only gives the factors of a block whose faces are all
  // tested: the same scene with the block's faces made open (each split in two triangles with one corner
  // nudged off the others' edges so that no edge is shared) must give the same matrix to the tolerance.
  std::vector<std::vector<Vec3>> closedScene = BoxFaces({0, 0, 0}, {1, 1, 1}, false);
  const auto block = BoxFaces({0.3, 0.35, 0.2}, {0.7, 0.65, 0.6}, true);
  for (auto &f : block) closedScene.push_back(f);
  std::vector<std::vector<Vec3>> openScene = BoxFaces({0, 0, 0}, {1, 1, 1}, false);
  for (auto &f : block) openScene.push_back(f);
  openScene.pop_back();  // the block's top loses a face: nothing of it is closed any more...
  openScene.push_back(block.back());
  openScene.back()[0].x += 1e-13;  // ...by a displacement far below any tolerance
  const FormFactorGeometry gc = BuildFormFactorGeometry(SceneOf(closedScene), 0);
  const FormFactorGeometry go = BuildFormFactorGeometry(SceneOf(openScene), 0);
  ASSERT_TRUE(gc.occluders[8].closedSurface);
  ASSERT_FALSE(go.occluders[8].closedSurface);
  FormFactorCounters counters;
  const std::vector<double> Fc = AllRows(SceneOf(closedScene), gc, counters);
  const std::vector<double> Fo = AllRows(SceneOf(openScene), go, counters);
  ASSERT_EQ(Fc.size(), Fo.size());
  for (size_t e = 0; e < Fc.size(); ++e) EXPECT_NEAR(Fc[e], Fo[e], 1e-7) << e;
}

TEST(Interpenetration, CrossingIsToldFromTouching) {
  const auto floor = RectZ(0, 4, 0, 4, 0, true);
  auto contact = [&](std::vector<Vec3> q) { return PolygonsCross(floor, q); };
  // A wall sunk through the middle of the floor crosses it; one standing on it, or meeting it along its edge,
  // does not (a wall standing on the floor is a tee: the floor continues on both sides of its plane); one
  // continuing past the floor's edge is a tee.
  EXPECT_EQ(contact({{2, 1, -1}, {2, 3, -1}, {2, 3, 1}, {2, 1, 1}}), PolygonContact::kCross);
  EXPECT_EQ(contact({{2, 1, 0}, {2, 3, 0}, {2, 3, 1}, {2, 1, 1}}), PolygonContact::kTee);
  EXPECT_EQ(contact({{0, 0, 0}, {0, 4, 0}, {0, 4, 4}, {0, 0, 4}}), PolygonContact::kNone);
  EXPECT_EQ(contact({{4, 0, -1}, {4, 4, -1}, {4, 4, 1}, {4, 0, 1}}), PolygonContact::kTee);
  // Crossing the floor's plane beside it, or parallel to it, is not meeting it.
  EXPECT_EQ(contact({{5, 1, -1}, {5, 3, -1}, {5, 3, 1}, {5, 1, 1}}), PolygonContact::kNone);
  EXPECT_EQ(contact(RectZ(0, 4, 0, 4, 1, false)), PolygonContact::kNone);
  // Tilted, through the interior or along an edge.
  EXPECT_EQ(contact({{0, 0, -1}, {2, 0, 1}, {2, 2, 1}, {0, 2, -1}}), PolygonContact::kCross);
  EXPECT_EQ(contact({{-1, -1, -1}, {1, -1, 1}, {1, 1, 1}, {-1, 1, -1}}), PolygonContact::kTee);  // through its edge
}

// A room [0,3]^3 whose floor is nine 1 x 1 tiles, and a closed block [lo,hi]^2 x [-h, h] sunk halfway into the
// middle tile.
std::vector<std::vector<Vec3>> RoomWithASunkBlock(double lo, double hi, double h) {
  std::vector<std::vector<Vec3>> polygons;
  auto room = BoxFaces({0, 0, 0}, {3, 3, 3}, false);
  for (size_t k = 1; k < room.size(); ++k) polygons.push_back(room[k]);  // all but the floor
  for (int x = 0; x < 3; ++x)
    for (int y = 0; y < 3; ++y) polygons.push_back(RectZ(x, x + 1, y, y + 1, 0, true));
  for (auto &f : BoxFaces({lo, lo, -h}, {hi, hi, h}, true)) polygons.push_back(f);
  return polygons;
}

// Every row sum of the room with a sunk block against what each polygon's light can reach, in closed form:
// the room's walls and the outer tiles see only the closed space above the floor (1), as does the block's
// top; the block's bottom lies below the floor (0) and its sides half above it (0.5); the middle tile's part
// outside the block sees the room (1 - the block's share of it).
void ExpectSunkBlockRowsExact(const Scene &s, const FormFactorGeometry &g, double middleTileOpen) {
  const int middleTile = 5 + 4, blockBottom = 14, blockTop = 15;
  FormFactorOptions options;
  options.pair.quadrature.relativeTolerance = 1e-7;
  FormFactorCounters counters;
  const std::vector<double> F = AllRows(s, g, counters, options);
  const size_t n = g.patches.size();
  for (size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (size_t j = 0; j < n; ++j) sum += F[i * n + j];
    const int face = g.patches[i].face;
    double expected = 1;
    if (face == middleTile) expected = middleTileOpen;
    else if (face == blockBottom) expected = 0;
    else if (face > blockTop) expected = 0.5;
    EXPECT_NEAR(sum, expected, 1e-6) << "polygon " << face;
  }
  EXPECT_EQ(counters.rays, 0);
}

TEST(Interpenetration, BlockSunkIntoATileIsReportedAndItsRowsAreExact) {
  // The block's four sides pass through the middle tile's interior.
  const Scene s = SceneOf(RoomWithASunkBlock(1.25, 1.75, 0.25));
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
  EXPECT_EQ(g.interpenetrations.pairCount, 4);
  ASSERT_EQ(g.interpenetrations.first.size(), 4u);
  EXPECT_EQ(g.interpenetrations.first[0], std::make_pair(9, 16));
  for (size_t f = 14; f < 20; ++f)  // the block's faces (the room's tiles may be joined: look them up by face)
    for (int o : g.occludersOfFace[f]) EXPECT_FALSE(g.occluders[size_t(o)].closedSurface) << "block face " << f;
  ExpectSunkBlockRowsExact(s, g, 0.75);
}

TEST(Interpenetration, BlockSunkAlongTileEdgesLosesItsBackFaceShortcut) {
  // The block's sides run along the middle tile's edges: tees, not reported, but the middle tile lies inside
  // the closed block, and seen from there every face of the block faces away.
  const Scene s = SceneOf(RoomWithASunkBlock(1, 2, 0.5));
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
  EXPECT_EQ(g.interpenetrations.pairCount, 0);
  for (size_t f = 14; f < 20; ++f)  // the block's faces (the room's tiles may be joined: look them up by face)
    for (int o : g.occludersOfFace[f]) EXPECT_FALSE(g.occluders[size_t(o)].closedSurface) << "block face " << f;
  ExpectSunkBlockRowsExact(s, g, 0);
}

TEST(PatchClusters, ClearingClustersChangesNoEntry) {
  // A room with every wall tiled 8 x 8 (384 polygons: past the face-pair lists, so the occluder BVH and the
  // clusters are used) and a floating block that occludes many pairs. One walk per cluster of coplanar tiles
  // must clear exactly what the walks per pair clear: the matrix is the same bits with and without clusters,
  // in both visibility methods, and the rows of the room's walls sum to 1 (exact).
  const int n = 8;
  const Scene s = test::TiledRoomWithBlock(n);
  FormFactorGeometry clustered = BuildFormFactorGeometry(s, 0);
  ASSERT_FALSE(clustered.hasFacePairCandidates);
  EXPECT_LT(clustered.clusters.size(), clustered.patches.size() / 4);
  FormFactorGeometry unclustered = clustered;
  unclustered.clusters.clear();
  for (VisibilityMethod method : {VisibilityMethod::kRays, VisibilityMethod::kExact}) {
    FormFactorOptions options;
    options.pair.visibility = method;
    FormFactorCounters withClusters, without;
    const std::vector<double> a = AllRows(s, clustered, withClusters, options);
    const std::vector<double> b = AllRows(s, unclustered, without, options);
    EXPECT_EQ(a, b);
    EXPECT_GT(withClusters.pairsOccluded + withClusters.pairsRayTraced, 1000);
    if (method != VisibilityMethod::kExact) continue;
    const size_t np = clustered.patches.size();
    double worst = 0;
    for (size_t i = 0; i < 6 * n * n; ++i) {
      double sum = 0;
      for (size_t j = 0; j < np; ++j) sum += a[i * np + j];
      worst = std::max(worst, std::fabs(sum - 1));
    }
    EXPECT_LT(worst, 1e-6);
  }
}

// The unit cube with every wall tiled by n x n squares facing in: nothing occludes anything, and the shaft
// test must prove it for every pair, touching ones included (no false occlusion at shared edges). Every
// entry of the rows asked for is compared with the exact rectangle-to-rectangle factor
// (tests/exact_rectangles.h). n = 4 takes the face-pair lists, n = 20 (2400 polygons) the occluder BVH.
void ExpectTiledCubeExact(int n, int rowStride) {
  std::vector<std::vector<Vec3>> polygons;
  std::vector<test::AxisRect> rects;
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side)
      for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
          const int u = (axis + 1) % 3, v = (axis + 2) % 3;
          test::AxisRect r{axis, side == 0 ? 1 : -1, {}, {}};
          r.lo[axis] = r.hi[axis] = side;
          r.lo[u] = double(a) / n, r.hi[u] = double(a + 1) / n;
          r.lo[v] = double(b) / n, r.hi[v] = double(b + 1) / n;
          auto corner = [&](double cu, double cv) {
            Vec3 p;
            p[axis] = side, p[u] = cu, p[v] = cv;
            return p;
          };
          // (u, v, axis) is right-handed: counter-clockwise in (u, v) faces +axis.
          std::vector<Vec3> q = {corner(r.lo[u], r.lo[v]), corner(r.hi[u], r.lo[v]), corner(r.hi[u], r.hi[v]),
                                 corner(r.lo[u], r.hi[v])};
          if (r.sign < 0) std::reverse(q.begin(), q.end());
          polygons.push_back(q);
          rects.push_back(r);
        }
  const Scene s = SceneOf(polygons);
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
  EXPECT_EQ(g.hasFacePairCandidates, int(polygons.size()) <= kMaxFacesForFacePairCulling);
  // Rows along a stride, and every face touching an edge of the cube (where shared edges meet).
  std::vector<long long> rows;
  for (size_t i = 0; i < rects.size(); ++i) {
    const test::AxisRect &r = rects[i];
    bool onEdge = false;
    for (int a = 0; a < 3; ++a)
      if (a != r.axis) onEdge = onEdge || r.lo[a] == 0 || r.hi[a] == 1;
    if (i % rowStride == 0 || (onEdge && i % 7 == 0)) rows.push_back((long long)i);
  }
  EmbreeScene embree(s);
  std::vector<double> F;
  PhaseTimers timers;
  FormFactorCounters counters;
  ComputeRowsCpu(g, embree, rows, FormFactorOptions{}, F, timers, counters, false);
  const size_t N = rects.size();
  double worst = 0;
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t j = 0; j < N; ++j) {
      const size_t i = size_t(rows[r]);
      const double exact = i == j ? 0.0 : test::AxisRectFF(rects[i], rects[j]);
      worst = std::max(worst, std::fabs(F[r * N + j] - exact));
    }
  EXPECT_LT(worst, 1e-6) << "n = " << n;
  EXPECT_EQ(counters.rays, 0);
  EXPECT_EQ(counters.pairsOccluded, 0);
  EXPECT_EQ(counters.pairsOverCapacity, 0);
}

TEST(ExactVisibility, TiledCubeMatchesCornerSuperpositionWithNoRay) {
  ExpectTiledCubeExact(4, 1);
  ExpectTiledCubeExact(20, 97);
}

}  // namespace
}  // namespace rad
