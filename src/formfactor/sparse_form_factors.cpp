#include "formfactor/sparse_form_factors.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <utility>

#include "formfactor/far_field.h"
#include "formfactor/hidden_node.h"
#include "formfactor/pair.h"
#include "util/error.h"
#include "util/memory_budget.h"
#include "util/mpi_check.h"
#include "util/progress.h"

namespace rad {

namespace {

// What row i's walk does with a node it reaches, and with a patch j of a leaf it reaches: the one place the
// walk decides, shared by the walk and by CandidateOf.
enum class NodeStep { kBehind, kSkipped, kSmooth, kOpened };
NodeStep StepAt(const Patch &p, const PatchSphere &sphere, const Vec3 &lo, const Vec3 &hi, const PatchTreeNode &node,
                double dropBelow, bool smoothLinks) {
  if (NothingExchanged(p, lo, hi, node)) return NodeStep::kBehind;
  const bool skippable = NodeBound(p, sphere, node) < dropBelow;
  if (skippable && EstimatedWhole(p, sphere, node, dropBelow)) return NodeStep::kSkipped;
  if (!skippable && smoothLinks && SmoothLink(p, sphere, node, dropBelow)) return NodeStep::kSmooth;
  return NodeStep::kOpened;
}
enum class PatchStep { kNone, kSkipped, kCandidate };
PatchStep StepAt(const std::vector<Patch> &patches, const PatchTree &tree, long long i, const Patch &p,
                 const PatchSphere &sphere, int32_t j, double dropBelow) {
  const PatchSphere &other = tree.patchSpheres[size_t(j)];
  const Patch &q = patches[size_t(j)];
  if (j == i || q.face == p.face || BehindPatch(p, other) || BehindPatch(q, sphere)) return PatchStep::kNone;
  return PairBound(p, sphere, q, other) < dropBelow ? PatchStep::kSkipped : PatchStep::kCandidate;
}

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
  Vec3 lo, hi;
  CornerBox(p, lo, hi);
  std::vector<int32_t> stack(std::make_reverse_iterator(start + startCount), std::make_reverse_iterator(start));
  for (size_t k = 0; k < startCount; ++k) PrefetchNode(tree, start[k]);  // the walk reads each in turn
  while (!stack.empty()) {
    const PatchTreeNode &node = tree.nodes[size_t(stack.back())];
    stack.pop_back();
    const NodeStep step = StepAt(p, sphere, lo, hi, node, dropBelow, smoothLinks);
    if (step == NodeStep::kBehind) continue;
    if (step != NodeStep::kOpened) {
      skipNode(node, step == NodeStep::kSmooth);
      continue;
    }
    if (!node.IsLeaf()) {
      PrefetchChildren(tree, node);
      stack.push_back(node.right);  // left first
      stack.push_back(node.left);
      continue;
    }
    for (int32_t k = node.first; k < node.first + node.count; ++k) {  // the leaf's patches, scattered in memory
      const size_t j = size_t(tree.order[size_t(k)]);
      PrefetchPatch(patches[j]);
      Prefetch(&tree.patchSpheres[j], sizeof(PatchSphere));
    }
    for (int32_t k = node.first; k < node.first + node.count; ++k) {
      const int32_t j = tree.order[size_t(k)];
      const PatchStep patchStep = StepAt(patches, tree, i, p, sphere, j, dropBelow);
      if (patchStep == PatchStep::kSkipped) skipPatch(j);
      else if (patchStep == PatchStep::kCandidate) evaluate(j);
    }
  }
}

// Whether row i's walk from its start nodes lists patch j (at place `place` of tree.order) as a candidate,
// without walking the row: the walk reaches a node only through its ancestors, each opened, so it is enough to
// follow the path down to j from the start node that holds it. Start nodes are disjoint subtrees in preorder
// (the root, or what the elements' walks handed down in the order they walked: left first), so that node is the
// last one whose index is at most that of the leaf holding j: `startNode`, found by bisection (scanning a row's
// hundreds of start nodes was a quarter of the kernel phase's own time on a city), -1 when there is none.
bool CandidateOf(const std::vector<Patch> &patches, const PatchTree &tree, long long i, int32_t startNode,
                 double dropBelow, bool smoothLinks, int32_t j, int32_t place) {
  if (tree.nodes.empty() || startNode < 0) return false;
  const Patch &p = patches[size_t(i)];
  const PatchSphere &sphere = tree.patchSpheres[size_t(i)];
  if (StepAt(patches, tree, i, p, sphere, j, dropBelow) != PatchStep::kCandidate) return false;  // the cheap test first
  const PatchTreeNode *node = &tree.nodes[size_t(startNode)];
  if (place < node->first || place >= node->first + node->count) return false;
  Vec3 lo, hi;
  CornerBox(p, lo, hi);
  while (true) {
    if (StepAt(p, sphere, lo, hi, *node, dropBelow, smoothLinks) != NodeStep::kOpened) return false;
    if (node->IsLeaf()) return true;
    const PatchTreeNode &left = tree.nodes[size_t(node->left)];
    node = place < left.first + left.count ? &left : &tree.nodes[size_t(node->right)];
  }
}

// Where row r's walk starts, into `nodes`: the root, or what the elements above it handed down.
const std::vector<int32_t> &StartOf(const ElementWalk *walk, size_t r, std::vector<int32_t> &nodes) {
  if (walk == nullptr) nodes.assign(1, 0);
  else walk->Start(r, nodes);
  return nodes;
}

// Rows are computed in blocks of about this share of the rank's candidates (at least kMinBlockCandidates), one
// block at a time: walk, evaluate, keep. Only a block's candidates are held (a column and a value each; on a
// city of 102096 patches, 1.49e8 of them, 56 % hidden, were 60 % of the run's peak when all rows' were held at
// once), and what a row keeps is final when its block ends.
constexpr long long kBlocksPerRank = 16;
constexpr long long kMinBlockCandidates = 1LL << 22;

// An entry of a row here that the other row of its pair evaluated, and counted, before this row's turn: a row
// of an earlier block, which hands a later row its entry of a pair that the later row's walk lists too
// (CandidateOf) unless it is 0 and not kept; or another rank's row, through the pair exchange. Held until the
// row's block, sorted by column then. A pair that a row of an earlier block lists, with no entry handed, is 0.
// 12 bytes, packed: the column (a patch, below 2^31) shares its word with the sparse operator's flag. On an
// 8 x 8 city split to N = 375456 the handed entries peaked at 0.75 GiB in 16 bytes each, a tenth of the run.
#pragma pack(push, 4)
struct HandedEntry {
  double value = 0;
  uint32_t columnAndKept = 0;  // the column; in the top bit, whether the sparse operator keeps the pair
  HandedEntry() = default;
  HandedEntry(double v, int32_t column, uint8_t kept)
      : value(v), columnAndKept(uint32_t(column) | (kept != 0 ? 0x80000000u : 0u)) {}
  int32_t Column() const { return int32_t(columnAndKept & 0x7fffffffu); }
  uint8_t Kept() const { return uint8_t(columnAndKept >> 31); }
};
#pragma pack(pop)
static_assert(sizeof(HandedEntry) == 12, "a handed entry is a double and a word");
struct ForwardEntry {  // a HandedEntry on its way to local row `row`
  int32_t row = 0;
  HandedEntry entry;
};

}  // namespace

std::vector<size_t> SparseRowBlocks(const std::vector<long long> &candidateCounts, long long blockSize,
                                    const std::vector<long long> *linkBounds) {
  auto weight = [&](size_t r) { return candidateCounts[r] + (linkBounds != nullptr ? (*linkBounds)[r] : 0); };
  long long total = 0;
  for (size_t r = 0; r < candidateCounts.size(); ++r) total += weight(r);
  if (blockSize <= 0) blockSize = std::max(kMinBlockCandidates, (total + kBlocksPerRank - 1) / kBlocksPerRank);
  std::vector<size_t> bounds(1, 0);
  long long inBlock = 0;
  for (size_t r = 0; r < candidateCounts.size(); ++r) {
    inBlock += weight(r);
    if (inBlock >= blockSize) {
      bounds.push_back(r + 1);
      inBlock = 0;
    }
  }
  if (bounds.back() != candidateCounts.size()) bounds.push_back(candidateCounts.size());
  return bounds;
}

double SparseBlockBytes(const std::vector<long long> &candidateCounts, const std::vector<long long> *linkBounds,
                        size_t first, size_t last, bool farLinks, bool floatRows, bool handsOn) {
  long long candidates = 0, linkBound = 0;
  for (size_t r = first; r < last; ++r) {
    candidates += candidateCounts[r];
    if (linkBounds != nullptr) linkBound += (*linkBounds)[r];
  }
  // The block's candidates (column, value, flag; the kept ones stay where they were), what it may hand on to
  // later rows, and its links (per row, then appended).
  return double(candidates) * (SparseBytesPerCandidate(floatRows) + (handsOn ? sizeof(ForwardEntry) : 0)) +
         (farLinks ? double(linkBound) * (kBytesPerWalkedFarLink + kBytesPerFarLink) : 0.0);
}

std::vector<long long> CountSparseCandidates(const std::vector<Patch> &patches, const PatchTree &tree,
                                             const std::vector<long long> &rows, double dropBelow,
                                             const ElementWalk *walk, std::vector<long long> *skipped,
                                             bool smoothLinks) {
  std::vector<long long> counts(rows.size(), 0);
  if (skipped != nullptr) skipped->assign(rows.size(), 0);
  tbb::parallel_for(size_t(0), rows.size(), [&](size_t r) {
    long long count = 0, skips = 0;
    std::vector<int32_t> startNodes;
    const std::vector<int32_t> &from = StartOf(walk, r, startNodes);
    WalkRow(patches, tree, rows[r], from.data(), from.size(), dropBelow, smoothLinks, [&](int32_t) { ++count; },
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
                          const RowOwners *owners, const ElementWalk *walk, const SparseStreaming &streaming) {
  RAD_CHECK(walk == nullptr || farLinks, "ComputeSparseRowsCpu: elements take far links only");
  RAD_CHECK(streaming.walkFirstRow == 0 || streaming.rowsAlone, "ComputeSparseRowsCpu: part of the rows, not alone");
  if (!(dropBelow > 0)) throw InputError("the sparse operator needs a drop threshold above 0");
  RAD_CHECK(candidateCounts.size() == out.rows.size(), "ComputeSparseRowsCpu: one candidate count per row");
  RAD_CHECK(streaming.linkBounds == nullptr || streaming.linkBounds->size() == out.rows.size(),
            "ComputeSparseRowsCpu: one link bound per row");
  const size_t local = out.rows.size();
  const long long n = (long long)g.patches.size();
  tbb::enumerable_thread_specific<FormFactorCounters> perThread;
  tbb::enumerable_thread_specific<SparseCounters> sparsePerThread;
  const EmbreeShadowRays occluded{embree};
  const std::vector<int32_t> localRow = LocalRows(size_t(n), out.rows);
  std::vector<double> dropped(local, 0.0);
  // Entries evaluated before their row's turn, per row, and those handed on by the block at hand.
  std::vector<std::vector<HandedEntry>> handed(local);
  long long handedHeld = 0, handedPeak = 0;
  tbb::enumerable_thread_specific<std::vector<ForwardEntry>> forward;
  auto takeForward = [&] {  // serially, in any order: each row's entries are sorted by column before use
    for (std::vector<ForwardEntry> &entries : forward) {
      for (const ForwardEntry &f : entries) handed[size_t(f.row)].push_back(f.entry);
      handedHeld += (long long)entries.size();
      entries.clear();
    }
    handedPeak = std::max(handedPeak, handedHeld);
  };

  // The run of coplanar patches (geometry.h, with the occluder BVH) each patch belongs to.
  std::vector<int32_t> clusterOf;
  if (!g.clusters.empty()) {
    clusterOf.assign(size_t(n), 0);
    for (size_t c = 0; c < g.clusters.size(); ++c)
      std::fill_n(clusterOf.begin() + g.clusters[c].first, g.clusters[c].count, int32_t(c));
  }
  // Per cluster, what its walk told the row at hand (WalkCluster; walked: whether it has been this row), and the
  // occluders it listed: with shadow rays a pair tests those few instead of walking the BVH (the shaft queries
  // were a third of a city's hierarchical run). Used alike by a row's own candidates and by the pairs other
  // ranks ask of it.
  const bool rays = options.pair.visibility == VisibilityMethod::kRays;
  struct ClusterState {
    std::vector<ClusterWalk> walks;
    std::vector<uint8_t> walked;
    std::vector<int32_t> ids;
    std::vector<int32_t> touched;  // the clusters walked for the row at hand
    // The walk for column columns[k] of row i, whose columns [k, end) are sorted: as the dense operator, one walk
    // for the run of coplanar patches the column is in, made at its first column, whose shaft need only hold the
    // cluster's columns from there on (on a city a row pairs with a few patches of a wall, a cluster). None
    // (walk the BVH per pair) where the scene has no clusters.
    ClusterWalk For(const GeometryView &view, const FormFactorGeometry &geometry, const std::vector<int32_t> &clusterOf,
                    int i, const int32_t *columns, long long k, long long end, bool withRays) {
      if (clusterOf.empty()) return ClusterWalk{};
      const size_t cluster = size_t(clusterOf[size_t(columns[k])]);
      if (!walked[cluster]) {
        long long runEnd = k + 1;
        while (runEnd < end && size_t(clusterOf[size_t(columns[runEnd])]) == cluster) ++runEnd;
        const ConvexPolygon region =
            RegionOfPatches(geometry.clusters[cluster], geometry.patches, columns + k, runEnd - k);
        walks[cluster] = WalkCluster(view, geometry.patches[size_t(i)], geometry.clusters[cluster], withRays, ids, &region);
        walked[cluster] = 1;
        touched.push_back(int32_t(cluster));
      }
      return walks[cluster];
    }
    void NextRow() {  // the next row starts afresh
      for (int32_t cluster : touched) walked[size_t(cluster)] = 0;
      touched.clear();
      ids.clear();
    }
  };
  tbb::enumerable_thread_specific<ClusterState> clusterPerThread(ClusterState{
      std::vector<ClusterWalk>(g.clusters.size()), std::vector<uint8_t>(g.clusters.size(), 0), {}, {}});

  // Row j's entry of a pair evaluated from row i's side, counted where it is evaluated: its counts, and its
  // rays (the visible fraction multiplies both entries).
  auto countReverse = [](FormFactorCounters &c, const PairResult &pair) {
    c.AddReverse(pair);
    if (pair.needsRays) ++c.pairsRayTraced;
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
  // ComputesPair gives to j (found by a walk of the rows that lists candidates only); that rank evaluates them
  // from row j's side, hands its own entry to row j, and answers with F_ij, handed to row i. The rest of a
  // row's remote pairs are evaluated in the row's turn.
  const bool alone = streaming.rowsAlone;
  const bool exchange = !alone && owners != nullptr && owners->ranks > 1;
  if (exchange) {
    ScopedPhase phase(timers, "sparse pair exchange");
    const int ranks = owners->ranks;
    const size_t rankCount = static_cast<size_t>(ranks);
    std::vector<std::vector<int32_t>> rowAsks(local);  // per row, the remote columns it asks for
    tbb::parallel_for(size_t(0), local, [&](size_t r) {
      const int32_t i = int32_t(out.rows[r]);
      std::vector<int32_t> startNodes;
      const std::vector<int32_t> &from = StartOf(walk, r, startNodes);
      WalkRow(g.patches, tree, i, from.data(), from.size(), dropBelow, farLinks,
              [&](int32_t j) {
                if (localRow[size_t(j)] < 0 && !ComputesPair(i, j)) rowAsks[r].push_back(j);
              },
              [](const PatchTreeNode &, bool) {}, [](int32_t) {});
    });
    std::vector<std::vector<int32_t>> ask(rankCount);  // (j, i) pairs for the owner of j
    for (size_t r = 0; r < local; ++r) {
      for (int32_t j : rowAsks[r]) {
        std::vector<int32_t> &to = ask[size_t(owners->OwnerOf(j))];
        to.push_back(j);
        to.push_back(int32_t(out.rows[r]));
      }
      std::vector<int32_t>().swap(rowAsks[r]);
    }
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
    std::vector<int32_t>().swap(asked);
    // Evaluate what was asked of this rank: (j here, i there), from row j's side, row j by row j with its columns
    // i sorted, so that the pairs take their clusters' occluder walks as a row's own candidates do. Evaluated
    // pair by pair, each walking the BVH for its occluders, they took the larger part of a 2-rank run's exact
    // entries (N = 24272: the exchange 11.1 s against 6.2 s of form factors).
    const size_t requests = incoming.size() / 2;
    std::vector<double> answer(requests);
    std::vector<uint8_t> answerKept(requests);
    // The requests by (row j, column i); 32 bits hold their places, as MPI's int offsets above hold 2 per request.
    std::vector<uint32_t> byRow(requests);
    for (size_t m = 0; m < requests; ++m) byRow[m] = uint32_t(m);
    std::sort(byRow.begin(), byRow.end(), [&](uint32_t a, uint32_t b) {
      return std::make_pair(incoming[2 * a], incoming[2 * a + 1]) < std::make_pair(incoming[2 * b], incoming[2 * b + 1]);
    });
    std::vector<size_t> rowStart;  // where each asked row's requests start in byRow, and the end
    for (size_t q = 0; q < requests; ++q)
      if (q == 0 || incoming[2 * byRow[q]] != incoming[2 * byRow[q - 1]]) rowStart.push_back(q);
    rowStart.push_back(requests);
    tbb::parallel_for(size_t(0), rowStart.size() - 1, [&](size_t a) {
      FormFactorCounters &c = perThread.local();
      SparseCounters &s = sparsePerThread.local();
      ClusterState &state = clusterPerThread.local();
      const GeometryView view = ViewOf(g);
      const size_t begin = rowStart[a], end = rowStart[a + 1];
      const int j = incoming[2 * byRow[begin]];
      std::vector<int32_t> asked(end - begin);
      for (size_t q = begin; q < end; ++q) asked[q - begin] = incoming[2 * byRow[q] + 1];
      for (size_t q = begin; q < end; ++q) {
        const size_t m = byRow[q];
        const int i = asked[q - begin];
        const ClusterWalk walk =
            state.For(view, g, clusterOf, j, asked.data(), (long long)(q - begin), (long long)asked.size(), rays);
        const Evaluated e = evaluate(view, j, i, walk.clear, walk.Nearby(state.ids), c, s);
        countReverse(c, e.pair);  // row i's
        answer[m] = e.reverse;
        answerKept[m] = e.kept;
        forward.local().push_back({localRow[size_t(j)], {e.value, i, e.kept}});
      }
      state.NextRow();
    });
    takeForward();
    // Send the answers back (one per pair asked, in the order asked).
    for (int q = 0; q < ranks; ++q) {
      sendCounts[size_t(q)] = recvCounts[size_t(q)] / 2;
      recvCounts[size_t(q)] = int(ask[size_t(q)].size() / 2);
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
      for (size_t a = 0; a < ask[size_t(q)].size(); a += 2, ++m) {
        const int32_t j = ask[size_t(q)][a], i = ask[size_t(q)][a + 1];
        handed[size_t(localRow[size_t(i)])].push_back({got[m], j, gotKept[m]});
        ++handedHeld;
      }
    handedPeak = std::max(handedPeak, handedHeld);
  }

  // Whether local row r's walk lists patch i (CandidateOf), for a pair whose two rows are in different blocks:
  // per patch, its place in the tree's order and the leaf that holds it.
  std::vector<int32_t> placeOf(size_t(n), 0), leafOf(size_t(n), 0);
  for (size_t k = 0; k < tree.order.size(); ++k) placeOf[size_t(tree.order[k])] = int32_t(k);
  for (size_t index = 0; index < tree.nodes.size(); ++index) {
    const PatchTreeNode &node = tree.nodes[index];
    if (node.IsLeaf())
      for (int32_t k = node.first; k < node.first + node.count; ++k) leafOf[size_t(tree.order[size_t(k)])] = int32_t(index);
  }
  auto listedBy = [&](int32_t r, int32_t i) {
    const int32_t startNode =
        walk == nullptr ? 0 : walk->StartAtMost(size_t(r) + streaming.walkFirstRow, leafOf[size_t(i)]);
    return CandidateOf(g.patches, tree, out.rows[size_t(r)], startNode, dropBelow, farLinks, i, placeOf[size_t(i)]);
  };

  // The rows block by block, each block's candidates (columns ascending per row) and values side by side in
  // the output arrays right after what the blocks before kept, and its kept entries moved down over them: the
  // arrays are reserved for every candidate, but only what is written is resident (a block's candidates, and
  // the entries kept), and nothing is copied once more to be joined. Float rows hold a block's double values
  // on their own. Whether each evaluated entry is kept: with far links every non-zero one is, and its value
  // says so, so the flags are held for the sparse operator only.
  const bool narrow = out.precision == Precision::kFloat;
  long long allCandidates = 0, allLinkBounds = 0;
  for (size_t r = 0; r < local; ++r) {
    allCandidates += candidateCounts[r];
    if (streaming.linkBounds != nullptr) allLinkBounds += (*streaming.linkBounds)[r];
  }
  out.storage = Storage::kCsr;
  out.indptr.assign(1, 0);
  out.columnLow.clear();
  out.columnSpanStart.clear();
  out.f32.clear();
  out.f64.clear();
  // No more is reserved than the rank's memory could hold: a larger reservation would be refused by a kernel
  // that turns down allocations beyond its memory, and the checks before each block stop the rows first.
  auto reservable = [&](long long count, double bytesEach) {
    const double most = streaming.limitBytes > 0 ? streaming.limitBytes / bytesEach : double(count);
    return size_t(std::min(double(count), most));
  };
  out.columnLow.reserve(reservable(allCandidates, sizeof(uint16_t)));
  out.columnSpanStart.reserve(local * size_t(ColumnSpans(out.n) - 1));
  if (narrow) out.f32.reserve(reservable(allCandidates, sizeof(float)));
  else out.f64.reserve(reservable(allCandidates, sizeof(double)));
  out.links = FarLinks{};
  if (farLinks) {
    out.links.Begin((long long)tree.nodes.size(), out.n);
    out.links.nameLow.reserve(reservable(allLinkBounds, sizeof(uint16_t)));
    out.links.value.reserve(reservable(allLinkBounds, sizeof(uint16_t)));
    out.links.nameSpanStart.reserve(local * size_t(ColumnSpans(out.links.names) - 1));
  }
  long long keptSoFar = 0, linksSoFar = 0;
  std::vector<long long> start;
  std::vector<int32_t> blockColumns;  // the block's candidates, in full (the rows hold their kept ones in 16 bits)
  std::vector<double> narrowValues;
  std::vector<uint8_t> keep;
  auto setKept = [&](long long k, uint8_t kept) {
    if (!farLinks) keep[size_t(k)] = kept;
  };
  // Far links: each row's in arrays of their own, filled from a thread's scratch once the row's walk is done,
  // sorted by name (SortFarLinksByName) as FarLinks holds them. Their values in binary16 from the start
  // (FarLinkBits).
  std::vector<std::vector<int32_t>> rowNames;
  std::vector<std::vector<uint16_t>> rowValues;
  struct LinkScratch {
    std::vector<int32_t> targets;
    std::vector<uint16_t> values;
    std::vector<uint64_t> keys;
  };
  tbb::enumerable_thread_specific<LinkScratch> linkScratch;
  Progress progress("form factors (sparse)", (long long)local, showProgress);
  bool outpacedSaid = false;  // streaming.outpaced called
  const std::vector<size_t> blocks = SparseRowBlocks(candidateCounts, streaming.blockCandidates, streaming.linkBounds);

  for (size_t b = 0; b + 1 < blocks.size(); ++b) {
    const size_t first = blocks[b], last = blocks[b + 1], rowCount = last - first;
    start.assign(rowCount + 1, 0);
    for (size_t r = first; r < last; ++r) start[r - first + 1] = start[r - first] + candidateCounts[r];
    // Before anything of the block is allocated: what the rows kept so far and this block may take, within the
    // rank's memory.
    if (streaming.limitBytes > 0) {
      const double need = streaming.heldBytes + double(keptSoFar) * KeptEntryBytes(narrow) +
                          double(first) * KeptRowBytes(out.n, out.links.names) +
                          double(linksSoFar) * kBytesPerFarLink + double(handedHeld) * sizeof(HandedEntry) +
                          SparseBlockBytes(candidateCounts, streaming.linkBounds, first, last, farLinks, narrow,
                                           b + 2 < blocks.size());
      if (need > streaming.limitBytes)
        throw InputError(streaming.refuse ? streaming.refuse(need, streaming.limitBytes, (long long)first)
                                          : std::string("not enough memory for the sparse rows"));
    }
    const size_t base = size_t(keptSoFar), blockCandidates = size_t(start.back());
    blockColumns.resize(blockCandidates);
    int32_t *const columns = blockColumns.data();
    double *values = nullptr;
    if (narrow) {
      narrowValues.assign(blockCandidates, 0.0);
      values = narrowValues.data();
    } else {
      out.f64.resize(base + blockCandidates);
      values = out.f64.data() + base;
    }
    keep.assign(farLinks ? 0 : blockCandidates, 0);
    rowNames.assign(farLinks ? rowCount : 0, {});
    rowValues.assign(farLinks ? rowCount : 0, {});

    {
      ScopedPhase phase(timers, "sparse walk");
      tbb::parallel_for(first, last, [&](size_t r) {
        SparseCounters &s = sparsePerThread.local();
        const int32_t i = int32_t(out.rows[r]);
        const Patch &pi = g.patches[size_t(i)];
        const size_t br = r - first;
        long long k = start[br];
        LinkScratch &scratch = linkScratch.local();
        HiddenNodeProof proveHidden(g, embree);  // links whose first rays are all hidden (hidden_node.h)
        proveHidden.SetReceivers(pi.corners, pi.cornerCount);
        auto link = [&](int32_t target, double value) {
          uint16_t bits = 0;
          RAD_CHECK(FarLinkBits(value, bits), "ComputeSparseRowsCpu: a far link's value beyond binary16 (a sum of F)");
          scratch.targets.push_back(target);
          scratch.values.push_back(bits);
        };
        auto candidate = [&](int32_t j) {
          RAD_CHECK(k < start[br + 1], "ComputeSparseRowsCpu: more candidates than counted");
          columns[size_t(k++)] = j;
        };
        auto skipNode = [&](const PatchTreeNode &node, bool smooth) {
          // The cluster estimate (opened where the node is wide for its distance) times its visible share.
          const int32_t index = int32_t(&node - tree.nodes.data());
          const double estimate = OpenedClusterEstimate(tree, pi, index, kOpening);
          if (estimate > 0) {
            uint32_t traced = 0;
            const double value =
                estimate *
                VisibleShare(g.patches, &i, 1, tree, node, options.seed, occluded, traced,
                             FarLinkRays(estimate, dropBelow), false, nullptr, &proveHidden).share;
            perThread.local().AddFarLinkRays(traced, smooth);
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
        auto skipPatch = [&](int32_t j) {  // the pair's estimate times its visible fraction (FarPatchRays rays)
          const Patch &pj = g.patches[size_t(j)];
          const double estimate = PatchEstimate(pi, pj);
          if (estimate > 0) {
            uint32_t traced = 0;
            const double value = estimate * VisibleFraction(pi, pj, uint32_t(i), uint32_t(j), options.seed,
                                                            FarPatchRays(estimate, dropBelow), occluded, traced);
            perThread.local().AddFarLinkRays(traced, false);
            if (value > 0) {
              if (farLinks) link(-(j + 1), value);
              else dropped[r] += value;
            }
          }
          ++s.patchesSkipped;
        };
        std::vector<int32_t> startNodes;
        const std::vector<int32_t> &from = StartOf(walk, r + streaming.walkFirstRow, startNodes);
        WalkRow(g.patches, tree, i, from.data(), from.size(), dropBelow, farLinks, candidate, skipNode, skipPatch);
        perThread.local().farLinksProvedHidden += proveHidden.proved;
        if (farLinks) {
          SortFarLinksByName(out.links.nodes, scratch.targets.data(), scratch.values.data(), scratch.targets.size(),
                             scratch.keys);
          rowNames[br].assign(scratch.targets.begin(), scratch.targets.end());
          rowValues[br].assign(scratch.values.begin(), scratch.values.end());
          scratch.targets.clear();
          scratch.values.clear();
        }
        RAD_CHECK(k == start[br + 1], "ComputeSparseRowsCpu: fewer candidates than counted");
        std::sort(columns + start[br], columns + start[br + 1]);
        s.candidates += start[br + 1] - start[br];
        std::sort(handed[r].begin(), handed[r].end(),
                  [](const HandedEntry &a, const HandedEntry &c) { return a.Column() < c.Column(); });
      });
    }

    // Where row j of this block holds column i among its candidates, or -1 (row j elsewhere, or i not its
    // candidate).
    auto slotOf = [&](int32_t j, int32_t i) -> long long {
      const int32_t rj = localRow[size_t(j)];
      if (rj < 0 || size_t(rj) < first || size_t(rj) >= last) return -1;
      const int32_t *begin = columns + start[size_t(rj) - first], *end = columns + start[size_t(rj) - first + 1];
      const int32_t *it = std::lower_bound(begin, end, i);
      return it != end && *it == i ? (long long)(it - columns) : -1;
    };
    {
      // A pair is evaluated once: from the row ComputesPair picks when both rows are in this block (it writes
      // both slots; the bits are those of either side, pair.h), from the earlier row when they are in two
      // blocks here (it hands the later row its entry), from the row ComputesPair picks across ranks (the pair
      // exchange hands the other its entry).
      ScopedPhase phase(timers, "sparse form factors");
      tbb::parallel_for(tbb::blocked_range<size_t>(first, last, 1), [&](const tbb::blocked_range<size_t> &range) {
        FormFactorCounters &c = perThread.local();
        SparseCounters &s = sparsePerThread.local();
        ClusterState &state = clusterPerThread.local();
        std::vector<ForwardEntry> &later = forward.local();
        const GeometryView view = ViewOf(g);
        for (size_t r = range.begin(); r != range.end(); ++r) {
          const int i = int(out.rows[r]);
          const size_t br = r - first;
          auto h = handed[r].begin();
          const auto hEnd = handed[r].end();
          for (long long k = start[br]; k < start[br + 1]; ++k) {
            const int32_t j = columns[size_t(k)];
            // Alone, every other row is another's: each pair is evaluated from this row's side.
            const int32_t rj = alone ? -1 : localRow[size_t(j)];
            if (!alone) {
              while (h != hEnd && h->Column() < j) ++h;
              if (h != hEnd && h->Column() == j) {  // evaluated from row j's side already
                values[size_t(k)] = h->value;
                setKept(k, h->Kept());
                continue;
              }
              if (rj >= 0 && size_t(rj) < first && listedBy(rj, i)) continue;  // evaluated by row j: 0, not kept
              if (rj < 0 && !ComputesPair(i, j)) {
                RAD_CHECK(!exchange, "ComputeSparseRowsCpu: a pair asked of another rank was not answered");
                continue;  // rows on their own (a test's): row j's process evaluates it
              }
            }
            const bool inBlock = rj >= 0 && size_t(rj) >= first && size_t(rj) < last;
            const long long mirror = inBlock ? slotOf(j, i) : -1;
            if (mirror >= 0 && !ComputesPair(i, j)) continue;  // row j's evaluation writes this slot
            const ClusterWalk walkOfJ = state.For(view, g, clusterOf, i, columns, k, start[br + 1], rays);
            const Evaluated e = evaluate(view, i, j, walkOfJ.clear, walkOfJ.Nearby(state.ids), c, s);
            values[size_t(k)] = e.value;
            setKept(k, e.kept);
            if (mirror >= 0) {
              countReverse(c, e.pair);
              values[size_t(mirror)] = e.reverse;
              setKept(mirror, e.kept);
            } else if (rj >= 0 && size_t(rj) >= last && listedBy(rj, i)) {  // row j's entry, counted here
              countReverse(c, e.pair);
              if (e.reverse != 0 || e.kept) later.push_back({rj, {e.reverse, int32_t(i), e.kept}});
            }
          }
          state.NextRow();
          progress.Advance();
        }
      });
    }

    // The block's kept entries moved down over its candidates, row by row (in place: a row's kept entries never
    // start after its candidates); the others added to the row's dropped sum after its skipped estimates, in
    // column order. Its rows' links appended, and their handed entries done with.
    ScopedPhase phase(timers, "sparse form factors");
    SparseCounters &s = sparsePerThread.local();
    size_t write = base;
    for (size_t r = first; r < last; ++r) {
      const size_t br = r - first;
      long long kept = start[br];  // the row's kept columns moved down over its candidates, then held
      for (long long k = start[br]; k < start[br + 1]; ++k) {
        if (farLinks ? values[k] != 0 : keep[size_t(k)] != 0) {
          columns[kept++] = columns[k];
          if (narrow) out.f32.push_back(float(values[k]));  // each value rounded once, when final
          else out.f64[write] = values[k];
          ++write;
        } else if (values[k] != 0) {
          dropped[r] += values[k];
          ++s.droppedEntries;
        }
      }
      out.AppendRowColumns(columns + start[br], size_t(kept - start[br]));
      out.indptr.push_back((long long)write);
      if (farLinks) out.links.AppendRow(rowNames[br].data(), rowValues[br].data(), rowNames[br].size());
      handedHeld -= (long long)handed[r].size();
      std::vector<HandedEntry>().swap(handed[r]);
    }
    if (!narrow) out.f64.resize(write);
    keptSoFar = (long long)write;
    linksSoFar = out.links.LinkCount();
    takeForward();
    ReturnFreedMemory();  // the block's per-row link arrays and handed entries, freed above
    if (streaming.limitBytes > 0 && streaming.outpaced && !streaming.rowsAlone && !outpacedSaid && last < local &&
        20 * last >= local) {
      const double kept = double(keptSoFar) * KeptEntryBytes(narrow) + double(last) * KeptRowBytes(out.n, out.links.names) +
                          double(linksSoFar) * kBytesPerFarLink;
      const double projected = streaming.heldBytes + kept * double(local) / double(last);
      if (projected > streaming.limitBytes) {
        streaming.outpaced(projected, streaming.limitBytes, (long long)last);
        outpacedSaid = true;
      }
    }
  }
  RAD_CHECK(handedHeld == 0, "ComputeSparseRowsCpu: entries handed to rows that were not computed");
  SparseCounters &s = sparsePerThread.local();
  s.kept += keptSoFar;
  s.links += linksSoFar;
  s.handedPeakBytes = std::max(s.handedPeakBytes, double(handedPeak) * sizeof(HandedEntry));
  out.dropped = std::move(dropped);
  for (const FormFactorCounters &c : perThread) counters.Add(c);
  for (const SparseCounters &t : sparsePerThread) sparse.Add(t);
}

}  // namespace rad
