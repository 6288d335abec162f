#include "formfactor/operator_check.h"

#include "formfactor/element_links.h"
#include "formfactor/patch_tree.h"

#include <algorithm>
#include <cmath>

#include "util/mpi_check.h"
#include "util/timers.h"

namespace rad {

std::vector<long long> OperatorCheckRows(long long n, long long count) {
  count = std::min(count, n);
  std::vector<long long> rows;
  for (long long k = 0; k < count; ++k) rows.push_back((2 * k + 1) * n / (2 * count));
  return rows;
}

namespace {

// The far error of row r by its parts (OperatorCheck::Part), from its exact row: nodes, patches, elements,
// left out, and what is left out split: inside the subtrees the row's own walk started from, and elsewhere.
constexpr size_t kParts = 6;
struct RowParts {
  double part[kParts] = {0, 0, 0, 0, 0, 0};
  long long carriedTwice = 0;  // patches carried by two of the row's links, or by a link and a kept entry
};
// `times`: n zeros, handed back as zeros; per patch, how often the row carries it, counted up to 2 (a byte that
// counted on would wrap after 255 and hide a patch carried 256 times).
// `starts`: the nodes the row's own walk started from (the root where no element handed it any).
RowParts FarErrorParts(const FormFactorRows &f, size_t r, const double *row, double notKept,
                       const std::vector<int32_t> &starts, std::vector<uint8_t> &times) {
  const FarLinks &links = f.links;
  RowParts p;
  if (links.Empty()) return p;
  double carriedExactly = 0;  // the exact sum over every link's patches
  std::vector<int32_t> touched;
  auto carry = [&](int32_t j) {
    uint8_t &t = times[size_t(j)];
    if (t == 0) touched.push_back(j);
    if (t < 2) ++t;
  };
  f.ForEachEntry(r, [&](int32_t j, long long) { carry(j); });
  auto exactOver = [&](int32_t target) {
    if (target < 0) {
      carry(-(target + 1));
      return row[-(target + 1)];
    }
    const PatchTreeNode &node = links.tree->nodes[size_t(target)];
    double sum = 0;
    for (int32_t k = node.first; k < node.first + node.count; ++k) {
      sum += row[links.tree->order[size_t(k)]];
      carry(links.tree->order[size_t(k)]);
    }
    return sum;
  };
  links.ForEachLink(r, [&](int32_t target, long long k) {
    const double exact = exactOver(target);
    p.part[target < 0 ? 1 : 0] += links.Value(size_t(k)) - exact;
    carriedExactly += exact;
  });
  const ElementFarLinks &e = links.elements;
  if (!e.Empty())
    for (long long q = e.rowPtr[r]; q < e.rowPtr[r + 1]; ++q) {
      const size_t m = size_t(e.rowElement[size_t(q)]);
      for (long long k = e.ptr[m]; k < e.ptr[m + 1]; ++k) {
        const double exact = exactOver(e.target[size_t(k)]);
        p.part[2] += e.Read(size_t(q), k) - exact;
        carriedExactly += exact;
      }
    }
  p.part[3] = notKept - carriedExactly;
  // What no link carries below the row's start: nodes and patches of its own walk measured hidden or estimated
  // 0 (not stored). The rest of what is left out is what the elements above the row found hidden whole.
  for (int32_t start : starts) {
    const PatchTreeNode &node = links.tree->nodes[size_t(start)];
    for (int32_t k = node.first; k < node.first + node.count; ++k) {
      const int32_t j = links.tree->order[size_t(k)];
      if (times[size_t(j)] == 0) p.part[4] += row[j];
    }
  }
  p.part[5] = p.part[3] - p.part[4];
  for (int32_t j : touched) {
    p.carriedTwice += times[size_t(j)] > 1;
    times[size_t(j)] = 0;
  }
  return p;
}

}  // namespace

OperatorCheck CheckOperatorRows(MPI_Comm comm, const FormFactorGeometry &g, const EmbreeScene &embree,
                                const FormFactorOptions &options, const FormFactorRows &f, long long count,
                                const ElementWalk *walk) {
  RAD_CHECK(f.IsCsr(), "CheckOperatorRows: the rows are not CSR");
  const std::vector<long long> checked = OperatorCheckRows(f.n, count);
  const size_t k = checked.size();
  // Which checked rows this rank holds, and where.
  std::vector<long long> mine, local, slot;
  for (size_t s = 0; s < k; ++s) {
    const auto it = std::lower_bound(f.rows.begin(), f.rows.end(), checked[s]);
    if (it == f.rows.end() || *it != checked[s]) continue;
    mine.push_back(checked[s]);
    local.push_back(it - f.rows.begin());
    slot.push_back((long long)s);
  }
  std::vector<double> exact;  // mine.size() x n, the dense kernel's rows
  PhaseTimers scratch;        // the check's own kernels are not the operator's phases
  FormFactorCounters counters;
  FormFactorOptions dense = options;
  dense.normalizeRows = false;
  if (!mine.empty()) ComputeRowsCpu(g, embree, mine, dense, exact, scratch, counters, false, nullptr);

  // Per checked row (indexed by its slot, so that the reduction adds each row's figures to zeros): far error,
  // exact sum not kept, kept entries that differ, patches carried twice.
  std::vector<double> error(k, 0.0), signedError(k, 0.0), notKept(k, 0.0), mismatches(k, 0.0),
      parts(kParts * k, 0.0), carriedTwice(k, 0.0);
  std::vector<int32_t> starts;
  std::vector<uint8_t> times(size_t(f.n), 0);
  const bool narrow = f.precision == Precision::kFloat;
  for (size_t q = 0; q < mine.size(); ++q) {
    const double *row = exact.data() + q * size_t(f.n);
    const size_t r = size_t(local[q]);
    double exactSum = 0, keptSum = 0;
    for (long long j = 0; j < f.n; ++j) exactSum += row[j];
    long long differ = 0;
    f.ForEachEntry(r, [&](int32_t j, long long e) {
      const double held = f.Value(size_t(e)), value = row[j];
      keptSum += held;
      if (held != (narrow ? double(float(value)) : value)) ++differ;
    });
    const double said = (f.dropped.empty() ? 0.0 : f.dropped[r]) + f.links.Sum(r);  // what it says of the rest
    const size_t s = size_t(slot[q]);
    notKept[s] = exactSum - keptSum;
    signedError[s] = said - notKept[s];
    error[s] = std::fabs(signedError[s]);
    if (walk != nullptr) walk->Start(r, starts);
    else starts.assign(1, 0);
    const RowParts p = FarErrorParts(f, r, row, notKept[s], starts, times);
    carriedTwice[s] = double(p.carriedTwice);
    for (size_t t = 0; t < kParts; ++t) parts[kParts * s + t] = p.part[t];
    mismatches[s] = double(differ);
  }
  for (std::vector<double> *v : {&error, &signedError, &notKept, &mismatches, &parts, &carriedTwice})
    RAD_MPI(MPI_Allreduce(MPI_IN_PLACE, v->data(), int(v->size()), MPI_DOUBLE, MPI_SUM, comm));

  OperatorCheck c;
  c.rows = (long long)k;
  OperatorCheck::Part *const part[kParts] = {&c.nodeLinks, &c.patchLinks,    &c.elementLinks,
                                             &c.leftOut,   &c.leftOutByRows, &c.leftOutByElements};  // RowParts' order
  for (size_t s = 0; s < k; ++s) {
    c.keptMismatches += (long long)mismatches[s];
    c.carriedTwice += (long long)carriedTwice[s];
    c.farErrorMean += error[s];
    c.farBias += signedError[s];
    for (size_t t = 0; t < kParts; ++t) {
      part[t]->mean += parts[kParts * s + t];
      part[t]->absMean += std::fabs(parts[kParts * s + t]);
    }
    c.notKeptMean += notKept[s];
    if (error[s] > c.farErrorMax || c.farErrorMaxRow < 0) {
      c.farErrorMax = error[s];
      c.farErrorMaxRow = checked[s];
    }
  }
  if (k > 0) {
    c.farErrorMean /= double(k);
    c.farBias /= double(k);
    for (OperatorCheck::Part *each : part) {
      each->mean /= double(k);
      each->absMean /= double(k);
    }
    c.notKeptMean /= double(k);
  }
  return c;
}

}  // namespace rad
