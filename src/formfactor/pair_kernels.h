// The per-entry steps of the form-factor computation as the GPU runs them, written once (RAD_HD) so that the
// same code runs in CUDA kernels (cuda/gpu_form_factors.cu) and on the host (kernel_form_factors.h), where the
// tests compare it with the CPU backend:
//   1. FormFactorEntry: the factor of one (row, column) entry, exact visibility included, and whether shadow
//      rays must still estimate its visible fraction (pair.h, the CPU backend's own code);
//   2. VisibilityOfEntry: the visible fraction of such a pair by the CPU's estimator (visibility.h) with the
//      same counter-based random numbers, its shadow rays traced on the project's BVH (accel/) instead of Embree.
#pragma once

#include <cstdint>

#include "accel/bvh.h"
#include "accel/bvh_traversal.h"
#include "formfactor/geometry_view.h"
#include "formfactor/pair.h"
#include "formfactor/visibility.h"
#include "util/hd.h"

namespace rad {

// Shadow-ray test on the BVH, as a function object (device code cannot take host lambdas).
struct BvhSegmentOccluded {
  BvhView bvh;
  RAD_HD bool operator()(Vec3 from, Vec3 to) const { return SegmentOccludedBvh(bvh, from, to); }
};

// What an entry still needs once its kernel has run: nothing, shadow rays, or to be computed again without the
// device's work limit (PairResult::deferred).
constexpr uint8_t kEntryDone = 0, kEntryNeedsRays = 1, kEntryDeferred = 2;

// The settings the device's kernels run with: the user's, with the device's work limit (by default
// kDeviceOccludedWork, pair_result.h; --gpu-work-limit; 0: none).
inline PairSettings WithDeviceWorkLimit(PairSettings settings, double limit) {
  settings.occludedWorkLimit = limit;
  return settings;
}

// Entry (i, j): writes the factor and what it still needs; returns the pair's result for the tallies.
RAD_HD inline PairResult FormFactorEntry(const GeometryView &g, int i, int j, const PairSettings &s, double &value,
                                         uint8_t &needs) {
  const PairResult p = FormFactorPair(g, i, j, s);
  value = p.value;
  needs = p.deferred ? kEntryDeferred : p.needsRays ? kEntryNeedsRays : kEntryDone;
  return p;
}

// The visible fraction of pair (i, j); `raysTraced` receives the shadow rays it traced.
RAD_HD inline double VisibilityOfEntry(const GeometryView &g, const BvhView &bvh, int i, int j, uint64_t seed,
                                       uint32_t shadowRays, uint32_t &raysTraced) {
  raysTraced = 0;
  return VisibleFraction(g.patches[i], g.patches[j], uint32_t(i), uint32_t(j), seed, shadowRays,
                         BvhSegmentOccluded{bvh}, raysTraced);
}

}  // namespace rad
