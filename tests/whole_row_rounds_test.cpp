// The rounds that checkpoints take rows in, for rows computed whole (the GPU's), checked with the GPU's host
// stand-in (kernel_form_factors.h, the same per-entry code): rows in rounds are the rows computed at once, bit
// for bit; a restart from what a checkpoint after round k held computes only the rows not done, and ends with
// the same bits; `after` sees every row of a round done once it ends, and this run's counts.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "accel/bvh_builder.h"
#include "formfactor/geometry.h"
#include "formfactor/kernel_form_factors.h"
#include "formfactor/whole_row_rounds.h"
#include "scene/scene.h"

namespace rad {
namespace {

TEST(WholeRowRounds, RowsInRoundsAndARestartAreTheRowsComputedAtOnce) {
  const Scene scene = LoadScene(std::string(RAD_SOURCE_DIR) + "/meshes/cornell_sphere.obj");
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, 1);
  const FlatBvh bvh = BuildBvh(SceneTriangles(scene));
  const long long n = (long long)g.patches.size();
  FormFactorOptions options;
  options.shadowRays = 16;
  options.pair.visibility = VisibilityMethod::kRays;
  // Every third patch's row, as a rank of a cyclic split holds them.
  std::vector<long long> rows;
  for (long long i = 1; i < n; i += 3) rows.push_back(i);
  auto compute = [&](const std::vector<long long> &pick, std::vector<double> &part, FormFactorCounters &c) {
    ComputeRowsWithPairKernels(g, bvh, pick, options, part, c);
  };
  std::vector<double> atOnce;
  FormFactorCounters atOnceCounts;
  compute(rows, atOnce, atOnceCounts);

  // In 5 rounds, keeping what a checkpoint after the second would hold.
  RowRounds rounds;
  rounds.count = 5;
  std::vector<double> inRounds, kept;
  std::vector<uint8_t> keptDone;
  int round = 0;
  rounds.after = [&](const std::vector<uint8_t> &done, const FormFactorCounters &) {
    ++round;
    long long doneRows = 0;
    for (uint8_t d : done) doneRows += d;
    EXPECT_EQ(doneRows, (long long)(rows.size() * size_t(round) / 5)) << "after round " << round;
    if (round == 2) kept = inRounds, keptDone = done;
  };
  FormFactorCounters inRoundsCounts;
  ComputeWholeRowsInRounds(MPI_COMM_WORLD, n, rows, rounds, inRounds, inRoundsCounts, compute);
  ASSERT_EQ(round, 5);
  EXPECT_EQ(inRounds, atOnce);
  EXPECT_EQ(inRoundsCounts.evaluations, atOnceCounts.evaluations);
  EXPECT_EQ(inRoundsCounts.rays, atOnceCounts.rays);

  // Restarted from that checkpoint: only the rows not done are computed, and the rows end the same.
  RowRounds again;
  again.count = 5;
  again.done = keptDone;
  std::vector<double> restarted;
  again.restore = [&] { restarted = kept; };
  long long computed = 0;
  FormFactorCounters restartCounts;
  ComputeWholeRowsInRounds(MPI_COMM_WORLD, n, rows, again, restarted, restartCounts,
                           [&](const std::vector<long long> &pick, std::vector<double> &part, FormFactorCounters &c) {
                             for (long long i : pick) EXPECT_FALSE(keptDone[size_t(i)]) << "row " << i << " again";
                             computed += (long long)pick.size();
                             compute(pick, part, c);
                           });
  EXPECT_EQ(computed, (long long)(rows.size() - rows.size() * 2 / 5));
  EXPECT_EQ(restarted, atOnce);
  EXPECT_LT(restartCounts.evaluations, atOnceCounts.evaluations);
}

}  // namespace
}  // namespace rad
