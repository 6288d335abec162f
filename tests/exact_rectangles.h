// Exact view factors between axis-aligned rectangles in any relative position, for checking the numerical
// form factors against closed forms.
//
// Method (view-factor algebra in its continuous form): the kernel cos1 cos2 / (pi r^2) of two axis-aligned
// rectangles depends on each shared in-plane axis only through the difference of the two coordinates, and
// for such an axis the double integral over both intervals collapses to a second difference:
//   int_{a0}^{a1} int_{b0}^{b1} g(a - b) db da = sum_{i,k} s_ik Phi(a_i - b_k),   Phi'' = g,
//   s_ik = +1 for (a1 - b0), (a0 - b1) and -1 for (a0 - b0), (a1 - b1),
// so A1 F12 is a signed sum of one primitive over the 16 corner combinations (the general-position forms of
// Howell's catalogue C-11 and C-14, e.g. Ehlert & Smith 1993). The primitives are exact; the only error is
// the rounding of that alternating sum, whose terms are ~d^2 while the result is ~a^2 b^2 / d^2 (a, b the
// rectangles' sizes, d their distance): relative error ~1e-16 (d/a)^2 (d/b)^2. Measured: ~1e-15 at a = b = d,
// ~1e-12 at a = b = d/10, ~1e-9 at d/100. Where that is not enough, ParallelRectFF<long double> etc. run the
// same sums in long double (about 2000x smaller error on x86-64, about 10x slower).
//
// All functions return F from the first rectangle to the second (per unit area of the first).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>

namespace rad::test {

namespace exact_detail {

constexpr long double kPi = 3.141592653589793238462643383279502884L;

// Second-difference weights of the corner combination (i, k), i indexing the first interval's ends.
inline int CornerSign(int i, int k) { return i != k ? 1 : -1; }

// A1 F12 of [x0,x1]x[y0,y1] at z = 0 and [u0,u1]x[v0,v1] at z = c != 0, facing each other. Primitive
//   H(p, q) = p R_q atan(p / R_q) + q R_p atan(q / R_p) - c^2/2 ln(p^2 + q^2 + c^2),  R_t = sqrt(t^2 + c^2),
// with d^2/dp^2 d^2/dq^2 H = 2 c^2 / (p^2 + q^2 + c^2)^2. Nothing in it is singular since c != 0.
// Templated so a check can rerun it in long double to measure the rounding of the alternating sum.
template <class Real>
Real ParallelArea(Real x0, Real x1, Real y0, Real y1, Real u0, Real u1, Real v0, Real v1, Real c) {
  const Real c2 = c * c;
  const Real xs[2] = {x0, x1}, us[2] = {u0, u1}, ys[2] = {y0, y1}, vs[2] = {v0, v1};
  Real p[4], rp[4], q[4], rq[4];
  int sp[4], sq[4];
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 2; ++k) {
      const int m = 2 * i + k;
      p[m] = xs[i] - us[k], sp[m] = CornerSign(i, k), rp[m] = std::sqrt(p[m] * p[m] + c2);
      q[m] = ys[i] - vs[k], sq[m] = CornerSign(i, k), rq[m] = std::sqrt(q[m] * q[m] + c2);
    }
  Real sum = 0;
  for (int m = 0; m < 4; ++m)
    for (int n = 0; n < 4; ++n) {
      const Real h = p[m] * rq[n] * std::atan(p[m] / rq[n]) + q[n] * rp[m] * std::atan(q[n] / rp[m]) -
                     c2 / 2 * std::log(p[m] * p[m] + q[n] * q[n] + c2);
      sum += sp[m] * sq[n] * h;
    }
  return sum / (2 * Real(kPi));
}

// A1 F12 of the canonical perpendicular pair (see PerpendicularRectFF), x0, w0 >= 0 already. With
// s = x^2 + z^2 and t = y - v the kernel is x z / (pi (s + t^2)^2), and a function of s alone turns
// d/dx d/dz into 4 x z d^2/ds^2, which gives the primitive
//   G(s, t) = t sqrt(s) atan(t / sqrt(s)) - (s - t^2)/4 ln(s + t^2),   d/dx d/dz d^2/dt^2 G = -2 x z / (s + t^2)^2.
// On a shared edge or corner s and t reach 0; G is continuous there with limits 0 (t atan(t/0) -> 0 for
// s = 0 since atan stays bounded, and (s - t^2) ln(s + t^2) -> 0), which the guards below take explicitly.
template <class Real>
Real PerpendicularArea(Real x0, Real x1, Real y0, Real y1, Real v0, Real v1, Real w0, Real w1) {
  const Real xs[2] = {x0, x1}, zs[2] = {w0, w1}, ys[2] = {y0, y1}, vs[2] = {v0, v1};
  Real s[4], rs[4], t[4];
  int ss[4], st[4];
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 2; ++k) {
      const int m = 2 * i + k;
      s[m] = xs[i] * xs[i] + zs[k] * zs[k], rs[m] = std::sqrt(s[m]);
      ss[m] = (i == 1 ? 1 : -1) * (k == 1 ? 1 : -1);  // plain first differences in x and z
      t[m] = ys[i] - vs[k], st[m] = CornerSign(i, k);
    }
  Real sum = 0;
  for (int m = 0; m < 4; ++m)
    for (int n = 0; n < 4; ++n) {
      const Real t2 = t[n] * t[n], r2 = s[m] + t2;
      Real g = 0;
      if (rs[m] > 0) g += t[n] * rs[m] * std::atan(t[n] / rs[m]);
      if (r2 > 0) g -= (s[m] - t2) / 4 * std::log(r2);
      sum += ss[m] * st[n] * g;
    }
  return -sum / (2 * Real(kPi));
}

}  // namespace exact_detail

// From the rectangle [x0,x1]x[y0,y1] in the plane z = z1 to the rectangle [u0,u1]x[v0,v1] in the plane z = z2,
// the two facing each other (the first's normal points towards z2, the second's towards z1; assumed, not checked:
// AxisRectFF checks orientations). 0 if coplanar.
template <class Real = double>
double ParallelRectFF(double x0, double x1, double y0, double y1, double z1, double u0, double u1, double v0, double v1,
                      double z2) {
  const Real c = std::fabs(Real(z2) - Real(z1)), a1 = (Real(x1) - x0) * (Real(y1) - y0);
  if (!(c > 0) || !(a1 > 0)) return 0;
  return double(exact_detail::ParallelArea<Real>(x0, x1, y0, y1, u0, u1, v0, v1, c) / a1);
}

// From the rectangle 1 = {z = 0, x in [x0,x1], y in [y0,y1]}, normal +z, to the rectangle
// 2 = {x = 0, y in [v0,v1], z in [w0,w1]}, normal +x. They face each other where x >= 0 and z >= 0; a part of
// rectangle 1 at x < 0 (behind 2) or of rectangle 2 at z < 0 (behind 1) exchanges nothing, so those parts are
// clipped away here (F stays per unit area of the whole of rectangle 1). Shared edges (x0 = w0 = 0, the y ranges
// overlapping), touching corners and gaps in any direction are all exact.
template <class Real = double>
double PerpendicularRectFF(double x0, double x1, double y0, double y1, double v0, double v1, double w0, double w1) {
  const Real a1 = (Real(x1) - x0) * (Real(y1) - y0);
  x0 = std::max(x0, 0.0), w0 = std::max(w0, 0.0);
  if (!(a1 > 0) || !(x1 > x0) || !(w1 > w0) || !(v1 > v0)) return 0;
  return double(exact_detail::PerpendicularArea<Real>(x0, x1, y0, y1, v0, v1, w0, w1) / a1);
}

// An axis-aligned rectangle anywhere: it lies in the plane coordinate[axis] = lo[axis] (= hi[axis]), spans
// [lo, hi] along the other two axes, and its normal is sign * e_axis (sign = +1 or -1).
struct AxisRect {
  int axis;
  int sign;
  std::array<double, 3> lo, hi;
};

// F from a to b for any two axis-aligned rectangles (no third surface in between): reduces the pair by a
// rigid motion (translation, axis permutation, reflections; all keep view factors) to one of the two cases above.
template <class Real = double>
double AxisRectFF(const AxisRect &a, const AxisRect &b) {
  using Index = std::array<double, 3>::size_type;
  const Index na = Index(a.axis), nb = Index(b.axis);
  if (na == nb) {
    const double d = b.lo[na] - a.lo[na];
    if (!(a.sign * d > 0) || !(b.sign * d < 0)) return 0;  // coplanar, or one faces away from the other
    const Index t1 = (na + 1) % 3, t2 = (na + 2) % 3;
    return ParallelRectFF<Real>(a.lo[t1], a.hi[t1], a.lo[t2], a.hi[t2], 0, b.lo[t1], b.hi[t1], b.lo[t2], b.hi[t2], d);
  }
  // Canonical frame: z' = a.sign (coord[na] - plane of a), x' = b.sign (coord[nb] - plane of b), y' = the third axis.
  const Index t = 3 - na - nb;
  const double pa = a.lo[na], pb = b.lo[nb];
  const double xa = b.sign * (a.lo[nb] - pb), xb = b.sign * (a.hi[nb] - pb);
  const double za = a.sign * (b.lo[na] - pa), zb = a.sign * (b.hi[na] - pa);
  return PerpendicularRectFF<Real>(std::min(xa, xb), std::max(xa, xb), a.lo[t], a.hi[t], b.lo[t], b.hi[t],
                                   std::min(za, zb), std::max(za, zb));
}

}  // namespace rad::test
