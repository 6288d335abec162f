// Occlusion: shafts, shadow rays with Embree, and the random numbers behind them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "formfactor/cpu_form_factors.h"
#include "formfactor/pair.h"
#include "formfactor/visibility.h"
#include "tests/test_scenes.h"
#include "util/rng.h"
#include "util/thread_limit.h"

namespace rad {
namespace {

using test::RectZ;
using test::SceneOf;

TEST(Philox, KnownAnswer) {
  // Random123's known-answer vector for philox4x32-10 with zero counter and key.
  const Philox4x32 r = Philox(0, 0, 0, 0, 0, 0);
  EXPECT_EQ(r.v[0], 0x6627e8d5u);
  EXPECT_EQ(r.v[1], 0xe169c58du);
  EXPECT_EQ(r.v[2], 0xbc57ac4cu);
  EXPECT_EQ(r.v[3], 0x9b00dbd8u);
}

TEST(Sampling, PointsAreStratifiedInFirstDimension) {
  const PairSampleSet set = MakePairSampleSet(7, 3, 5);
  int bins[32] = {};
  for (uint32_t k = 0; k < 32; ++k) {
    double u[4];
    PairSample(set, k, 32, u);
    for (double x : u) {
      EXPECT_GE(x, 0.0);
      EXPECT_LT(x, 1.0);
    }
    ++bins[int(u[0] * 32)];
  }
  for (int b : bins) EXPECT_EQ(b, 1);
}

// The sample set's wrap takes a compare where it took floor: the same bits for every sum of a point and a shift
// in [0, 1), at the ends of the range and at many drawn ones (a wrap that kept 1.0, or lost a bit, fails).
TEST(Sampling, WrapOfASumOfTwoUnitValuesIsTheFloorsBitForBit) {
  const double top = ToUnit(0xffffffffu), below1 = std::nextafter(1.0, 0.0);
  std::vector<double> values = {0.0, 0.5, 0.25, top, below1, 1.0 / 3, 2.0 / 3, std::ldexp(1.0, -53)};
  for (uint32_t k = 0; k < 4096; ++k) {
    const Philox4x32 r = Philox(k, 11, 0, 0, 1, 2);
    values.push_back(ToUnit(r.v[0]));
    values.push_back(RadicalInverse(k, 3));
    values.push_back((k + 0.5) / 4096);
  }
  for (double a : values)
    for (double b : {0.0, 0.5, top, below1, 1.0 / 3, values[values.size() / 2], values[values.size() / 3]}) {
      const double x = a + b;
      ASSERT_EQ(WrapUnitSum(x), x - std::floor(x)) << a << " + " << b;
      ASSERT_LT(WrapUnitSum(x), 1.0);
    }
}

// These tests are of the shadow-ray estimator (--visibility rays); the exact kernel is in occluded_test.cpp.
FormFactorOptions RaysOptions() {
  FormFactorOptions o;
  o.pair.visibility = VisibilityMethod::kRays;
  return o;
}

// The whole matrix of a small scene on this rank.
std::vector<double> AllRows(const Scene &s, const FormFactorGeometry &g, FormFactorCounters &counters) {
  EmbreeScene embree(s);
  std::vector<long long> rows;
  for (long long i = 0; i < (long long)g.patches.size(); ++i) rows.push_back(i);
  std::vector<double> F;
  PhaseTimers timers;
  ComputeRowsCpu(g, embree, rows, RaysOptions(), F, timers, counters, false);
  return F;
}

Scene Blocked() {
  // Two opposed unit squares with a larger square between them facing up.
  return SceneOf({RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 1, false), RectZ(-1, 2, -1, 2, 0.5, true)});
}

TEST(Shaft, FindsTheBlockerAndIgnoresTouchingWalls) {
  const Scene blocked = Blocked();
  const FormFactorGeometry g = BuildFormFactorGeometry(blocked, 0);
  QuadratureSettings q;
  // The blocker faces up, so only the bottom square sees it; the pair 0 -> 1 needs rays.
  EXPECT_TRUE(FormFactorPair(g, 0, 1, PairSettings{q, VisibilityMethod::kRays}).needsRays);
  // In a closed cube nothing needs rays: adjacent walls only touch the shafts.
  const FormFactorGeometry cube = BuildFormFactorGeometry(test::UnitCube(), 1);
  for (size_t i = 0; i < cube.patches.size(); ++i)
    for (size_t j = 0; j < cube.patches.size(); ++j) EXPECT_FALSE(FormFactorPair(cube, int(i), int(j), PairSettings{q, VisibilityMethod::kRays}).needsRays);
}

TEST(Shaft, OccluderOutsideTheShaftIsNotACandidate) {
  const Scene s = SceneOf({RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 1, false), RectZ(3, 4, 0, 1, 0.5, true)});
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 1);
  QuadratureSettings q;
  for (int i = 0; i < 4; ++i)
    for (int j = 4; j < 8; ++j) EXPECT_FALSE(FormFactorPair(g, i, j, PairSettings{q, VisibilityMethod::kRays}).needsRays);
}

TEST(Visibility, FullyBlockedPairIsExactlyZeroAndOpenPairsKeepTheirValue) {
  const Scene s = Blocked();
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 1);
  FormFactorCounters counters;
  const std::vector<double> F = AllRows(s, g, counters);
  const size_t n = g.patches.size();
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 4; j < 8; ++j) {
      EXPECT_EQ(F[i * n + j], 0.0);
      EXPECT_EQ(F[j * n + i], 0.0);
    }
  // The top square sees the blocker's front (the blocker faces up); rays were traced.
  double toBlocker = 0;
  for (size_t j = 8; j < n; ++j) toBlocker += F[4 * n + j];
  EXPECT_GT(toBlocker, 0.5);
  EXPECT_GT(counters.rays, 0);
}

TEST(Visibility, HalfBlockedPairIsAboutHalf) {
  // A blocker covering exactly half (x < 0.5) of the gap between two opposed unit squares, seen from the
  // centre line: by symmetry the kernel-weighted visible fraction of the whole pair is 1/2.
  const Scene s = SceneOf({RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 1, false), RectZ(-5, 0.5, -5, 6, 0.5, true)});
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 0);
  EmbreeScene embree(s);
  auto occluded = [&](Vec3 a, Vec3 b) { return embree.SegmentOccluded(a, b); };
  uint32_t traced = 0;
  const double v = VisibleFraction(g.patches[0], g.patches[1], 0, 1, 1, 4096, occluded, traced);
  EXPECT_NEAR(v, 0.5, 0.02);
  EXPECT_EQ(traced, 4096u);
}

TEST(Visibility, RowsDoNotDependOnThreadCount) {
  const Scene s = Blocked();
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 2);
  EmbreeScene embree(s);
  std::vector<long long> rows;
  for (long long i = 0; i < (long long)g.patches.size(); i += 3) rows.push_back(i);
  std::vector<double> one, two;
  PhaseTimers timers;
  FormFactorCounters counters;
  {
    ThreadLimit c(1);
    ComputeRowsCpu(g, embree, rows, RaysOptions(), one, timers, counters, false);
  }
  {
    ThreadLimit c(4);
    ComputeRowsCpu(g, embree, rows, RaysOptions(), two, timers, counters, false);
  }
  EXPECT_EQ(one, two);
}

TEST(Visibility, FloatRowsAreTheDoubleRowsRoundedOnce) {
  // --precision float holds F in float32 from the start: each entry, shadow rays' fraction included, is the
  // double entry rounded once. All rows, and every third (entries written from other rows' pairs, or not). A
  // partial blocker, so that the rays' fractions are neither 0 nor 1.
  const Scene s = SceneOf({RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 1, false), RectZ(-1, 0.4, -1, 2, 0.5, true)});
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 2);
  EmbreeScene embree(s);
  for (int step : {1, 3}) {
    std::vector<long long> rows;
    for (long long i = 0; i < (long long)g.patches.size(); i += step) rows.push_back(i);
    for (const FormFactorOptions &options : {RaysOptions(), FormFactorOptions()}) {
      std::vector<double> wide;
      std::vector<float> narrow;
      PhaseTimers timers;
      FormFactorCounters c64, c32;
      ComputeRowsCpu(g, embree, rows, options, wide, timers, c64, false);
      ComputeRowsCpu(g, embree, rows, options, narrow, timers, c32, false);
      ASSERT_EQ(wide.size(), narrow.size());
      size_t differ = 0;
      for (size_t k = 0; k < wide.size(); ++k) differ += float(wide[k]) != narrow[k] ? 1 : 0;
      EXPECT_EQ(differ, 0u) << "step " << step;
      EXPECT_EQ(c64.rays, c32.rays);
      EXPECT_EQ(c64.pairsRayTraced, c32.pairsRayTraced);
      EXPECT_EQ(c64.pairsExchanging, c32.pairsExchanging);
      if (options.pair.visibility == VisibilityMethod::kRays) EXPECT_GT(c32.pairsRayTraced, 0);
    }
  }
  // --normalize-rows scales the float values: each row sums to 1 within float rounding, and every entry is
  // within a few float ulps of the double row normalised.
  FormFactorOptions normalized = RaysOptions();
  normalized.normalizeRows = true;
  std::vector<long long> rows;
  for (long long i = 0; i < (long long)g.patches.size(); ++i) rows.push_back(i);
  std::vector<double> wide;
  std::vector<float> narrow;
  PhaseTimers timers;
  FormFactorCounters counters;
  ComputeRowsCpu(g, embree, rows, normalized, wide, timers, counters, false);
  ComputeRowsCpu(g, embree, rows, normalized, narrow, timers, counters, false);
  const size_t n = g.patches.size();
  for (size_t r = 0; r < rows.size(); ++r) {
    double sum = 0;
    for (size_t j = 0; j < n; ++j) {
      sum += narrow[r * n + j];
      EXPECT_NEAR(narrow[r * n + j], wide[r * n + j], 4e-7 * wide[r * n + j] + 1e-12);
    }
    if (sum > 0) EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

}  // namespace
}  // namespace rad

namespace rad {
namespace {

TEST(Visibility, OccludedPairsKeepReciprocity) {
  // A partial blocker: each direction of a pair sees the same visible fraction, so A_i F_ij = A_j F_ji holds
  // for occluded pairs as well as it does for the unoccluded factors.
  const Scene s = SceneOf({RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 1, false), RectZ(-1, 0.4, -1, 2, 0.5, true)});
  const FormFactorGeometry g = BuildFormFactorGeometry(s, 2);
  FormFactorCounters counters;
  const std::vector<double> F = AllRows(s, g, counters);
  const size_t n = g.patches.size();
  int partial = 0;
  for (size_t i = 0; i < 16; ++i)
    for (size_t j = 16; j < 32; ++j) {
      const double a = g.patches[i].area * F[i * n + j], b = g.patches[j].area * F[j * n + i];
      if (std::max(a, b) > 0) EXPECT_LT(std::fabs(a - b) / std::max(a, b), 1e-4) << i << " " << j;
      const ClippedPair cp = ClipPair(PatchPolygon(g.patches[i]), g.patches[i].normal, PatchPolygon(g.patches[j]),
                                      g.patches[j].normal);
      const double open = UnoccludedFormFactor(cp, g.patches[i].normal, g.patches[i].area, QuadratureSettings{}).formFactor;
      if (F[i * n + j] > 0 && F[i * n + j] < 0.99 * open) ++partial;
    }
  EXPECT_GT(partial, 0);  // the scene does have partly occluded pairs
  EXPECT_GT(counters.rays, 0);
}

}  // namespace
}  // namespace rad
