#include "solver/sparse_transport.h"

#include "formfactor/far_links.h"

namespace rad {

FlatTreeNodes FlattenTreeNodes(const FarLinks &links) {
  FlatTreeNodes flat;
  if (links.Empty()) return flat;
  for (const PatchTreeNode &node : links.tree->nodes) {
    flat.first.push_back(node.first);
    flat.count.push_back(node.count);
  }
  flat.area = NodeAreas(links);  // the CPU solver's denominators (links.area, not the tree's own areas)
  return flat;
}

void FarFieldHost(const FarFieldView &v, long long rows, const double *b, long long n, std::vector<double> &far) {
  far.assign(3 * size_t(rows), 0.0);
  if (!v.hasLinks) return;
  std::vector<double> means(3 * size_t(v.nodes)), gathered(12 * size_t(v.elements));
  for (int32_t k = 0; k < v.nodes; ++k)
    for (int c = 0; c < 3; ++c) means[size_t(k) + size_t(c) * size_t(v.nodes)] = NodeMean(v, k, NodeWeightedSumPart(v, k, b + c * n, 0, 1));
  for (long long m = 0; m < v.elements; ++m) GatherElement(v, m, means.data(), &gathered[12 * size_t(m)]);
  for (long long r = 0; r < rows; ++r) AddRowFarField(v, r, b, n, means.data(), gathered.data(), 0, 1, &far[3 * size_t(r)]);
}

}  // namespace rad
