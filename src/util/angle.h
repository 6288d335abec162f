// The angle in [0, pi] whose sine and cosine are proportional to s >= 0 and c: atan2(s, c) for the upper half
// plane, inlined. The contour kernel takes one such angle per edge of every receiver at every cubature point;
// the library's atan2 (an out-of-line call that handles every quadrant, signed zeros, infinities and NaN) was
// a third of the form-factor time on a box of 2400 tiles.
//
// Method (Cody and Waite's, as in Moshier's Cephes library): the smaller of s and |c| over the larger is a
// tangent t in [0, 1]; above tan(pi/8), atan(t) = pi/4 + atan((t - 1)/(t + 1)), which leaves an argument x with
// |x| <= tan(pi/8); there atan(x) = x + x^3 P(x^2)/Q(x^2) with Cephes' rational minimax coefficients (relative
// error 2.6e-18 on |x| <= 0.66). The quadrant is then restored: pi/2 - a above the diagonal, pi - a for c < 0,
// with pi/2 and pi/4 carried in two parts so that the result keeps the accuracy of atan2 (tested against
// it: within 2 units in the last place, and relative accuracy for tiny angles).
#pragma once

#include <cmath>

#include "util/hd.h"

namespace rad {

// Written without branches (every quantity computed, the right one selected) so that a loop over points can be
// vectorised (point_polygon.h); the selected arithmetic is the same either way.
RAD_HD RAD_INLINE double AngleFromSineCosine(double s, double c) {
  const double absC = fabs(c);
  const bool steep = s > absC;  // above the diagonal: the angle from the c axis exceeds pi/4
  const double big = steep ? s : absC, small = steep ? absC : s;
  // pi/4 and pi/2 as a double and the rest of their value.
  const double quarterPi = 7.85398163397448309616e-1, quarterPiRest = 3.061616997868382943065e-17;
  const double halfPi = 1.57079632679489661923, halfPiRest = 6.123233995736765886130e-17;
  // t = small / big is the tangent of the angle to the nearer axis, in [0, 1]; above tan(pi/8) the argument is
  // (t - 1) / (t + 1), computed in one division.
  const bool reduced = small > 0.41421356237309504880 * big;
  const double x = (reduced ? small - big : small) / (reduced ? small + big : big);
  const double z = x * x;
  const double p = (((-8.750608600031904122785e-1 * z - 1.615753718733365076637e1) * z - 7.500855792314704667340e1) * z -
                    1.228866684490136173410e2) * z - 6.485021904942025371773e1;
  const double q = ((((z + 2.485846490142306297962e1) * z + 1.650270098316988542046e2) * z + 4.328810604912902668951e2) * z +
                    4.853903996359136964868e2) * z + 1.945506571482613964425e2;
  double angle = x + x * z * (p / q);  // atan(x)
  double rest = 0;                     // a small part of the angle kept apart until the end
  angle = reduced ? angle + quarterPi : angle;
  rest = reduced ? rest + quarterPiRest : rest;
  angle = steep ? halfPi - angle : angle;
  rest = steep ? halfPiRest - rest : rest;
  angle = c < 0 ? 2 * halfPi - angle : angle;
  rest = c < 0 ? 2 * halfPiRest - rest : rest;
  // Both zero gives 0 (x is then 0 / 0; NaN inputs: the caller has ruled them out).
  return big > 0 ? angle + rest : 0.0;
}

}  // namespace rad
