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
#include <type_traits>

#include "formfactor/sampling.h"
#include "scene/patch.h"
#include "util/hd.h"

namespace rad {

// How many shadow rays an occlusion test takes at once: 1 for a plain callable `bool (Vec3 from, Vec3 to)` (the
// GPU's BVH, one ray per thread), its kRaysAtOnce for a tester that also takes a packet,
// `void (const Vec3 *from, const Vec3 *to, int count, bool *hidden)` (Embree on the CPU, EmbreeShadowRays:
// coherent rays of one pair traced together, 2 to 4 times as fast as one by one).
template <class Fn, class = void>
struct RaysAtOnce {
  static constexpr int value = 1;
};
template <class Fn>
struct RaysAtOnce<Fn, std::void_t<decltype(Fn::kRaysAtOnce)>> {
  static constexpr int value = Fn::kRaysAtOnce;
};

// A pair's shadow rays, k = 0 .. R-1: the ends of ray k (random points of the pair's sample set, from the
// lower-numbered patch to the higher) and its kernel weight; what VisibleFraction traces, and what a caller
// that traces several pairs' rays together (far_field.h) asks for.
struct PairRays {
  const Patch &pi, &pj;  // in the order the rays go
  PairSampleSet set;
  PatchMap mapI, mapJ;
  uint32_t count;
  RAD_HD PairRays(const Patch &first, const Patch &second, uint32_t i, uint32_t j, uint64_t seed, uint32_t rayCount)
      : pi(j < i ? second : first),
        pj(j < i ? first : second),
        set(MakePairSampleSet(seed, j < i ? j : i, j < i ? i : j)),
        mapI(pi.corners, pi.cornerCount),
        mapJ(pj.corners, pj.cornerCount),
        count(rayCount) {}
  // Ray k's ends and weight; false when its points do not face each other (a ray of weight 0, not traced).
  // `weighted` false: the weight is left as 1 (a verdict, whose share is 0 or 1 whatever the weights, needs only
  // which rays face; the kernel's division was the largest line of a verdict's own work).
  RAD_HD bool At(uint32_t k, Vec3 &from, Vec3 &to, double &weight, bool weighted = true) const {
    double u[4], ji, jj;
    PairSample(set, k, count, u);
    from = mapI.At(u[0], u[1], ji);
    to = mapJ.At(u[2], u[3], jj);
    const Vec3 d = to - from;
    const double r2 = LengthSquared(d);
    const double ci = Dot(pi.normal, d), cj = -Dot(pj.normal, d);
    if (ci <= 0 || cj <= 0 || r2 <= 0) return false;
    weight = weighted ? ci * cj / (r2 * r2) * ji * jj : 1.0;
    return true;
  }
};

// What a pair's traced rays add up to, in the order of k, and the visible fraction they give.
struct VisibleSums {
  double weightSum = 0, visibleSum = 0;
  uint32_t unweightedVisible = 0, unweightedCount = 0;
  RAD_HD void Add(double weight, bool visible) {
    weightSum += weight;
    if (visible) visibleSum += weight;
    ++unweightedCount;
    if (visible) ++unweightedVisible;
  }
  RAD_HD double Fraction() const {
    if (weightSum > 0 && visibleSum <= weightSum) return visibleSum / weightSum;
    if (unweightedCount > 0) return double(unweightedVisible) / unweightedCount;
    return 1.0;  // no sample pair faces each other (a sliver pair): nothing tells visibility apart
  }
};

template <class OccludedFn>
RAD_HD double VisibleFraction(const Patch &first, const Patch &second, uint32_t i, uint32_t j, uint64_t seed,
                              uint32_t rayCount, OccludedFn &&occluded, uint32_t &raysTraced) {
  constexpr int kGroup = RaysAtOnce<std::decay_t<OccludedFn>>::value;
  const PairRays rays(first, second, i, j, seed, rayCount);
  VisibleSums sums;
  // The rays in groups of kGroup: sampled, traced together, then summed in the order of k, so that the sums do
  // not depend on the group size (only which rays hit may, where two tracers disagree at a grazing hit).
  for (uint32_t k0 = 0; k0 < rayCount; k0 += kGroup) {
    Vec3 from[kGroup], to[kGroup];
    double weight[kGroup] = {};
    bool hidden[kGroup] = {};
    int count = 0;
    for (uint32_t k = k0; k < rayCount && k < k0 + kGroup; ++k)
      if (rays.At(k, from[count], to[count], weight[count])) ++count;
    if constexpr (kGroup == 1) {
      if (count == 1) hidden[0] = occluded(from[0], to[0]);
    } else if (count > 0) {
      occluded(from, to, count, hidden);
    }
    for (int m = 0; m < count; ++m) {
      ++raysTraced;
      sums.Add(weight[m], !hidden[m]);
    }
  }
  return sums.Fraction();
}

}  // namespace rad
