#include "solver/sparse_transport.h"

#include <tbb/parallel_for.h>

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

void NodeMeansHost(const FarFieldView &v, const double *b, long long n, std::vector<double> &means) {
  means.resize(3 * size_t(v.nodes));
  tbb::parallel_for(int32_t(0), v.nodes, [&](int32_t k) {
    for (int c = 0; c < 3; ++c)
      means[size_t(k) + size_t(c) * size_t(v.nodes)] = NodeMean(v, k, NodeWeightedSumPart(v, k, b + c * n, 0, 1));
  });
}

void FarFieldHost(const FarFieldView &v, long long rows, const double *b, long long n, std::vector<double> &far) {
  std::vector<double> means;
  if (v.hasLinks) NodeMeansHost(v, b, n, means);
  FarFieldFromMeans(v, rows, b, n, means, far);
}

void FarFieldFromMeans(const FarFieldView &v, long long rows, const double *b, long long n,
                       const std::vector<double> &means, std::vector<double> &far) {
  far.assign(3 * size_t(rows), 0.0);
  if (!v.hasLinks) return;
  std::vector<double> gathered(kGatheredPerElement * size_t(v.elements));
  tbb::parallel_for(0LL, v.elements, [&](long long m) { GatherElement(v, m, means.data(), &gathered[kGatheredPerElement * size_t(m)]); });
  tbb::parallel_for(0LL, rows, [&](long long r) {
    AddRowFarField(v, r, b, n, means.data(), gathered.data(), 0, 1, &far[3 * size_t(r)]);
  });
}

}  // namespace rad
