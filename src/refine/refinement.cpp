#include "refine/refinement.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "refine/patch_neighbours.h"

namespace rad {

Vec3 MeanReflectedRadiance(const std::vector<Patch> &patches, const std::vector<double> &radiance) {
  auto mean = [&](bool reflectorsOnly) {
    Vec3 sum{0, 0, 0};
    double area = 0;
    for (size_t i = 0; i < patches.size(); ++i) {
      const Vec3 &e = patches[i].emission;
      if (reflectorsOnly && (e.x > 0 || e.y > 0 || e.z > 0)) continue;
      sum += Vec3{radiance[3 * i], radiance[3 * i + 1], radiance[3 * i + 2]} * patches[i].area;
      area += patches[i].area;
    }
    return area > 0 ? sum / area : sum;
  };
  Vec3 m = mean(true);
  if (!(m.x > 0 || m.y > 0 || m.z > 0)) m = mean(false);
  return m;
}

std::vector<double> RadianceSteps(const std::vector<Patch> &patches, const std::vector<double> &radiance,
                                  const std::vector<std::vector<int32_t>> &neighbours, Vec3 mean) {
  std::vector<double> steps(patches.size(), 0.0);
  tbb::parallel_for(size_t(0), patches.size(), [&](size_t i) {
    double step = 0;
    for (int32_t j : neighbours[i])
      for (int c = 0; c < 3; ++c)
        if (mean[c] > 0) step = std::max(step, std::abs(radiance[3 * i + c] - radiance[3 * size_t(j) + c]) / mean[c]);
    steps[i] = step;
  });
  return steps;
}

std::vector<Patch> RefineWhereRadianceVaries(const std::vector<Patch> &patches, const std::vector<double> &radiance,
                                             const RefinementOptions &o, RefinementPass &pass) {
  pass = RefinementPass{};
  pass.patches = (long long)patches.size();
  const std::vector<double> steps =
      RadianceSteps(patches, radiance, PatchNeighbours(patches), MeanReflectedRadiance(patches, radiance));
  std::vector<Patch> refined;
  refined.reserve(patches.size());
  for (size_t i = 0; i < patches.size(); ++i) {
    pass.largestStep = std::max(pass.largestStep, steps[i]);
    if (!(steps[i] > o.contrast)) {
      refined.push_back(patches[i]);
      continue;
    }
    // Halving every edge (exactly for a triangle and a parallelogram, to first order for other quads).
    if (0.5 * LongestEdge(patches[i]) < o.minSize) {
      ++pass.tooSmall;
      refined.push_back(patches[i]);
      continue;
    }
    ++pass.split;
    SplitPatch(patches[i], refined);
  }
  return refined;
}

std::string DescribeRefinement(const std::vector<RefinementPass> &passes, long long finalPatches) {
  std::string text;
  for (const RefinementPass &p : passes) text += std::to_string(p.patches) + " -> ";
  return text + std::to_string(finalPatches) + " patches";
}

}  // namespace rad
