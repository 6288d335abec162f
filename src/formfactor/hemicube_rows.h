// The rows of F by hemicube gathering (hemicube.h) on the rank's cores: each row's hemicube traced with Embree
// against the patches (and the obstructions, which take what they hide), its hits summed per patch in pixel
// order and stored as CSR. A row holds at most one entry per pixel, so memory is O(rows x pixels) at worst and
// the rows can be built once and iterated (the fast way), where a dense row would be N entries.
#pragma once

#include <cstdint>
#include <vector>

#include "formfactor/form_factor_rows.h"
#include "scene/patch.h"
#include "scene/scene.h"

namespace rad {

struct HemicubeOptions {
  int resolution = 64;  // n: n x n on top, n x n/2 on each side (even)
  bool rotate = true;   // each patch's hemicube turned about its normal by its own random angle
  uint64_t seed = 1;
};

// Every pixel's multiplier (HemicubePixelWeight) for resolution n.
std::vector<double> HemicubeWeights(int n);

// `rows` (global, ascending) of F for `patches` of `scene` into `f` as CSR in f.precision; `f.n` and `f.rows`
// as set by the caller. `rays`: how many were traced, for the rate. `showProgress`: the rows done, as a line.
void ComputeHemicubeRowsCpu(const Scene &scene, const std::vector<Patch> &patches, const std::vector<long long> &rows,
                            const HemicubeOptions &options, FormFactorRows &f, long long &rays, bool showProgress);

}  // namespace rad
