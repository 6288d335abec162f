#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "validate/image_metrics.h"

namespace rad {
namespace {

// Deterministic pseudo-random values in [0,1) (a 64-bit LCG): images with structure everywhere.
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : state_(seed) {}
  double Next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return double(state_ >> 11) / double(1ULL << 53);
  }

 private:
  uint64_t state_;
};

Plane RandomPlane(int width, int height, uint64_t seed, double scale = 1) {
  Lcg rng(seed);
  Plane p;
  p.width = width;
  p.height = height;
  p.values.resize(size_t(width) * size_t(height));
  for (double &v : p.values) v = scale * rng.Next();
  return p;
}

RgbImage RandomRgb(int width, int height, uint64_t seed) {
  Lcg rng(seed);
  RgbImage image;
  image.width = width;
  image.height = height;
  image.rgb.resize(size_t(width) * size_t(height) * 3);
  for (double &v : image.rgb) v = rng.Next();
  return image;
}

// value(x, y) = f(x) for an image width x height.
template <typename F>
Plane ColumnsOf(int width, int height, F f) {
  Plane p;
  p.width = width;
  p.height = height;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) p.values.push_back(f(x));
  return p;
}

// The weighted variance of the offsets -5..5 under the normalised 1-D Gaussian with sigma 1.5, written out
// here from the definition (not through GaussianWindow1D).
double GaussianOffsetVariance() {
  double weights = 0, moment = 0;
  for (int k = -5; k <= 5; ++k) {
    const double w = std::exp(-k * k / (2 * 1.5 * 1.5));
    weights += w;
    moment += w * k * k;
  }
  return moment / weights;
}

// SSIM with the 2-D window applied directly at every valid position (no separable passes): an independent
// implementation of Wang et al.'s definition for comparison.
double BruteForceSsim(const Plane &x, const Plane &y, double range) {
  std::vector<double> w2(121);
  double total = 0;
  for (int r = 0; r < 11; ++r)
    for (int c = 0; c < 11; ++c) {
      w2[size_t(r * 11 + c)] = std::exp(-((r - 5) * (r - 5) + (c - 5) * (c - 5)) / (2 * 1.5 * 1.5));
      total += w2[size_t(r * 11 + c)];
    }
  for (double &v : w2) v /= total;
  const double c1 = (0.01 * range) * (0.01 * range), c2 = (0.03 * range) * (0.03 * range);
  double sum = 0;
  int count = 0;
  for (int oy = 0; oy + 11 <= x.height; ++oy)
    for (int ox = 0; ox + 11 <= x.width; ++ox) {
      double mx = 0, my = 0;
      for (int r = 0; r < 11; ++r)
        for (int c = 0; c < 11; ++c) {
          mx += w2[size_t(r * 11 + c)] * x.At(ox + c, oy + r);
          my += w2[size_t(r * 11 + c)] * y.At(ox + c, oy + r);
        }
      double vx = 0, vy = 0, cxy = 0;  // central moments, the textbook form
      for (int r = 0; r < 11; ++r)
        for (int c = 0; c < 11; ++c) {
          const double dx = x.At(ox + c, oy + r) - mx, dy = y.At(ox + c, oy + r) - my;
          vx += w2[size_t(r * 11 + c)] * dx * dx;
          vy += w2[size_t(r * 11 + c)] * dy * dy;
          cxy += w2[size_t(r * 11 + c)] * dx * dy;
        }
      sum += (2 * mx * my + c1) * (2 * cxy + c2) / ((mx * mx + my * my + c1) * (vx + vy + c2));
      ++count;
    }
  return sum / count;
}

TEST(ImageMetrics, SsimOfAnImageWithItselfIsExactlyOne) {
  const Plane x = RandomPlane(37, 23, 7);
  EXPECT_EQ(Ssim(x, x, 1.0), 1.0);
  const Plane bright = RandomPlane(40, 17, 8, 250.0);  // linear values, L from the image
  EXPECT_EQ(Ssim(bright, bright, 250.0), 1.0);
  const Plane map = SsimMap(x, x, 1.0);
  ASSERT_EQ(map.width, 37 - 10);
  ASSERT_EQ(map.height, 23 - 10);
  for (double v : map.values) ASSERT_EQ(v, 1.0);
}

TEST(ImageMetrics, MseAndPsnrOfAConstantOffset) {
  RgbImage a = RandomRgb(9, 5, 3), b = a;
  // Dyadic values so that (a + d) - a == d exactly: MSE is exactly d^2.
  for (double &v : a.rgb) v = std::round(v * 256) / 256;
  b = a;
  for (double &v : b.rgb) v += 0.25;
  EXPECT_EQ(Mse(a, b), 0.0625);
  EXPECT_EQ(Mse(b, a), 0.0625);
  EXPECT_NEAR(Psnr(0.0625, 1.0), 10 * std::log10(16.0), 1e-12);  // 12.0412 dB
  EXPECT_NEAR(Psnr(0.01, 1.0), 20.0, 1e-12);
  EXPECT_NEAR(Psnr(0.01, 10.0), 40.0, 1e-12);
  EXPECT_TRUE(std::isinf(Psnr(0.0, 1.0)));
  EXPECT_EQ(Mse(a, a), 0.0);
}

TEST(ImageMetrics, MseAveragesOverChannels) {
  RgbImage a, b;
  a.width = b.width = 2;
  a.height = b.height = 1;
  a.rgb = {0, 0, 0, 0.5, 0.5, 0.5};
  b.rgb = {1, 0, 0, 0.5, 0.5, 0.5};  // one channel of one pixel differs by 1
  EXPECT_DOUBLE_EQ(Mse(a, b), 1.0 / 6.0);
}

TEST(ImageMetrics, LuminanceUsesRec709Weights) {
  RgbImage image;
  image.width = 4;
  image.height = 1;
  image.rgb = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.5, 0.5, 0.5};
  const Plane y = Luminance(image);
  ASSERT_EQ(y.values.size(), 4u);
  EXPECT_DOUBLE_EQ(y.values[0], 0.2126);
  EXPECT_DOUBLE_EQ(y.values[1], 0.7152);
  EXPECT_DOUBLE_EQ(y.values[2], 0.0722);
  EXPECT_DOUBLE_EQ(y.values[3], 0.5);
}

TEST(ImageMetrics, SsimOfAConstantShiftByHand) {
  // A constant image c against c + d: both variances are 0, so SSIM = (2 c (c+d) + C1) / (c^2 + (c+d)^2 + C1).
  const double c1 = 0.01 * 0.01;
  const Plane flat = ColumnsOf(11, 11, [](int) { return 0.2; }), flatShift = ColumnsOf(11, 11, [](int) { return 0.5; });
  EXPECT_NEAR(Ssim(flat, flatShift, 1.0), (2 * 0.2 * 0.5 + c1) / (0.2 * 0.2 + 0.5 * 0.5 + c1), 1e-12);

  // A ramp x = a + b (col - 5) on 12 x 11 pixels has two window positions, centred on columns 5 and 6, with
  // means a and a + b (the window is symmetric). Shifting by d leaves the variance and covariance equal, so
  // only the luminance term differs from 1 at each position; SSIM is the mean of the two.
  const double a = 0.4, b = 0.02, d = 0.1;
  const Plane ramp = ColumnsOf(12, 11, [&](int col) { return a + b * (col - 5); });
  const Plane shifted = ColumnsOf(12, 11, [&](int col) { return a + d + b * (col - 5); });
  auto luminanceTerm = [&](double mu) { return (2 * mu * (mu + d) + c1) / (mu * mu + (mu + d) * (mu + d) + c1); };
  const double expected = 0.5 * (luminanceTerm(a) + luminanceTerm(a + b));
  EXPECT_NEAR(Ssim(ramp, shifted, 1.0), expected, 1e-12);
  const Plane map = SsimMap(ramp, shifted, 1.0);
  ASSERT_EQ(map.width, 2);
  ASSERT_EQ(map.height, 1);
  EXPECT_NEAR(map.values[0], luminanceTerm(a), 1e-12);
  EXPECT_NEAR(map.values[1], luminanceTerm(a + b), 1e-12);
}

TEST(ImageMetrics, SsimOfAContrastChangeByHand) {
  // y = a + k b (col - 5) on one 11x11 window: equal means, sigma_y = k sigma_x, sigma_xy = k sigma_x^2, so
  // SSIM = (2 k s + C2) / ((1 + k^2) s + C2) with s = b^2 * (Gaussian variance of the column offsets).
  const double a = 0.5, b = 0.05, k = 0.3, range = 2.0;
  const double c2 = (0.03 * range) * (0.03 * range);
  const Plane x = ColumnsOf(11, 11, [&](int col) { return a + b * (col - 5); });
  const Plane y = ColumnsOf(11, 11, [&](int col) { return a + k * b * (col - 5); });
  const double s = b * b * GaussianOffsetVariance();
  EXPECT_NEAR(Ssim(x, y, range), (2 * k * s + c2) / ((1 + k * k) * s + c2), 1e-10);
}

TEST(ImageMetrics, SsimIsSymmetric) {
  const Plane x = RandomPlane(30, 26, 11), y = RandomPlane(30, 26, 12);
  const double xy = Ssim(x, y, 1.0);
  EXPECT_EQ(xy, Ssim(y, x, 1.0));
  EXPECT_LT(xy, 0.5);  // unrelated noise: far from similar
}

TEST(ImageMetrics, SsimAgreesWithADirectTwoDimensionalWindow) {
  Plane x = RandomPlane(27, 19, 21, 3.0), y = x;
  Lcg rng(22);
  for (double &v : y.values) v = 0.8 * v + 0.3 * rng.Next();  // related but not equal
  for (double range : {1.0, 3.0}) {
    const double ssim = Ssim(x, y, range);
    EXPECT_NEAR(ssim, BruteForceSsim(x, y, range), 1e-12) << "range " << range;
    EXPECT_GT(ssim, 0.3);
    EXPECT_LT(ssim, 0.999);
  }
}

TEST(ImageMetrics, GaussianWindowSumsToOne) {
  const std::vector<double> w1 = GaussianWindow1D();
  ASSERT_EQ(w1.size(), 11u);
  double sum1 = 0;
  for (double v : w1) sum1 += v;
  EXPECT_NEAR(sum1, 1.0, 1e-15);
  for (int k = 0; k < 5; ++k) EXPECT_DOUBLE_EQ(w1[size_t(k)], w1[size_t(10 - k)]);  // symmetric
  EXPECT_NEAR(w1[5] / w1[6], std::exp(1 / (2 * 1.5 * 1.5)), 1e-14);                  // sigma 1.5
  EXPECT_NEAR(w1[5] / w1[0], std::exp(25 / (2 * 1.5 * 1.5)), 1e-9);

  const std::vector<double> w2 = GaussianWindow2D();
  ASSERT_EQ(w2.size(), 121u);
  double sum2 = 0;
  for (double v : w2) sum2 += v;
  EXPECT_NEAR(sum2, 1.0, 1e-15);
  EXPECT_NEAR(w2[5 * 11 + 5] / w2[6 * 11 + 6], std::exp(2 / (2 * 1.5 * 1.5)), 1e-14);
}

TEST(ImageMetrics, SsimIsUndefinedBelowTheWindowSize) {
  const Plane x = RandomPlane(10, 40, 5);
  EXPECT_TRUE(std::isnan(Ssim(x, x, 1.0)));
  EXPECT_TRUE(SsimMap(x, x, 1.0).values.empty());
  const Plane y = RandomPlane(11, 11, 5);  // exactly one window
  EXPECT_EQ(SsimMap(y, y, 1.0).values.size(), 1u);
}

TEST(ImageMetrics, HeatColourRunsFromDarkPurpleToYellow) {
  const auto low = HeatColourSrgb(0), high = HeatColourSrgb(1);
  EXPECT_NEAR(low[0], 0.267, 1e-3);   // viridis at 0: #440154
  EXPECT_NEAR(low[1], 0.005, 1e-3);
  EXPECT_NEAR(low[2], 0.329, 1e-3);
  EXPECT_NEAR(high[0], 0.993, 1e-3);  // viridis at 1: #fde725
  EXPECT_NEAR(high[1], 0.906, 1e-3);
  EXPECT_NEAR(high[2], 0.144, 1e-3);
  EXPECT_EQ(HeatColourSrgb(-1), low);  // clamped
  EXPECT_EQ(HeatColourSrgb(std::nan("")), low);
  EXPECT_EQ(HeatColourSrgb(7), high);
  // Perceptual order: lightness (here the Rec. 709 luma of the encoded colour) rises with t.
  double previous = -1;
  for (int k = 0; k <= 64; ++k) {
    const auto c = HeatColourSrgb(k / 64.0);
    const double luma = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    EXPECT_GT(luma, previous) << "t = " << k / 64.0;
    previous = luma;
  }
}

}  // namespace
}  // namespace rad
