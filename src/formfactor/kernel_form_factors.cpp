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

void ComputeEntriesOnHost(const GeometryView &view, const long long *rows, long long n, const long long *entries,
                          long long count, const PairSettings &settings, double *values, uint8_t *needs,
                          FormFactorCounters &counters) {
  tbb::combinable<FormFactorCounters> perThread;
  tbb::parallel_for(0LL, count, [&](long long k) {
    const long long e = entries[k];
    perThread.local().Add(FormFactorEntry(view, int(rows[e / n]), int(e % n), settings, values[k], needs[k]));
  });
  perThread.combine_each([&](const FormFactorCounters &c) { counters.Add(c); });
  counters.pairsDeferred += count;
}

namespace {

// The entry driver's backend on the host's threads: all rows in one chunk, values in host memory.
class HostEntries {
 public:
  HostEntries(const FormFactorGeometry &g, const FlatBvh &bvh, const std::vector<long long> &rows,
              const FormFactorOptions &options)
      : view_(ViewOf(g)), bvh_(bvh.View()), rows_(rows), options_(options),
        limited_(WithDeviceWorkLimit(options.pair, options.deviceWorkLimit)), n_(view_.patchCount), values_(rows.size() * size_t(n_), 0.0),
        needsRays_(values_.size(), 0) {}

  long long ChunkRows() const { return std::max(1LL, (long long)rows_.size()); }
  long long StagingEntries() const { return (long long)values_.size(); }

  void ComputeEntries(long long first, long long count) {
    tbb::parallel_for(size_t(first), size_t(first + count), [&](size_t r) {
      FormFactorCounters &c = perThread_.local();
      const int i = int(rows_[r]);
      for (long long j = 0; j < n_; ++j) {
        const size_t e = r * size_t(n_) + size_t(j);
        c.Add(FormFactorEntry(view_, i, int(j), limited_, values_[e], needsRays_[e]));
      }
    });
    // The entries past the work limit, computed again without it, as the GPU backend does.
    std::vector<long long> deferred;
    for (size_t e = size_t(first * n_); e < size_t((first + count) * n_); ++e)
      if (needsRays_[e] == kEntryDeferred) deferred.push_back((long long)e);
    std::vector<double> values(deferred.size());
    std::vector<uint8_t> needs(deferred.size());
    FormFactorCounters &c = perThread_.local();
    ComputeEntriesOnHost(view_, rows_.data(), n_, deferred.data(), (long long)deferred.size(), options_.pair,
                         values.data(), needs.data(), c);
    for (size_t k = 0; k < deferred.size(); ++k) {
      values_[size_t(deferred[k])] = values[k];
      needsRays_[size_t(deferred[k])] = needs[k];
    }
  }

  void TraceRays(long long first, long long count) {
    tbb::parallel_for(size_t(first), size_t(first + count), [&](size_t r) {
      FormFactorCounters &c = perThread_.local();
      const int i = int(rows_[r]);
      double *row = values_.data() + r * size_t(n_);
      for (long long j = 0; j < n_; ++j) {
        if (needsRays_[r * size_t(n_) + size_t(j)] != kEntryNeedsRays) continue;
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
  const PairSettings limited_;  // options_.pair with the device's work limit
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
