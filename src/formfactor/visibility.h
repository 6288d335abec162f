// The visible fraction of a patch pair, estimated with R stratified shadow rays.
// Each ray joins a point on patch i to a point on patch j (the pair's randomised point set, sampling.h) and is
// weighted by the point-pair kernel cos_i cos_j / r^2: the fraction is sum(w * visible) / sum(w), a ratio
// estimator of the kernel-weighted visibility, which is exactly what multiplies the unoccluded form factor.
// Rays with zero weight (a point behind the other patch's plane) are not traced. All rays blocked gives
// exactly 0; all clear gives exactly 1.
// The pair is always sampled and traced from the lower-numbered patch to the higher one, and the weights are
// symmetric, so the visible fraction of (i, j) and (j, i) is the same number: occlusion keeps reciprocity.
#pragma once

#include <cstdint>

#include "formfactor/sampling.h"
#include "scene/patch.h"
#include "util/hd.h"

namespace rad {

template <class OccludedFn>
RAD_HD double VisibleFraction(const Patch &first, const Patch &second, uint32_t i, uint32_t j, uint64_t seed,
                              uint32_t rayCount, OccludedFn &&occluded, uint32_t &raysTraced) {
  const bool swap = j < i;
  const Patch &pi = swap ? second : first, &pj = swap ? first : second;
  const PairSampleSet set = MakePairSampleSet(seed, swap ? j : i, swap ? i : j);
  double weightSum = 0, visibleSum = 0;
  uint32_t unweightedVisible = 0, unweightedCount = 0;
  for (uint32_t k = 0; k < rayCount; ++k) {
    double u[4], ji, jj;
    PairSample(set, k, rayCount, u);
    const Vec3 x = SquareToPatch(pi.corners, pi.cornerCount, u[0], u[1], ji);
    const Vec3 y = SquareToPatch(pj.corners, pj.cornerCount, u[2], u[3], jj);
    const Vec3 d = y - x;
    const double r2 = LengthSquared(d);
    const double ci = Dot(pi.normal, d), cj = -Dot(pj.normal, d);
    if (ci <= 0 || cj <= 0 || r2 <= 0) continue;
    const double w = ci * cj / (r2 * r2) * ji * jj;
    ++raysTraced;
    const bool visible = !occluded(x, y);
    weightSum += w;
    if (visible) visibleSum += w;
    ++unweightedCount;
    if (visible) ++unweightedVisible;
  }
  if (weightSum > 0 && visibleSum <= weightSum) return visibleSum / weightSum;
  if (unweightedCount > 0) return double(unweightedVisible) / unweightedCount;
  return 1.0;  // no sample pair faces each other (a sliver pair): nothing tells visibility apart
}

}  // namespace rad
