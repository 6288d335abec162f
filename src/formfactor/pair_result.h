// What one form-factor pair is asked (tolerance, visibility method) and what it reports, kept apart from the
// pair's code (pair.h) so that drivers and counters can name them without the geometry headers.
#pragma once

#include <cstdint>

#include "formfactor/unoccluded.h"

namespace rad {

enum class VisibilityMethod : int32_t {
  kExact = 0,  // shadows cut out of the receiver for every cubature point (visible_region.h)
  kRays = 1,   // kernel-weighted stratified shadow rays (visibility.h)
};

// "exact" or "rays", as --visibility spells them.
inline const char *VisibilityName(VisibilityMethod method) {
  return method == VisibilityMethod::kRays ? "rays" : "exact";
}

// The device's default limit on one occluded entry's work (PairSettings::occludedWorkLimit; --gpu-work-limit).
// A GPU thread runs these integrals some 150 to 250 times slower than a CPU core (seen on an H200: the Cornell
// box at --subdiv 1 took 23 s on the GPU and 1 s on the CPU, its slowest entry 0.14 s on one core), and a
// launch lasts as long as its slowest thread; entries past the limit are finished on the host's cores. Timed on
// an H200 with 16 cores (jobs/bench/gpu.sh, 2026-11-27), that box took 4.50 s on the GPU at 5000, 1.28 s at
// 1000, 0.64 s at 200 and at 50, against 0.58 s on the cores alone. From radiosity_bench_pair_cost, 200 leaves
// to the host 806 of the box's 4624 entries and 2788 of 541696 on the reference scene at --subdiv 2 (93 % of
// its exact work: the costliest 0.5 % of entries), and the slowest entry it keeps costs a core 0.09 ms.
constexpr double kDeviceOccludedWork = 200;

struct PairSettings {
  QuadratureSettings quadrature;
  VisibilityMethod visibility = VisibilityMethod::kExact;
  // Work after which an occluded entry is given up and left to the host (PairResult::deferred), in integrand
  // evaluations weighted by the occluders each one clips against (OccludedFormFactor); 0: no limit. The GPU sets
  // it (kDeviceOccludedWork above): one thread is some 200 times slower than a CPU core on these.
  double occludedWorkLimit = 0;
};

struct PairResult {
  double value = 0;        // F_ij; with needsRays, the unoccluded part still to be multiplied by rays' fraction
  double reverse = 0;      // F_ji, from the same integral (reciprocity); bitwise what FormFactorPair(j, i) gives
  bool needsRays = false;  // shadow rays must estimate the visible fraction
  bool hidden = false;     // one occluder hides every segment of the pair (full_occlusion.h): 0 without rays
  bool occluded = false;   // occluders were found and the exact visible-region integral was taken
  bool overCapacity = false;  // more than kMaxPairOccluders candidates: left to shadow rays
  bool hitDepthLimit = false; // the cubature stopped at its depth limit somewhere
  bool deferred = false;   // occludedWorkLimit was reached: no value; the entry is to be computed without it
  int evaluations = 0;     // point-to-polygon evaluations
  int nodePairs = 0;       // point-to-point kernel evaluations of the node-pair rules
};

}  // namespace rad
