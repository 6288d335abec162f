// Hemicube gathering (Cohen and Greenberg 1985), as texture-space radiosity uses it per texel (Tjahyono,
// Lutteroth and Wuensche): around a patch's centroid, half a cube of side 2 over its plane, a top face of
// n x n pixels at height 1 and four sides of n x n/2 pixels; each pixel's ray from the centroid through its
// centre finds the patch it sees, and the pixel's share of the cosine-weighted hemisphere (the multiplier map)
// goes to that patch's entry of the row. The map here is each pixel's exact form factor from the centroid
// (Lambert's contour formula, point_polygon.h), not its centre's point value times its area, so that it sums
// to 1 over the hemicube to rounding: a patch that sees only lit surface gathers exactly their radiance.
//
// Every patch's hemicube is turned about its normal by its own random angle (Philox on the patch and the
// seed: the same for any rank or thread count), which trades the regular banding of aligned hemicubes for
// noise, as the paper does. Written once for host and device (RAD_HD): the CPU rows (hemicube_rows.h) trace
// with Embree, a device would trace on the project's BVH, through the same pixel and gathering code.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "formfactor/point_polygon.h"
#include "util/hd.h"
#include "util/math_constants.h"
#include "util/rng.h"
#include "util/vec3.h"

namespace rad {

struct HemicubeOptions {
  int resolution = 64;  // n: n x n on top, n x n/2 on each side (even)
  bool rotate = true;   // each patch's hemicube turned about its normal by its own random angle
  uint64_t seed = 1;
};

// The random stream of the hemicubes' angles (the third Philox counter word): apart from the shadow rays'.
constexpr uint32_t kHemicubeStream = 0x48434245u;

// Pixels of a hemicube of resolution n (even): n^2 on top and 4 n^2 / 2 on the sides.
RAD_HD RAD_INLINE int HemicubePixels(int n) { return 3 * n * n; }

// Pixel k's corners (counter-clockwise seen from inside the cube), in the hemicube's frame: x, y along the
// patch's plane and z along its normal. Pixels 0 .. n^2 - 1 are the top face row by row; then the sides x = +1,
// y = +1, x = -1, y = -1, each n wide and n/2 high from the plane up.
RAD_HD RAD_INLINE void HemicubePixelCorners(int n, int k, Vec3 corners[4]) {
  const double step = 2.0 / n;
  if (k < n * n) {
    const int p = k % n, q = k / n;
    const double x0 = -1 + p * step, x1 = x0 + step, y0 = -1 + q * step, y1 = y0 + step;
    corners[0] = Vec3{x0, y0, 1}, corners[1] = Vec3{x0, y1, 1}, corners[2] = Vec3{x1, y1, 1}, corners[3] = Vec3{x1, y0, 1};
    return;
  }
  const int side = (k - n * n) / (n * n / 2), at = (k - n * n) % (n * n / 2);
  const int p = at % n, q = at / n;
  const double t0 = -1 + p * step, t1 = t0 + step, z0 = q * step, z1 = z0 + step;
  // Side s is the top face's frame turned by s quarter turns about z: (t, 1) runs along it at x = +1 for s = 0.
  auto place = [side](double t, double z) {
    const double x = 1, y = t;  // on x = +1
    switch (side) {
      case 0: return Vec3{x, y, z};
      case 1: return Vec3{-y, x, z};
      case 2: return Vec3{-x, -y, z};
      default: return Vec3{y, -x, z};
    }
  };
  corners[0] = place(t0, z0), corners[1] = place(t1, z0), corners[2] = place(t1, z1), corners[3] = place(t0, z1);
}

// Pixel k's direction from the centroid, through its centre, in the hemicube's frame (not unit).
RAD_HD RAD_INLINE Vec3 HemicubePixelDirection(int n, int k) {
  Vec3 c[4];
  HemicubePixelCorners(n, k, c);
  return (c[0] + c[1] + c[2] + c[3]) * 0.25;
}

// Pixel k's multiplier: its exact form factor from a point at the origin facing +z.
RAD_HD RAD_INLINE double HemicubePixelWeight(int n, int k) {
  Vec3 c[4];
  HemicubePixelCorners(n, k, c);
  return std::fabs(PointToPolygonFormFactor(Vec3{0, 0, 0}, Vec3{0, 0, 1}, MakeConvexPolygon(c, 4)));
}

// The hemicube's frame at a patch: its normal and two axes in its plane, turned about the normal by the
// patch's angle (none without `rotate`).
struct HemicubeFrame {
  Vec3 x, y, z;
  RAD_HD RAD_INLINE Vec3 ToWorld(Vec3 d) const { return x * d.x + y * d.y + z * d.z; }
};

RAD_HD RAD_INLINE HemicubeFrame MakeHemicubeFrame(Vec3 normal, uint32_t patch, uint64_t seed, bool rotate) {
  const Vec3 u = Normalize(Cross(normal, std::fabs(normal.x) < 0.9 ? Vec3{1, 0, 0} : Vec3{0, 1, 0}));
  const Vec3 v = Cross(normal, u);
  double angle = 0;
  if (rotate) {
    const Philox4x32 r = Philox(patch, 0, kHemicubeStream, 0, uint32_t(seed), uint32_t(seed >> 32));
    angle = 2 * kPi * ToUnit(r.v[0]);
  }
  const double c = std::cos(angle), s = std::sin(angle);
  return HemicubeFrame{u * c + v * s, v * c - u * s, normal};
}

// Every pixel's multiplier (HemicubePixelWeight) for resolution n, on the host (hemicube_rows.cpp).
std::vector<double> HemicubeWeights(int n);

// One patch's row: for every pixel k, `trace(origin, direction)` gives the patch it sees with its front (or -1:
// nothing, an obstruction, or a patch's back), and `add(j, weight[k])` gathers it, pixel by pixel in order (so
// that the row's sums do not depend on how rows are shared out). `weight`: HemicubePixelWeight of every pixel.
template <typename Trace, typename Add>
RAD_HD void GatherHemicubeRow(int n, const double *weight, Vec3 origin, const HemicubeFrame &frame, Trace trace,
                              Add add) {
  const int pixels = HemicubePixels(n);
  for (int k = 0; k < pixels; ++k) {
    const int32_t j = trace(origin, frame.ToWorld(HemicubePixelDirection(n, k)));
    if (j >= 0) add(j, weight[k]);
  }
}

}  // namespace rad
