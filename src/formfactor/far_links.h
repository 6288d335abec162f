// What the solver needs of the hierarchical operator's far links (form_factor_rows.h, FarLinks): the value
// of B that a link reads, the area-weighted mean over its target's patches, for every node at once.
#pragma once

#include <vector>

#include "formfactor/form_factor_rows.h"

namespace rad {

// Per node of links.tree, the sum of links.area over its patches (the means' denominators).
std::vector<double> NodeAreas(const FarLinks &links);

// Per node of links.tree, the area-weighted mean of x (one value per patch) over its patches, pulled up the
// tree from the leaves; `means` gets one value per node.
void NodeMeans(const FarLinks &links, const double *x, std::vector<double> &means);

// What link k of `links` reads from x (patch values) and `means` (NodeMeans of x).
inline double LinkedValue(const FarLinks &links, long long k, const double *x, const std::vector<double> &means) {
  const int32_t t = links.target[size_t(k)];
  return t >= 0 ? means[size_t(t)] : x[size_t(-(t + 1))];
}

// Per element held in links.elements, what its links gather from `means` (NodeMeans of x): 4 values each, the
// sum of value x mean and of slope x mean (3), in link order.
void GatherElementLinks(const FarLinks &links, const std::vector<double> &means, std::vector<double> &gathered);

// Local row r's share of what its elements gathered (GatherElementLinks), read at its centroid.
inline double ElementShare(const ElementFarLinks &e, size_t r, const std::vector<double> &gathered) {
  double sum = 0;
  for (long long q = e.rowPtr[r]; q < e.rowPtr[r + 1]; ++q) {
    const double *g = &gathered[4 * size_t(e.rowElement[size_t(q)])], *d = &e.rowOffset[3 * size_t(q)];
    sum += g[0] + g[1] * d[0] + g[2] * d[1] + g[3] * d[2];
  }
  return sum;
}

// Per local row of f (CSR with far links), the entries it would hold with its far links spread over their
// targets' patches: at most its stored entries plus the patches of each link's target (an upper bound: a link
// may land on columns already stored).
std::vector<long long> ExpandedEntryBounds(const FormFactorRows &f);

// f (CSR with far links, float64) as plain CSR: each link's value spread over its target's patches in
// proportion to their areas (the share of B the solver gives it) and added to the row's entries, so that the
// expanded row acts on any B as row and links do on the area-weighted means; links cleared. Columns ascending;
// each row's values summed in a fixed order (entries, then links in order), whatever the ranks.
void ExpandFarLinks(FormFactorRows &f);

}  // namespace rad
