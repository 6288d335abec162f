// Fixed quadrature rules as lists of nodes (points and weights, the weights including the area), shared by the
// emitter-side far-field rules (cubature.h: the contour integrand at each node) and the node-pair rules
// (point_pair_rule.h: the point-to-point kernel at each pair of nodes). Host and device (RAD_HD).
//
//   parallelograms: the m x m Gauss-Legendre products (m = 2, 3, 4: degree 3, 5, 7, 4 to 16 points), and the rules
//                   on [-1, 1]^2 with fewer points than the products of their degree (Stroud 1971): Radon's 7
//                   points of degree 5 (C2 5-1) and 12 points of degree 7 (C2 7-1), all on the affine map;
//   triangles:      Strang and Fix's 3 points (degree 2) and Radon's 7 (degree 5), in barycentric coordinates.
#pragma once

#include "util/hd.h"
#include "util/vec3.h"

namespace rad {

struct QuadratureNodes {
  static constexpr int kCapacity = 16;
  double x[kCapacity], y[kCapacity], z[kCapacity], weight[kCapacity];
  int count = 0;
  RAD_HD Vec3 Point(int k) const { return Vec3{x[k], y[k], z[k]}; }
};

namespace nodes {

RAD_HD RAD_INLINE void Add(QuadratureNodes &nodes, Vec3 p, double weight) {
  nodes.x[nodes.count] = p.x, nodes.y[nodes.count] = p.y, nodes.z[nodes.count] = p.z;
  nodes.weight[nodes.count++] = weight;
}

// The m x m Gauss-Legendre product rule on the parallelogram a + s (b - a) + t (d - a), s and t in [0, 1].
RAD_HD inline void Gauss(Vec3 a, Vec3 b, Vec3 d, int m, QuadratureNodes &out) {
  const double x2[2] = {0.21132486540518712, 0.78867513459481288}, w2[2] = {0.5, 0.5};
  const double x3[3] = {0.11270166537925831, 0.5, 0.88729833462074169}, w3[3] = {5.0 / 18, 8.0 / 18, 5.0 / 18};
  const double x4[4] = {0.069431844202973712, 0.33000947820757187, 0.66999052179242813, 0.93056815579702629},
               w4[4] = {0.17392742256872693, 0.32607257743127307, 0.32607257743127307, 0.17392742256872693};
  const double *x = m == 2 ? x2 : (m == 3 ? x3 : x4), *w = m == 2 ? w2 : (m == 3 ? w3 : w4);
  const Vec3 s = b - a, t = d - a;
  const double area = Length(Cross(s, t));
  for (int i = 0; i < m; ++i)
    for (int k = 0; k < m; ++k) Add(out, a + s * x[i] + t * x[k], area * w[i] * w[k]);
}

// Stroud's 7- or 12-point rule on the parallelogram c + s hs + t ht, s and t in [-1, 1]. Weights sum to 1.
RAD_HD inline void Stroud(Vec3 c, Vec3 hs, Vec3 ht, int points, QuadratureNodes &out) {
  const double area = 4 * Length(Cross(hs, ht));
  // 7 points: r = sqrt(14/15), s = sqrt(3/5), t = sqrt(1/3).
  const double r7 = 0.96609178307929590, s7 = 0.77459666924148338, t7 = 0.57735026918962576;
  const double u7[7] = {0, 0, 0, s7, -s7, s7, -s7}, v7[7] = {0, r7, -r7, t7, t7, -t7, -t7};
  const double w7[7] = {2.0 / 7, 5.0 / 63, 5.0 / 63, 5.0 / 36, 5.0 / 36, 5.0 / 36, 5.0 / 36};
  // 12 points: r = sqrt(6/7), s and t = sqrt((114 -+ 3 sqrt(583)) / 287), weights 49/810 and
  // (178981 +- 2769 sqrt(583)) / 1888920.
  const double r = 0.92582009977255146, s = 0.38055443320831566, t = 0.80597978291859874;
  const double wr = 49.0 / 810, ws = 0.13014822916684861, wt = 0.059357943672657560;
  const double u12[12] = {r, -r, 0, 0, s, -s, s, -s, t, -t, t, -t}, v12[12] = {0, 0, r, -r, s, s, -s, -s, t, t, -t, -t};
  const double w12[12] = {wr, wr, wr, wr, ws, ws, ws, ws, wt, wt, wt, wt};
  const double *u = points == 7 ? u7 : u12, *v = points == 7 ? v7 : v12, *w = points == 7 ? w7 : w12;
  for (int k = 0; k < points; ++k) Add(out, c + hs * u[k] + ht * v[k], area * w[k]);
}

// Strang and Fix's 3-point rule or Radon's 7-point rule on the triangle abc.
RAD_HD inline void Triangle(Vec3 a, Vec3 b, Vec3 c, int points, QuadratureNodes &out) {
  const double area = 0.5 * Length(Cross(b - a, c - a));
  const double p = 2.0 / 3, q = 1.0 / 6;
  const double la3[3] = {p, q, q}, lb3[3] = {q, p, q}, w3[3] = {1.0 / 3, 1.0 / 3, 1.0 / 3};
  const double s15 = 3.872983346207417;  // sqrt(15)
  const double a1 = (6 - s15) / 21, b1 = (9 + 2 * s15) / 21, w1 = (155 - s15) / 1200;
  const double a2 = (6 + s15) / 21, b2 = (9 - 2 * s15) / 21, w2 = (155 + s15) / 1200;
  const double la7[7] = {1.0 / 3, b1, a1, a1, b2, a2, a2}, lb7[7] = {1.0 / 3, a1, b1, a1, a2, b2, a2};
  const double w7[7] = {9.0 / 40, w1, w1, w1, w2, w2, w2};
  const double *la = points == 3 ? la3 : la7, *lb = points == 3 ? lb3 : lb7, *w = points == 3 ? w3 : w7;
  for (int k = 0; k < points; ++k) Add(out, a * la[k] + b * lb[k] + c * (1 - la[k] - lb[k]), area * w[k]);
}

// The parallelogram p0 p1 p2 p3 (p0 + p2 = p1 + p3) with `points` nodes: 4, 9 or 16 (Gauss), 7 or 12 (Stroud).
RAD_HD inline void Parallelogram(Vec3 p0, Vec3 p1, Vec3 p3, int points, QuadratureNodes &out) {
  if (points == 7 || points == 12)
    Stroud((p1 + p3) * 0.5, (p1 - p0) * 0.5, (p3 - p0) * 0.5, points, out);
  else
    Gauss(p0, p1, p3, points == 4 ? 2 : (points == 9 ? 3 : 4), out);
}

}  // namespace nodes

// The integrand f at `count` points (coordinates px, py, pz), into `out`: one call per point, unless f's type
// has an overload of its own that takes them all at once (found by argument-dependent lookup; the contour
// integrand's, unoccluded.h, vectorises over the points).
template <class F>
RAD_HD inline void EvaluatePoints(const F &f, const double *px, const double *py, const double *pz, int count,
                                  double *out) {
  for (int k = 0; k < count; ++k) out[k] = f(Vec3{px[k], py[k], pz[k]});
}

// The sum of f(node) x weight over the nodes.
template <class F>
RAD_HD inline double NodeSum(const QuadratureNodes &nodes, const F &f) {
  double values[QuadratureNodes::kCapacity];
  EvaluatePoints(f, nodes.x, nodes.y, nodes.z, nodes.count, values);
  double sum = 0;
  for (int k = 0; k < nodes.count; ++k) sum += nodes.weight[k] * values[k];
  return sum;
}

}  // namespace rad
