#include "formfactor/cpu_form_factors.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "formfactor/kernel_form_factors.h"
#include "formfactor/pair.h"
#include "formfactor/visibility.h"
#include "util/progress.h"

namespace rad {

void ComputeRowsCpu(const FormFactorGeometry &g, const EmbreeScene &embree, const std::vector<long long> &rows,
                    const FormFactorOptions &options, std::vector<double> &out, PhaseTimers &timers,
                    FormFactorCounters &counters, bool showProgress) {
  const long long n = (long long)g.patches.size();
  const size_t local = rows.size();
  out.assign(local * size_t(n), 0.0);
  std::vector<std::vector<int32_t>> needsRays(local);
  tbb::enumerable_thread_specific<FormFactorCounters> perThread;

  {
    ScopedPhase phase(timers, "form-factor kernel");
    Progress progress("form factors", (long long)local, showProgress);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, local, 1), [&](const tbb::blocked_range<size_t> &range) {
      FormFactorCounters &c = perThread.local();
      for (size_t r = range.begin(); r != range.end(); ++r) {
        const int i = int(rows[r]);
        double *row = out.data() + r * size_t(n);
        for (int j = 0; j < n; ++j) {
          const PairResult p = FormFactorPair(g, i, j, options.pair);
          row[j] = p.value;
          c.Add(p);
          if (p.needsRays) needsRays[r].push_back(j);
        }
        progress.Advance();
      }
    });
  }

  {
    ScopedPhase phase(timers, "visibility rays");
    Progress progress("form factors (shadow rays)", (long long)local, showProgress);
    auto occluded = [&](Vec3 a, Vec3 b) { return embree.SegmentOccluded(a, b); };
    tbb::parallel_for(tbb::blocked_range<size_t>(0, local, 1), [&](const tbb::blocked_range<size_t> &range) {
      FormFactorCounters &c = perThread.local();
      for (size_t r = range.begin(); r != range.end(); ++r) {
        const int i = int(rows[r]);
        double *row = out.data() + r * size_t(n);
        for (int32_t j : needsRays[r]) {
          uint32_t traced = 0;
          const double v = VisibleFraction(g.patches[i], g.patches[j], uint32_t(i), uint32_t(j), options.seed,
                                           options.shadowRays, occluded, traced);
          row[j] *= v;
          c.rays += traced;
          ++c.pairsRayTraced;
        }
        if (options.normalizeRows) NormalizeRow(row, n);
        progress.Advance();
      }
    });
  }

  for (const FormFactorCounters &c : perThread) counters.Add(c);
}

}  // namespace rad
