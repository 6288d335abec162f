#include "formfactor/sparse_form_factors.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <utility>

#include "formfactor/far_field.h"
#include "formfactor/pair.h"
#include "util/error.h"
#include "util/mpi_check.h"
#include "util/progress.h"

namespace rad {

namespace {

// The walk of row i's tree from the nodes `start` (the root, or what the elements above row i handed down):
// `evaluate(j)` for every patch j that may share an entry at or above `dropBelow` with i, `skipNode(node, smooth)`
// and `skipPatch(j)` for the nodes and patches left out by their bound. With `smoothLinks` (far links only: the
// sparse operator keeps every entry at or above its threshold), a node whose link is smooth (SmoothLink) is
// left out too, whatever its entries. Nodes and patches wholly behind patch i (whose entries are 0) are none of
// these.
template <typename Evaluate, typename SkipNode, typename SkipPatch>
void WalkRow(const std::vector<Patch> &patches, const PatchTree &tree, long long i, const int32_t *start,
             size_t startCount, double dropBelow, bool smoothLinks, Evaluate &&evaluate, SkipNode &&skipNode,
             SkipPatch &&skipPatch) {
  if (tree.nodes.empty()) return;
  const Patch &p = patches[size_t(i)];
  const PatchSphere &sphere = tree.patchSpheres[size_t(i)];
  std::vector<int32_t> stack(std::make_reverse_iterator(start + startCount), std::make_reverse_iterator(start));
  while (!stack.empty()) {
    const PatchTreeNode &node = tree.nodes[size_t(stack.back())];
    stack.pop_back();
    if (BehindPatch(p, node.sphere)) continue;
    const bool skippable = NodeBound(p, sphere, node) < dropBelow;
    if (skippable && EstimatedWhole(p, sphere, node, dropBelow)) {
      skipNode(node, false);
      continue;
    }
    if (!skippable && smoothLinks && SmoothLink(p, sphere, node, dropBelow)) {
      skipNode(node, true);
      continue;
    }
    if (!node.IsLeaf()) {
      stack.push_back(node.right);  // left first
      stack.push_back(node.left);
      continue;
    }
    for (int32_t k = node.first; k < node.first + node.count; ++k) {
      const int32_t j = tree.order[size_t(k)];
      const PatchSphere &other = tree.patchSpheres[size_t(j)];
      const Patch &q = patches[size_t(j)];
      if (j == i || q.face == p.face || BehindPatch(p, other) || BehindPatch(q, sphere)) continue;
      if (PairBound(p, sphere, q, other) < dropBelow) skipPatch(j);
      else evaluate(j);
    }
  }
}

// Where row r's walk starts: the root, or what the elements above it handed down.
struct RowStart {
  const int32_t *nodes;
  size_t count;
};
RowStart StartOf(const ElementWalk *walk, size_t r) {
  static const int32_t root = 0;
  if (walk == nullptr) return {&root, 1};
  return {walk->start[r].data(), walk->start[r].size()};
}

}  // namespace

std::vector<long long> CountSparseCandidates(const std::vector<Patch> &patches, const PatchTree &tree,
                                             const std::vector<long long> &rows, double dropBelow,
                                             const ElementWalk *walk, std::vector<long long> *skipped,
                                             bool smoothLinks) {
  std::vector<long long> counts(rows.size(), 0);
  if (skipped != nullptr) skipped->assign(rows.size(), 0);
  tbb::parallel_for(size_t(0), rows.size(), [&](size_t r) {
    long long count = 0, skips = 0;
    const RowStart from = StartOf(walk, r);
    WalkRow(patches, tree, rows[r], from.nodes, from.count, dropBelow, smoothLinks, [&](int32_t) { ++count; },
            [&](const PatchTreeNode &, bool) { ++skips; }, [&](int32_t) { ++skips; });
    counts[r] = count;
    if (skipped != nullptr) (*skipped)[r] = skips;
  });
  return counts;
}

void ComputeSparseRowsCpu(const FormFactorGeometry &g, const EmbreeScene &embree, const PatchTree &tree,
                          const std::vector<long long> &candidateCounts, double dropBelow, bool farLinks,
                          const FormFactorOptions &options, FormFactorRows &out, PhaseTimers &timers,
                          FormFactorCounters &counters, SparseCounters &sparse, bool showProgress,
                          const RowOwners *owners, const ElementWalk *walk) {
  RAD_CHECK(walk == nullptr || farLinks, "ComputeSparseRowsCpu: elements take far links only");
  if (!(dropBelow > 0)) throw InputError("the sparse operator needs a drop threshold above 0");
  RAD_CHECK(candidateCounts.size() == out.rows.size(), "ComputeSparseRowsCpu: one candidate count per row");
  const size_t local = out.rows.size();
  const long long n = (long long)g.patches.size();
  tbb::enumerable_thread_specific<FormFactorCounters> perThread;
  tbb::enumerable_thread_specific<SparseCounters> sparsePerThread;
  const EmbreeShadowRays occluded{embree};

  // Each row's candidates (columns ascending) and values side by side, in one array over the rank's rows.
  std::vector<long long> start(local + 1, 0);
  for (size_t r = 0; r < local; ++r) start[r + 1] = start[r] + candidateCounts[r];
  std::vector<int32_t> columns(static_cast<size_t>(start[local]));
  std::vector<double> values(columns.size(), 0.0);
  // Whether each evaluated entry is kept: with far links every non-zero one is, and its value says so, so
  // the flags are held for the sparse operator only.
  std::vector<uint8_t> keep(farLinks ? 0 : columns.size(), 0);
  auto setKept = [&](long long k, uint8_t kept) {
    if (!farLinks) keep[size_t(k)] = kept;
  };
  std::vector<double> dropped(local, 0.0);
  const std::vector<int32_t> localRow = LocalRows(size_t(n), out.rows);
  // Far links: each row's in arrays of their own, filled from a thread's scratch once the row's walk is done,
  // and joined into one after all rows. (Arrays sized by the walk's skips, the bound the memory check takes,
  // held three slots per link on a city.)
  std::vector<std::vector<int32_t>> rowTargets(farLinks ? local : 0);
  std::vector<std::vector<double>> rowValues(farLinks ? local : 0);
  struct LinkScratch {
    std::vector<int32_t> targets;
    std::vector<double> values;
  };
  tbb::enumerable_thread_specific<LinkScratch> linkScratch;

  {
    ScopedPhase phase(timers, "sparse walk");
    tbb::parallel_for(size_t(0), local, [&](size_t r) {
      SparseCounters &s = sparsePerThread.local();
      const int32_t i = int32_t(out.rows[r]);
      const Patch &pi = g.patches[size_t(i)];
      long long k = start[r];
      LinkScratch &scratch = linkScratch.local();
      auto link = [&](int32_t target, double value) {
        scratch.targets.push_back(target);
        scratch.values.push_back(value);
      };
      auto candidate = [&](int32_t j) {
        RAD_CHECK(k < start[r + 1], "ComputeSparseRowsCpu: more candidates than counted");
        columns[size_t(k++)] = j;
      };
      auto skipNode = [&](const PatchTreeNode &node, bool smooth) {
        // The cluster estimate (opened where the node is wide for its distance) times its visible share.
        const int32_t index = int32_t(&node - tree.nodes.data());
        const double estimate = OpenedClusterEstimate(g.patches, tree, pi, index, kOpening);
        if (estimate > 0) {
          uint32_t traced = 0;
          const double value =
              estimate *
              VisibleShare(g.patches, &i, 1, tree, node, options.seed, occluded, traced,
                           FarLinkRays(smooth, estimate, dropBelow)).share;
          perThread.local().rays += traced;
          if (farLinks) {
            if (value > 0) {
              link(index, value);
              s.smoothLinks += smooth;
            }
          } else {
            dropped[r] += value;
          }
        }
        ++s.nodesSkipped;
      };
      auto skipPatch = [&](int32_t j) {  // with one shadow ray between the centroids: a ray costs little
        const Patch &pj = g.patches[size_t(j)];
        const double estimate = PatchEstimate(pi, pj);
        if (estimate > 0 && !occluded(pi.centroid, pj.centroid)) {
          if (farLinks) link(-(j + 1), estimate);
          else dropped[r] += estimate;
        }
        ++s.patchesSkipped;
      };
      const RowStart from = StartOf(walk, r);
      WalkRow(g.patches, tree, i, from.nodes, from.count, dropBelow, farLinks, candidate, skipNode, skipPatch);
      if (farLinks) {
        rowTargets[r].assign(scratch.targets.begin(), scratch.targets.end());
        rowValues[r].assign(scratch.values.begin(), scratch.values.end());
        scratch.targets.clear();
        scratch.values.clear();
      }
      RAD_CHECK(k == start[r + 1], "ComputeSparseRowsCpu: fewer candidates than counted");
      std::sort(columns.begin() + start[r], columns.begin() + start[r + 1]);
      s.candidates += start[r + 1] - start[r];
    });
  }

  // The run of coplanar patches (geometry.h, with the occluder BVH) each patch belongs to.
  std::vector<int32_t> clusterOf;
  if (!g.clusters.empty()) {
    clusterOf.assign(size_t(n), 0);
    for (size_t c = 0; c < g.clusters.size(); ++c)
      std::fill_n(clusterOf.begin() + g.clusters[c].first, g.clusters[c].count, int32_t(c));
  }
  // Where row j holds column i among its candidates, or -1 (row j elsewhere, or i not its candidate).
  auto slotOf = [&](int32_t j, int32_t i) -> long long {
    const int32_t rj = localRow[size_t(j)];
    if (rj < 0) return -1;
    const auto begin = columns.begin() + start[size_t(rj)], end = columns.begin() + start[size_t(rj) + 1];
    const auto it = std::lower_bound(begin, end, i);
    return it != end && *it == i ? (long long)(it - columns.begin()) : -1;
  };
  // One pair from row i's side: F_ij and F_ji with the dense operator's bits, and whether the pair is kept.
  struct Evaluated {
    PairResult pair;
    double value = 0, reverse = 0;
    uint8_t kept = 0;
  };
  auto evaluate = [&](const GeometryView &view, int i, int j, bool clearOfOccluders, const NearbyOccluders &nearby,
                      FormFactorCounters &c, SparseCounters &s) {
    Evaluated e;
    e.pair = FormFactorPair(view, i, j, options.pair, clearOfOccluders, nearby);
    c.Add(e.pair);
    ++s.pairsEvaluated;
    e.value = e.pair.value;
    e.reverse = e.pair.reverse;
    if (e.pair.needsRays) {  // as the dense operator: the visible fraction multiplies both entries
      uint32_t traced = 0;
      const double v = VisibleFraction(g.patches[size_t(i)], g.patches[size_t(j)], uint32_t(i), uint32_t(j),
                                       options.seed, options.shadowRays, occluded, traced);
      c.rays += traced;
      ++c.pairsRayTraced;
      e.value *= v;
      e.reverse *= v;
    }
    // With far links every evaluated entry is kept: nothing is dropped, the far field is linked.
    e.kept = e.value != 0 && (farLinks || e.value >= dropBelow || e.reverse >= dropBelow);
    return e;
  };

  // Pairs across ranks, each evaluated once: a row i here asks the rank of row j for the pairs that
  // ComputesPair gives to j; that rank evaluates them (filling its own slot of row j too, when it has one)
  // and answers with F_ij and the keep flag. The rest of a row's remote pairs are evaluated here below.
  std::vector<uint8_t> done(owners != nullptr && owners->ranks > 1 ? columns.size() : 0, 0);
  if (owners != nullptr && owners->ranks > 1) {
    ScopedPhase phase(timers, "sparse pair exchange");
    const int ranks = owners->ranks;
    std::vector<std::vector<int32_t>> ask(static_cast<size_t>(ranks));  // (j, i) pairs for the owner of j
    std::vector<std::vector<long long>> askSlot(static_cast<size_t>(ranks));
    for (size_t r = 0; r < local; ++r)
      for (long long k = start[r]; k < start[r + 1]; ++k) {
        const int32_t j = columns[size_t(k)], i = int32_t(out.rows[r]);
        if (localRow[size_t(j)] >= 0 || ComputesPair(i, j)) continue;
        const int q = owners->OwnerOf(j);
        ask[size_t(q)].push_back(j);
        ask[size_t(q)].push_back(i);
        askSlot[size_t(q)].push_back(k);
      }
    const size_t rankCount = static_cast<size_t>(ranks);
    std::vector<int> sendCounts(rankCount), recvCounts(rankCount), sendAt(rankCount, 0), recvAt(rankCount, 0);
    for (int q = 0; q < ranks; ++q) sendCounts[size_t(q)] = int(ask[size_t(q)].size());
    RAD_MPI(MPI_Alltoall(sendCounts.data(), 1, MPI_INT, recvCounts.data(), 1, MPI_INT, owners->comm));
    for (int q = 1; q < ranks; ++q) {
      sendAt[size_t(q)] = sendAt[size_t(q) - 1] + sendCounts[size_t(q) - 1];
      recvAt[size_t(q)] = recvAt[size_t(q) - 1] + recvCounts[size_t(q) - 1];
    }
    std::vector<int32_t> asked, incoming(size_t(recvAt.back() + recvCounts.back()));
    for (const auto &a : ask) asked.insert(asked.end(), a.begin(), a.end());
    RAD_MPI(MPI_Alltoallv(asked.data(), sendCounts.data(), sendAt.data(), MPI_INT32_T, incoming.data(),
                          recvCounts.data(), recvAt.data(), MPI_INT32_T, owners->comm));
    // Evaluate what was asked of this rank: (j here, i there), from row j's side.
    const size_t requests = incoming.size() / 2;
    std::vector<double> answer(requests);
    std::vector<uint8_t> answerKept(requests);
    tbb::parallel_for(size_t(0), requests, [&](size_t m) {
      const int j = incoming[2 * m], i = incoming[2 * m + 1];
      const Evaluated e = evaluate(ViewOf(g), j, i, false, NearbyOccluders{}, perThread.local(), sparsePerThread.local());
      perThread.local().AddReverse(e.pair);
      answer[m] = e.reverse;
      answerKept[m] = e.kept;
      const long long slot = slotOf(j, i);
      if (slot >= 0) {
        values[size_t(slot)] = e.value;
        setKept(slot, e.kept);
        done[size_t(slot)] = 1;
      }
    });
    // Send the answers back (one per pair asked, in the order asked).
    for (int q = 0; q < ranks; ++q) {
      sendCounts[size_t(q)] = recvCounts[size_t(q)] / 2;
      recvCounts[size_t(q)] = int(askSlot[size_t(q)].size());
    }
    for (int q = 1; q < ranks; ++q) {
      sendAt[size_t(q)] = sendAt[size_t(q) - 1] + sendCounts[size_t(q) - 1];
      recvAt[size_t(q)] = recvAt[size_t(q) - 1] + recvCounts[size_t(q) - 1];
    }
    const size_t answered = size_t(recvAt.back() + recvCounts.back());
    std::vector<double> got(answered);
    std::vector<uint8_t> gotKept(answered);
    RAD_MPI(MPI_Alltoallv(answer.data(), sendCounts.data(), sendAt.data(), MPI_DOUBLE, got.data(), recvCounts.data(),
                          recvAt.data(), MPI_DOUBLE, owners->comm));
    RAD_MPI(MPI_Alltoallv(answerKept.data(), sendCounts.data(), sendAt.data(), MPI_UINT8_T, gotKept.data(),
                          recvCounts.data(), recvAt.data(), MPI_UINT8_T, owners->comm));
    size_t m = 0;
    for (int q = 0; q < ranks; ++q)
      for (long long k : askSlot[size_t(q)]) {
        values[size_t(k)] = got[m];
        setKept(k, gotKept[m]);
        done[size_t(k)] = 1;
        ++m;
      }
  }

  {
    // A pair both of whose rows are here and hold each other as candidates is evaluated once, from the row
    // ComputesPair picks, which writes both slots (the bits are those of either side, pair.h).
    ScopedPhase phase(timers, "sparse form factors");
    Progress progress("form factors (sparse)", (long long)local, showProgress);
    // Per cluster, what its walk told the row at hand (WalkCluster; walked: whether it has been this row), and the
    // occluders it listed: with shadow rays a pair tests those few instead of walking the BVH (the shaft queries
    // were a third of a city's hierarchical run).
    const bool rays = options.pair.visibility == VisibilityMethod::kRays;
    struct ClusterState {
      std::vector<ClusterWalk> walks;
      std::vector<uint8_t> walked;
      std::vector<int32_t> ids;
    };
    tbb::enumerable_thread_specific<ClusterState> clusterPerThread(ClusterState{
        std::vector<ClusterWalk>(g.clusters.size()), std::vector<uint8_t>(g.clusters.size(), 0), {}});
    tbb::parallel_for(tbb::blocked_range<size_t>(0, local, 1), [&](const tbb::blocked_range<size_t> &range) {
      FormFactorCounters &c = perThread.local();
      SparseCounters &s = sparsePerThread.local();
      ClusterState &state = clusterPerThread.local();
      std::vector<int32_t> walked;
      const GeometryView view = ViewOf(g);
      for (size_t r = range.begin(); r != range.end(); ++r) {
        const int i = int(out.rows[r]);
        for (long long k = start[r]; k < start[r + 1]; ++k) {
          const int32_t j = columns[size_t(k)];
          if (!done.empty() && done[size_t(k)]) continue;  // filled by the pair exchange with another rank
          const long long mirror = slotOf(j, i);
          if (mirror >= 0 && !ComputesPair(i, j)) continue;  // row j's evaluation writes this slot
          if (localRow[size_t(j)] < 0 && !ComputesPair(i, j)) continue;  // row j's rank evaluates it
          // As the dense operator: one walk of the occluder BVH for the run of coplanar patches j belongs to.
          ClusterWalk walk;
          if (!clusterOf.empty()) {  // as the dense operator: one walk for the run of coplanar patches j is in
            const size_t cluster = size_t(clusterOf[size_t(j)]);
            if (!state.walked[cluster]) {
              state.walks[cluster] = WalkCluster(view, g.patches[size_t(i)], g.clusters[cluster], rays, state.ids);
              state.walked[cluster] = 1;
              walked.push_back(int32_t(cluster));
            }
            walk = state.walks[cluster];
          }
          const Evaluated e = evaluate(view, i, j, walk.clear, walk.Nearby(state.ids), c, s);
          values[size_t(k)] = e.value;
          setKept(k, e.kept);
          if (mirror >= 0) {
            c.AddReverse(e.pair);
            if (e.pair.needsRays) ++c.pairsRayTraced;
            values[size_t(mirror)] = e.reverse;
            setKept(mirror, e.kept);
          }
        }
        for (int32_t cluster : walked) state.walked[size_t(cluster)] = 0;  // the next row starts afresh
        walked.clear();
        state.ids.clear();
        progress.Advance();
      }
    });
  }

  // The kept entries moved to the front, row by row (in place: a row's kept entries never start after its
  // candidates); the others added to the row's dropped sum after its skipped estimates, in column order.
  SparseCounters &s = sparsePerThread.local();
  out.storage = Storage::kCsr;
  out.indptr.assign(1, 0);
  long long write = 0;
  for (size_t r = 0; r < local; ++r) {
    for (long long k = start[r]; k < start[r + 1]; ++k) {
      if (farLinks ? values[size_t(k)] != 0 : keep[size_t(k)] != 0) {
        columns[size_t(write)] = columns[size_t(k)];
        values[size_t(write)] = values[size_t(k)];
        ++write;
      } else if (values[size_t(k)] != 0) {
        dropped[r] += values[size_t(k)];
        ++s.droppedEntries;
      }
    }
    out.indptr.push_back(write);
  }
  s.kept += write;
  std::vector<uint8_t>().swap(keep);
  columns.resize(size_t(write));
  values.resize(size_t(write));
  columns.shrink_to_fit();  // the candidates' arrays held every candidate: a city keeps a third of them
  out.columns = std::move(columns);
  out.f32.clear();
  out.f64.clear();
  if (out.precision == Precision::kFloat) {
    out.f32.assign(values.begin(), values.end());  // each value rounded once, when final
  } else {
    values.shrink_to_fit();
    out.f64 = std::move(values);
  }
  out.dropped = std::move(dropped);
  out.links = FarLinks{};
  if (farLinks) {  // the rows' links joined, each row's arrays freed once copied
    out.links.ptr.assign(1, 0);
    long long total = 0;
    for (size_t r = 0; r < local; ++r) total += (long long)rowTargets[r].size();
    out.links.target.reserve(size_t(total));
    out.links.value.reserve(size_t(total));
    for (size_t r = 0; r < local; ++r) {
      out.links.target.insert(out.links.target.end(), rowTargets[r].begin(), rowTargets[r].end());
      out.links.value.insert(out.links.value.end(), rowValues[r].begin(), rowValues[r].end());
      std::vector<int32_t>().swap(rowTargets[r]);
      std::vector<double>().swap(rowValues[r]);
      out.links.ptr.push_back((long long)out.links.target.size());
    }
    s.links += total;
  }
  for (const FormFactorCounters &c : perThread) counters.Add(c);
  for (const SparseCounters &t : sparsePerThread) sparse.Add(t);
}

}  // namespace rad
