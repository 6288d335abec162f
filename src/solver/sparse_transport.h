// The CSR solve's row maths written once for the host and the GPU (RAD_HD): a row's stored entries against the
// three channels of B, and the hierarchical operator's far field (node means, what each element's links gather,
// each row's share), over flat arrays that a device can hold. cuda/gpu_csr_solver.cu runs them in its kernels;
// the CPU solver (csr_solver.cpp) runs the same far-field functions (FarFieldHost), and the host runs the GPU's
// Gauss-Seidel sweep below, so that this machine, without a GPU, checks the algorithm.
//
// Every sum over a row's items takes items lane, lane + stride, ...: a warp splits one row among its 32 lanes
// (stride 32) and adds the parts with shuffles; the host takes the row whole (lane 0, stride 1). So the GPU's
// sums are grouped differently from the CPU solver's and the two agree to rounding, as the dense GPU solver
// does (block_gauss_seidel.h).
//
// Vectors of three channels are column-major, n x 3: channel c of patch j at x[j + c n].
#pragma once

#include <stdint.h>

#include <vector>

#include "formfactor/form_factor_rows.h"
#include "formfactor/patch_tree.h"
#include "solver/block_gauss_seidel.h"
#include "util/hd.h"

namespace rad {

template <typename T>
struct CsrRowsView {
  CsrColumnsView columns;  // with the rows' pointers (local rows + 1)
  const T *values;
};

// acc += this lane's part of local row r times x.
template <typename T>
RAD_HD RAD_INLINE void AddRowTimes(const CsrRowsView<T> &f, long long r, const double *x, long long n, int lane,
                                   int stride, double acc[3]) {
  RowColumnReader column(f.columns, r);
  for (long long k = f.columns.ptr[r] + lane; k < f.columns.ptr[r + 1]; k += stride) {
    const double v = double(f.values[k]);
    const long long j = column(k);
    acc[0] += v * x[j];
    acc[1] += v * x[j + n];
    acc[2] += v * x[j + 2 * n];
  }
}

// Gauss-Seidel's pass over local row r, in a group of rows that starts at local row g0 (the group's rows are
// updated together, after this pass): newest += F_r . x (x: the sweep's newest values, still B^k at the
// group's rows), start += F_r . b (b: B^k, for the residual), and F's entries at the group's rows before r
// into triangle[q] (q = local row - g0), which the substitution reads. localOf: per patch, its local row, or -1.
template <typename T>
RAD_HD RAD_INLINE void GaussSeidelRowPass(const CsrRowsView<T> &f, long long r, const double *x, const double *b,
                                          long long n, const int32_t *localOf, long long g0, int lane, int stride,
                                          double newest[3], double start[3], double *triangle) {
  RowColumnReader column(f.columns, r);
  for (long long k = f.columns.ptr[r] + lane; k < f.columns.ptr[r + 1]; k += stride) {
    const double v = double(f.values[k]);
    const long long j = column(k);
    for (int c = 0; c < 3; ++c) {
      newest[c] += v * x[j + c * n];
      start[c] += v * b[j + c * n];
    }
    const long long local = localOf[j];
    if (local >= g0 && local < r) triangle[local - g0] = v;
  }
}

// The hierarchical operator's far field (form_factor_rows.h, FarLinks) in flat arrays. hasLinks false: a
// sparse operator's rows, no far field; hasElements false: no element links.
struct FarFieldView {
  bool hasLinks = false, hasElements = false;
  int32_t nodes = 0;
  // The tree: node k's patches are order[nodeFirst[k], nodeFirst[k] + nodeCount[k]), of area nodeArea[k].
  const int32_t *nodeFirst = nullptr, *nodeCount = nullptr, *order = nullptr;
  const double *area = nullptr, *nodeArea = nullptr;  // per patch, per node
  // The rows' own links: their targets' names (FarLinks::Names(): nodes, then patches), and values.
  CsrColumnsView linkNames;
  const uint16_t *linkValue = nullptr;  // FarLinkValue
  // The elements' links (ElementFarLinks): per element held, its links; per local row, its elements.
  long long elements = 0;
  const long long *elementPtr = nullptr;
  const int32_t *elementTarget = nullptr;
  const float *elementValue = nullptr;
  const uint16_t *elementShape = nullptr;
  const long long *rowElementPtr = nullptr;
  const int32_t *rowElement = nullptr;
  const double *rowOffset = nullptr;
};

// This lane's part of node k's area-weighted sum of x (one channel).
RAD_HD RAD_INLINE double NodeWeightedSumPart(const FarFieldView &v, int32_t k, const double *x, int lane, int stride) {
  double sum = 0;
  for (int32_t q = v.nodeFirst[k] + lane; q < v.nodeFirst[k] + v.nodeCount[k]; q += stride) {
    const int32_t j = v.order[q];
    sum += v.area[j] * x[j];
  }
  return sum;
}

// Node k's mean from its weighted sum (0 for a node without area).
RAD_HD RAD_INLINE double NodeMean(const FarFieldView &v, int32_t k, double weightedSum) {
  return v.nodeArea[k] > 0 ? weightedSum / v.nodeArea[k] : 0.0;
}

// What element m's links gather from the node means (column-major, v.nodes x 3), for each channel c:
// g[kElementLinkTerms c + i] the sum over its links of their term i (value, gradient, curvature:
// ElementLinkTerms) times the mean.
constexpr int kGatheredPerElement = 3 * kElementLinkTerms;
RAD_HD RAD_INLINE void GatherElement(const FarFieldView &v, long long m, const double *means,
                                     double g[kGatheredPerElement]) {
  for (int i = 0; i < kGatheredPerElement; ++i) g[i] = 0;
  for (long long k = v.elementPtr[m]; k < v.elementPtr[m + 1]; ++k) {
    const int32_t t = v.elementTarget[k];
    double weights[kElementLinkTerms];
    ElementLinkWeights(v.elementValue, v.elementShape, k, weights);
    for (int c = 0; c < 3; ++c) {
      const double mean = means[t + c * (long long)v.nodes];
      for (int i = 0; i < kElementLinkTerms; ++i) g[kElementLinkTerms * c + i] += weights[i] * mean;
    }
  }
}

// acc += this lane's part of local row r's far field: its links read at x (patches) and the means (nodes),
// then its elements' gathered sums (GatherElement) read at its centroid.
RAD_HD RAD_INLINE void AddRowFarField(const FarFieldView &v, long long r, const double *x, long long n,
                                      const double *means, const double *gathered, int lane, int stride,
                                      double acc[3]) {
  if (!v.hasLinks) return;
  RowColumnReader name(v.linkNames, r);
  for (long long k = v.linkNames.ptr[r] + lane; k < v.linkNames.ptr[r + 1]; k += stride) {
    const int32_t t = name(k);
    const bool node = t < v.nodes;
    const double *source = node ? means + t : x + (t - v.nodes);
    const long long ld = node ? (long long)v.nodes : n;
    const double value = FarLinkValue(v.linkValue[k]);
    for (int c = 0; c < 3; ++c) acc[c] += value * source[c * ld];
  }
  if (!v.hasElements) return;
  for (long long q = v.rowElementPtr[r] + lane; q < v.rowElementPtr[r + 1]; q += stride) {
    const double *g = gathered + kGatheredPerElement * (long long)v.rowElement[q];
    double t[kElementLinkTerms];
    ElementLinkTerms(v.rowOffset + 2 * q, t);
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < kElementLinkTerms; ++i) acc[c] += g[kElementLinkTerms * c + i] * t[i];
  }
}

// The flat arrays of FarFieldView that FarLinks does not hold as they are: per node of the tree, its range of
// `order` and its area.
struct FlatTreeNodes {
  std::vector<int32_t> first, count;
  std::vector<double> area;
};
FlatTreeNodes FlattenTreeNodes(const FarLinks &links);

// FarFieldView over `links` and `nodes`, each array where place(vector) puts it: on the host, its data(); for the
// GPU, a copy in device memory. place is called once for each array used, in a fixed order.
template <typename Place>
FarFieldView ViewFarField(const FarLinks &links, const FlatTreeNodes &nodes, Place &&place) {
  FarFieldView v;
  if (links.Empty()) return v;
  v.hasLinks = true;
  v.nodes = int32_t(nodes.first.size());
  v.nodeFirst = place(nodes.first);
  v.nodeCount = place(nodes.count);
  v.nodeArea = place(nodes.area);
  v.order = place(links.tree->order);
  v.area = place(links.area);
  const long long *linkPtr = place(links.ptr);
  const uint16_t *nameLow = place(links.nameLow);
  v.linkNames = ViewColumns(linkPtr, nameLow, place(links.nameSpanStart), links.names);
  v.linkValue = place(links.value);
  const ElementFarLinks &e = links.elements;
  if (e.Empty()) return v;
  v.hasElements = true;
  v.elements = (long long)e.element.size();
  v.elementPtr = place(e.ptr);
  v.elementTarget = place(e.target);
  v.elementValue = place(e.value);
  v.elementShape = place(e.shape);
  v.rowElementPtr = place(e.rowPtr);
  v.rowElement = place(e.rowElement);
  v.rowOffset = place(e.rowOffset);
  return v;
}

// Each node's area-weighted mean of B^k (n x 3), column-major (v.nodes x 3), with the functions above.
void NodeMeansHost(const FarFieldView &v, const double *b, long long n, std::vector<double> &means);

// The far field of every local row from B^k (n x 3), on the host with the functions above, each row whole:
// far gets 3 values per local row. The CPU solver's far field, and the reference for the GPU's kernels. On all
// threads, each value the sum of one call, so its bits do not depend on them.
void FarFieldHost(const FarFieldView &v, long long rows, const double *b, long long n, std::vector<double> &far);
// The same from node means taken elsewhere (the CPU solver's, from its exchange: solver/read_exchange.h).
void FarFieldFromMeans(const FarFieldView &v, long long rows, const double *b, long long n,
                       const std::vector<double> &means, std::vector<double> &far);

// One sweep of the GPU's CSR Gauss-Seidel on the host, as cuda/gpu_csr_solver.cu runs it: the rank's rows in
// groups of kSubstitutionGroup; each row's pass (GaussSeidelRowPass) against the newest values, then the group
// solved in order through its triangle. x: the newest values (n x 3, B^k on entry, the rank's new values on
// return); b: B^k; far: FarFieldHost of B^k, or empty; e, rho: 3 per local row; packed: 3 per local row.
// Returns the rank's max relative residual of B^k.
template <typename T>
double CsrGaussSeidelSweepHost(const CsrRowsView<T> &f, const std::vector<long long> &rows,
                               const std::vector<int32_t> &localOf, const std::vector<double> &far, const double *e,
                               const double *rho, double *x, const double *b, long long n, double maxEmission,
                               double *packed) {
  const long long m = (long long)rows.size();
  double worst = 0;
  double acc[kSubstitutionGroup][3], triangle[kSubstitutionGroup][kSubstitutionGroup];
  for (long long g0 = 0; g0 < m; g0 += kSubstitutionGroup) {
    const int count = int(std::min<long long>(kSubstitutionGroup, m - g0));
    for (int w = 0; w < count; ++w) {
      const long long r = g0 + w;
      double start[3] = {0, 0, 0};
      for (int c = 0; c < 3; ++c) acc[w][c] = far.empty() ? 0.0 : far[3 * size_t(r) + size_t(c)];
      for (int c = 0; c < 3; ++c) start[c] = acc[w][c];
      for (double &t : triangle[w]) t = 0;
      GaussSeidelRowPass(f, r, x, b, n, localOf.data(), g0, 0, 1, acc[w], start, triangle[w]);
      const long long i = rows[size_t(r)];
      const double old[3] = {b[i], b[i + n], b[i + 2 * n]};
      worst = WorseResidual(worst, RowResidual(e + 3 * r, rho + 3 * r, start, old, maxEmission));
    }
    double change[kSubstitutionGroup][3];
    for (int w = 0; w < count; ++w) {
      const long long r = g0 + w, i = rows[size_t(r)];
      for (int q = 0; q < w; ++q)
        for (int c = 0; c < 3; ++c) acc[w][c] += triangle[w][q] * change[q][c];
      for (int c = 0; c < 3; ++c) {
        const double value = e[3 * r + c] + rho[3 * r + c] * acc[w][c];
        packed[3 * r + c] = value;
        change[w][c] = value - x[i + c * n];
      }
    }
    for (int w = 0; w < count; ++w)
      for (int c = 0; c < 3; ++c) x[rows[size_t(g0 + w)] + c * n] = packed[3 * (g0 + w) + c];
  }
  return worst;
}

}  // namespace rad
