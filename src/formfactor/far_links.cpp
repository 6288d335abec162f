#include "formfactor/far_links.h"

#include "formfactor/patch_tree.h"

namespace rad {

void NodeMeans(const FarLinks &links, const double *x, std::vector<double> &means) {
  const PatchTree &tree = *links.tree;
  const size_t count = tree.nodes.size();
  std::vector<double> weighted(count, 0.0), area(count, 0.0);
  // Children are built after their parent (BuildPatchTree), so one pass backwards sees them first.
  for (size_t k = count; k-- > 0;) {
    const PatchTreeNode &node = tree.nodes[k];
    if (node.IsLeaf()) {
      for (int32_t q = node.first; q < node.first + node.count; ++q) {
        const size_t j = size_t(tree.order[size_t(q)]);
        weighted[k] += links.area[j] * x[j];
        area[k] += links.area[j];
      }
    } else {
      weighted[k] = weighted[size_t(node.left)] + weighted[size_t(node.right)];
      area[k] = area[size_t(node.left)] + area[size_t(node.right)];
    }
  }
  means.resize(count);
  for (size_t k = 0; k < count; ++k) means[k] = area[k] > 0 ? weighted[k] / area[k] : 0.0;
}

}  // namespace rad
