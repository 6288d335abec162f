#include "formfactor/cpu_form_factors.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>

#include "formfactor/kernel_form_factors.h"
#include "formfactor/pair.h"
#include "formfactor/visibility.h"
#include "util/progress.h"

namespace rad {

void ComputeRowsCpu(const FormFactorGeometry &g, const EmbreeScene &embree, const std::vector<long long> &rows,
                    const FormFactorOptions &options, std::vector<double> &out, PhaseTimers &timers,
                    FormFactorCounters &counters, bool showProgress, const RowOwners *owners) {
  const long long n = (long long)g.patches.size();
  const size_t local = rows.size();
  out.assign(local * size_t(n), 0.0);
  std::vector<std::vector<int32_t>> needsRays(local);
  // For each entry in needsRays: where its reverse entry sits in `remote` (rows held elsewhere), or -1.
  std::vector<std::vector<int32_t>> remoteSlot(local);
  tbb::enumerable_thread_specific<FormFactorCounters> perThread;
  // Where each row is in `out`, or -1 when it is not computed here; and whether another rank holds it.
  std::vector<long long> localRow(size_t(n), -1);
  for (size_t r = 0; r < local; ++r) localRow[size_t(rows[r])] = (long long)r;
  auto elsewhere = [&](int j) { return owners != nullptr && localRow[size_t(j)] < 0; };
  ReverseEntries remote(local);  // entries (j, i) of rows held elsewhere, computed here
  // The entry (j, i) of a pair computed from row i: in `out` when row j is here, else nowhere.
  auto reverseEntry = [&](int i, int j) -> double * {
    const long long rj = localRow[size_t(j)];
    return rj >= 0 && j != i ? out.data() + size_t(rj) * size_t(n) + size_t(i) : nullptr;
  };

  {
    ScopedPhase phase(timers, "form-factor kernel");
    Progress progress("form factors", (long long)local, showProgress);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, local, 1), [&](const tbb::blocked_range<size_t> &range) {
      FormFactorCounters &c = perThread.local();
      std::vector<uint8_t> clear(size_t(n), 0);
      const GeometryView view = ViewOf(g);
      for (size_t r = range.begin(); r != range.end(); ++r) {
        const int i = int(rows[r]);
        double *row = out.data() + r * size_t(n);
        for (const PatchCluster &cluster : g.clusters) {  // one walk for a run of coplanar receivers
          const uint8_t isClear = ClusterClearOfOccluders(view, g.patches[size_t(i)], cluster) ? 1 : 0;
          std::fill_n(clear.begin() + cluster.first, cluster.count, isClear);
        }
        for (int j = 0; j < n; ++j) {
          const bool held = localRow[size_t(j)] >= 0 || elsewhere(j);
          if (held && j != i && !ComputesPair(i, j)) continue;  // row j's computation writes it
          const PairResult p = FormFactorPair(view, i, j, options.pair, clear[size_t(j)] != 0);
          row[j] = p.value;
          c.Add(p);
          if (double *mirror = reverseEntry(i, j)) {
            *mirror = p.reverse;
            c.AddReverse(p);
          }
          const bool sent = elsewhere(j);
          if (sent) {
            remote[r].push_back(p.reverse);
            c.AddReverse(p);
          }
          if (p.needsRays) {
            needsRays[r].push_back(j);
            remoteSlot[r].push_back(sent ? int32_t(remote[r].size() - 1) : -1);
          }
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
        for (size_t k = 0; k < needsRays[r].size(); ++k) {
          const int32_t j = needsRays[r][k];
          uint32_t traced = 0;
          const double v = VisibleFraction(g.patches[i], g.patches[j], uint32_t(i), uint32_t(j), options.seed,
                                           options.shadowRays, occluded, traced);
          row[j] *= v;
          c.rays += traced;
          ++c.pairsRayTraced;
          // The visible fraction is symmetric (visibility.h): it multiplies the reverse entry too.
          double *mirror = remoteSlot[r][k] >= 0 ? &remote[r][size_t(remoteSlot[r][k])] : reverseEntry(i, j);
          if (mirror) {
            *mirror *= v;
            ++c.pairsRayTraced;
          }
        }
        progress.Advance();
      }
    });
  }

  if (owners != nullptr) {
    ScopedPhase phase(timers, "pair exchange");
    ExchangeReverseEntries(*owners, rows, remote, out);
  }

  // Only now is every row complete: other rows' pairs wrote into it.
  if (options.normalizeRows)
    tbb::parallel_for(size_t(0), local, [&](size_t r) { NormalizeRow(out.data() + r * size_t(n), n); });

  for (const FormFactorCounters &c : perThread) counters.Add(c);
}

}  // namespace rad
