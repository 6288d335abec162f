#include "formfactor/cpu_form_factors.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <type_traits>
#include <utility>

#include "formfactor/kernel_form_factors.h"
#include "formfactor/pair.h"
#include "formfactor/visibility.h"
#include "util/memory_budget.h"
#include "util/progress.h"

namespace rad {

namespace {

// A pair left to shadow rays: its column, and where its reverse entry sits in the part of ReverseEntries for
// column j's owner (-1: not held elsewhere).
struct RayEntry {
  int32_t j;
  int32_t slot;
};

template <typename T>
void ComputeRows(const FormFactorGeometry &g, const EmbreeScene &embree, const std::vector<long long> &rows,
                 const FormFactorOptions &options, std::vector<T> &out, PhaseTimers &timers,
                 FormFactorCounters &counters, bool showProgress, const RowOwners *owners) {
  // Double rows take each value as computed and are scaled by the rays' fraction in place; float rows round a
  // value only once it is final, so pairs left to rays keep their two values in double until then.
  constexpr bool kHeldAsComputed = std::is_same_v<T, double>;
  const long long n = (long long)g.patches.size();
  const size_t local = rows.size();
  ReverseEntries<T> remote;  // entries (j, i) of rows held elsewhere, computed here
  auto allocate = [&] {
    out.assign(local * size_t(n), T(0));
    if (owners != nullptr) {
      int rank = 0;
      MPI_Comm_rank(owners->comm, &rank);
      remote = ReverseEntries<T>(*owners, rank, rows);
    }
  };
  if (owners != nullptr)
    AllocateOnEveryRank(owners->comm, "the rank's rows of F and the pair exchange's buffer", allocate);
  else
    allocate();
  std::vector<std::vector<RayEntry>> needsRays(local);
  std::vector<std::vector<std::pair<double, double>>> pendingValues(kHeldAsComputed ? 0 : local);
  tbb::enumerable_thread_specific<FormFactorCounters> perThread;
  // Where each row is in `out`, or -1 when it is not computed here; and whether another rank holds it.
  std::vector<long long> localRow(size_t(n), -1);
  for (size_t r = 0; r < local; ++r) localRow[size_t(rows[r])] = (long long)r;
  auto elsewhere = [&](int j) { return owners != nullptr && localRow[size_t(j)] < 0; };
  // The entry (j, i) of a pair computed from row i: in `out` when row j is here, else nowhere.
  auto reverseEntry = [&](int i, int j) -> T * {
    const long long rj = localRow[size_t(j)];
    return rj >= 0 && j != i ? out.data() + size_t(rj) * size_t(n) + size_t(i) : nullptr;
  };
  const int ranks = owners != nullptr ? owners->ranks : 1;

  {
    ScopedPhase phase(timers, "form-factor kernel");
    Progress progress("form factors", (long long)local, showProgress);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, local, 1), [&](const tbb::blocked_range<size_t> &range) {
      FormFactorCounters &c = perThread.local();
      std::vector<ClusterWalk> walkOf(static_cast<size_t>(n));  // per patch j: its cluster's walk from row i (WalkCluster)
      std::vector<int32_t> nearbyIds;
      const bool rays = options.pair.visibility == VisibilityMethod::kRays;
      std::vector<int32_t> sent(size_t(ranks), 0);  // per owner: entries of this row written to its part so far
      const GeometryView view = ViewOf(g);
      for (size_t r = range.begin(); r != range.end(); ++r) {
        const int i = int(rows[r]);
        T *row = out.data() + r * size_t(n);
        std::fill(sent.begin(), sent.end(), 0);
        nearbyIds.clear();
        for (const PatchCluster &cluster : g.clusters)  // one walk for a run of coplanar receivers
          std::fill_n(walkOf.begin() + cluster.first, cluster.count,
                      WalkCluster(view, g.patches[size_t(i)], cluster, rays, nearbyIds));
        for (int j = 0; j < n; ++j) {
          const bool away = elsewhere(j);
          const bool held = localRow[size_t(j)] >= 0 || away;
          if (held && j != i && !ComputesPair(i, j)) continue;  // row j's computation writes it
          const PairResult p = FormFactorPair(view, i, j, options.pair, walkOf[size_t(j)].clear,
                                              walkOf[size_t(j)].Nearby(nearbyIds));
          c.Add(p);
          T *mirror = reverseEntry(i, j);
          int32_t slot = -1;
          if (away) {
            const int owner = remote.OwnerOf(j);
            slot = sent[size_t(owner)]++;
            mirror = remote.Part(owner, r) + slot;
          }
          if (mirror) c.AddReverse(p);
          if (kHeldAsComputed || !p.needsRays) {
            row[j] = T(p.value);
            if (mirror) *mirror = T(p.reverse);
          } else {
            pendingValues[r].push_back({p.value, p.reverse});
          }
          if (p.needsRays) needsRays[r].push_back({j, slot});
        }
        progress.Advance();
      }
    });
  }

  {
    ScopedPhase phase(timers, "visibility rays");
    Progress progress("form factors (shadow rays)", (long long)local, showProgress);
    const EmbreeShadowRays occluded{embree};
    tbb::parallel_for(tbb::blocked_range<size_t>(0, local, 1), [&](const tbb::blocked_range<size_t> &range) {
      FormFactorCounters &c = perThread.local();
      for (size_t r = range.begin(); r != range.end(); ++r) {
        const int i = int(rows[r]);
        T *row = out.data() + r * size_t(n);
        for (size_t k = 0; k < needsRays[r].size(); ++k) {
          const int32_t j = needsRays[r][k].j, slot = needsRays[r][k].slot;
          uint32_t traced = 0;
          const double v = VisibleFraction(g.patches[i], g.patches[j], uint32_t(i), uint32_t(j), options.seed,
                                           options.shadowRays, occluded, traced);
          c.rays += traced;
          ++c.pairsRayTraced;
          // The visible fraction is symmetric (visibility.h): it multiplies the reverse entry too.
          T *mirror = slot >= 0 ? remote.Part(remote.OwnerOf(j), r) + slot : reverseEntry(i, j);
          if constexpr (kHeldAsComputed) {
            row[j] *= v;
            if (mirror) *mirror *= v;
          } else {
            const auto [value, reverse] = pendingValues[r][k];
            row[j] = T(value * v);
            if (mirror) *mirror = T(reverse * v);
          }
          if (mirror) ++c.pairsRayTraced;
        }
        progress.Advance();
      }
    });
  }
  std::vector<std::vector<RayEntry>>().swap(needsRays);
  std::vector<std::vector<std::pair<double, double>>>().swap(pendingValues);

  if (owners != nullptr) {
    ScopedPhase phase(timers, "pair exchange");
    ExchangeReverseEntries(*owners, rows, remote, out);
  }

  // Only now is every row complete: other rows' pairs wrote into it.
  if (options.normalizeRows)
    tbb::parallel_for(size_t(0), local, [&](size_t r) { NormalizeRow(out.data() + r * size_t(n), n); });

  for (const FormFactorCounters &c : perThread) counters.Add(c);
}

}  // namespace

void ComputeRowsCpu(const FormFactorGeometry &g, const EmbreeScene &embree, const std::vector<long long> &rows,
                    const FormFactorOptions &options, std::vector<double> &out, PhaseTimers &timers,
                    FormFactorCounters &counters, bool showProgress, const RowOwners *owners) {
  ComputeRows(g, embree, rows, options, out, timers, counters, showProgress, owners);
}

void ComputeRowsCpu(const FormFactorGeometry &g, const EmbreeScene &embree, const std::vector<long long> &rows,
                    const FormFactorOptions &options, std::vector<float> &out, PhaseTimers &timers,
                    FormFactorCounters &counters, bool showProgress, const RowOwners *owners) {
  ComputeRows(g, embree, rows, options, out, timers, counters, showProgress, owners);
}

}  // namespace rad
