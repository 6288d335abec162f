#include "formfactor/sparse_form_factors.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <utility>

#include "formfactor/pair.h"
#include "formfactor/visibility.h"
#include "util/error.h"
#include "util/progress.h"

namespace rad {

namespace {

// Rows computed between two appends to the CSR arrays: their entries wait in per-row buffers meanwhile.
constexpr size_t kRowsPerChunk = 2048;

// The walk of row i's tree: `evaluate(j)` for every patch j that may share an entry at or above `dropBelow`
// with i, `skipNode(node)` and `skipPatch(j)` for the nodes and patches left out by their bound. Nodes and
// patches wholly behind patch i (whose entries are 0) are none of these.
template <typename Evaluate, typename SkipNode, typename SkipPatch>
void WalkRow(const std::vector<Patch> &patches, const PatchTree &tree, long long i, double dropBelow,
             Evaluate &&evaluate, SkipNode &&skipNode, SkipPatch &&skipPatch) {
  if (tree.nodes.empty()) return;
  const Patch &p = patches[size_t(i)];
  const PatchSphere &sphere = tree.patchSpheres[size_t(i)];
  int32_t stack[128];  // the tree's depth is about log2(N / leaf size): median splits
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const PatchTreeNode &node = tree.nodes[size_t(stack[--top])];
    if (BehindPatch(p, node.sphere)) continue;
    if (NodeBound(sphere, p.normal, node) < dropBelow) {
      skipNode(node);
      continue;
    }
    if (!node.IsLeaf()) {
      stack[top++] = node.right;  // left first
      stack[top++] = node.left;
      continue;
    }
    for (int32_t k = node.first; k < node.first + node.count; ++k) {
      const int32_t j = tree.order[size_t(k)];
      const PatchSphere &other = tree.patchSpheres[size_t(j)];
      const Patch &q = patches[size_t(j)];
      if (j == i || q.face == p.face || BehindPatch(p, other) || BehindPatch(q, sphere)) continue;
      if (PairBound(sphere, p.normal, other, q.normal) < dropBelow) skipPatch(j);
      else evaluate(j);
    }
  }
}

struct RowEntries {
  std::vector<std::pair<int32_t, double>> kept;
  double dropped = 0;
};

}  // namespace

long long CountSparseCandidates(const std::vector<Patch> &patches, const PatchTree &tree,
                                const std::vector<long long> &rows, double dropBelow) {
  tbb::enumerable_thread_specific<long long> perThread(0);
  tbb::parallel_for(size_t(0), rows.size(), [&](size_t r) {
    long long &count = perThread.local();
    WalkRow(patches, tree, rows[r], dropBelow, [&](int32_t) { ++count; }, [](const PatchTreeNode &) {}, [](int32_t) {});
  });
  long long total = 0;
  for (long long c : perThread) total += c;
  return total;
}

void ComputeSparseRowsCpu(const FormFactorGeometry &g, const EmbreeScene &embree, const PatchTree &tree,
                          double dropBelow, const FormFactorOptions &options, FormFactorRows &out,
                          PhaseTimers &timers, FormFactorCounters &counters, SparseCounters &sparse,
                          bool showProgress) {
  if (!(dropBelow > 0)) throw InputError("the sparse operator needs a drop threshold above 0");
  ScopedPhase phase(timers, "sparse form factors");
  const size_t local = out.rows.size();
  const bool narrow = out.precision == Precision::kFloat;
  out.storage = Storage::kCsr;
  out.indptr.assign(1, 0);
  out.columns.clear();
  out.f64.clear();
  out.f32.clear();
  out.dropped.assign(local, 0.0);
  tbb::enumerable_thread_specific<FormFactorCounters> perThread;
  tbb::enumerable_thread_specific<SparseCounters> sparsePerThread;
  auto occluded = [&](Vec3 a, Vec3 b) { return embree.SegmentOccluded(a, b); };
  Progress progress("form factors (sparse)", (long long)local, showProgress);
  std::vector<RowEntries> chunk;
  for (size_t begin = 0; begin < local; begin += kRowsPerChunk) {
    const size_t end = std::min(local, begin + kRowsPerChunk);
    chunk.assign(end - begin, RowEntries{});
    tbb::parallel_for(tbb::blocked_range<size_t>(begin, end, 1), [&](const tbb::blocked_range<size_t> &range) {
      FormFactorCounters &c = perThread.local();
      SparseCounters &s = sparsePerThread.local();
      const GeometryView view = ViewOf(g);
      for (size_t r = range.begin(); r != range.end(); ++r) {
        const int i = int(out.rows[r]);
        RowEntries &row = chunk[r - begin];
        auto evaluate = [&](int32_t j) {
          const PairResult p = FormFactorPair(view, i, j, options.pair);
          c.Add(p);
          ++s.candidatePairs;
          double value = p.value, reverse = p.reverse;
          if (p.needsRays) {  // as the dense operator: the visible fraction multiplies both entries
            uint32_t traced = 0;
            const double v = VisibleFraction(g.patches[size_t(i)], g.patches[size_t(j)], uint32_t(i), uint32_t(j),
                                             options.seed, options.shadowRays, occluded, traced);
            c.rays += traced;
            ++c.pairsRayTraced;
            value *= v;
            reverse *= v;
          }
          if (value == 0) return;
          if (value >= dropBelow || reverse >= dropBelow) {
            row.kept.emplace_back(j, value);
          } else {
            row.dropped += value;
            ++s.droppedEntries;
          }
        };
        auto skipNode = [&](const PatchTreeNode &node) {
          row.dropped += ClusterEstimate(g.patches[size_t(i)], node);
          ++s.nodesSkipped;
        };
        auto skipPatch = [&](int32_t j) {  // with one shadow ray between the centroids: a ray costs little
          const Patch &pi = g.patches[size_t(i)], &pj = g.patches[size_t(j)];
          const double estimate = PatchEstimate(pi, pj);
          if (estimate > 0 && !occluded(pi.centroid, pj.centroid)) row.dropped += estimate;
          ++s.patchesSkipped;
        };
        WalkRow(g.patches, tree, i, dropBelow, evaluate, skipNode, skipPatch);
        std::sort(row.kept.begin(), row.kept.end());
        s.kept += (long long)row.kept.size();
        progress.Advance();
      }
    });
    for (size_t r = begin; r < end; ++r) {  // in row order: the arrays do not depend on the threads
      RowEntries &row = chunk[r - begin];
      for (const auto &[j, v] : row.kept) {
        out.columns.push_back(j);
        if (narrow) out.f32.push_back(float(v));
        else out.f64.push_back(v);
      }
      out.indptr.push_back((long long)out.columns.size());
      out.dropped[r] = row.dropped;
    }
  }
  for (const FormFactorCounters &c : perThread) counters.Add(c);
  for (const SparseCounters &s : sparsePerThread) sparse.Add(s);
}

}  // namespace rad
