// The CSR solver's exchange plan (solver/read_exchange.h), played over several ranks without MPI: every rank
// starts from its own patches only, takes the steps ReadExchange takes (its own nodes; the nodes and patches it
// asks of their owners; its mixed nodes), and must end with every node it reads summed to the bits of the sum
// over the whole tree, and every patch it reads at its value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "formfactor/geometry.h"
#include "formfactor/patch_tree.h"
#include "solver/read_exchange.h"
#include "tests/test_scenes.h"

namespace rad {
namespace {

// Every node's sum of `value` over its patches, bottom-up, by its own recursion (not the plan's order).
double SumOver(const PatchTree &tree, int32_t k, const std::vector<double> &value, std::vector<double> &sums) {
  const PatchTreeNode &node = tree.nodes[size_t(k)];
  double s = 0;
  if (node.IsLeaf()) {
    for (int32_t q = node.first; q < node.first + node.count; ++q) s += value[size_t(tree.order[size_t(q)])];
  } else {
    s = SumOver(tree, node.left, value, sums) + SumOver(tree, node.right, value, sums);
  }
  return sums[size_t(k)] = s;
}

struct Played {
  size_t mixed = 0, asked = 0;  // over all ranks: mixed nodes summed, and items asked of another rank
};

// Plays the plans of `ranks` ranks whose patches `owner` gives, each reading a random half of the nodes and a
// random quarter of the patches.
Played Play(const PatchTree &tree, const std::vector<int32_t> &owner, int ranks, unsigned seed) {
  const size_t n = owner.size(), count = tree.nodes.size();
  std::mt19937 rng(seed);
  std::vector<double> value(n), exact(count);
  for (double &v : value) v = std::uniform_real_distribution<double>(0.1, 3.0)(rng);
  SumOver(tree, 0, value, exact);

  std::vector<std::vector<int32_t>> readNodes(static_cast<size_t>(ranks)), readPatches(static_cast<size_t>(ranks));
  std::vector<ReadPlan> plans;
  for (int r = 0; r < ranks; ++r) {
    for (size_t k = 0; k < count; ++k)
      if (rng() % 2 == 0) readNodes[size_t(r)].push_back(int32_t(k));
    for (size_t j = 0; j < n; ++j)
      if (rng() % 4 == 0) readPatches[size_t(r)].push_back(int32_t(j));
    plans.push_back(MakeReadPlan(&tree, owner, r, ranks, readNodes[size_t(r)], readPatches[size_t(r)]));
  }
  const double unknown = std::nan("");
  // Each rank: its own patches' values, NaN elsewhere (a value it was never sent poisons what it sums).
  std::vector<std::vector<double>> x(size_t(ranks), std::vector<double>(n, unknown)),
      sums(size_t(ranks), std::vector<double>(count, unknown));
  for (size_t j = 0; j < n; ++j) {
    if (owner[j] >= 0) x[size_t(owner[j])][j] = value[j];
    if (owner[j] < 0)  // a patch no rank holds keeps its value (E) on every rank
      for (auto &mine : x) mine[j] = value[j];
  }
  auto sum = [&](int r, int32_t k) {
    const PatchTreeNode &node = tree.nodes[size_t(k)];
    double s = 0;
    if (node.IsLeaf()) {
      for (int32_t q = node.first; q < node.first + node.count; ++q)
        s += x[size_t(r)][size_t(tree.order[size_t(q)])];
    } else {
      s = sums[size_t(r)][size_t(node.left)] + sums[size_t(r)][size_t(node.right)];
    }
    sums[size_t(r)][size_t(k)] = s;
  };
  for (int r = 0; r < ranks; ++r)
    for (int32_t k : plans[size_t(r)].ownNodes) sum(r, k);
  Played played;
  for (int r = 0; r < ranks; ++r) {
    const ReadPlan &p = plans[size_t(r)];
    EXPECT_EQ(p.nodeOwner, plans[0].nodeOwner);
    for (int q = 0; q < ranks; ++q) {
      if (q == r) {
        EXPECT_TRUE(p.nodesFrom[size_t(q)].empty() && p.patchesFrom[size_t(q)].empty());
        continue;
      }
      for (int32_t k : p.nodesFrom[size_t(q)]) {
        EXPECT_EQ(p.nodeOwner[size_t(k)], q);
        sums[size_t(r)][size_t(k)] = sums[size_t(q)][size_t(k)];
      }
      for (int32_t j : p.patchesFrom[size_t(q)]) {
        EXPECT_EQ(owner[size_t(j)], q) << "patch " << j;
        x[size_t(r)][size_t(j)] = x[size_t(q)][size_t(j)];
      }
      played.asked += p.nodesFrom[size_t(q)].size() + p.patchesFrom[size_t(q)].size();
    }
    for (int32_t k : p.mixedNodes) {
      EXPECT_LT(p.nodeOwner[size_t(k)], 0);
      sum(r, k);
    }
    played.mixed += p.mixedNodes.size();
    for (int32_t k : readNodes[size_t(r)])
      EXPECT_EQ(sums[size_t(r)][size_t(k)], exact[size_t(k)]) << "rank " << r << ", node " << k << " of " << count;
    for (int32_t j : readPatches[size_t(r)])
      EXPECT_EQ(x[size_t(r)][size_t(j)], value[size_t(j)]) << "rank " << r << ", patch " << j;
  }
  return played;
}

PatchTree RoomTree(std::vector<Patch> &patches) {
  Meshing meshing;
  meshing.maxPatchSize = 0.1;
  patches = BuildFormFactorGeometry(test::TiledRoomWithBlock(4), meshing).patches;
  return BuildPatchTree(patches, 4);
}

TEST(ReadExchange, EveryRankSumsWhatItReadsToTheWholeTreesBits) {
  std::vector<Patch> patches;
  const PatchTree tree = RoomTree(patches);
  const size_t n = patches.size();
  ASSERT_GT(n, 500u);
  for (int ranks : {1, 2, 3, 5}) {
    std::vector<int32_t> blocks(n), scattered(n);
    for (size_t j = 0; j < n; ++j) {
      blocks[j] = int32_t(j * size_t(ranks) / n);  // the solver's rows: blocks of patch index
      scattered[j] = j % 17 == 3 ? -1 : int32_t((j * 7919) % size_t(ranks));  // and some held by no rank
    }
    SCOPED_TRACE(ranks);
    const Played one = Play(tree, blocks, ranks, 11 + unsigned(ranks));
    Play(tree, scattered, ranks, 23 + unsigned(ranks));
    if (ranks == 1) EXPECT_EQ(one.mixed + one.asked, 0u);
  }
}

// Owned by subtree (blocks of the tree's order, each ending with a leaf), only the nodes above the ranks'
// boundaries are mixed: at most depth + 1 per boundary, whatever N, where blocks of patch index mix many more.
TEST(ReadExchange, RowsOwnedBySubtreeLeaveFewMixedNodes) {
  std::vector<Patch> patches;
  const PatchTree tree = RoomTree(patches);
  const size_t n = patches.size();
  std::vector<int32_t> leafEnds;
  int depth = 0;
  std::vector<std::pair<int32_t, int>> stack = {{0, 0}};
  while (!stack.empty()) {
    const auto [k, d] = stack.back();
    stack.pop_back();
    depth = std::max(depth, d);
    const PatchTreeNode &node = tree.nodes[size_t(k)];
    if (node.IsLeaf()) leafEnds.push_back(node.first + node.count);
    else stack.push_back({node.left, d + 1}), stack.push_back({node.right, d + 1});
  }
  std::sort(leafEnds.begin(), leafEnds.end());
  const int ranks = 6;
  std::vector<int32_t> bySubtree(n), byIndex(n);
  size_t place = 0;
  for (int r = 0; r < ranks; ++r) {
    // The first leaf end at or past this rank's share of the patches.
    const int32_t end = *std::lower_bound(leafEnds.begin(), leafEnds.end(), int32_t(n * size_t(r + 1) / ranks));
    for (; place < size_t(end); ++place) bySubtree[size_t(tree.order[place])] = r;
  }
  for (size_t j = 0; j < n; ++j) byIndex[j] = int32_t(j * size_t(ranks) / n);
  const ReadPlan subtree = MakeReadPlan(&tree, bySubtree, 0, ranks, {}, {});
  const ReadPlan index = MakeReadPlan(&tree, byIndex, 0, ranks, {}, {});
  const auto mixed = [](const ReadPlan &p) { return std::count(p.nodeOwner.begin(), p.nodeOwner.end(), -1); };
  EXPECT_GT(mixed(subtree), 0);
  EXPECT_LE(mixed(subtree), (ranks - 1) * (depth + 1));
  const Played played = Play(tree, bySubtree, ranks, 5), byIndexPlayed = Play(tree, byIndex, ranks, 5);
  std::printf("%zu patches, depth %d, %d ranks: %ld mixed nodes by subtree, %ld by patch index; items asked %zu "
              "and %zu\n", n, depth, ranks, long(mixed(subtree)), long(mixed(index)), played.asked,
              byIndexPlayed.asked);
}

}  // namespace
}  // namespace rad
