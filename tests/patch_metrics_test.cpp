#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "validate/patch_metrics.h"

namespace rad {
namespace {

TEST(PatchMetrics, KnownDifferences) {
  // Three patches. A: (1,1,1), (2,0,4), (0,0,0); B differs by +0.5 in patch 1's R and by 0.1 in patch 0's B.
  const std::vector<double> a = {1, 1, 1, 2, 0, 4, 0, 0, 0};
  const std::vector<double> b = {1, 1, 1.1, 2.5, 0, 4, 0, 0, 0};
  const PatchComparison c = ComparePatchRadiosity(a, b);
  EXPECT_EQ(c.patches, 3);
  const double rmse = std::sqrt((0.5 * 0.5 + 0.1 * 0.1) / 9), rmsA = std::sqrt((1 + 1 + 1 + 4 + 16) / 9.0);
  EXPECT_NEAR(c.rmse, rmse, 1e-15);
  EXPECT_NEAR(c.rmsReference, rmsA, 1e-15);
  EXPECT_NEAR(c.relativeRmse, rmse / rmsA, 1e-15);
  EXPECT_NEAR(c.maxAbsDifference, 0.5, 1e-15);
  EXPECT_EQ(c.maxAbsPatch, 1);
  EXPECT_EQ(c.maxAbsChannel, 0);
  EXPECT_NEAR(c.maxRelativeDifference, 0.25, 1e-15);  // 0.5 / 2 beats 0.1 / 1
  EXPECT_EQ(c.maxRelativePatch, 1);
  EXPECT_EQ(c.maxRelativeChannel, 0);
  EXPECT_EQ(c.zeroReferenceMismatches, 0);
}

TEST(PatchMetrics, RelativeDifferenceSkipsZeroReferenceValues) {
  const std::vector<double> a = {0, 2, 0, 0, 0, 0}, b = {3, 2.2, 0, 0, 0, 0};
  const PatchComparison c = ComparePatchRadiosity(a, b);
  EXPECT_EQ(c.zeroReferenceMismatches, 1);  // a[0] = 0, b[0] = 3
  EXPECT_NEAR(c.maxRelativeDifference, 0.1, 1e-15);
  EXPECT_EQ(c.maxRelativePatch, 0);
  EXPECT_EQ(c.maxRelativeChannel, 1);
  EXPECT_EQ(c.maxAbsDifference, 3);  // the absolute one still sees it
  EXPECT_EQ(c.maxAbsChannel, 0);
}

TEST(PatchMetrics, IdenticalAndBlackSolutions) {
  const std::vector<double> a = {0.3, 0.2, 0.1, 1, 1, 1};
  const PatchComparison same = ComparePatchRadiosity(a, a);
  EXPECT_EQ(same.rmse, 0);
  EXPECT_EQ(same.relativeRmse, 0);
  EXPECT_EQ(same.maxAbsPatch, -1);
  EXPECT_EQ(same.maxRelativePatch, -1);
  const std::vector<double> black(6, 0.0);
  EXPECT_EQ(ComparePatchRadiosity(black, black).relativeRmse, 0);
  EXPECT_TRUE(std::isinf(ComparePatchRadiosity(black, a).relativeRmse));
}

TEST(PatchMetrics, MaxAbsDifferenceSeesNaN) {
  EXPECT_EQ(MaxAbsDifference({1, 2, 3}, {1, 2.5, 2}), 1);
  EXPECT_TRUE(std::isnan(MaxAbsDifference({1, 2}, {1, std::nan("")})));
}

}  // namespace
}  // namespace rad
