// Adaptive refinement where B varies (`run --refine`): after a solve, the patches whose radiosity differs from
// a neighbour's by more than a set share of the scene's mean are split in four, and the job is computed again
// on the refined patches. Shadow edges and the bright spots under lights get small patches; walls lit evenly
// keep large ones, so an image is sharp at a fraction of the patches a uniform split would take. A patch that
// differs from its neighbour is split together with it (both see the step), down to a minimum size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scene/patch.h"

namespace rad {

struct RefinementOptions {
  int passes = 0;          // --refine: solves followed by a split (0: none)
  double contrast = 0.2;   // --refine-contrast: the step in B, as a share of the mean B, that splits
  double minSize = 0;      // --refine-min-size: no patch is split into ones whose longest edge is below this
};

struct RefinementPass {
  long long patches = 0;   // before the pass
  long long split = 0;     // of those, split in four
  long long tooSmall = 0;  // past the contrast but at the minimum size
  double largestStep = 0;  // the largest step between neighbours, as a share of the mean B
};

// Per channel, the area-weighted mean of B over the patches that emit nothing (the light the scene reflects);
// all of B where every patch emits. `radiance` holds 3 values per patch.
Vec3 MeanReflectedRadiance(const std::vector<Patch> &patches, const std::vector<double> &radiance);

// Per patch, the largest difference of B to a neighbour (PatchNeighbours), channel by channel, each over that
// channel's mean (channels whose mean is 0 count nothing).
std::vector<double> RadianceSteps(const std::vector<Patch> &patches, const std::vector<double> &radiance,
                                  const std::vector<std::vector<int32_t>> &neighbours, Vec3 mean);

// One pass: the patches with their steps above o.contrast split in four (SplitPatch) where the children's
// longest edge is at least o.minSize, each in its parent's place (a face's patches stay together), the others
// kept as they are. The same patches and B give the same result, whatever the rank or thread count.
std::vector<Patch> RefineWhereRadianceVaries(const std::vector<Patch> &patches, const std::vector<double> &radiance,
                                             const RefinementOptions &o, RefinementPass &pass);

// "1088 -> 2104 -> 3910 patches", for reports.
std::string DescribeRefinement(const std::vector<RefinementPass> &passes, long long finalPatches);

}  // namespace rad
