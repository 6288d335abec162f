// Globally adaptive cubature of a bounded function over a convex polygon, the outer integral of every form
// factor (unoccluded.h, pair.h). Host and device (RAD_HD), fixed memory, no recursion.
//
// The polygon is covered by at most four bilinear maps of the unit square (quadrilaterals of a fan; a triangle
// is a quadrilateral collapsed at its apex). Each cell [u0,u1] x [v0,v1] of a map carries Genz and Malik's
// degree-7 rule (17 points) and its embedded degree-5 rule; their difference is the cell's error estimate, and
// fourth differences along u and v say along which axis the integrand bends most (Genz & Malik 1980, the
// rule behind Johnson's HCubature). The cell with the largest error is halved along that axis until the errors
// add up to less than the tolerance. Halving one axis at a time is what keeps long thin patches cheap: a
// strip 1e4 long and 1 wide whose integrand changes only across it is refined across it only, where
// quartering triangles would refine along it too (4^k cells for 2^k across).
//
// A rule samples a cell at 17 points and can miss what happens between them: on a cell 1e4 long, the changes
// near its ends (within about the distance to the receiver) are invisible, and both rules agree on the
// infinite-strip value. So before any rule is applied, cells longer than twice their width are halved along
// their length while they are longer than the distance from their centre to the nearest place where the
// integrand can change along that length: a corner of the receiver, or a receiver edge not parallel to it
// (an edge parallel to the cell's length looks the same from anywhere along it). That grades a strip towards
// its ends geometrically: about 2 log2(length / width) cells, each sampled where it matters.
#pragma once

#include "formfactor/convex_polygon.h"
#include "formfactor/quadrature_nodes.h"
#include "util/hd.h"
#include "util/vec3.h"

namespace rad {

struct QuadratureSettings {
  double relativeTolerance = 1e-5;  // on each pair's value (the accepted degree-7 values are far better)
  double absoluteTolerance = 1e-13; // per unit emitter area: a floor, so that pairs with F ~ 0 do not refine forever
  int maxDepth = 48;                // halvings of one cell (a safety bound; a cell 2^-24 wide in u and in v)
  // Pairs at least this many emitter diameters apart may take a fixed rule without refinement, the cheapest
  // whose error at their separation is within the tolerance (FarFieldPoints); 1e30 turns that off.
  double wellSeparatedRatio = 1.0;
  // Evaluations after which the adaptive cubature gives up (CubatureResult::abandoned); 0: no limit. Only the
  // GPU's occluded entries set it (pair.h, OccludedFormFactor), so that one costly entry does not hold a launch.
  int maxEvaluations = 0;
};

// The refinement stops when the estimates add up to this fraction of the tolerance. The degree-5 rule's error
// overstates the degree-7 rule's where the integrand is smooth, but near the corners of a shared edge (where
// the factor's limit depends on the direction of approach) it understated the error by up to 3x: on
// perpendicular strips of aspect 1 to 1e4 sharing an edge, the result stayed within 0.04 of the tolerance.
constexpr double kEstimateSafety = 0.1;

// Cells a pair's cubature may hold at once (each halving adds one): the bound on its memory and, with
// maxDepth, on its work (17 evaluations per cell, 34 per halving). A pair that reaches it is counted.
constexpr int kMaxCubatureCells = 256;

struct CubatureResult {
  double integral = 0;
  int evaluations = 0;  // integrand evaluations spent (for statistics)
  bool hitDepthLimit = false;
  bool abandoned = false;  // settings.maxEvaluations was reached: `integral` is not the result
};

namespace cubature {

// A bilinear map from the unit square onto a convex quadrilateral p00 p10 p11 p01 (a triangle when p11 == p01).
struct QuadMap {
  Vec3 p00, p10, p11, p01;
  RAD_HD Vec3 At(double u, double v) const {
    return (p00 * (1 - u) + p10 * u) * (1 - v) + (p01 * (1 - u) + p11 * u) * v;
  }
  RAD_HD Vec3 AlongU(double v) const { return (p10 - p00) * (1 - v) + (p11 - p01) * v; }
  RAD_HD Vec3 AlongV(double u) const { return (p01 - p00) * (1 - u) + (p11 - p10) * u; }
  RAD_HD double AreaElement(double u, double v) const { return Length(Cross(AlongU(v), AlongV(u))); }
};

// Maps the polygon takes at most: a fan of quadrilaterals over 8 corners, or 2 and a triangle in two over 7.
constexpr int kMaxMaps = (ConvexPolygon::kCapacity - 1) / 2 + 1;

// A triangle as one or two maps whose lines of constant v run across it, so that halving v walks along it.
// A compact triangle is collapsed at the corner opposite its longest edge. A sliver is first cut at the foot
// of its longest edge's altitude into two right triangles, each collapsed at the end of its long leg: their
// cells are then trapezoids with two sides parallel to the short leg. Collapsing a needle anywhere else would
// make both families of lines run along it, and no halving could resolve what changes across it.
RAD_HD inline int TriangleMaps(Vec3 p0, Vec3 p1, Vec3 p2, QuadMap *maps) {
  const Vec3 t[3] = {p0, p1, p2};
  int longest = 0;
  double longest2 = -1;
  for (int e = 0; e < 3; ++e) {
    const double l2 = LengthSquared(t[(e + 1) % 3] - t[e]);
    if (l2 > longest2) longest2 = l2, longest = e;
  }
  const Vec3 a = t[longest], b = t[(longest + 1) % 3], apex = t[(longest + 2) % 3];
  const double twiceArea = Length(Cross(b - a, apex - a));
  if (longest2 <= 4 * twiceArea) {  // longest edge at most 4 altitudes
    maps[0] = QuadMap{a, b, apex, apex};
    return 1;
  }
  const Vec3 foot = a + (b - a) * (Dot(apex - a, b - a) / longest2);
  // The right triangles (a, foot, apex) and (foot, b, apex): the shorter leg of each is its map's u edge, and
  // the far end of the longer leg its collapsed corner.
  int count = 0;
  auto right = [&](Vec3 end, Vec3 corner) {  // `end` on ab, `corner` = foot (the right angle)
    if (LengthSquared(end - corner) > LengthSquared(apex - corner))
      maps[count++] = QuadMap{corner, apex, end, end};   // short leg foot-apex, collapsed at `end`
    else
      maps[count++] = QuadMap{end, corner, apex, apex};  // short leg end-foot, collapsed at the apex
  };
  right(a, foot);
  right(b, foot);
  return count;
}

// The polygon as a fan of quadrilaterals from its first corner, the last piece a triangle when the corner
// count is odd.
RAD_HD inline int MakeMaps(const ConvexPolygon &p, QuadMap *maps) {
  int count = 0;
  int k = 1;
  for (; k + 2 < p.n; k += 2) maps[count++] = QuadMap{p.v[0], p.v[k], p.v[k + 1], p.v[k + 2]};
  if (k + 1 < p.n) count += TriangleMaps(p.v[0], p.v[k], p.v[k + 1], maps + count);
  return count;
}

struct Cell {
  double u0, u1, v0, v1;
  double value;  // the degree-7 rule's integral over the cell: the accepted value
  double error;  // |degree 7 - degree 5|: the estimate that steers refinement
  signed char map, axis;  // axis: 0 = halve along u, 1 = along v
  short depth;            // halvings from the map's unit square
};

// The cell's physical lengths along u and v, measured through its centre.
RAD_HD RAD_INLINE void CellLengths(const Cell &c, const QuadMap &m, double &alongU, double &alongV) {
  const double cu = 0.5 * (c.u0 + c.u1), cv = 0.5 * (c.v0 + c.v1);
  alongU = Length(m.AlongU(cv)) * (c.u1 - c.u0);
  alongV = Length(m.AlongV(cu)) * (c.v1 - c.v0);
}

// Halves cell `c` along `axis`: the first half stays in c, the second is returned.
RAD_HD RAD_INLINE Cell Halve(Cell &c, int axis) {
  Cell second = c;
  if (axis == 0) {
    const double mid = 0.5 * (c.u0 + c.u1);
    c.u1 = mid, second.u0 = mid;
  } else {
    const double mid = 0.5 * (c.v0 + c.v1);
    c.v1 = mid, second.v0 = mid;
  }
  ++c.depth, ++second.depth;
  return second;
}

// Applies the degree-7 and degree-5 rules to a cell and picks its axis; returns the evaluations spent (17).
template <class F>
RAD_HD inline int Evaluate(Cell &c, const QuadMap &m, const F &f) {
  // Genz & Malik's points on [-1,1]^2 and weights (summing to 1 over the points of each rule), for n = 2.
  // sqrt(9/70), sqrt(9/10) (Genz-Malik's lambda3 and lambda4), sqrt(9/19)
  const double l2 = 0.35856858280031809, l3 = 0.94868329805051380, l5 = 0.68824720161168529;
  const double w1 = -3816.0 / 19683, w2 = 980.0 / 6561, w3 = 1020.0 / 19683, w4 = 200.0 / 19683,
               w5 = 6859.0 / 78732;
  const double e1 = -971.0 / 729, e2 = 245.0 / 486, e3 = 65.0 / 1458, e4 = 25.0 / 729;
  const double cu = 0.5 * (c.u0 + c.u1), cv = 0.5 * (c.v0 + c.v1);
  const double hu = 0.5 * (c.u1 - c.u0), hv = 0.5 * (c.v1 - c.v0);
  // The 17 points on [-1, 1]^2: the centre, the pairs on the axes at lambda2 and lambda3, the corners of the
  // squares at lambda3 (Genz-Malik's lambda4 equals lambda3) and lambda5. The integrand is taken at all of them
  // at once (EvaluatePoints), then times the area element.
  const double ps[17] = {0, l2, -l2, 0, 0, l3, -l3, 0, 0, l3, -l3, l3, -l3, l5, -l5, l5, -l5};
  const double pt[17] = {0, 0, 0, l2, -l2, 0, 0, l3, -l3, l3, l3, -l3, -l3, l5, l5, -l5, -l5};
  double px[17], py[17], pz[17], g[17];
  for (int k = 0; k < 17; ++k) {
    const Vec3 x = m.At(cu + hu * ps[k], cv + hv * pt[k]);
    px[k] = x.x, py[k] = x.y, pz[k] = x.z;
  }
  EvaluatePoints(f, px, py, pz, 17, g);
  for (int k = 0; k < 17; ++k) g[k] *= m.AreaElement(cu + hu * ps[k], cv + hv * pt[k]);
  const double centre = g[0];
  const double u2 = g[1] + g[2], v2 = g[3] + g[4];
  const double u3 = g[5] + g[6], v3 = g[7] + g[8];
  const double s4 = g[9] + g[10] + g[11] + g[12];
  const double s5 = g[13] + g[14] + g[15] + g[16];
  const double s2 = u2 + v2, s3 = u3 + v3;
  const double cellArea = 4 * hu * hv;
  const double degree7 = w1 * centre + w2 * s2 + w3 * s3 + w4 * s4 + w5 * s5;
  const double degree5 = e1 * centre + e2 * s2 + e3 * s3 + e4 * s4;
  c.value = cellArea * degree7;
  c.error = cellArea * fabs(degree7 - degree5);
  // Fourth differences: what a quadratic through the centre and the inner pair leaves at the outer pair.
  const double ratio = (l2 * l2) / (l3 * l3);
  const double bendU = fabs(u2 - 2 * centre - ratio * (u3 - 2 * centre));
  const double bendV = fabs(v2 - 2 * centre - ratio * (v3 - 2 * centre));
  if (bendU > bendV) {
    c.axis = 0;
  } else if (bendV > bendU) {
    c.axis = 1;
  } else {  // no preference (e.g. a linear integrand): the longer side
    double alongU, alongV;
    CellLengths(c, m, alongU, alongV);
    c.axis = alongU >= alongV ? 0 : 1;
  }
  return 17;
}

// How far from x, moving along unit direction t, the integrand can first change because of the receiver: its
// nearest corner, or its nearest edge not parallel to t, whose distance is divided by the sine of the angle
// between them (moving along t brings x closer to that edge at that rate).
RAD_HD inline double FeatureDistance(Vec3 x, Vec3 t, const ConvexPolygon &receiver) {
  double nearest = 1e300;
  for (int k = 0; k < receiver.n; ++k) {
    const Vec3 a = receiver.v[k], edge = receiver.v[(k + 1) % receiver.n] - a;
    nearest = Smaller(nearest, Length(x - a));
    const double length2 = LengthSquared(edge);
    if (!(length2 > 0)) continue;
    const double sine = Length(Cross(edge, t)) / sqrt(length2);
    if (sine < 1e-6) continue;  // parallel: only its corners count
    const double along = Smaller(Larger(Dot(x - a, edge) / length2, 0.0), 1.0);
    nearest = Smaller(nearest, Length(x - (a + edge * along)) / sine);
  }
  return nearest;
}

}  // namespace cubature

// Points per map of the cheapest fixed rule whose relative error on a pair `ratio` emitter diameters apart
// (gap between bounding spheres over the emitter's diameter) stays within `safety` x `tolerance`; 0 when none
// does and the cubature must adapt. Worst relative errors measured over pairs of squares in all orientations
// and size ratios 0.3-3 (radiosity_bench_far_field, jobs/bench/far_field.cpp, prints them), bounded
// by the power laws below: the Gauss product rules 2 x 2 (1.5e-3 R^-3; measured 1.0e-3 at R = 1, 6.4e-7 at
// 10) and 3 x 3 (3e-5 R^-4.5; 1.9e-5, 2.8e-10), and the degree-7 rule (1e-6 R^-5.3; 5.7e-7, 2.5e-13).
// The same for a triangle's own rules (quadrature_nodes.h, on the triangle's affine map): Strang-Fix's 3 points
// (6e-3 R^-3) and Radon's 7 (5e-5 R^-4.5), from worst errors measured over triangles facing squares in all
// orientations (radiosity_bench_far_field prints error over bound, below 1 at every R).
// All the fixed rules' bounds are here, the node-pair rules' too (point_pair_rule.h): Radon's 7 points on a
// parallelogram (1e-4 R^-4.5), Stroud's 12 (1e-6 R^-5.5) and Gauss 4 x 4 (4e-7 R^-5.5), measured on the node
// pairs of squares, rectangles and triangles (radiosity_bench_far_field prints error over bound for each).
// The inverse powers of R are taken by multiplications and one square root: every pair asks, and pow was 3 %
// of the time on a box of 2400 tiles.
struct InversePowers {
  double cube, power4_5, power5_5;
};
RAD_HD RAD_INLINE InversePowers InversePowersOf(double ratio) {
  const double inverse = 1 / ratio, cube = inverse * inverse * inverse, power4_5 = cube * inverse * sqrt(inverse);
  return InversePowers{cube, power4_5, power4_5 * inverse};
}
// The bound of a rule with `points` nodes on a parallelogram's affine map (quadrature_nodes.h: 4, 7, 9, 12, 16).
RAD_HD RAD_INLINE double ParallelogramRuleBound(int points, const InversePowers &p) {
  switch (points) {
    case 4: return 1.5e-3 * p.cube;
    case 7: return 1e-4 * p.power4_5;
    case 9: return 3e-5 * p.power4_5;
    case 12: return 1e-6 * p.power5_5;
    default: return 4e-7 * p.power5_5;  // 16
  }
}
// The bound of a triangle's rule with `points` nodes (3 or 7).
RAD_HD RAD_INLINE double TriangleRuleBound(int points, const InversePowers &p) {
  return points == 3 ? 6e-3 * p.cube : 5e-5 * p.power4_5;
}
RAD_HD RAD_INLINE double TriangleFarFieldBound(int points, double ratio) {
  return TriangleRuleBound(points, InversePowersOf(ratio));
}
RAD_HD RAD_INLINE int TriangleFarFieldPoints(double ratio, double tolerance, double safety) {
  const InversePowers p = InversePowersOf(ratio);
  if (TriangleRuleBound(3, p) <= safety * tolerance) return 3;
  if (TriangleRuleBound(7, p) <= safety * tolerance) return 7;
  return 0;
}

RAD_HD RAD_INLINE int FarFieldPoints(double ratio, double tolerance, double safety) {
  const double target = safety * tolerance;
  const InversePowers p = InversePowersOf(ratio);
  if (ParallelogramRuleBound(4, p) <= target) return 4;
  if (ParallelogramRuleBound(9, p) <= target) return 9;
  if (1e-6 * pow(ratio, -5.3) <= target) return 17;
  return 0;
}

namespace cubature {

// Whether the map is a triangle (MakeMaps collapses triangles at their apex: p11 == p01).
RAD_HD RAD_INLINE bool IsTriangle(const QuadMap &m) {
  return m.p11.x == m.p01.x && m.p11.y == m.p01.y && m.p11.z == m.p01.z;
}

}  // namespace cubature

// The fixed rule per map that meets the tolerance at separation `ratio`: parallelograms take FarFieldPoints'
// product rules, triangles their own (TriangleFarFieldPoints); 0 when some map has none. A bilinear map that
// is not affine turns a smooth integrand of degree k into one of degree 2k in (u, v) (on a triangle collapsed
// at its apex the degree-7 rule was measured 1e-5 off at 9 diameters), so such maps keep the adaptive
// cubature, whose error estimate sees it.
struct FarFieldPlan {
  int quadPoints = 0, trianglePoints = 0;
  bool applies = false;
};

RAD_HD inline FarFieldPlan PlanFarField(const ConvexPolygon &domain, double ratio, double tolerance,
                                        double safety) {
  FarFieldPlan plan;
  plan.quadPoints = FarFieldPoints(ratio, tolerance, safety);
  plan.trianglePoints = TriangleFarFieldPoints(ratio, tolerance, safety);
  cubature::QuadMap maps[cubature::kMaxMaps];
  const int mapCount = cubature::MakeMaps(domain, maps);
  for (int k = 0; k < mapCount; ++k) {
    const cubature::QuadMap &m = maps[k];
    if (cubature::IsTriangle(m)) {
      if (plan.trianglePoints == 0) return plan;
      continue;
    }
    const Vec3 twist = m.p00 + m.p11 - m.p10 - m.p01;  // the uv term of the map
    if (plan.quadPoints == 0 ||
        LengthSquared(twist) > 1e-24 * (LengthSquared(m.p10 - m.p00) + LengthSquared(m.p01 - m.p00)))
      return plan;
  }
  plan.applies = true;
  return plan;
}

// Integral of f(x) dA over `domain` by the fixed rules of `plan` (which must apply).
template <class F>
RAD_HD inline CubatureResult FixedRuleIntegral(const ConvexPolygon &domain, const FarFieldPlan &plan,
                                               const F &f) {
  CubatureResult result;
  cubature::QuadMap maps[cubature::kMaxMaps];
  const int mapCount = cubature::MakeMaps(domain, maps);
  for (int k = 0; k < mapCount; ++k) {
    const cubature::QuadMap &m = maps[k];
    if (plan.quadPoints == 17 && !cubature::IsTriangle(m)) {
      cubature::Cell c{};
      c.u1 = c.v1 = 1;
      result.evaluations += cubature::Evaluate(c, m, f);
      result.integral += c.value;
      continue;
    }
    QuadratureNodes points;
    if (cubature::IsTriangle(m))
      nodes::Triangle(m.p00, m.p10, m.p11, plan.trianglePoints, points);
    else
      nodes::Parallelogram(m.p00, m.p10, m.p01, plan.quadPoints, points);
    result.integral += NodeSum(points, f);
    result.evaluations += points.count;
  }
  return result;
}

// Integral of f(x) dA over `domain`; `receiver` is what f looks at (its corners and edges are where f can
// change along a long cell).
template <class F>
RAD_HD inline CubatureResult AdaptivePolygonIntegral(const ConvexPolygon &domain, const ConvexPolygon &receiver,
                                                     const QuadratureSettings &settings, const F &f) {
  using cubature::Cell;
  using cubature::QuadMap;
  CubatureResult result;
  QuadMap maps[cubature::kMaxMaps];
  const int mapCount = cubature::MakeMaps(domain, maps);
  Cell cells[kMaxCubatureCells];
  for (int k = 0; k < mapCount; ++k) cells[k] = Cell{0, 1, 0, 1, 0, 0, static_cast<signed char>(k), 0, 0};
  int count = mapCount;

  // Long cells are first cut to the length over which the integrand may change (see the top of this file),
  // using at most half the cells so that the error-driven refinement keeps room.
  for (int k = 0; k < count && count < kMaxCubatureCells / 2;) {
    Cell &c = cells[k];
    const QuadMap &m = maps[c.map];
    double alongU, alongV;
    cubature::CellLengths(c, m, alongU, alongV);
    const int axis = alongU >= alongV ? 0 : 1;
    const double longSide = axis == 0 ? alongU : alongV;
    const double cu = 0.5 * (c.u0 + c.u1), cv = 0.5 * (c.v0 + c.v1);
    const double area = m.AreaElement(cu, cv) * (c.u1 - c.u0) * (c.v1 - c.v0);
    const Vec3 direction = axis == 0 ? m.AlongU(cv) : m.AlongV(cu);
    // Longer than twice its mean width (area / length: sheared cells count as thin too), and than the
    // distance over which the integrand may change along it.
    if (longSide * longSide > 2 * area &&
        longSide > cubature::FeatureDistance(m.At(cu, cv), direction / Length(direction), receiver)) {
      cells[count++] = cubature::Halve(c, axis);
    } else {
      ++k;
    }
  }
  for (int k = 0; k < count; ++k) result.evaluations += cubature::Evaluate(cells[k], maps[cells[k].map], f);

  const double floor = settings.absoluteTolerance * PolygonArea(domain);
  for (;;) {
    if (settings.maxEvaluations > 0 && result.evaluations > settings.maxEvaluations) {
      result.abandoned = true;
      return result;
    }
    double integral = 0, error = 0, worstError = -1;
    int worst = 0;
    for (int k = 0; k < count; ++k) {
      integral += cells[k].value;
      error += cells[k].error;
      if (cells[k].error > worstError) worstError = cells[k].error, worst = k;
    }
    result.integral = integral;
    if (count == 0) return result;
    if (error <= kEstimateSafety * (settings.relativeTolerance * fabs(integral) + floor)) return result;
    if (cells[worst].depth + 1 > settings.maxDepth || count + 1 > kMaxCubatureCells) {
      result.hitDepthLimit = true;
      return result;
    }
    Cell &c = cells[worst];
    cells[count] = cubature::Halve(c, c.axis);
    result.evaluations += cubature::Evaluate(c, maps[c.map], f);
    result.evaluations += cubature::Evaluate(cells[count], maps[cells[count].map], f);
    ++count;
  }
}

}  // namespace rad
