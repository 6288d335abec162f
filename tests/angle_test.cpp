// AngleFromSineCosine (src/util/angle.h), the contour kernel's inlined atan2, against the C library's atan2.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "util/angle.h"

namespace rad {
namespace {

// Units in the last place of `reference` by which `value` differs from it.
double UlpsApart(double value, double reference) {
  const double ulp = std::nextafter(std::fabs(reference), INFINITY) - std::fabs(reference);
  return std::fabs(value - reference) / ulp;
}

TEST(Angle, AxesAndDiagonalsAreExact) {
  EXPECT_EQ(AngleFromSineCosine(0, 0), 0.0);
  EXPECT_EQ(AngleFromSineCosine(0, 1), 0.0);
  EXPECT_EQ(AngleFromSineCosine(0, 3), 0.0);
  EXPECT_EQ(AngleFromSineCosine(1, 0), std::atan2(1.0, 0.0));
  EXPECT_EQ(AngleFromSineCosine(0, -1), std::atan2(0.0, -1.0));
  EXPECT_LE(UlpsApart(AngleFromSineCosine(1, 1), std::atan2(1.0, 1.0)), 1);
  EXPECT_LE(UlpsApart(AngleFromSineCosine(1, -1), std::atan2(1.0, -1.0)), 1);
}

// Angles over the whole upper half plane and magnitudes from 1e-20 to 1e20, with many near the axes (tiny
// angles, angles near pi, where the kernel's edges seen almost end-on or almost through x live), and near the
// branch points of the reduction (tan(pi/8) and the diagonal).
TEST(Angle, WithinTwoUnitsInTheLastPlaceOfAtan2) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  double worst = 0;
  for (int k = 0; k < 2000000; ++k) {
    const double scale = std::pow(10.0, 20 * uniform(random));
    double s = std::fabs(uniform(random)) * scale, c = uniform(random) * std::pow(10.0, 20 * uniform(random));
    if (k % 3 == 0) c = uniform(random) * s * std::pow(10.0, -12 * std::fabs(uniform(random)));
    if (k % 5 == 0) s = std::fabs(uniform(random) * c) * std::pow(10.0, -15 * std::fabs(uniform(random)));
    if (k % 7 == 0) s = std::fabs(c) * (0.41421356237309504880 + 1e-9 * uniform(random));
    if (k % 11 == 0) s = std::fabs(c) * (1 + 1e-12 * uniform(random));
    worst = std::fmax(worst, UlpsApart(AngleFromSineCosine(s, c), std::atan2(s, c)));
  }
  EXPECT_LE(worst, 2.0);
}

}  // namespace
}  // namespace rad
