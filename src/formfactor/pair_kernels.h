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

// The device's limit on one occluded entry's work (PairSettings::occludedWorkLimit). A GPU thread runs these
// integrals some 150 to 250 times slower than a CPU core (seen on an H200: the Cornell box at --subdiv 1 took
// 23 s on the GPU and 1 s on the CPU, its slowest entry 0.14 s on one core), and a launch lasts as long as its
// slowest thread; entries past the limit are finished on the host's cores. From radiosity_bench_pair_cost: on
// the Cornell box at --subdiv 1 it leaves 240 of 4624 entries (88 % of the work) to the host and the slowest
// kept costs 2.8 ms of a core; on the reference scene (--subdiv 3) 838 of 8.7 million (10 %).
constexpr double kDeviceOccludedWork = 5000;

// The settings the device's kernels run with: the user's, with the work limit.
inline PairSettings WithDeviceWorkLimit(PairSettings settings) {
  settings.occludedWorkLimit = kDeviceOccludedWork;
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
