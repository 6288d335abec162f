#include "formfactor/operator_check.h"

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

OperatorCheck CheckOperatorRows(MPI_Comm comm, const FormFactorGeometry &g, const EmbreeScene &embree,
                                const FormFactorOptions &options, const FormFactorRows &f, long long count) {
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
  // exact sum not kept, kept entries that differ.
  std::vector<double> error(k, 0.0), notKept(k, 0.0), mismatches(k, 0.0);
  const bool narrow = f.precision == Precision::kFloat;
  for (size_t q = 0; q < mine.size(); ++q) {
    const double *row = exact.data() + q * size_t(f.n);
    const size_t r = size_t(local[q]);
    double exactSum = 0, keptSum = 0;
    for (long long j = 0; j < f.n; ++j) exactSum += row[j];
    long long differ = 0;
    for (long long e = f.indptr[r]; e < f.indptr[r + 1]; ++e) {
      const double held = f.Value(size_t(e)), value = row[f.columns[size_t(e)]];
      keptSum += held;
      if (held != (narrow ? double(float(value)) : value)) ++differ;
    }
    const double said = (f.dropped.empty() ? 0.0 : f.dropped[r]) + f.links.Sum(r);
    const size_t s = size_t(slot[q]);
    notKept[s] = exactSum - keptSum;
    error[s] = std::fabs(said - notKept[s]);
    mismatches[s] = double(differ);
  }
  for (std::vector<double> *v : {&error, &notKept, &mismatches})
    RAD_MPI(MPI_Allreduce(MPI_IN_PLACE, v->data(), int(k), MPI_DOUBLE, MPI_SUM, comm));

  OperatorCheck c;
  c.rows = (long long)k;
  for (size_t s = 0; s < k; ++s) {
    c.keptMismatches += (long long)mismatches[s];
    c.farErrorMean += error[s];
    c.notKeptMean += notKept[s];
    if (error[s] > c.farErrorMax || c.farErrorMaxRow < 0) {
      c.farErrorMax = error[s];
      c.farErrorMaxRow = checked[s];
    }
  }
  if (k > 0) {
    c.farErrorMean /= double(k);
    c.notKeptMean /= double(k);
  }
  return c;
}

}  // namespace rad
