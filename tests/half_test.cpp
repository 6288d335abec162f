// binary16 as the element links hold their shapes (util/half.h), against binary16 from its definition (every
// finite value from its sign, exponent and significand; rounding to the nearest of them, ties to the even
// pattern, found in that table), and against the compiler's own _Float16 where it has one (GCC on x86-64; not
// the sanitizers' clang 14), and the element links' shapes made from and read back to their terms
// (element_links.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "formfactor/element_links.h"
#include "formfactor/form_factor_rows.h"
#include "util/half.h"
#include "util/rng.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define RAD_TEST_HAS_FLOAT16 1
#endif

namespace rad {
namespace {

// The value of binary16 pattern `bits` (exponent field below 31) by its definition.
double DefinedHalf(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f, significand = bits & 0x3ff;
  const double magnitude = exponent == 0 ? significand / 1024.0 * std::pow(2.0, -14)
                                         : (1 + significand / 1024.0) * std::pow(2.0, exponent - 15);
  return (bits & 0x8000) ? -magnitude : magnitude;
}

// x (|x| < 65520) rounded to the nearest binary16 by a search of the finite patterns, which increase with their
// value from 0 to 0x7bff: the nearer of the two around |x|, the even pattern on a tie.
uint16_t TableHalf(double x) {
  const double a = std::fabs(x);
  uint32_t low = 0, high = 0x7bff;  // the last pattern whose value is at most a, found in [low, high]
  while (low < high) {
    const uint32_t middle = (low + high + 1) / 2;
    if (DefinedHalf(uint16_t(middle)) <= a) low = middle;
    else high = middle - 1;
  }
  uint32_t k = low;
  if (k < 0x7bff) {
    const double below = a - DefinedHalf(uint16_t(k)), above = DefinedHalf(uint16_t(k + 1)) - a;
    if (above < below || (above == below && (k & 1))) ++k;
  }
  return uint16_t((std::signbit(x) ? 0x8000u : 0u) | k);
}

#ifdef RAD_TEST_HAS_FLOAT16
uint16_t CompilerHalf(double x) {
  const _Float16 h = static_cast<_Float16>(x);  // converted from double directly, rounded to nearest even
  uint16_t bits = 0;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}
#endif

TEST(Half, EveryFiniteHalfReadsBackToItsOwnBits) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    if (((bits >> 10) & 0x1f) == 0x1f) continue;  // infinities and NaNs: never held
    const double x = HalfBitsToDouble(uint16_t(bits));
    ASSERT_EQ(x, DefinedHalf(uint16_t(bits))) << std::hex << bits;
#ifdef RAD_TEST_HAS_FLOAT16
    _Float16 compiler;
    const uint16_t b16 = uint16_t(bits);
    std::memcpy(&compiler, &b16, sizeof compiler);
    ASSERT_EQ(x, double(compiler)) << std::hex << bits;
#endif
    uint16_t back = 0;
    ASSERT_TRUE(DoubleToHalfBits(x, back));
    ASSERT_EQ(back, bits) << std::hex << bits;
  }
}

TEST(Half, RoundsToTheNearestEvenAsTheDefinitionAndTheCompilerDo) {
  // Values spread over binary16's whole range by their exponent, both signs, and the ties between neighbours.
  for (uint32_t k = 0; k < 200000; ++k) {
    const Philox4x32 r = Philox(k, 0, 0, 0, 3, 1);
    const double magnitude = std::ldexp(1.0 + ToUnit(r.v[0]), int(r.v[1] % 42) - 26);
    const double x = (r.v[2] & 1) ? -magnitude : magnitude;
    uint16_t ours = 0;
    if (std::fabs(x) >= 65520.0) {
      EXPECT_FALSE(DoubleToHalfBits(x, ours)) << x;
      continue;
    }
    ASSERT_TRUE(DoubleToHalfBits(x, ours)) << x;
    ASSERT_EQ(ours, TableHalf(x)) << x;
#ifdef RAD_TEST_HAS_FLOAT16
    ASSERT_EQ(ours, CompilerHalf(x)) << x;
#endif
  }
  // Every tie between two neighbours, and the points a quarter of the way: to the even pattern, and to the
  // nearer.
  for (uint32_t k = 0; k < 0x7bff; ++k) {
    const double v = DefinedHalf(uint16_t(k)), next = DefinedHalf(uint16_t(k + 1));
    for (const double x : {0.5 * (v + next), 0.75 * v + 0.25 * next, 0.25 * v + 0.75 * next}) {
      uint16_t ours = 0;
      ASSERT_TRUE(DoubleToHalfBits(x, ours)) << x;
      ASSERT_EQ(ours, TableHalf(x)) << x;
    }
  }
  uint16_t bits = 0;
  ASSERT_TRUE(DoubleToHalfBits(1.0 + 0x1p-11, bits));  // halfway between 1 and the next: to the even, 1
  EXPECT_EQ(HalfBitsToDouble(bits), 1.0);
  ASSERT_TRUE(DoubleToHalfBits(1.0 + 3 * 0x1p-11, bits));  // halfway again: up, to the even
  EXPECT_EQ(HalfBitsToDouble(bits), 1.0 + 0x1p-9);
  ASSERT_TRUE(DoubleToHalfBits(65519.99, bits));
  EXPECT_EQ(HalfBitsToDouble(bits), kLargestHalf);
  ASSERT_TRUE(DoubleToHalfBits(-0.0, bits));
  EXPECT_EQ(bits, 0x8000);
  ASSERT_TRUE(DoubleToHalfBits(0x1p-25, bits));  // half the least subnormal: a tie, to 0
  EXPECT_EQ(bits, 0);
  ASSERT_TRUE(DoubleToHalfBits(0x1p-14 - 0x1p-26, bits));  // the largest subnormal's half step up: the least normal
  EXPECT_EQ(bits, 0x0400);
  bits = 0x1234;
  EXPECT_FALSE(DoubleToHalfBits(65520.0, bits));
  EXPECT_FALSE(DoubleToHalfBits(std::numeric_limits<double>::infinity(), bits));
  EXPECT_FALSE(DoubleToHalfBits(std::numeric_limits<double>::quiet_NaN(), bits));
  EXPECT_EQ(bits, 0x1234);  // a refusal leaves the bits as they were
}

// A link's terms come back from its shape within binary16's rounding (2^-11 of each term relative to the
// value's part it is, plus float's of the value), and a link made again from what a file holds (the terms read
// back) has the same bits: files written and read give the same operator.
TEST(Half, ElementLinkShapesHoldTheTermsAndSurviveAFile) {
  const double scale = 0.37;
  for (uint32_t k = 0; k < 5000; ++k) {
    const Philox4x32 r = Philox(k, 0, 0, 0, 5, 2);
    const double value = std::ldexp(1.0 + ToUnit(r.v[0]), -int(r.v[1] % 30));
    double gradient[2], curvature[3];
    for (int a = 0; a < 2; ++a) gradient[a] = value / scale * (ToUnit(Philox(k, a, 0, 0, 5, 3).v[0]) - 0.5) * 2;
    for (int a = 0; a < 3; ++a)
      curvature[a] = value / (scale * scale) * (ToUnit(Philox(k, a, 0, 0, 5, 4).v[0]) - 0.5) * 8;
    ElementLink link;
    ASSERT_TRUE(MakeElementLink(7, value, gradient, curvature, scale, link));
    EXPECT_EQ(link.target, 7);
    const double read = link.value;
    EXPECT_NEAR(read, value, value * 0x1p-24);
    double back[kElementLinkShape];
    for (int i = 0; i < kElementLinkShape; ++i) back[i] = read * HalfBitsToDouble(link.shape[i]);
    for (int a = 0; a < 2; ++a)
      EXPECT_NEAR(back[a] / scale, gradient[a], std::fabs(gradient[a]) * 0x1p-11 + value / scale * 0x1p-23);
    for (int a = 0; a < 3; ++a)
      EXPECT_NEAR(back[2 + a] / (scale * scale), curvature[a],
                  std::fabs(curvature[a]) * 0x1p-11 + value / (scale * scale) * 0x1p-22);
    // What a file holds: the value, and the terms in float64 (ElementLinkTermsOf's arithmetic).
    const double fileGradient[2] = {back[0] / scale, back[1] / scale};
    const double fileCurvature[3] = {back[2] / (scale * scale), back[3] / (scale * scale), back[4] / (scale * scale)};
    ElementLink again;
    ASSERT_TRUE(MakeElementLink(7, read, fileGradient, fileCurvature, scale, again));
    EXPECT_EQ(again.value, link.value);
    for (int i = 0; i < kElementLinkShape; ++i) EXPECT_EQ(again.shape[i], link.shape[i]) << k << " " << i;
  }
  // A shape beyond binary16 (a term 1e5 times the value per scale), or terms with a value of 0: no link.
  ElementLink link;
  const double steep[2] = {1e5 / 0.37, 0}, flat[2] = {0, 0}, none[3] = {0, 0, 0}, bent[3] = {0, 1e-9, 0};
  EXPECT_FALSE(MakeElementLink(1, 1.0, steep, none, 0.37, link));
  EXPECT_FALSE(MakeElementLink(1, 0.0, flat, bent, 0.37, link));
  EXPECT_TRUE(MakeElementLink(1, 0.0, flat, none, 0.37, link));
}

// Far links' values (form_factor_rows.h): binary16 of the value times 2^10, so that every value a link may carry
// (a sum of F, up to about 1) down to 2^-24 keeps 11 significant bits, the smallest are held to 2^-35, and what
// does not fit (64 and above, not finite) is refused.
TEST(Half, FarLinkValuesKeepElevenBitsFromOneDownToTwoToTheMinus24) {
  uint64_t state = 12345;
  for (int q = 0; q < 200000; ++q) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double value = std::ldexp(double(state >> 11) * 0x1p-53 + 0.5, -int(state % 40));  // 2^-41 .. 1
    uint16_t bits = 0;
    ASSERT_TRUE(FarLinkBits(value, bits)) << value;
    const double held = FarLinkValue(bits);
    if (value >= 0x1p-24) ASSERT_LE(std::fabs(held - value), 0x1p-11 * value) << value;
    else ASSERT_LE(std::fabs(held - value), 0x1p-35) << value;
    uint16_t again = 0;
    ASSERT_TRUE(FarLinkBits(held, again));
    ASSERT_EQ(again, bits);  // a value held reads back to its own bits (a file written and read)
  }
  uint16_t bits = 0;
  EXPECT_TRUE(FarLinkBits(63.9, bits));
  EXPECT_NEAR(FarLinkValue(bits), 63.9, 63.9 * 0x1p-11);
  EXPECT_FALSE(FarLinkBits(64.0, bits));
  EXPECT_FALSE(FarLinkBits(std::numeric_limits<double>::infinity(), bits));
  EXPECT_FALSE(FarLinkBits(std::nan(""), bits));
  EXPECT_TRUE(FarLinkBits(0.0, bits));
  EXPECT_EQ(FarLinkValue(bits), 0.0);
}

}  // namespace
}  // namespace rad
