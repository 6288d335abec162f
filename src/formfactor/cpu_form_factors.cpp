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

// Which of every rank's rows round k of `count` takes: the k-th share of each rank's rows, less those done
// before (per patch, 1 in `mask`).
void MarkRound(const std::vector<std::vector<long long>> &rowsOfRank, int k, int count, const std::vector<uint8_t> &done,
               std::vector<uint8_t> &mask) {
  std::fill(mask.begin(), mask.end(), uint8_t(0));
  for (const std::vector<long long> &theirs : rowsOfRank) {
    const size_t begin = theirs.size() * size_t(k) / size_t(count), end = theirs.size() * size_t(k + 1) / size_t(count);
    for (size_t a = begin; a < end; ++a)
      if (done.empty() || !done[size_t(theirs[a])]) mask[size_t(theirs[a])] = 1;
  }
}

template <typename T>
void ComputeRows(const FormFactorGeometry &g, const EmbreeScene &embree, const std::vector<long long> &rows,
                 const FormFactorOptions &options, std::vector<T> &out, PhaseTimers &timers,
                 FormFactorCounters &counters, bool showProgress, const RowOwners *owners, const RowRounds *rounds) {
  // Double rows take each value as computed and are scaled by the rays' fraction in place; float rows round a
  // value only once it is final, so pairs left to rays keep their two values in double until then.
  constexpr bool kHeldAsComputed = std::is_same_v<T, double>;
  const long long n = (long long)g.patches.size();
  const size_t local = rows.size();
  const int roundCount = rounds != nullptr ? std::max(1, rounds->count) : 1;
  const std::vector<uint8_t> noneDone;
  const std::vector<uint8_t> &doneBefore = rounds != nullptr ? rounds->done : noneDone;
  auto pending = [&](size_t r) { return doneBefore.empty() || !doneBefore[size_t(rows[r])]; };
  ReverseEntries<T> remote;  // entries (j, i) of rows held elsewhere, computed here
  auto allocate = [&] {
    out.assign(local * size_t(n), T(0));
    if (owners != nullptr) {
      int rank = 0;
      MPI_Comm_rank(owners->comm, &rank);
      remote = ReverseEntries<T>(*owners, rank, rows, doneBefore.empty() ? nullptr : &doneBefore);
    }
  };
  if (owners != nullptr)
    AllocateOnEveryRank(owners->comm, "the rank's rows of F and the pair exchange's buffer", allocate);
  else
    allocate();
  if (rounds != nullptr && rounds->restore) rounds->restore();
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
  // In rounds: every rank's rows, to know which rows each round takes everywhere, and which are done.
  const bool inRounds = owners != nullptr && rounds != nullptr;
  std::vector<std::vector<long long>> rowsOfRank;
  std::vector<uint8_t> roundMask, doneNow;
  if (inRounds) {
    for (int p = 0; p < ranks; ++p) rowsOfRank.push_back(OwnedRows(n, p, ranks, owners->distribution));
    roundMask.assign(size_t(n), 0);
    doneNow = doneBefore.empty() ? std::vector<uint8_t>(size_t(n), 0) : doneBefore;
  }
  long long pendingRows = 0;
  for (size_t r = 0; r < local; ++r) pendingRows += pending(r) ? 1 : 0;
  // One bar for the kernel over all rounds; the rays' own bar only in one round (two bars would share a line).
  Progress kernelProgress("form factors", pendingRows, showProgress);

  for (int k = 0; k < roundCount; ++k) {
    const size_t roundBegin = local * size_t(k) / size_t(roundCount), roundEnd = local * size_t(k + 1) / size_t(roundCount);
    {
      ScopedPhase phase(timers, "form-factor kernel");
      tbb::parallel_for(tbb::blocked_range<size_t>(roundBegin, roundEnd, 1), [&](const tbb::blocked_range<size_t> &range) {
        FormFactorCounters &c = perThread.local();
        std::vector<ClusterWalk> walkOf(static_cast<size_t>(n));  // per patch j: its cluster's walk from row i (WalkCluster)
        std::vector<int32_t> nearbyIds;
        const bool rays = options.pair.visibility == VisibilityMethod::kRays;
        std::vector<int32_t> sent(size_t(ranks), 0);  // per owner: entries of this row written to its part so far
        const GeometryView view = ViewOf(g);
        for (size_t r = range.begin(); r != range.end(); ++r) {
          if (!pending(r)) continue;
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
          kernelProgress.Advance();
        }
      });
    }
    if (roundCount == 1) kernelProgress.Finish();

    {
      ScopedPhase phase(timers, "visibility rays");
      Progress progress("form factors (shadow rays)", (long long)local, showProgress && roundCount == 1);
      const EmbreeShadowRays occluded{embree};
      tbb::parallel_for(tbb::blocked_range<size_t>(roundBegin, roundEnd, 1), [&](const tbb::blocked_range<size_t> &range) {
        FormFactorCounters &c = perThread.local();
        for (size_t r = range.begin(); r != range.end(); ++r) {
          const int i = int(rows[r]);
          T *row = out.data() + r * size_t(n);
          for (size_t e = 0; e < needsRays[r].size(); ++e) {
            const int32_t j = needsRays[r][e].j, slot = needsRays[r][e].slot;
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
              const auto [value, reverse] = pendingValues[r][e];
              row[j] = T(value * v);
              if (mirror) *mirror = T(reverse * v);
            }
            if (mirror) ++c.pairsRayTraced;
          }
          std::vector<RayEntry>().swap(needsRays[r]);
          if constexpr (!kHeldAsComputed) std::vector<std::pair<double, double>>().swap(pendingValues[r]);
          progress.Advance();
        }
      });
    }

    if (owners != nullptr) {
      ScopedPhase phase(timers, "pair exchange");
      if (!inRounds) {
        ExchangeReverseEntries(*owners, rows, remote, out);
      } else {
        MarkRound(rowsOfRank, k, roundCount, doneBefore, roundMask);
        ExchangeReverseEntries(*owners, rows, remote, out, &roundMask);
        for (long long i = 0; i < n; ++i) doneNow[size_t(i)] |= roundMask[size_t(i)];
      }
    }
    if (inRounds && rounds->after) {
      FormFactorCounters soFar;
      for (const FormFactorCounters &c : perThread) soFar.Add(c);
      rounds->after(doneNow, soFar);
    }
  }
  kernelProgress.Finish();
  remote = ReverseEntries<T>();
  std::vector<std::vector<RayEntry>>().swap(needsRays);
  std::vector<std::vector<std::pair<double, double>>>().swap(pendingValues);

  // Only now is every row complete: other rows' pairs wrote into it.
  if (options.normalizeRows)
    tbb::parallel_for(size_t(0), local, [&](size_t r) { NormalizeRow(out.data() + r * size_t(n), n); });

  for (const FormFactorCounters &c : perThread) counters.Add(c);
}

}  // namespace

void ComputeRowsCpu(const FormFactorGeometry &g, const EmbreeScene &embree, const std::vector<long long> &rows,
                    const FormFactorOptions &options, std::vector<double> &out, PhaseTimers &timers,
                    FormFactorCounters &counters, bool showProgress, const RowOwners *owners,
                    const RowRounds *rounds) {
  ComputeRows(g, embree, rows, options, out, timers, counters, showProgress, owners, rounds);
}

void ComputeRowsCpu(const FormFactorGeometry &g, const EmbreeScene &embree, const std::vector<long long> &rows,
                    const FormFactorOptions &options, std::vector<float> &out, PhaseTimers &timers,
                    FormFactorCounters &counters, bool showProgress, const RowOwners *owners,
                    const RowRounds *rounds) {
  ComputeRows(g, embree, rows, options, out, timers, counters, showProgress, owners, rounds);
}

}  // namespace rad
