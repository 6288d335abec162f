#include "formfactor/kernel_form_factors.h"

#include <tbb/combinable.h>
#include <tbb/parallel_for.h>

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

void ComputeRowsWithPairKernels(const FormFactorGeometry &g, const FlatBvh &bvh, const std::vector<long long> &rows,
                                const FormFactorOptions &options, std::vector<double> &out,
                                FormFactorCounters &counters) {
  const GeometryView view = ViewOf(g);
  const BvhView bvhView = bvh.View();
  const long long n = view.patchCount;
  out.assign(rows.size() * size_t(n), 0.0);
  std::vector<uint8_t> needsRays(out.size(), 0);
  tbb::combinable<FormFactorCounters> perThread;
  tbb::parallel_for(size_t(0), rows.size(), [&](size_t r) {
    FormFactorCounters &c = perThread.local();
    const int i = int(rows[r]);
    for (long long j = 0; j < n; ++j) {
      const size_t e = r * size_t(n) + size_t(j);
      c.Add(FormFactorEntry(view, i, int(j), options.pair, out[e], needsRays[e]));
    }
  });
  tbb::parallel_for(size_t(0), rows.size(), [&](size_t r) {
    FormFactorCounters &c = perThread.local();
    const int i = int(rows[r]);
    double *row = out.data() + r * size_t(n);
    for (long long j = 0; j < n; ++j) {
      if (!needsRays[r * size_t(n) + size_t(j)]) continue;
      uint32_t traced = 0;
      row[j] *= VisibilityOfEntry(view, bvhView, i, int(j), options.seed, options.shadowRays, traced);
      c.rays += traced;
      ++c.pairsRayTraced;
    }
    if (options.normalizeRows) NormalizeRow(row, n);
  });
  perThread.combine_each([&](const FormFactorCounters &c) { counters.Add(c); });
}

}  // namespace rad
