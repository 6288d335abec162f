// Stratified sample points for the shadow rays of one patch pair.
// The R rays of pair (i, j) use a 4-D randomised Hammersley-Halton set: dimension 0 is (k + 1/2)/R, the others
// are radical inverses in bases 2, 3 and 5, all shifted by a Cranley-Patterson rotation drawn from
// Philox(seed, i, j). Points on each patch are spread evenly for any R, and the set depends only on
// (seed, i, j, k).
#pragma once

#include <cstdint>

#include "util/hd.h"
#include "util/rng.h"
#include "util/vec3.h"

namespace rad {

RAD_HD RAD_INLINE double RadicalInverse(uint32_t k, uint32_t base) {
  const double inv = 1.0 / base;
  double f = inv, r = 0;
  while (k > 0) {
    r += f * (k % base);
    k /= base;
    f *= inv;
  }
  return r;
}

// x - floor(x) for x in [0, 2), the sum of a point and a shift each in [0, 1), with the same bits: a compare
// and a subtraction where floor (no SSE4.1 in a portable build) took 4 % of a city's run.
RAD_HD RAD_INLINE double WrapUnitSum(double x) { return x < 1 ? x : x - 1; }

struct PairSampleSet {
  double shift[4];
};

RAD_HD RAD_INLINE PairSampleSet MakePairSampleSet(uint64_t seed, uint32_t i, uint32_t j) {
  const Philox4x32 r = Philox(i, j, 0x5a4d7u, 0u, uint32_t(seed), uint32_t(seed >> 32));
  return PairSampleSet{{ToUnit(r.v[0]), ToUnit(r.v[1]), ToUnit(r.v[2]), ToUnit(r.v[3])}};
}

// Sample k of R (k < R): (u1, v1) on the emitter's unit square, (u2, v2) on the receiver's.
RAD_HD RAD_INLINE void PairSample(const PairSampleSet &set, uint32_t k, uint32_t count, double out[4]) {
  out[0] = WrapUnitSum((k + 0.5) / count + set.shift[0]);
  out[1] = WrapUnitSum(RadicalInverse(k, 2) + set.shift[1]);
  out[2] = WrapUnitSum(RadicalInverse(k, 3) + set.shift[2]);
  out[3] = WrapUnitSum(RadicalInverse(k, 5) + set.shift[3]);
}

// Maps the unit square onto a patch with corners c[0..count). Triangles use the area-preserving square-root
// map; quads the bilinear map, which for the parallelograms produced by subdividing a rectangle or
// parallelogram is area-preserving too. `jacobian` is the local area scale relative to uniform (1 for both
// maps on parallelograms; the bilinear map's ratio for general quads).
// The map of one patch, with what does not depend on the point (a quad's mean area scale) computed once: a
// pair's shadow rays take many points on the same two patches.
struct PatchMap {
  const Vec3 *c;
  int count;
  double total = 0;  // general quads: the mean of the bilinear map's area scale (twice the area over two triangles)
  // A parallelogram (every patch of a subdivided rectangle or parallelogram, up to rounding): the bilinear map
  // is affine and its area scale is `total` everywhere, so the jacobian is 1 without a square root and a
  // division per point (a fifth of the shadow-ray sampling's time on a city).
  bool parallelogram = false;
  // `total` only where it is read (a general quad): a far link's samples make a map of two patches each, for
  // two rays, and most patches are parallelograms.
  RAD_HD RAD_INLINE PatchMap(const Vec3 *corners, int cornerCount) : c(corners), count(cornerCount) {
    if (count != 3) {
      const Vec3 skew = c[0] + c[2] - c[1] - c[3];  // 0 for a parallelogram
      parallelogram = LengthSquared(skew) <= 1e-24 * LengthSquared(c[2] - c[0]);
      if (!parallelogram)
        total = 0.5 * (Length(Cross(c[1] - c[0], c[2] - c[0])) + Length(Cross(c[2] - c[0], c[3] - c[0])));
    }
  }
  RAD_HD RAD_INLINE Vec3 At(double u, double v, double &jacobian) const {
    if (count == 3) {
      const double su = sqrt(u);
      jacobian = 1;
      return c[0] * (1 - su) + c[1] * (su * (1 - v)) + c[2] * (su * v);
    }
    const Vec3 p = c[0] * ((1 - u) * (1 - v)) + c[1] * (u * (1 - v)) + c[2] * (u * v) + c[3] * ((1 - u) * v);
    if (parallelogram) {
      jacobian = 1;
      return p;
    }
    const Vec3 du = (c[1] - c[0]) * (1 - v) + (c[2] - c[3]) * v;
    const Vec3 dv = (c[3] - c[0]) * (1 - u) + (c[2] - c[1]) * u;
    const double local = Length(Cross(du, dv));
    jacobian = total > 0 ? local / total : 1;
    return p;
  }
};

RAD_HD RAD_INLINE Vec3 SquareToPatch(const Vec3 *c, int count, double u, double v, double &jacobian) {
  return PatchMap(c, count).At(u, v, jacobian);
}

}  // namespace rad
