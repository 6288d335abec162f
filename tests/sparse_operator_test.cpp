// The sparse operator (sparse_form_factors.h) against the dense rows of the same scene, computed here with the
// dense operator: the kept entries are the dense ones bit for bit, every pair at or above the threshold is
// kept and every other dropped, (i, j) and (j, i) together; what a row reports as dropped is what the dense
// row holds outside the kept entries, within the estimates' error; the tree's bound holds for every
// pair; and the walk evaluates far fewer pairs than N^2.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <numeric>

#include "formfactor/embree_scene.h"
#include "formfactor/far_field.h"
#include "formfactor/far_links.h"
#include "formfactor/geometry.h"
#include "formfactor/operator_check.h"
#include "formfactor/pair.h"
#include "formfactor/patch_clusters.h"
#include "formfactor/patch_tree.h"
#include "formfactor/sparse_form_factors.h"
#include "solver/sparse_transport.h"
#include "tests/test_scenes.h"
#include "util/error.h"
#include "util/math_constants.h"
#include "util/thread_limit.h"

namespace rad {
namespace {

using test::SceneOf;

// links' rows made anew (FarLinks::Begin) from every link's target and value, row r's [ptr[r], ptr[r + 1]) in any
// order: each row sorted by name and appended as the producer does.
void AppendLinkRows(FarLinks &links, long long nodes, long long n, const std::vector<long long> &ptr,
                    std::vector<int32_t> targets, std::vector<uint16_t> values) {
  links.Begin(nodes, n);
  std::vector<uint64_t> keys;
  for (size_t r = 0; r + 1 < ptr.size(); ++r) {
    const size_t first = size_t(ptr[r]), count = size_t(ptr[r + 1] - ptr[r]);
    SortFarLinksByName(links.nodes, targets.data() + first, values.data() + first, count, keys);
    links.AppendRow(targets.data() + first, values.data() + first, count);
  }
}

// The six faces of the box [lo, hi], fronts inside (a room) or outside (an obstacle).
void AddBox(std::vector<std::vector<Vec3>> &polygons, Vec3 lo, Vec3 hi, bool inside, bool bottom = true) {
  const Vec3 c[8] = {{lo.x, lo.y, lo.z}, {hi.x, lo.y, lo.z}, {hi.x, hi.y, lo.z}, {lo.x, hi.y, lo.z},
                     {lo.x, lo.y, hi.z}, {hi.x, lo.y, hi.z}, {hi.x, hi.y, hi.z}, {lo.x, hi.y, hi.z}};
  // Counter-clockwise seen from outside.
  const int faces[6][4] = {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4}, {2, 3, 7, 6}, {1, 2, 6, 5}, {0, 4, 7, 3}};
  for (const auto &f : faces) {
    if (!bottom && &f == &faces[0]) continue;
    std::vector<Vec3> p = {c[f[0]], c[f[1]], c[f[2]], c[f[3]]};
    if (inside) std::reverse(p.begin(), p.end());
    polygons.push_back(p);
  }
}

// A closed room of 4 x 3 x 5 with two boxes standing in it: occluded pairs, near and far ones.
Scene RoomWithBoxes() {
  std::vector<std::vector<Vec3>> polygons;
  AddBox(polygons, {0, 0, 0}, {4, 3, 5}, true);
  AddBox(polygons, {0.8, 0, 1}, {1.8, 1.2, 2}, false);
  AddBox(polygons, {2.5, 0.5, 3}, {3.2, 2, 3.6}, false);
  return SceneOf(polygons);
}

// A city block open to the sky: ground of 60 x 60 and 4 x 4 buildings of 4 x 4 and 6 to 12 high, 15 apart.
std::vector<std::vector<Vec3>> CityPolygons() {
  std::vector<std::vector<Vec3>> polygons = {test::RectZ(0, 60, 0, 60, 0, true)};
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      const double x = 5.5 + 15 * a, y = 5.5 + 15 * b, h = 6 + 2 * ((a * 4 + b) * 7 % 4);
      AddBox(polygons, {x, y, 0}, {x + 4, y + 4, h}, false, false);
    }
  return polygons;
}
Scene City() { return SceneOf(CityPolygons()); }

struct Dense {
  long long n = 0;
  std::vector<double> f;
  double At(long long i, long long j) const { return f[size_t(i * n + j)]; }
};

Dense DenseRows(const FormFactorGeometry &g, const EmbreeScene &embree, const FormFactorOptions &options) {
  Dense d;
  d.n = (long long)g.patches.size();
  std::vector<long long> rows(size_t(d.n));
  std::iota(rows.begin(), rows.end(), 0LL);
  PhaseTimers timers;
  FormFactorCounters counters;
  ComputeRowsCpu(g, embree, rows, options, d.f, timers, counters, false);
  return d;
}

// Every row on one process (or the rows from `firstRow` on), at threshold `dropBelow`: dropped sums, or with
// `farLinks` the far links (whose tree and areas are left unset: the tests read their values only), taken by
// the rows alone or, with `elements`, by the elements of each polygon first (element_links.h).
FormFactorRows SparseRows(const FormFactorGeometry &g, const EmbreeScene &embree, const FormFactorOptions &options,
                          double dropBelow, SparseCounters &sparse, Precision precision = Precision::kDouble,
                          bool farLinks = false, bool elements = false, long long firstRow = 0,
                          long long blockCandidates = 0, FormFactorCounters *entryCounters = nullptr,
                          bool rowsAlone = false, double receiverOpening = kReceiverOpening) {
  FormFactorRows f;
  f.n = (long long)g.patches.size();
  f.precision = precision;
  f.rows.resize(size_t(f.n - firstRow));
  std::iota(f.rows.begin(), f.rows.end(), firstRow);
  const PatchTree tree = BuildPatchTree(g.patches);
  PhaseTimers timers;
  FormFactorCounters counters;
  auto forest = std::make_shared<const ElementForest>(BuildElementForest(g.patches));
  std::unique_ptr<ElementWalk> walk;
  if (elements) {
    walk = std::make_unique<ElementWalk>(
        WalkElements(g, embree, tree, *forest, f.rows, dropBelow, options.seed, counters, false, receiverOpening));
    sparse.elementLinks = walk->linkCount;
    sparse.smoothLinks += walk->smoothLinkCount;
  }
  const std::vector<long long> counts =
      CountSparseCandidates(g.patches, tree, f.rows, dropBelow, walk.get(), nullptr, farLinks);
  SparseStreaming streaming;
  streaming.blockCandidates = blockCandidates;
  streaming.rowsAlone = rowsAlone;
  ComputeSparseRowsCpu(g, embree, tree, counts, dropBelow, farLinks, options, f, timers, counters, sparse, false,
                       nullptr, walk.get(), streaming);
  if (entryCounters != nullptr) *entryCounters = counters;
  if (elements) f.links.elements = HoldElementLinks(forest, walk->links, f.rows, g.patches);
  return f;
}

// Far links with elements that take links while a tenth of their distance wide, not a twentieth
// (kReceiverOpening): on the small scenes of the tests of the elements' own maths (their curvature, their
// verdicts, their links held once), the default leaves too few elements far enough from any node for those to
// show. Every row from `firstRow` on, in float64.
constexpr double kWideOpening = 0.1;
FormFactorRows WideElementRows(const FormFactorGeometry &g, const EmbreeScene &embree, double dropBelow,
                               SparseCounters &sparse, long long firstRow = 0) {
  return SparseRows(g, embree, FormFactorOptions{}, dropBelow, sparse, Precision::kDouble, true, true, firstRow, 0,
                    nullptr, false, kWideOpening);
}

Meshing BySize(double size) {
  Meshing m;
  m.maxPatchSize = size;
  return m;
}

// A scene meshed by size, with its Embree scene, its dense rows (default options) and its patch tree: what the
// tests of the tree's bounds and estimates check against.
struct DenseScene {
  Scene scene;
  FormFactorGeometry g;
  EmbreeScene embree;
  Dense dense;
  PatchTree tree;
  DenseScene(Scene s, double size)
      : scene(std::move(s)), g(BuildFormFactorGeometry(scene, BySize(size))), embree(scene),
        dense(DenseRows(g, embree, FormFactorOptions{})), tree(BuildPatchTree(g.patches)) {}
};

TEST(SparseOperator, KeepsExactlyThePairsAtOrAboveTheThresholdWithTheDenseBits) {
  const Scene scene = RoomWithBoxes();
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(0.5));
  const EmbreeScene embree(scene);
  FormFactorOptions options;
  const Dense dense = DenseRows(g, embree, options);
  const long long n = dense.n;
  ASSERT_GT(n, 400);
  for (double dropBelow : {1e-4, 1e-3, 3e-3}) {
    SparseCounters counters;
    const FormFactorRows f = SparseRows(g, embree, options, dropBelow, counters);
    ASSERT_TRUE(f.IsCsr());
    ASSERT_EQ(f.indptr.size(), size_t(n) + 1);
    long long kept = 0, mismatched = 0, wrongKeep = 0, asymmetric = 0;
    double worstReported = 0, droppedTotal = 0, reportedTotal = 0;
    const std::vector<int32_t> columns = f.ColumnsUnpacked();
    for (long long i = 0; i < n; ++i) {
      double keptSum = 0;
      for (long long k = f.indptr[size_t(i)]; k < f.indptr[size_t(i) + 1]; ++k) {
        const long long j = columns[size_t(k)];
        if (k > f.indptr[size_t(i)]) ASSERT_LT(columns[size_t(k) - 1], j) << "columns ascending in row " << i;
        if (f.f64[size_t(k)] != dense.At(i, j)) ++mismatched;
        if (f.At(size_t(j), i) == 0 && dense.At(j, i) != 0) ++asymmetric;
        keptSum += f.f64[size_t(k)];
        ++kept;
      }
      for (long long j = 0; j < n; ++j) {
        const bool above = dense.At(i, j) >= dropBelow || dense.At(j, i) >= dropBelow;
        const bool stored = f.At(size_t(i), j) != 0;
        if (above != (stored && dense.At(i, j) != 0)) ++wrongKeep;
      }
      double denseSum = 0;
      for (long long j = 0; j < n; ++j) denseSum += dense.At(i, j);
      // What the row reports as left out, against what the dense row holds outside the kept entries.
      const double truth = denseSum - keptSum;
      worstReported = std::max(worstReported, std::fabs(f.dropped[size_t(i)] - truth));
      droppedTotal += truth;
      reportedTotal += f.dropped[size_t(i)];
    }
    EXPECT_EQ(mismatched, 0) << "kept entries differ from the dense ones at drop-below " << dropBelow;
    EXPECT_EQ(wrongKeep, 0) << "pairs kept or dropped against the threshold " << dropBelow;
    EXPECT_EQ(asymmetric, 0) << "pairs kept one way only at drop-below " << dropBelow;
    EXPECT_EQ(kept, counters.kept);
    // Dropped entries computed are exact; skipped ones are estimated without occlusion.
    EXPECT_NEAR(reportedTotal, droppedTotal, 0.1 * droppedTotal) << "dropped energy at drop-below " << dropBelow;
    std::printf("drop-below %g: kept %lld of %lld, candidates %lld, skipped %lld nodes and %lld patches, dropped "
                "mean %.3g (reported %.3g), worst row error %.3g\n",
                dropBelow, kept, n * n, counters.candidates, counters.nodesSkipped, counters.patchesSkipped,
                droppedTotal / double(n), reportedTotal / double(n), worstReported);
  }
}

// A row pairs with a few patches of a cluster only: its walk of the occluder BVH takes a rectangle of the
// cluster's plane around them (RegionOfPatches) rather than the cluster's hull. The rectangle holds each of
// them, lies in the plane and is smaller than the hull; and the kept entries are the dense operator's bits (whose
// rows walk whole hulls), on a tiled room whose clusters are used, with shadow rays.
TEST(SparseOperator, ClusterWalksOverTheRowsPatchesOnlyKeepTheDenseBits) {
  const Scene scene = test::TiledRoomWithBlock(8);
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, 0);
  ASSERT_FALSE(g.hasFacePairCandidates);
  ASSERT_FALSE(g.clusters.empty());
  int checked = 0;
  for (const PatchCluster &c : g.clusters) {
    if (c.count < 8) continue;
    std::vector<int32_t> all(size_t(c.count));
    std::iota(all.begin(), all.end(), int32_t(c.first));
    const ConvexPolygon whole = RegionOfPatches(c, g.patches, all.data(), c.count);
    ASSERT_EQ(whole.n, c.hull.n);
    for (int k = 0; k < whole.n; ++k) ASSERT_EQ(Length(whole.v[k] - c.hull.v[k]), 0.0);
    const int32_t few[3] = {int32_t(c.first + 1), int32_t(c.first + 2), int32_t(c.first + c.count - 1)};
    const ConvexPolygon region = RegionOfPatches(c, g.patches, few, 3);
    ASSERT_EQ(region.n, 4);
    EXPECT_GT(PolygonArea(region), 0);
    EXPECT_LT(PolygonArea(region), PolygonArea(c.hull)) << "cluster at patch " << c.first;
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(Dot(region.v[k] - c.hull.v[0], c.normal), 0, 1e-12);
    for (int32_t id : few) {
      const Patch &p = g.patches[size_t(id)];
      for (int q = 0; q < p.cornerCount; ++q)
        for (int k = 0; k < 4; ++k) {  // inside every edge (counter-clockwise about the normal)
          const Vec3 edge = region.v[(k + 1) % 4] - region.v[k];
          EXPECT_GT(Dot(Cross(edge, p.corners[q] - region.v[k]), c.normal), 0) << "patch " << id;
        }
    }
    ++checked;
  }
  EXPECT_GT(checked, 5);

  const EmbreeScene embree(scene);
  FormFactorOptions rays;
  rays.pair.visibility = VisibilityMethod::kRays;
  const Dense dense = DenseRows(g, embree, rays);
  SparseCounters counters;
  FormFactorCounters entries;
  const FormFactorRows f = SparseRows(g, embree, rays, 3e-3, counters, Precision::kDouble, false, false, 0, 0,
                                      &entries);
  long long kept = 0, mismatched = 0;
  const std::vector<int32_t> columns = f.ColumnsUnpacked();
  for (long long i = 0; i < dense.n; ++i)
    for (long long k = f.indptr[size_t(i)]; k < f.indptr[size_t(i) + 1]; ++k, ++kept)
      if (f.f64[size_t(k)] != dense.At(i, columns[size_t(k)])) ++mismatched;
  std::printf("tiled room: %lld patches, %lld kept of %lld candidates, %lld pairs ray traced, %lld hidden\n",
              dense.n, kept, counters.candidates, entries.pairsRayTraced, entries.pairsHidden);
  EXPECT_GT(kept, 5000);
  EXPECT_LT(kept, dense.n * dense.n / 4);  // the rows pair with parts of the clusters
  EXPECT_GT(entries.pairsRayTraced + entries.pairsHidden, 500);
  EXPECT_EQ(mismatched, 0);
}

TEST(SparseOperator, FloatRowsAreTheKeptEntriesRoundedOnce) {
  const Scene scene = RoomWithBoxes();
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(1));
  const EmbreeScene embree(scene);
  const Dense dense = DenseRows(g, embree, FormFactorOptions{});
  SparseCounters sparse;
  const FormFactorRows f = SparseRows(g, embree, FormFactorOptions{}, 1e-3, sparse, Precision::kFloat);
  ASSERT_TRUE(f.f64.empty());
  const std::vector<int32_t> columns = f.ColumnsUnpacked();
  ASSERT_EQ(f.f32.size(), columns.size());
  ASSERT_GT(f.f32.size(), 0u);
  for (long long i = 0; i < f.n; ++i)
    for (long long k = f.indptr[size_t(i)]; k < f.indptr[size_t(i) + 1]; ++k)
      ASSERT_EQ(f.f32[size_t(k)], float(dense.At(i, columns[size_t(k)]))) << i << ", " << columns[size_t(k)];
}

TEST(SparseOperator, TheTreeBoundHoldsForEveryPairItSkips) {
  // And what a far link may carry: sum_j F_ij over a node never exceeds NodeSumBound (occluded entries are
  // smaller than the unoccluded ones the bound is for).
  const DenseScene room(RoomWithBoxes(), 0.5);
  const FormFactorGeometry &g = room.g;
  const Dense &dense = room.dense;
  const PatchTree &tree = room.tree;
  long long checked = 0, sums = 0;
  double tightest = 0;
  for (const PatchTreeNode &node : tree.nodes)
    for (long long i = 0; i < dense.n; ++i) {
      const double bound = NodeBound(g.patches[size_t(i)], tree.patchSpheres[size_t(i)], node);
      const double sumBound = NodeSumBound(g.patches[size_t(i)], tree.patchSpheres[size_t(i)], node);
      const bool behind = BehindPatch(g.patches[size_t(i)], node.sphere);
      double sum = 0;
      for (int32_t k = node.first; k < node.first + node.count; ++k) sum += dense.At(i, tree.order[size_t(k)]);
      if (std::isfinite(sumBound)) {
        ASSERT_LE(sum, sumBound) << "patch " << i << ", node of " << node.count;
        tightest = std::max(tightest, sum / sumBound);
        ++sums;
      }
      for (int32_t k = node.first; k < node.first + node.count; ++k) {
        const long long j = tree.order[size_t(k)];
        if (behind) {
          ASSERT_EQ(dense.At(i, j), 0) << "patch " << j << " behind patch " << i;
          ASSERT_EQ(dense.At(j, i), 0);
        }
        const double pairBound = PairBound(g.patches[size_t(i)], tree.patchSpheres[size_t(i)], g.patches[size_t(j)],
                                           tree.patchSpheres[size_t(j)]);
        if (std::isfinite(pairBound)) {
          ASSERT_LE(dense.At(i, j), pairBound) << i << " -> " << j;
          ASSERT_LE(dense.At(j, i), pairBound) << j << " -> " << i;
        }
        if (std::isfinite(bound)) {
          ASSERT_LE(dense.At(i, j), bound) << i << " -> " << j;
          ASSERT_LE(dense.At(j, i), bound) << j << " -> " << i;
          ++checked;
        }
      }
    }
  EXPECT_GT(checked, dense.n * dense.n);  // every pair is checked in several of its nodes
  EXPECT_GT(sums, dense.n * 10);
  EXPECT_GT(tightest, 0.3);  // a bound, but not a vacuous one
}

// NothingExchanged leaves out a node only where every entry between it and the receiver is 0: a patch, or an
// element of patches (its stand-in and box), against every node of the tree, in a closed room and in a city
// (whose ground, roofs and walls lie in a few planes each). And it leaves out more than the spheres would: the
// patches in the receiver's plane, and walls seen from the street behind them.
TEST(SparseOperator, NodesThatExchangeNothingWithAReceiverAreLeftOutAndNoOthers) {
  for (const bool city : {false, true}) {
    const DenseScene s(city ? City() : RoomWithBoxes(), city ? 4 : 0.5);
    const ElementForest forest = BuildElementForest(s.g.patches);
    long long leftOut = 0, byTheBoxes = 0;
    // Receiver: the patches of forest.tree.order[first, first + count), p their stand-in, in box [lo, hi].
    auto check = [&](const Patch &p, const Vec3 &lo, const Vec3 &hi, int32_t first, int32_t count) {
      for (const PatchTreeNode &node : s.tree.nodes) {
        if (!NothingExchanged(p, lo, hi, node)) continue;
        ++leftOut;
        byTheBoxes += !BehindPatch(p, node.sphere);
        for (int32_t a = first; a < first + count; ++a)
          for (int32_t k = node.first; k < node.first + node.count; ++k) {
            const long long i = forest.tree.order[size_t(a)], j = s.tree.order[size_t(k)];
            ASSERT_EQ(s.dense.At(i, j), 0) << "patch " << i << " -> " << j << (city ? " (city)" : " (room)");
            ASSERT_EQ(s.dense.At(j, i), 0) << "patch " << j << " -> " << i;
          }
      }
    };
    for (size_t e = 0; e < forest.tree.nodes.size(); ++e) {
      const PatchTreeNode &element = forest.tree.nodes[e];
      if (element.IsLeaf()) {
        const Patch &p = s.g.patches[size_t(forest.FirstPatch(int32_t(e)))];
        Vec3 lo, hi;
        CornerBox(p, lo, hi);
        check(p, lo, hi, element.first, 1);
      } else {
        check(forest.Receiver(s.g.patches, int32_t(e)), element.boxLo, element.boxHi, element.first, element.count);
      }
    }
    EXPECT_GT(byTheBoxes, leftOut / 10) << (city ? "city" : "room");
  }
}

TEST(SparseOperator, OnAnOpenCityTheWalkSkipsMostPairsAndEstimatesWhatItLeavesOut) {
  const Scene scene = City();
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(2));
  const EmbreeScene embree(scene);
  const Dense dense = DenseRows(g, embree, FormFactorOptions{});
  const long long n = dense.n;
  ASSERT_GT(n, 1000);
  SparseCounters one, two;
  FormFactorRows a, b;
  constexpr double kDropBelow = 1e-3;
  {
    ThreadLimit limit(1);
    a = SparseRows(g, embree, FormFactorOptions{}, kDropBelow, one);
  }
  {
    ThreadLimit limit(2);
    b = SparseRows(g, embree, FormFactorOptions{}, kDropBelow, two);
  }
  EXPECT_EQ(a.indptr, b.indptr);
  EXPECT_EQ(a.ColumnsUnpacked(), b.ColumnsUnpacked());
  EXPECT_EQ(a.f64, b.f64);
  EXPECT_EQ(a.dropped, b.dropped);
  EXPECT_GT(one.nodesSkipped, 0);
  // A pair whose rows both hold the other as a candidate is evaluated once.
  EXPECT_LT(double(one.pairsEvaluated), 0.55 * double(one.candidates));
  // The ground's patches never see each other; of the rest, most pairs are far.
  long long exchanging = 0;
  for (double v : dense.f) exchanging += v != 0;
  EXPECT_LT(double(one.candidates), 0.25 * double(n) * double(n)) << "the walk should skip most pairs";
  // Dropped energy, all rows together: the estimate against the dense rows' entries outside the kept ones.
  double reported = 0, truth = 0, worst = 0;
  for (long long i = 0; i < n; ++i) {
    double rowTruth = 0;
    for (long long j = 0; j < n; ++j) rowTruth += dense.At(i, j) - a.At(size_t(i), j);
    truth += rowTruth;
    reported += a.dropped[size_t(i)];
    worst = std::max(worst, std::fabs(a.dropped[size_t(i)] - rowTruth));
  }
  std::printf("city: %lld patches, %lld exchanging, kept %lld, candidates %lld, evaluated %lld, skipped %lld nodes and "
              "%lld patches; dropped mean %.4g (reported %.4g), worst row error %.3g\n",
              n, exchanging, one.kept, one.candidates, one.pairsEvaluated, one.nodesSkipped, one.patchesSkipped, truth / double(n),
              reported / double(n), worst);
  EXPECT_NEAR(reported, truth, 0.05 * truth);
  EXPECT_LT(worst, 0.05);
}

// The node means that the solvers' far field reads (solver/sparse_transport.h, on the CPU and the GPU): each
// node's area-weighted mean of each channel, summed here patch by patch.
TEST(SparseOperator, NodeMeansAreAreaWeightedMeansOverEachNode) {
  const Scene scene = RoomWithBoxes();
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(0.7));
  const size_t n = g.patches.size();
  FarLinks links;
  links.tree = std::make_shared<PatchTree>(BuildPatchTree(g.patches, 4));
  for (const Patch &p : g.patches) links.area.push_back(p.area);
  links.Begin((long long)links.tree->nodes.size(), (long long)n);  // no rows: the tree's means alone
  std::vector<double> x(3 * n);  // column-major, n x 3
  for (size_t j = 0; j < x.size(); ++j) x[j] = std::sin(double(j) * 0.37) + 2;
  const FlatTreeNodes nodes = FlattenTreeNodes(links);
  const FarFieldView view = ViewFarField(links, nodes, [](const auto &host) { return host.data(); });
  std::vector<double> means;
  NodeMeansHost(view, x.data(), (long long)n, means);
  const size_t count = links.tree->nodes.size();
  ASSERT_EQ(means.size(), 3 * count);
  for (size_t k = 0; k < count; ++k) {
    const PatchTreeNode &node = links.tree->nodes[k];
    for (size_t c = 0; c < 3; ++c) {
      double weighted = 0, area = 0;
      for (int32_t q = node.first; q < node.first + node.count; ++q) {
        const size_t j = size_t(links.tree->order[size_t(q)]);
        weighted += links.area[j] * x[j + c * n];
        area += links.area[j];
      }
      EXPECT_NEAR(means[k + c * count], weighted / area, 1e-13) << "node " << k << ", channel " << c;
    }
  }
}

// Spreading far links into entries keeps what a row does to any B: the expanded row times x equals the entries
// times x plus each link's value times the area-weighted mean of x over its target (as the solver reads it).
TEST(SparseOperator, SpreadFarLinksActOnBAsTheLinksDo) {
  const Scene scene = RoomWithBoxes();
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(0.7));
  const long long n = (long long)g.patches.size();
  FormFactorRows f;
  f.n = n;
  f.rows = {0, 3, 7};
  f.storage = Storage::kCsr;
  f.indptr = {0, 2, 2, 3};
  f.AssignColumns({1, 5, 2});
  f.f64 = {0.1, 0.2, 0.3};
  f.links.tree = std::make_shared<PatchTree>(BuildPatchTree(g.patches, 4));
  for (const Patch &p : g.patches) f.links.area.push_back(p.area);
  const int32_t nodes = int32_t(f.links.tree->nodes.size());
  // Nodes, and single patches (5: already an entry).
  std::vector<int32_t> targets = {1, -(5 + 1), nodes - 1, 2, -(1 + 1)};
  std::vector<uint16_t> values;
  for (double v : {0.05, 0.01, 0.02, 0.04, 0.03}) {
    values.push_back(0);
    ASSERT_TRUE(FarLinkBits(v, values.back()));
  }
  AppendLinkRows(f.links, nodes, n, {0, 2, 4, 5}, targets, values);
  const FormFactorRows before = f;
  std::vector<double> x(3 * static_cast<size_t>(n));  // n x 3, column-major: channel 0 is read below
  for (size_t j = 0; j < x.size(); ++j) x[j] = std::cos(double(j) * 0.91) + 1.5;
  std::vector<double> means;  // as the solvers read them
  const FlatTreeNodes flat = FlattenTreeNodes(f.links);
  NodeMeansHost(ViewFarField(f.links, flat, [](const auto &host) { return host.data(); }), x.data(), n, means);
  std::vector<long long> bounds = ExpandedEntryBounds(f);
  ExpandFarLinks(f);
  EXPECT_TRUE(f.links.Empty());
  for (size_t r = 0; r < f.RowCount(); ++r) {
    double expected = 0, got = 0;
    before.ForEachEntry(r, [&](int32_t j, long long e) { expected += before.f64[size_t(e)] * x[size_t(j)]; });
    before.links.ForEachLink(r, [&](int32_t t, long long k) {
      expected += before.links.Value(size_t(k)) * (t >= 0 ? means[size_t(t)] : x[size_t(-(t + 1))]);
    });
    int32_t previous = -1;
    f.ForEachEntry(r, [&](int32_t j, long long e) {
      got += f.f64[size_t(e)] * x[size_t(j)];
      EXPECT_LT(previous, j);
      previous = j;
    });
    EXPECT_NEAR(got, expected, 1e-13) << "row " << r;
    EXPECT_LE(f.indptr[r + 1] - f.indptr[r], bounds[r]);
    EXPECT_NEAR(f.RowSum(r), before.RowSum(r), 1e-14);  // each link's share per patch rounded on its own
  }
}

// The one estimate hierarchical radiosity's clusters take, computed here from the node's patches: the kernel
// from i's centroid to the node's area-weighted centre, times the node's area projected along that direction.
double CentreEstimate(const Patch &i, const std::vector<Patch> &patches, const PatchTree &tree,
                      const PatchTreeNode &node) {
  const Vec3 d = node.areaCentroid - i.centroid;
  const double r2 = LengthSquared(d);
  const Vec3 w = d / std::sqrt(r2);
  if (Dot(i.normal, w) <= 0) return 0;
  double projected = 0;
  for (int32_t q = node.first; q < node.first + node.count; ++q) {
    const Patch &p = patches[size_t(tree.order[size_t(q)])];
    for (int a = 0; a < 3; ++a)  // each axis's share of the normal, where it faces back along -w
      projected += p.area * std::max(0.0, -p.normal[a] * w[a]);
  }
  return Dot(i.normal, w) * projected / (kPi * r2);
}

// The estimate of a node: opening everything gives the point-kernel sum over its patches, computed here patch
// by patch; opening nothing gives the one cluster estimate. Over the nodes narrow enough to be estimated whole
// (a tenth of their distance), the cluster estimate from the facing groups' six points is more than 20 times
// nearer that sum than the centre's estimate (summed over every such patch and node of a city, whose nodes
// turn the corners between the ground and the walls), and opening does not take it further away.
TEST(SparseOperator, ClusterEstimatesFollowThePatchSum) {
  const Scene scene = City();
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(2.0));
  const PatchTree tree = BuildPatchTree(g.patches);
  double centreError = 0, clusterError = 0, openedError = 0, total = 0;
  for (size_t i = 0; i < g.patches.size(); i += 7) {
    const Patch &pi = g.patches[i];
    for (size_t k = 0; k < tree.nodes.size(); ++k) {
      const PatchTreeNode &node = tree.nodes[k];
      double sum = 0;
      for (int32_t q = node.first; q < node.first + node.count; ++q)
        sum += PatchEstimate(pi, g.patches[size_t(tree.order[size_t(q)])]);
      ASSERT_NEAR(OpenedClusterEstimate(tree, pi, int32_t(k), 0.0), sum, 1e-12 * (1 + sum));
      ASSERT_EQ(OpenedClusterEstimate(tree, pi, int32_t(k), 1e30), ClusterEstimate(tree, pi, node));
      if (node.sphere.radius > 0.1 * Length(node.sphere.center - pi.centroid)) continue;  // not skippable
      centreError += std::fabs(CentreEstimate(pi, g.patches, tree, node) - sum);
      clusterError += std::fabs(ClusterEstimate(tree, pi, node) - sum);
      openedError += std::fabs(OpenedClusterEstimate(tree, pi, int32_t(k), 0.05) - sum);
      total += sum;
    }
  }
  std::printf("estimates' error over the nodes, relative to their sum: centre %.3g, six points %.3g, opened "
              "%.3g\n", centreError / total, clusterError / total, openedError / total);
  EXPECT_GT(centreError, 0);
  EXPECT_LT(clusterError, centreError / 20);
  EXPECT_LE(openedError, clusterError);
}

// Ground and an emitting ceiling 20 above, 40 x 40 each, open at the sides: every ground-ceiling pair is far,
// smooth and unoccluded, as between a city's streets and the sky light of the benchmarks.
Scene GroundAndSky() {
  return SceneOf({test::RectZ(0, 40, 0, 40, 0, true), test::RectZ(0, 40, 0, 40, 20, false)});
}

TEST(SparseOperator, SmoothLinksCarryLargeFarPairsWithinTheTolerance) {
  // A link is smooth (SmoothLink) where its entries may reach the tolerance but its point estimate cannot be
  // far off. With no occluder the estimate is all a link is: against the exact kernel's sums over the node
  // (the dense rows), each smooth link's estimate must be within the tolerance.
  const DenseScene open(GroundAndSky(), 2);
  const FormFactorGeometry &g = open.g;
  const Dense &dense = open.dense;
  const PatchTree &tree = open.tree;
  constexpr double kTolerance = 3e-4;
  long long smooth = 0;
  double worst = 0, largest = 0;
  for (long long i = 0; i < dense.n; ++i) {
    const Patch &p = g.patches[size_t(i)];
    const PatchSphere &sphere = tree.patchSpheres[size_t(i)];
    for (size_t k = 0; k < tree.nodes.size(); ++k) {
      const PatchTreeNode &node = tree.nodes[k];
      if (NodeBound(p, sphere, node) < kTolerance || !SmoothLink(p, sphere, node, kTolerance)) continue;
      double sum = 0;
      for (int32_t q = node.first; q < node.first + node.count; ++q) sum += dense.At(i, tree.order[size_t(q)]);
      const double estimate = OpenedClusterEstimate(tree, p, int32_t(k), kOpening);
      worst = std::max(worst, std::fabs(estimate - sum));
      largest = std::max(largest, sum);
      ++smooth;
    }
  }
  std::printf("ground and sky, %lld patches at %g: %lld smooth links possible, carrying up to %.3g, worst "
              "estimate error %.3g\n", dense.n, kTolerance, smooth, largest, worst);
  EXPECT_GT(smooth, dense.n);
  EXPECT_GT(largest, kTolerance);
  EXPECT_LT(worst, 0.5 * kTolerance);
  // The walk with smooth links leaves fewer pairs to the exact kernel than the per-entry bound alone.
  std::vector<long long> rows(size_t(dense.n));
  std::iota(rows.begin(), rows.end(), 0LL);
  const std::vector<long long> perEntry = CountSparseCandidates(g.patches, tree, rows, kTolerance);
  const std::vector<long long> withSmooth =
      CountSparseCandidates(g.patches, tree, rows, kTolerance, nullptr, nullptr, true);
  const long long before = std::accumulate(perEntry.begin(), perEntry.end(), 0LL),
                  after = std::accumulate(withSmooth.begin(), withSmooth.end(), 0LL);
  std::printf("exact candidates: %lld by the per-entry bound, %lld with smooth links\n", before, after);
  EXPECT_LT(after, before);
  // And the hierarchical rows take such links, each row still within the tolerance of the dense row sum.
  SparseCounters counted;
  const FormFactorRows f = SparseRows(g, open.embree, FormFactorOptions{}, kTolerance, counted, Precision::kDouble, true);
  double worstRow = 0;
  for (long long i = 0; i < dense.n; ++i) {
    double truth = 0;
    for (long long j = 0; j < dense.n; ++j) truth += dense.At(i, j);
    worstRow = std::max(worstRow, std::fabs(f.RowSum(size_t(i)) - truth));
  }
  std::printf("rows: %lld entries kept exactly, %lld smooth links, worst row-sum error %.3g\n", counted.kept,
              counted.smoothLinks, worstRow);
  EXPECT_GT(counted.smoothLinks, 0);
  EXPECT_LE(counted.smoothLinks, counted.links);
  EXPECT_LT(worstRow, kTolerance);
}

TEST(SparseOperator, RowsInManyBlocksAreTheRowsOfOneBlockWithEachPairEvaluatedOnce) {
  // The rows are computed block by block (a row of an earlier block hands the later row its entry of their
  // pair): small blocks give the same CSR, dropped sums and links, bit for bit, with the same pairs evaluated
  // and the same entries counted, as one block of all rows. The sparse operator in a closed room (keep flags
  // travel with the handed entries), and the hierarchical one with elements on a city (rays).
  struct Case {
    Scene scene;
    double size, threshold;
    bool hierarchical;
  };
  FormFactorOptions rays;
  rays.pair.visibility = VisibilityMethod::kRays;
  for (const Case &c : {Case{RoomWithBoxes(), 0.5, 1e-3, false}, Case{City(), 2, 1e-3, true}}) {
    const FormFactorGeometry g = BuildFormFactorGeometry(c.scene, BySize(c.size));
    const EmbreeScene embree(c.scene);
    const FormFactorOptions options = c.hierarchical ? rays : FormFactorOptions{};
    SparseCounters oneSparse, manySparse;
    FormFactorCounters one, many;
    const long long n = (long long)g.patches.size();
    const FormFactorRows a = SparseRows(g, embree, options, c.threshold, oneSparse, Precision::kDouble,
                                        c.hierarchical, c.hierarchical, 0, 1LL << 40, &one);
    constexpr long long kSmallBlock = 2000;
    const FormFactorRows b = SparseRows(g, embree, options, c.threshold, manySparse, Precision::kDouble,
                                        c.hierarchical, c.hierarchical, 0, kSmallBlock, &many);
    const PatchTree tree = BuildPatchTree(g.patches);
    std::vector<long long> rows(static_cast<size_t>(n));
    std::iota(rows.begin(), rows.end(), 0LL);
    if (!c.hierarchical) {  // (with elements the rows' walks start lower, and count fewer candidates)
      const std::vector<long long> counts = CountSparseCandidates(g.patches, tree, rows, c.threshold);
      EXPECT_GT(SparseRowBlocks(counts, kSmallBlock).size(), 20u);
    } else {  // where each row's walk starts: disjoint subtrees in the order of their places (found by bisection)
      FormFactorCounters unused;
      const ElementWalk walk = WalkElements(g, embree, tree, BuildElementForest(g.patches), rows,
                                            c.threshold, options.seed, unused);
      size_t longest = 0;
      std::vector<int32_t> rowsOf(walk.handed.size(), 0);
      std::vector<int32_t> start;
      for (size_t r = 0; r < rows.size(); ++r) {
        walk.Start(r, start);
        const size_t count = start.size();
        longest = std::max(longest, count);
        if (walk.startOf[r] >= 0) ++rowsOf[size_t(walk.startOf[r])];
        for (size_t k = 1; k < count; ++k) {
          const PatchTreeNode &before = tree.nodes[size_t(start[k - 1])], &node = tree.nodes[size_t(start[k])];
          ASSERT_LE(before.first + before.count, node.first);
          ASSERT_LT(start[k - 1], start[k]);  // and in preorder: their indices increase
        }
        // The start node that may hold a leaf, as found in the packed list, against a scan of the list.
        for (int32_t leaf : {0, int32_t(tree.nodes.size() / 3), int32_t(tree.nodes.size()) - 1}) {
          int32_t scanned = -1;
          for (int32_t node : start)
            if (node <= leaf) scanned = node;
          ASSERT_EQ(walk.StartAtMost(r, leaf), scanned);
        }
      }
      EXPECT_GT(longest, 10u);
      // Held once per element for the rows that start from it: most by two sibling patches.
      long long held = 0, shared = 0;
      for (size_t e = 0; e < walk.handed.size(); ++e) {
        if (!walk.handed[e].Empty()) EXPECT_GT(rowsOf[e], 0) << "element " << e;
        held += (long long)walk.handed[e].Size();
        shared += (long long)walk.handed[e].Size() * rowsOf[e];
      }
      std::printf("start nodes held %lld, read by the rows %lld times\n", held, shared);
      EXPECT_LT(double(held), 0.75 * double(shared));
    }
    std::printf("%s, %lld patches: %lld candidates, %lld pairs evaluated, %lld kept, %lld links\n",
                c.hierarchical ? "city, hierarchical" : "room, sparse", n, manySparse.candidates,
                manySparse.pairsEvaluated, manySparse.kept, manySparse.links);
    EXPECT_GT(manySparse.candidates, 20 * kSmallBlock);
    EXPECT_EQ(a.indptr, b.indptr);
    EXPECT_EQ(a.ColumnsUnpacked(), b.ColumnsUnpacked());
    EXPECT_EQ(a.f64, b.f64);
    EXPECT_EQ(a.dropped, b.dropped);
    EXPECT_EQ(a.links.ptr, b.links.ptr);
    EXPECT_EQ(a.links.nameLow, b.links.nameLow);
    EXPECT_EQ(a.links.nameSpanStart, b.links.nameSpanStart);
    EXPECT_EQ(a.links.value, b.links.value);
    EXPECT_EQ(oneSparse.pairsEvaluated, manySparse.pairsEvaluated);
    EXPECT_EQ(oneSparse.kept, manySparse.kept);
    EXPECT_EQ(oneSparse.droppedEntries, manySparse.droppedEntries);
    EXPECT_EQ(one.pairsExchanging, many.pairsExchanging);
    EXPECT_EQ(one.pairsHidden, many.pairsHidden);
    EXPECT_EQ(one.pairsOccluded, many.pairsOccluded);
    EXPECT_EQ(one.pairsRayTraced, many.pairsRayTraced);
    EXPECT_EQ(one.rays, many.rays);
    if (!c.hierarchical) {  // float rows: the same entries, each rounded once
      SparseCounters narrowSparse;
      const FormFactorRows f = SparseRows(g, embree, options, c.threshold, narrowSparse, Precision::kFloat, false,
                                          false, 0, kSmallBlock);
      EXPECT_EQ(f.ColumnsUnpacked(), a.ColumnsUnpacked());
      ASSERT_EQ(f.f32.size(), a.f64.size());
      for (size_t k = 0; k < f.f32.size(); ++k) ASSERT_EQ(f.f32[k], float(a.f64[k]));
    }
    // Every pair once: fewer evaluations than candidates (most pairs are candidates of both rows).
    EXPECT_LT(double(manySparse.pairsEvaluated), 0.75 * double(manySparse.candidates));
  }
}

// Row ra of a (CSR, float64, with or without far links) is row rb of b, bit for bit: columns, entries, dropped
// sum, far links.
void ExpectSameCsrRow(const FormFactorRows &a, size_t ra, const FormFactorRows &b, size_t rb) {
  const std::string row = "row " + std::to_string(a.rows.empty() ? (long long)ra : a.rows[ra]);
  ASSERT_EQ(a.indptr[ra + 1] - a.indptr[ra], b.indptr[rb + 1] - b.indptr[rb]) << row;
  for (long long k = a.indptr[ra], q = b.indptr[rb]; k < a.indptr[ra + 1]; ++k, ++q) {
    ASSERT_EQ(a.ColumnOf(ra, k), b.ColumnOf(rb, q)) << row;
    ASSERT_EQ(a.f64[size_t(k)], b.f64[size_t(q)]) << row << ", column " << a.ColumnOf(ra, k);
  }
  ASSERT_EQ(a.dropped[ra], b.dropped[rb]) << row;
  ASSERT_EQ(a.links.Empty(), b.links.Empty()) << row;
  if (a.links.Empty()) return;
  ASSERT_EQ(a.links.ptr[ra + 1] - a.links.ptr[ra], b.links.ptr[rb + 1] - b.links.ptr[rb]) << row;
  const long long count = a.links.ptr[ra + 1] - a.links.ptr[ra];
  ASSERT_EQ(a.links.TargetsUnpacked(a.links.ptr[ra], count), b.links.TargetsUnpacked(b.links.ptr[rb], count)) << row;
  for (long long k = a.links.ptr[ra], q = b.links.ptr[rb]; k < a.links.ptr[ra + 1]; ++k, ++q)
    ASSERT_EQ(a.links.value[size_t(k)], b.links.value[size_t(q)]) << row;
}

TEST(SparseOperator, RowsAloneAreTheRowsThatShareTheirPairs) {
  // Each row on its own (SparseStreaming::rowsAlone, what checkpoints take: a row is done when its block ends):
  // the last two thirds of the rows computed alone, in small blocks, are those rows of the run of every row that
  // shares each pair between its two rows, bit for bit: entries, dropped sums, far links. The sparse operator in
  // a closed room, the hierarchical one with elements on a city (rays).
  struct Case {
    Scene scene;
    double size, threshold;
    bool hierarchical;
  };
  FormFactorOptions rays;
  rays.pair.visibility = VisibilityMethod::kRays;
  for (const Case &c : {Case{RoomWithBoxes(), 0.5, 1e-3, false}, Case{City(), 2, 1e-3, true}}) {
    SCOPED_TRACE(c.hierarchical ? "city, hierarchical" : "room, sparse");
    const FormFactorGeometry g = BuildFormFactorGeometry(c.scene, BySize(c.size));
    const EmbreeScene embree(c.scene);
    const FormFactorOptions options = c.hierarchical ? rays : FormFactorOptions{};
    const long long n = (long long)g.patches.size(), first = n / 3;
    SparseCounters sharedSparse, aloneSparse;
    const FormFactorRows shared = SparseRows(g, embree, options, c.threshold, sharedSparse, Precision::kDouble,
                                             c.hierarchical, c.hierarchical);
    const FormFactorRows alone = SparseRows(g, embree, options, c.threshold, aloneSparse, Precision::kDouble,
                                            c.hierarchical, c.hierarchical, first, 2000, nullptr, true);
    ASSERT_EQ(alone.RowCount(), size_t(n - first));
    for (size_t r = 0; r < alone.RowCount(); ++r)
      ASSERT_NO_FATAL_FAILURE(ExpectSameCsrRow(alone, r, shared, size_t(first) + r));
    // The same rows in two calls over parts of them, with one walk of the elements for them all.
    {
      std::vector<long long> rows(size_t(n - first));
      std::iota(rows.begin(), rows.end(), first);
      const PatchTree tree = BuildPatchTree(g.patches);
      FormFactorCounters counters;
      std::unique_ptr<ElementWalk> walk;
      if (c.hierarchical)
        walk = std::make_unique<ElementWalk>(WalkElements(g, embree, tree, BuildElementForest(g.patches),
                                                          rows, c.threshold, options.seed, counters));
      const std::vector<long long> counts =
          CountSparseCandidates(g.patches, tree, rows, c.threshold, walk.get(), nullptr, c.hierarchical);
      const size_t split = rows.size() / 2;
      for (size_t part = 0; part < 2; ++part) {
        const size_t begin = part == 0 ? 0 : split, end = part == 0 ? split : rows.size();
        FormFactorRows f;
        f.n = n;
        f.rows.assign(rows.begin() + long(begin), rows.begin() + long(end));
        SparseStreaming streaming;
        streaming.rowsAlone = true;
        streaming.walkFirstRow = begin;
        PhaseTimers timers;
        SparseCounters sparse;
        ComputeSparseRowsCpu(g, embree, tree, std::vector<long long>(counts.begin() + long(begin), counts.begin() + long(end)),
                             c.threshold, c.hierarchical, options, f, timers, counters, sparse, false, nullptr,
                             walk.get(), streaming);
        for (size_t r = 0; r < f.RowCount(); ++r) ASSERT_NO_FATAL_FAILURE(ExpectSameCsrRow(f, r, alone, begin + r));
      }
    }
    // Alone, a row evaluates every pair it lists: more evaluations per row than when the pairs are shared.
    EXPECT_GT(double(aloneSparse.pairsEvaluated) / double(n - first), 1.2 * double(sharedSparse.pairsEvaluated) / double(n));
  }
}

TEST(SparseOperator, ABlockOverTheMemoryLimitIsRefusedBeforeItIsComputed) {
  const Scene scene = RoomWithBoxes();
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(0.5));
  const EmbreeScene embree(scene);
  FormFactorRows f;
  f.n = (long long)g.patches.size();
  f.rows.resize(size_t(f.n));
  std::iota(f.rows.begin(), f.rows.end(), 0LL);
  const PatchTree tree = BuildPatchTree(g.patches);
  const std::vector<long long> counts = CountSparseCandidates(g.patches, tree, f.rows, 1e-3);
  const std::vector<size_t> blocks = SparseRowBlocks(counts, 2000);
  ASSERT_GT(blocks.size(), 3u);
  // Room for the first block, but not for what the rows keep as the blocks go on: the refusal comes before
  // a later block, with the rows done.
  SparseStreaming streaming;
  streaming.blockCandidates = 2000;
  streaming.heldBytes = 1000;
  streaming.limitBytes = streaming.heldBytes + SparseBlockBytes(counts, nullptr, 0, blocks[1], false, false, true) + 1;
  long long refusedAt = -1;
  streaming.refuse = [&](double need, double limit, long long rowsDone) {
    EXPECT_GT(need, limit);
    refusedAt = rowsDone;
    return std::string("over the limit");
  };
  PhaseTimers timers;
  FormFactorCounters counters;
  SparseCounters sparse;
  EXPECT_THROW(ComputeSparseRowsCpu(g, embree, tree, counts, 1e-3, false, FormFactorOptions{}, f, timers, counters,
                                    sparse, false, nullptr, nullptr, streaming),
               InputError);
  EXPECT_GT(refusedAt, 0);
  EXPECT_NE(std::find(blocks.begin(), blocks.end(), size_t(refusedAt)), blocks.end());
}

TEST(SparseOperator, RowsThatOutpaceTheMemoryLimitSaySoEarly) {
  const Scene scene = RoomWithBoxes();
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(0.5));
  const EmbreeScene embree(scene);
  const PatchTree tree = BuildPatchTree(g.patches);
  const long long n = (long long)g.patches.size();
  std::vector<long long> rows(static_cast<size_t>(n));
  std::iota(rows.begin(), rows.end(), 0LL);
  const std::vector<long long> counts = CountSparseCandidates(g.patches, tree, rows, 1e-3);
  ASSERT_GT(SparseRowBlocks(counts, 2000).size(), 6u);
  struct Said {
    int calls = 0;
    double projected = 0, limit = 0;
    long long rowsDone = -1, refusedAt = -1;
    double keptBytes = 0;  // what the rows kept, where they were all computed
  };
  auto compute = [&](double limitBytes) {
    FormFactorRows f;
    f.n = n;
    f.rows = rows;
    SparseStreaming streaming;
    streaming.blockCandidates = 2000;
    streaming.heldBytes = 1000;
    streaming.limitBytes = limitBytes;
    Said said;
    streaming.refuse = [&](double, double, long long rowsDone) {
      said.refusedAt = rowsDone;
      return std::string("over the limit");
    };
    streaming.outpaced = [&](double projected, double limit, long long rowsDone) {
      ++said.calls;
      said.projected = projected;
      said.limit = limit;
      said.rowsDone = rowsDone;
    };
    PhaseTimers timers;
    FormFactorCounters counters;
    SparseCounters sparse;
    try {
      ComputeSparseRowsCpu(g, embree, tree, counts, 1e-3, false, FormFactorOptions{}, f, timers, counters, sparse,
                           false, nullptr, nullptr, streaming);
      said.keptBytes = double(f.EntryCount()) * KeptEntryBytes(false);
    } catch (const InputError &) {
    }
    return said;
  };
  // Room for everything: nothing said.
  const Said roomy = compute(1e12);
  EXPECT_EQ(roomy.calls, 0);
  EXPECT_EQ(roomy.refusedAt, -1);
  ASSERT_GT(roomy.keptBytes, 0);
  // Room for half of what the rows keep: said once, early, with a projection near what they do keep, and before
  // the blocks' check stops the run.
  const double limit = 1000 + 0.5 * roomy.keptBytes;
  const Said tight = compute(limit);
  std::printf("rows outpacing the limit: said at %lld of %lld rows, projecting %.0f bytes against %.0f kept in all "
              "(limit %.0f); refused at %lld\n",
              tight.rowsDone, n, tight.projected - 1000, roomy.keptBytes, limit, tight.refusedAt);
  EXPECT_EQ(tight.calls, 1);
  EXPECT_EQ(tight.limit, limit);
  EXPECT_GT(tight.projected, limit);
  EXPECT_GE(20 * tight.rowsDone, n);
  EXPECT_LT(tight.rowsDone, n);
  EXPECT_GT(tight.refusedAt, tight.rowsDone);
  EXPECT_NEAR(tight.projected - 1000, roomy.keptBytes, 0.5 * roomy.keptBytes);
}

TEST(SparseOperator, FarLinksCarryWhatTheWalkSkipsOfEachRow) {
  // With far links nothing is dropped: each row's exact entries plus its links' estimates come close to the
  // dense row sum (1 in this closed room, 0 for the boxes' faces on the floor) even where the walk skipped a
  // good part of the row.
  const Scene scene = RoomWithBoxes();
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(0.5));
  const EmbreeScene embree(scene);
  const Dense dense = DenseRows(g, embree, FormFactorOptions{});
  SparseCounters sparse;
  const FormFactorRows f = SparseRows(g, embree, FormFactorOptions{}, 3e-3, sparse, Precision::kDouble, true);
  ASSERT_FALSE(f.links.Empty());
  EXPECT_GT(sparse.links, 0);
  double worstExact = 0, worstLinked = 0;
  for (size_t r = 0; r < f.RowCount(); ++r) {
    double truth = 0;
    for (long long j = 0; j < dense.n; ++j) truth += dense.At((long long)r, j);
    const double linked = f.RowSum(r), exact = linked - f.links.Sum(r);
    worstExact = std::max(worstExact, std::fabs(truth - exact));
    worstLinked = std::max(worstLinked, std::fabs(truth - linked));
    EXPECT_EQ(f.dropped[r], 0.0);
    f.ForEachEntry(r, [&](int32_t j, long long k) {  // every evaluated entry kept, as computed
      EXPECT_EQ(f.f64[size_t(k)], dense.At((long long)r, j));
    });
  }
  std::printf("closed room, far links at 3e-3: %lld links; worst row-sum error %.3g without them, %.3g with\n",
              sparse.links, worstExact, worstLinked);
  EXPECT_GT(worstExact, 0.01);
  EXPECT_LT(worstLinked, 0.25 * worstExact);
}

TEST(SparseOperator, AnEmptyClosedRoomsRowsSumToOneWithTheElementsCurvature) {
  // Inside an empty box every row of F sums to 1 exactly, whatever the patches: the far links' estimates are
  // all that can move a row from 1 (no shadow, the kept entries exact to 1e-8). Each row reads its elements'
  // links at its own centroid; with their curvature the rows stay within 1e-4 of 1 on average and within the
  // tolerance everywhere, and without it, as the links were read before, more than twice as far (measured:
  // 7.3e-5 and 3.5e-4).
  constexpr double kTolerance = 3e-4;
  std::vector<std::vector<Vec3>> polygons;
  AddBox(polygons, {0, 0, 0}, {4, 3, 5}, true);
  const Scene scene = SceneOf(polygons);
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(0.2));
  const EmbreeScene embree(scene);
  SparseCounters counters;
  const FormFactorRows f = WideElementRows(g, embree, kTolerance, counters);
  ASSERT_GT(counters.elementLinks, 0);
  FormFactorRows linear = f;
  std::vector<uint16_t> &shape = linear.links.elements.shape;  // 5 a link: gradient u, v; curvature uu, uv, vv
  for (size_t k = 0; k < shape.size(); ++k)
    if (k % kElementLinkShape >= 2) shape[k] = 0;
  const size_t n = f.RowCount();
  auto sumOfErrors = [n](const FormFactorRows &rows, double &worst) {  // of |row sum - 1|, and the largest
    double total = 0;
    worst = 0;
    for (size_t r = 0; r < n; ++r) {
      total += std::fabs(rows.RowSum(r) - 1);
      worst = std::max(worst, std::fabs(rows.RowSum(r) - 1));
    }
    return total;
  };
  double worst = 0, linearWorst = 0, elementShare = 0;
  const double error = sumOfErrors(f, worst), linearError = sumOfErrors(linear, linearWorst);
  for (size_t r = 0; r < n; ++r) elementShare += f.links.elements.Sum(r);
  std::printf("empty room, %zu patches at %g: %lld element links carrying %.3g of a row; mean |row sum - 1| "
              "%.3g (worst %.3g) with their curvature, %.3g without\n", n, kTolerance, counters.elementLinks,
              elementShare / double(n), error / double(n), worst, linearError / double(n));
  EXPECT_GT(elementShare / double(n), 0.05);
  EXPECT_LT(error / double(n), 1e-4);
  EXPECT_LT(worst, kTolerance);
  EXPECT_GT(linearError, 2 * error);
  // As released (elements at a twentieth of their distance), the same bounds.
  SparseCounters released;
  const FormFactorRows d = SparseRows(g, embree, FormFactorOptions{}, kTolerance, released, Precision::kDouble, true, true);
  ASSERT_GT(released.elementLinks, 0);
  double releasedWorst = 0;
  const double releasedError = sumOfErrors(d, releasedWorst);
  std::printf("as released: %lld element links; mean |row sum - 1| %.3g (worst %.3g)\n", released.elementLinks,
              releasedError / double(n), releasedWorst);
  EXPECT_LT(releasedError / double(n), 1e-4);
  EXPECT_LT(releasedWorst, kTolerance);
}

TEST(SparseOperator, AFarLinkTracesTheRaysItAsksForWhateverTheNodesSize) {
  // VisibleShare spreads the rays a link asks for over the samples whose patches face each other: a node of a
  // few patches traces as many as a node of hundreds (spread over 32 samples whatever the node, a node of 7
  // patches traced a quarter of them), and a node none of whose patches face the receiver traces none.
  const DenseScene open(GroundAndSky(), 2);
  const FormFactorGeometry &g = open.g;
  const PatchTree &tree = open.tree;
  const EmbreeScene &embree = open.embree;
  const EmbreeShadowRays occluded{embree};
  constexpr double kWanted = 300;
  long long small = 0, large = 0, facingAway = 0;
  for (int32_t i : {0, int32_t(g.patches.size()) - 1}) {  // a ground patch and a sky patch
    for (size_t k = 0; k < tree.nodes.size(); ++k) {
      const PatchTreeNode &node = tree.nodes[k];
      bool anyFacing = false;
      for (int32_t q = node.first; q < node.first + node.count; ++q)
        anyFacing = anyFacing || PatchEstimate(g.patches[size_t(i)], g.patches[size_t(tree.order[size_t(q)])]) > 0;
      uint32_t traced = 0;
      const VisibleShareResult seen = VisibleShare(g.patches, &i, 1, tree, node, 1, occluded, traced, kWanted);
      if (!anyFacing) {
        EXPECT_EQ(traced, 0u) << "node " << k;
        ++facingAway;
        continue;
      }
      // No ray is blocked between two parallel planes, and each facing sample takes ceil(kWanted / facing).
      EXPECT_EQ(seen.share, 1.0);
      EXPECT_GE(double(traced), kWanted) << "node " << k << " of " << node.count << " patches";
      EXPECT_LT(double(traced), kWanted + kNodeVisibilitySamples * 2.0) << "node " << k;
      ++(node.count < kNodeVisibilitySamples ? small : large);
    }
  }
  EXPECT_GT(small, 10);
  EXPECT_GT(large, 10);
  EXPECT_GT(facingAway, 10);  // the ground's own nodes from the ground, the sky's from the sky
}

TEST(SparseOperator, AVerdictWhoseRaysDisagreeStopsAtItsFirstPacket) {
  // An element's verdict needs all its rays to agree, and most verdicts that fail do so on a shadow over part of
  // the node: its rays go round the samples (ray k of every sample before ray k + 1 of any), so the first packet
  // spans the node and shows the shadow. Sample by sample, the first packet held one sample's rays. A roof over
  // half of the ground hides about half of the sky from a ground patch at its edge.
  const Scene scene = SceneOf({test::RectZ(0, 40, 0, 40, 0, true), test::RectZ(0, 40, 0, 40, 20, false),
                               test::RectZ(0, 20, 0, 40, 10, true)});
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(2));
  const EmbreeScene embree(scene);
  const EmbreeShadowRays occluded{embree};
  const PatchTree tree = BuildPatchTree(g.patches);
  int32_t receiver = -1;  // the ground patch nearest (21, 21)
  for (size_t i = 0; i < g.patches.size(); ++i)
    if (g.patches[i].centroid.z == 0 &&
        (receiver < 0 || Length(g.patches[i].centroid - Vec3{21, 21, 0}) <
                             Length(g.patches[size_t(receiver)].centroid - Vec3{21, 21, 0})))
      receiver = int32_t(i);
  ASSERT_GE(receiver, 0);
  constexpr double kWanted = 32.0 * kNodeVisibilitySamples;  // 32 rays a sample: 1024 for a verdict
  long long partly = 0, whole = 0;
  for (const PatchTreeNode &node : tree.nodes) {
    bool sky = node.count >= EmbreeShadowRays::kRaysAtOnce;
    for (int32_t q = node.first; q < node.first + node.count; ++q)
      sky = sky && g.patches[size_t(tree.order[size_t(q)])].centroid.z == 20;
    if (!sky) continue;
    uint32_t tracedAll = 0, tracedVerdict = 0;
    const VisibleShareResult all = VisibleShare(g.patches, &receiver, 1, tree, node, 1, occluded, tracedAll, kWanted);
    const VisibleShareResult verdict =
        VisibleShare(g.patches, &receiver, 1, tree, node, 1, occluded, tracedVerdict, kWanted, true);
    if (all.share > 0.2 && all.share < 0.8) {
      ++partly;
      EXPECT_FALSE(verdict.unanimous);
      EXPECT_LE(tracedVerdict, uint32_t(EmbreeShadowRays::kRaysAtOnce)) << "of " << tracedAll;
    } else if (all.share == 1.0) {  // seen whole: the verdict traces every ray, and agrees
      ++whole;
      EXPECT_TRUE(verdict.unanimous);
      EXPECT_EQ(verdict.share, 1.0);
      EXPECT_EQ(tracedVerdict, tracedAll);
    }
  }
  EXPECT_GT(partly, 0);
  EXPECT_GT(whole, 0);
}

// Two receivers on the ground, far apart, under a strip of 7 patches facing down 10 above (the node), and 0.5
// below the strip a plate that blocks most segments from the far receiver to the fifth patch (x in [3.5, 4.5]:
// at the plate, x from 3.45 to 4.45), none to the others and none from the near receiver.
struct PlateOverStrip {
  Scene scene = SceneOf({test::RectZ(-0.5, 6.5, 9.5, 10.5, 10, false),       // the node: 7 patches
                         test::RectZ(2.5, 3.5, -0.5, 0.5, 0, true),          // the near receiver
                         test::RectZ(2.5, 3.5, 39.5, 40.5, 0, true),         // the far receiver
                         test::RectZ(3.51, 4.39, 10.9, 12.1, 9.5, false)});  // the plate
  FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(1));
  EmbreeScene embree{scene};
  // The tree over the strip alone (the scene's first 7 patches): its root is the node.
  std::vector<Patch> strip{g.patches.begin(), g.patches.begin() + 7};
  PatchTree tree = BuildPatchTree(strip);
  int32_t nearReceiver = -1, farReceiver = -1;
  PlateOverStrip() {
    for (size_t i = 7; i < g.patches.size(); ++i) {
      if (std::fabs(g.patches[i].centroid.z) > 1e-9) continue;
      (g.patches[i].centroid.y < 20 ? nearReceiver : farReceiver) = int32_t(i);
    }
  }
  void CheckBuilt() const {
    for (const Patch &p : strip) ASSERT_NEAR(p.centroid.z, 10.0, 1e-9);
    ASSERT_EQ(tree.nodes[0].count, 7);
    ASSERT_GE(nearReceiver, 0);
    ASSERT_GE(farReceiver, 0);
  }
};

TEST(SparseOperator, AVerdictPairsEveryReceiverWithEveryPatchOfASmallNode) {
  // A shadow can fall between one receiver of an element and one patch of a node only: a verdict sees it only
  // through a sample that pairs them (PlateOverStrip). Sampled in slices, 7 samples paired the far receiver with
  // patches 1, 3 and 5 (and 6) whatever the draw, and the verdict came out "seen whole" for every seed.
  const PlateOverStrip s;
  ASSERT_NO_FATAL_FAILURE(s.CheckBuilt());
  const std::vector<Patch> &patches = s.g.patches;
  const PatchTree &tree = s.tree;
  const int32_t nearReceiver = s.nearReceiver, farReceiver = s.farReceiver;
  const EmbreeShadowRays occluded{s.embree};
  bool everyPair = false;
  EXPECT_EQ(VerdictSamples(2, 7, everyPair), 14);
  EXPECT_TRUE(everyPair);
  EXPECT_EQ(VerdictSamples(3, 30, everyPair), kMostNodeVisibilitySamples);
  EXPECT_FALSE(everyPair);
  const int32_t both[2] = {nearReceiver, farReceiver};
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    uint32_t traced = 0;
    // The far receiver sees part of the node, the near one all of it.
    const VisibleShareResult far =
        VisibleShare(patches, &farReceiver, 1, tree, tree.nodes[0], seed, occluded, traced, 64);
    EXPECT_LT(far.share, 0.95) << "seed " << seed;
    const VisibleShareResult nearAlone =
        VisibleShare(patches, &nearReceiver, 1, tree, tree.nodes[0], seed, occluded, traced, 64, true);
    EXPECT_TRUE(nearAlone.unanimous) << "seed " << seed;
    EXPECT_EQ(nearAlone.share, 1.0) << "seed " << seed;
    const VisibleShareResult verdict =
        VisibleShare(patches, both, 2, tree, tree.nodes[0], seed, occluded, traced, 64, true);
    EXPECT_FALSE(verdict.unanimous) << "seed " << seed;
  }
}

TEST(SparseOperator, SampleSidesProveDisagreementOnlyWhereASeenAndAHiddenRayLie) {
  // Records of a receiver (a place in the receivers' order) and a node's patch (a place in the tree's order).
  const SampleSides sides[] = {{0, 10, true, false}, {1, 11, false, true}, {2, 12, true, true}, {3, 13, true, false}};
  const SampleSides *end = sides + 4;
  EXPECT_TRUE(SidesDisagree(sides, end, 0, 2, 10, 12));    // seen at (0, 10), hidden at (1, 11)
  EXPECT_FALSE(SidesDisagree(sides, end, 0, 1, 10, 14));   // receiver 0 alone: seen only
  EXPECT_FALSE(SidesDisagree(sides, end, 0, 2, 11, 14));   // patch 10 left out: hidden only
  EXPECT_TRUE(SidesDisagree(sides, end, 2, 3, 0, 100));    // one sample whose rays disagree
  EXPECT_FALSE(SidesDisagree(sides, end, 3, 4, 0, 100));
  EXPECT_FALSE(SidesDisagree(sides, sides, 0, 4, 0, 100)); // no records
}

TEST(SparseOperator, AVerdictThatDisagreesRecordsWhereItsRaysWereSeenAndHidden) {
  // PlateOverStrip: the plate hides some segments from the far receiver to the node's fifth patch and nothing
  // else. A verdict of both receivers that disagrees must say so through its records, so that the far receiver
  // alone (a smaller element below) is decided without rays, and the near receiver alone is not: its rays all
  // pass, and a hidden record against it would refuse it a link it can take.
  const PlateOverStrip s;
  ASSERT_NO_FATAL_FAILURE(s.CheckBuilt());
  const std::vector<Patch> &patches = s.g.patches, &strip = s.strip;
  const PatchTree &tree = s.tree;
  const int32_t nearReceiver = s.nearReceiver, farReceiver = s.farReceiver;
  const EmbreeShadowRays occluded{s.embree};
  const int32_t both[2] = {nearReceiver, farReceiver};
  const PatchTreeNode &node = tree.nodes[0];
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    uint32_t traced = 0;
    std::vector<SampleSides> sides;
    const VisibleShareResult verdict = VisibleShare(patches, both, 2, tree, node, seed, occluded, traced, 64, true, &sides);
    ASSERT_FALSE(verdict.unanimous) << "seed " << seed;
    ASSERT_FALSE(sides.empty()) << "seed " << seed;
    for (const SampleSides &s : sides) {
      ASSERT_GE(s.receiver, 0);
      ASSERT_LT(s.receiver, 2);
      ASSERT_GE(s.place, node.first);
      ASSERT_LT(s.place, node.first + node.count);
      if (s.hidden) {  // only the far receiver's segments to the fifth patch (x in [3.5, 4.5]) can be hidden
        EXPECT_EQ(s.receiver, 1) << "seed " << seed;
        EXPECT_NEAR(strip[size_t(tree.order[size_t(s.place)])].centroid.x, 4.0, 1e-9) << "seed " << seed;
      }
    }
    EXPECT_TRUE(SidesDisagree(sides.data(), sides.data() + sides.size(), 1, 2, node.first, node.first + node.count))
        << "seed " << seed;
    EXPECT_FALSE(SidesDisagree(sides.data(), sides.data() + sides.size(), 0, 1, node.first, node.first + node.count))
        << "seed " << seed;
    // A unanimous verdict records nothing.
    std::vector<SampleSides> none;
    const VisibleShareResult nearAlone =
        VisibleShare(patches, &nearReceiver, 1, tree, node, seed, occluded, traced, 64, true, &none);
    EXPECT_TRUE(nearAlone.unanimous);
    EXPECT_TRUE(none.empty());
  }
}

// City() under a sky 30 above it, facing down: far pairs across streets, seen past buildings.
Scene CityUnderSky() {
  std::vector<std::vector<Vec3>> polygons = CityPolygons();
  polygons.push_back(test::RectZ(0, 60, 0, 60, 30, false));
  return SceneOf(polygons);
}

TEST(SparseOperator, ElementsSeeTheirLinksWholeOnlyWhereEnoughRaysAgree) {
  // An element takes a link only when all its rays agree that the node is seen whole (or hidden whole), so a
  // node partly hidden whose few rays all happened to pass is read unoccluded: an error of one sign, which
  // adds up over a row's links rather than cancelling. Against the exact rows (exact visibility) the
  // elements' links of a city under a sky must be right on average to a small share of the tolerance per
  // row. Measured: a mean signed error of 1.24e-4 per row (0.124 of the tolerance) when a verdict took
  // whatever rays its samples gave (2 each), 4.7e-5 with kUnanimousRaysPerTolerance facing rays (far_field.h).
  const Scene scene = CityUnderSky();
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(3));
  const EmbreeScene embree(scene);
  const Dense dense = DenseRows(g, embree, FormFactorOptions{});
  const PatchTree tree = BuildPatchTree(g.patches);
  constexpr double kTolerance = 1e-3;
  SparseCounters counters;
  FormFactorRows f = WideElementRows(g, embree, kTolerance, counters);
  const ElementFarLinks &e = f.links.elements;
  ASSERT_GT(counters.elementLinks, 0);
  double signedError = 0, absoluteError = 0, carried = 0;
  std::vector<double> rowError(f.RowCount(), 0.0);  // per row, what its elements' links read less the exact sum
  long long reads = 0;
  for (size_t r = 0; r < f.RowCount(); ++r)
    for (long long q = e.rowPtr[r]; q < e.rowPtr[r + 1]; ++q) {
      const size_t m = size_t(e.rowElement[size_t(q)]);
      for (long long k = e.ptr[m]; k < e.ptr[m + 1]; ++k) {
        const PatchTreeNode &node = tree.nodes[size_t(e.target[size_t(k)])];
        double exact = 0;
        for (int32_t p = node.first; p < node.first + node.count; ++p) exact += dense.At((long long)r, tree.order[size_t(p)]);
        const double read = e.Read(size_t(q), k);
        signedError += read - exact;
        rowError[r] += read - exact;
        absoluteError += std::fabs(read - exact);
        carried += exact;
        ++reads;
      }
    }
  const double rows = double(f.RowCount());
  std::printf("city, %.0f patches at %g: %lld element-link reads carrying %.3g of a row; per row, mean signed "
              "error %.3g, mean absolute %.3g\n", rows, kTolerance, reads, carried / rows, signedError / rows,
              absoluteError / rows);
  EXPECT_GT(carried / rows, 0.005);
  EXPECT_LT(std::fabs(signedError) / rows, 0.08 * kTolerance);

  // The operator check tells the far error by its parts: its elements' part is the error measured above, on
  // the rows it checks; no entry is carried twice (by a link and a kept entry, or by two links), so what no
  // link carries is at least 0 in every row; and the parts add up to the signed error.
  f.links.tree = std::make_shared<const PatchTree>(tree);
  constexpr long long kChecked = 48;
  const OperatorCheck c = CheckOperatorRows(MPI_COMM_WORLD, g, embree, FormFactorOptions{}, f, kChecked);
  ASSERT_EQ(c.rows, kChecked);
  EXPECT_EQ(c.keptMismatches, 0);
  double elementsOnChecked = 0;
  for (long long r : OperatorCheckRows(f.n, kChecked)) elementsOnChecked += rowError[size_t(r)];
  EXPECT_NEAR(c.elementLinks.mean, elementsOnChecked / double(kChecked), 1e-12);
  EXPECT_GT(c.leftOut.absMean, 0);  // links found hidden from this city's streets
  EXPECT_NEAR(c.leftOut.mean, c.leftOut.absMean, 1e-12);
  EXPECT_GT(c.nodeLinks.absMean, 0);
  EXPECT_NEAR(c.nodeLinks.mean + c.patchLinks.mean + c.elementLinks.mean - c.leftOut.mean, c.farBias, 1e-12);
  EXPECT_LE(c.farErrorMean,
            c.nodeLinks.absMean + c.patchLinks.absMean + c.elementLinks.absMean + c.leftOut.absMean + 1e-12);
  EXPECT_EQ(c.carriedTwice, 0);

  // What is left out, by where: without the elements' walk every row is taken to start at the root, so all of it
  // is the rows' own. With it, the part below each row's start (its own links measured hidden) and the part the
  // elements above found hidden whole are each a sum of exact entries (>= 0 in every row), add up to it, and
  // both show on this city's streets.
  EXPECT_NEAR(c.leftOutByRows.mean, c.leftOut.mean, 1e-12);
  EXPECT_NEAR(c.leftOutByElements.absMean, 0, 1e-12);
  FormFactorCounters walkCounters;
  const ElementForest forest = BuildElementForest(g.patches);
  const ElementWalk walk = WalkElements(g, embree, tree, forest, f.rows, kTolerance, FormFactorOptions{}.seed,
                                        walkCounters, false, kWideOpening);
  const OperatorCheck split = CheckOperatorRows(MPI_COMM_WORLD, g, embree, FormFactorOptions{}, f, kChecked, &walk);
  EXPECT_NEAR(split.leftOut.mean, c.leftOut.mean, 1e-15);
  EXPECT_NEAR(split.leftOutByRows.mean + split.leftOutByElements.mean, split.leftOut.mean, 1e-12);
  EXPECT_NEAR(split.leftOutByRows.mean, split.leftOutByRows.absMean, 1e-12);
  EXPECT_NEAR(split.leftOutByElements.mean, split.leftOutByElements.absMean, 1e-12);
  EXPECT_GT(split.leftOutByRows.mean, 0);
  EXPECT_GT(split.leftOutByElements.mean, 0);
  std::printf("left out per checked row %.3g: below the rows' starts %.3g, found hidden by elements %.3g\n",
              split.leftOut.mean, split.leftOutByRows.mean, split.leftOutByElements.mean);

  // The check counts what a row carries twice: a checked row given a copy of its first far link carries that
  // link's patches twice.
  const size_t r = size_t(OperatorCheckRows(f.n, kChecked).front());
  ASSERT_LT(f.links.ptr[r], f.links.ptr[r + 1]);
  const size_t at = size_t(f.links.ptr[r]);
  std::vector<int32_t> targets = f.links.TargetsUnpacked();
  std::vector<uint16_t> values = f.links.value;
  std::vector<long long> ptr = f.links.ptr;
  const int32_t copied = targets[at];
  targets.insert(targets.begin() + long(at), copied);
  values.insert(values.begin() + long(at), values[at]);
  for (size_t q = r + 1; q < ptr.size(); ++q) ++ptr[q];
  AppendLinkRows(f.links, f.links.nodes, f.n, ptr, targets, values);
  const long long copiedPatches = copied < 0 ? 1 : tree.nodes[size_t(copied)].count;
  EXPECT_EQ(CheckOperatorRows(MPI_COMM_WORLD, g, embree, FormFactorOptions{}, f, kChecked).carriedTwice,
            copiedPatches);
}

TEST(SparseOperator, NoRowReadsAnElementLinkBelowZero) {
  // A row reads its element's link as value + g . d + d^T C d / 2 at its offset d from the element's centre:
  // F >= 0, so where that model could go below 0 on the element (a node near the element's plane, seen at
  // grazing angles) the element hands the node down. In a room with floating cubes whose faces see each other
  // at grazing angles every read is then >= 0 (without the rule, measured: 306 of 445245 reads below 0, down
  // to -2.5e-5; 1.2 % more element links), and the rows still sum to 1 within about the tolerance.
  std::vector<std::vector<Vec3>> polygons;
  AddBox(polygons, {0, 0, 0}, {6, 3, 6}, true);
  for (int a = 0; a < 3; ++a)  // floating cubes, their tops and bottoms at nearly the same heights
    for (int b = 0; b < 3; ++b) {
      const double x = 0.6 + 2 * a, z = 0.6 + 2 * b, y = 1.2 + 0.05 * ((a + 2 * b) % 3);
      AddBox(polygons, {x, y, z}, {x + 0.6, y + 0.6, z + 0.6}, false);
    }
  const Scene scene = SceneOf(polygons);
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(0.2));
  const EmbreeScene embree(scene);
  constexpr double kTolerance = 3e-4;
  SparseCounters counters;
  const FormFactorRows f = SparseRows(g, embree, FormFactorOptions{}, kTolerance, counters, Precision::kDouble, true, true);
  const ElementFarLinks &e = f.links.elements;
  ASSERT_GT(counters.elementLinks, 1000);
  long long reads = 0, negative = 0;
  double lowest = 0;
  for (size_t r = 0; r < f.RowCount(); ++r)
    for (long long q = e.rowPtr[r]; q < e.rowPtr[r + 1]; ++q) {
      const size_t m = size_t(e.rowElement[size_t(q)]);
      for (long long k = e.ptr[m]; k < e.ptr[m + 1]; ++k, ++reads) {
        const double read = e.Read(size_t(q), k);
        negative += read < 0;
        lowest = std::min(lowest, read);
      }
    }
  double rowError = 0;  // a closed room: every row sums to 1
  for (size_t r = 0; r < f.RowCount(); ++r) rowError += std::fabs(f.RowSum(r) - 1);
  rowError /= double(f.RowCount());
  std::printf("room with floating cubes, %zu patches at %g: %lld element links, %lld reads, %lld below 0 (lowest "
              "%.3g); mean |row sum - 1| %.3g\n", f.RowCount(), kTolerance, counters.elementLinks, reads, negative,
              lowest, rowError);
  EXPECT_EQ(negative, 0);
  // The far links' sampled visibility: 2.9e-4 with every link's rays in proportion to what it carries, 4.8e-4
  // (with and without the rule) when only smooth links' were and a single patch's link took one ray.
  EXPECT_LT(rowError, 1.2 * kTolerance);
}

TEST(SparseOperator, ElementsTakeTheFarLinksOfTheirRowsOnceForAll) {
  // Receivers grouped (element_links.h): elements of a polygon take the far links each of their patches would
  // take, estimated once with their slope across the element. Each row's exact entries plus its links (its
  // own and its elements', at its centroid) come as close to the dense row as the rows' own links do, and a
  // row's links do not depend on which other rows are walked with it (as on another rank).
  const Scene scene = City();
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, BySize(2));
  const EmbreeScene embree(scene);
  const Dense dense = DenseRows(g, embree, FormFactorOptions{});
  const long long n = dense.n;
  constexpr double kTolerance = 1e-3;
  SparseCounters alone, grouped, half;
  const FormFactorRows a = SparseRows(g, embree, FormFactorOptions{}, kTolerance, alone, Precision::kDouble, true);
  const FormFactorRows b = WideElementRows(g, embree, kTolerance, grouped);
  EXPECT_GT(grouped.elementLinks, 0);
  std::printf("far links held: %lld by the rows alone; %lld by the rows and %lld by elements when grouped\n",
              alone.links, grouped.links, grouped.elementLinks);
  // What elements hand down is opened where the rows alone would have skipped it whole, so on this small city
  // grouping saves no links in all (on the 7032-patch city, before the 64-patch cap, 3 % at 1e-4 and 21 % at
  // 3e-4); it must not cost many. Smooth links (far_field.h) widen the gap: a row, narrower than an element,
  // takes larger nodes smooth (18 % more links in all when written, 5 % before them).
  EXPECT_LT(double(grouped.links + grouped.elementLinks), 1.25 * double(alone.links));
  double errorAlone = 0, errorGrouped = 0, farShare = 0;
  for (long long i = 0; i < n; ++i) {
    double truth = 0;
    for (long long j = 0; j < n; ++j) truth += dense.At(i, j);
    errorAlone += std::fabs(a.RowSum(size_t(i)) - truth);
    errorGrouped += std::fabs(b.RowSum(size_t(i)) - truth);
    farShare += b.links.Sum(size_t(i));
  }
  std::printf("city, %lld patches at %g: %lld element links; far links carry %.4g of a row (mean), row-sum error "
              "mean %.3g with the rows' own links, %.3g with elements\n",
              n, kTolerance, grouped.elementLinks, farShare / double(n), errorAlone / double(n),
              errorGrouped / double(n));
  EXPECT_LT(errorGrouped, 1.5 * errorAlone);
  EXPECT_LT(errorGrouped / double(n), 0.05 * farShare / double(n));
  // Each element's links are held once: fewer than the rows would hold if each took its own copy.
  const ElementFarLinks &held = b.links.elements;
  long long perRow = 0;
  for (size_t q = 0; q < held.rowElement.size(); ++q) {
    const size_t m = size_t(held.rowElement[q]);
    perRow += held.ptr[m + 1] - held.ptr[m];
  }
  std::printf("element links held %zu, read by the rows %lld times\n", held.target.size(), perRow);
  EXPECT_LT(double(held.target.size()), 0.5 * double(perRow));
  // The second half of the rows alone: the same links, bit for bit (their elements walked the same way).
  const FormFactorRows c = WideElementRows(g, embree, kTolerance, half, n / 2);
  auto reads = [](const FarLinks &links, size_t r) {  // (target, value) of every link row r reads
    std::vector<std::pair<int32_t, double>> all;
    links.ForEachLink(r, [&](int32_t t, long long k) { all.emplace_back(t, links.Value(size_t(k))); });
    const ElementFarLinks &e = links.elements;
    for (long long q = e.rowPtr[r]; q < e.rowPtr[r + 1]; ++q) {
      const size_t m = size_t(e.rowElement[size_t(q)]);
      for (long long k = e.ptr[m]; k < e.ptr[m + 1]; ++k) all.emplace_back(e.target[size_t(k)], e.Read(size_t(q), k));
    }
    return all;
  };
  for (size_t r = 0; r < c.RowCount(); ++r) ASSERT_EQ(reads(c.links, r), reads(b.links, size_t(n / 2) + r)) << "row " << r;
}

}  // namespace
}  // namespace rad
