// How the sparse and hierarchical operators estimate what a walk of the patch tree leaves out (a whole tree
// node seen from a patch or from an element of patches): the settings and the visible share, shared by the
// rows' walk (sparse_form_factors.cpp) and the elements' (element_links.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "formfactor/patch_tree.h"
#include "formfactor/visibility.h"

namespace rad {

// The visible share of a skipped node is measured on this many of its patches, spread along its range, each
// weighted by its point kernel from patch i and seen through kNodeVisibilityRays random ray pairs between the
// two patches (the pair's counter-based samples, as the exact kernel's shadow rays). Centroid-to-centroid rays
// on 16 patches, each counted alike, left B 1.36e-3 from the dense B on an 8 x 8 city (N = 7032) at tolerance
// 3e-4; weighting by the kernel (near patches carry more of the node, and are seen differently) and random
// points on both patches brought it to 4.2e-4 with 32 x 2 rays, for 0.4 s more of a 5 s run (16 x 4: 5.1e-4,
// 64 x 1: 5.3e-4, 8 x 4: 9.2e-4).
constexpr int32_t kNodeVisibilitySamples = 32;
constexpr uint32_t kNodeVisibilityRays = 2;
// A skipped node's estimate opens the nodes inside it that are wider than this share of their distance
// (OpenedClusterEstimate): one cluster estimate over a node seen under a wide angle was the largest error of
// the far links. At 0.1 the operator check's mean error fell 3.7x on a 12 x 12 city (N = 15020) and B came
// within 7.4e-4 of the dense B (1.9e-3 before), at the same time; 0.5 gained nothing.
constexpr double kOpening = 0.1;

// A node of more patches than this is never estimated whole: its children are, each with its own visible share
// (32 samples say little of thousands of patches across a city). On a city of 102096 patches the operator
// check's far-link error per row was 5.4e-3 without this cap (maximum 2.2e-2), 2.7e-3 at 256 (1.2e-2, 3 % more
// time) and 1.4e-3 at 64 (4.5e-3, 27 % more time than without, 13 % more links); on 26284 patches 256 took it
// from 7.0e-4 to 6.4e-4 with B unchanged (6.2e-4 from the dense B).
constexpr int32_t kMaxEstimatedPatches = 64;

// Whether a node whose bound lets it be skipped may be estimated whole (else its children are walked).
inline bool EstimatedWhole(const PatchTreeNode &node) { return node.count <= kMaxEstimatedPatches || node.IsLeaf(); }

struct VisibleShareResult {
  double share = 1;        // kernel-weighted; 1 when no sample pair faces
  bool unanimous = true;   // every ray traced was visible, or every one hidden
};

// The visible share of tree node `node` from the receivers receiver[0, count) (one patch, or an element's):
// kNodeVisibilitySamples pairs of a receiver and a patch of the node, both spread along their ranges (which
// follow the trees' splits; the node's taken in a stride prime to the sample count, so that near receivers are
// not paired with near patches only), each weighted by its point kernel.
template <typename Occluded>
VisibleShareResult VisibleShare(const std::vector<Patch> &patches, const int32_t *receiver, int32_t count,
                                const PatchTree &tree, const PatchTreeNode &node, uint64_t seed,
                                const Occluded &occluded, uint32_t &traced) {
  const int32_t samples = std::min<int32_t>(kNodeVisibilitySamples, std::max(count, node.count));
  double weight = 0, visible = 0;
  bool anyVisible = false, anyHidden = false;
  auto counted = [&](Vec3 a, Vec3 b) {
    const bool hidden = occluded(a, b);
    (hidden ? anyHidden : anyVisible) = true;
    return hidden;
  };
  for (int32_t q = 0; q < samples; ++q) {
    const int32_t i = receiver[q * count / samples];
    const int32_t j = tree.order[size_t(node.first + (q * 37 % samples) * node.count / samples)];
    const Patch &pi = patches[size_t(i)], &pj = patches[size_t(j)];
    const double w = PatchEstimate(pi, pj);
    if (w <= 0) continue;
    weight += w;
    visible += w * VisibleFraction(pi, pj, uint32_t(i), uint32_t(j), seed, kNodeVisibilityRays, counted, traced);
  }
  return {weight > 0 ? visible / weight : 1.0, !(anyVisible && anyHidden)};
}

}  // namespace rad
