#include "formfactor/kernel_form_factors.h"

#include <tbb/combinable.h>
#include <tbb/parallel_for.h>

#include <algorithm>

#include "formfactor/entry_driver.h"
#include "formfactor/pair_kernels.h"

namespace rad {

void NormalizeRow(double *row, long long n) {
  double sum = 0;
  for (long long j = 0; j < n; ++j) sum += row[j];
  if (sum > 0)
    for (long long j = 0; j < n; ++j) row[j] /= sum;
}

void NormalizeRow(float *row, long long n) {
  double sum = 0;
  for (long long j = 0; j < n; ++j) sum += row[j];
  if (sum > 0)
    for (long long j = 0; j < n; ++j) row[j] = float(double(row[j]) / sum);
}

namespace {

// The entry driver's backend on the host's threads: all rows in one chunk, values in host memory.
class HostEntries {
 public:
  HostEntries(const FormFactorGeometry &g, const FlatBvh &bvh, const std::vector<long long> &rows,
              const FormFactorOptions &options)
      : view_(ViewOf(g)), bvh_(bvh.View()), rows_(rows), options_(options), n_(view_.patchCount),
        values_(rows.size() * size_t(n_), 0.0), needsRays_(values_.size(), 0) {}

  long long ChunkRows() const { return std::max(1LL, (long long)rows_.size()); }
  long long StagingEntries() const { return (long long)values_.size(); }

  void ComputeEntries(long long first, long long count) {
    tbb::parallel_for(size_t(first), size_t(first + count), [&](size_t r) {
      FormFactorCounters &c = perThread_.local();
      const int i = int(rows_[r]);
      for (long long j = 0; j < n_; ++j) {
        const size_t e = r * size_t(n_) + size_t(j);
        c.Add(FormFactorEntry(view_, i, int(j), options_.pair, values_[e], needsRays_[e]));
      }
    });
  }

  void TraceRays(long long first, long long count) {
    tbb::parallel_for(size_t(first), size_t(first + count), [&](size_t r) {
      FormFactorCounters &c = perThread_.local();
      const int i = int(rows_[r]);
      double *row = values_.data() + r * size_t(n_);
      for (long long j = 0; j < n_; ++j) {
        if (!needsRays_[r * size_t(n_) + size_t(j)]) continue;
        uint32_t traced = 0;
        row[j] *= VisibilityOfEntry(view_, bvh_, i, int(j), options_.seed, options_.shadowRays, traced);
        c.rays += traced;
        ++c.pairsRayTraced;
      }
    });
  }

  // One chunk holds every row: the chunk's row `row` is row `row` of the rank.
  void ReadRows(long long row, long long count, double *to) const {
    std::copy_n(values_.data() + size_t(row * n_), size_t(count * n_), to);
  }

  void AddCounters(FormFactorCounters &counters) {
    perThread_.combine_each([&](const FormFactorCounters &c) { counters.Add(c); });
  }

 private:
  const GeometryView view_;
  const BvhView bvh_;
  const std::vector<long long> &rows_;
  const FormFactorOptions &options_;
  const long long n_;
  std::vector<double> values_;
  std::vector<uint8_t> needsRays_;
  tbb::combinable<FormFactorCounters> perThread_;
};

}  // namespace

void ComputeRowsWithPairKernels(const FormFactorGeometry &g, const FlatBvh &bvh, const std::vector<long long> &rows,
                                const FormFactorOptions &options, std::vector<double> &out,
                                FormFactorCounters &counters) {
  HostEntries entries(g, bvh, rows, options);
  PhaseTimers timers;  // the tests and benches time the call as a whole
  ComputeRowsByEntries(entries, (long long)rows.size(), (long long)g.patches.size(), options.normalizeRows, out,
                       timers, counters, "form factors (pair kernels)", false);
}

}  // namespace rad
