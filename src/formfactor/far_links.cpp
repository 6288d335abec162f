#include "formfactor/far_links.h"

#include <algorithm>

#include "formfactor/patch_tree.h"
#include "util/error.h"

namespace rad {

std::vector<int32_t> FarLinks::TargetsUnpacked(long long first, long long count) const {
  if (count < 0) count = LinkCount() - first;
  std::vector<int32_t> targets(size_t(std::max<long long>(count, 0)));
  if (count <= 0) return targets;
  const long long end = first + count;
  const CsrColumnsView v = Names();
  // From the row that holds link `first` (the last whose links begin at or before it).
  size_t r = size_t(std::upper_bound(ptr.begin(), ptr.end(), first) - ptr.begin()) - 1;
  for (; r + 1 < ptr.size() && ptr[r] < end; ++r) {
    RowColumnReader name(v, (long long)r);
    for (long long k = std::max(ptr[r], first); k < std::min(ptr[r + 1], end); ++k)
      targets[size_t(k - first)] = FarLinkTarget(name(k), nodes);
  }
  return targets;
}

std::vector<double> NodeAreas(const FarLinks &links) {
  const PatchTree &tree = *links.tree;
  std::vector<double> sums(tree.nodes.size(), 0.0);
  for (size_t k = tree.nodes.size(); k-- > 0;)
    sums[k] = BottomUpNodeSum(tree, k, [&](size_t j) { return links.area[j]; }, [&](size_t c) { return sums[c]; });
  return sums;
}

std::vector<long long> ExpandedEntryBounds(const FormFactorRows &f) {
  std::vector<long long> bounds(f.RowCount(), 0);
  const ElementFarLinks &e = f.links.elements;
  for (size_t r = 0; r < f.RowCount(); ++r) {
    long long b = f.indptr[r + 1] - f.indptr[r];
    f.links.ForEachLink(r, [&](int32_t t, long long) { b += t >= 0 ? f.links.tree->nodes[size_t(t)].count : 1; });
    if (!e.Empty())
      for (long long q = e.rowPtr[r]; q < e.rowPtr[r + 1]; ++q) {
        const size_t m = size_t(e.rowElement[size_t(q)]);
        for (long long k = e.ptr[m]; k < e.ptr[m + 1]; ++k) b += f.links.tree->nodes[size_t(e.target[size_t(k)])].count;
      }
    bounds[r] = std::min<long long>(b, f.n);
  }
  return bounds;
}

void ExpandFarLinks(FormFactorRows &f) {
  RAD_CHECK(f.IsCsr() && f.precision == Precision::kDouble && !f.links.Empty(),
            "ExpandFarLinks: CSR float64 rows with far links only");
  const PatchTree &tree = *f.links.tree;
  const std::vector<double> nodeArea = NodeAreas(f.links);
  FormFactorRows expanded;  // the CSR arrays of the rows expanded
  expanded.n = f.n;
  expanded.indptr.assign(1, 0);
  std::vector<double> row(size_t(f.n), 0.0);
  std::vector<uint8_t> touched(size_t(f.n), 0);
  std::vector<int32_t> used;
  auto add = [&](int32_t j, double v) {
    if (!touched[size_t(j)]) touched[size_t(j)] = 1, used.push_back(j);
    row[size_t(j)] += v;
  };
  auto spread = [&](int32_t t, double v) {  // over node t's patches by area
    const PatchTreeNode &node = tree.nodes[size_t(t)];
    for (int32_t q = node.first; q < node.first + node.count; ++q) {
      const int32_t j = tree.order[size_t(q)];
      add(j, v * f.links.area[size_t(j)] / nodeArea[size_t(t)]);
    }
  };
  const ElementFarLinks &elements = f.links.elements;
  for (size_t r = 0; r < f.RowCount(); ++r) {
    used.clear();
    f.ForEachEntry(r, [&](int32_t j, long long e) { add(j, f.f64[size_t(e)]); });
    f.links.ForEachLink(r, [&](int32_t t, long long k) {
      const double v = f.links.Value(size_t(k));
      if (t < 0) add(-(t + 1), v);
      else spread(t, v);
    });
    if (!elements.Empty())
      for (long long q = elements.rowPtr[r]; q < elements.rowPtr[r + 1]; ++q) {
        const size_t m = size_t(elements.rowElement[size_t(q)]);
        for (long long k = elements.ptr[m]; k < elements.ptr[m + 1]; ++k)
          spread(elements.target[size_t(k)], elements.Read(size_t(q), k));
      }
    std::sort(used.begin(), used.end());
    expanded.AppendRowColumns(used.data(), used.size());
    for (int32_t j : used) {
      expanded.f64.push_back(row[size_t(j)]);
      row[size_t(j)] = 0.0;
      touched[size_t(j)] = 0;
    }
    expanded.indptr.push_back(expanded.EntryCount());
  }
  f.indptr = std::move(expanded.indptr);
  f.columnLow = std::move(expanded.columnLow);
  f.columnSpanStart = std::move(expanded.columnSpanStart);
  f.f64 = std::move(expanded.f64);
  f.links = FarLinks{};
}

}  // namespace rad
