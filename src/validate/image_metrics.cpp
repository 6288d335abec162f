#include "validate/image_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/error.h"

namespace rad {

namespace {

// 'Valid' correlation of `in` with the separable window w (x w): each output value is the window-weighted
// sum of the size x size block whose top-left corner it indexes. Separable passes keep it O(size) per pixel.
Plane FilterValid(const Plane &in, const std::vector<double> &w) {
  const int size = int(w.size());
  const int outW = in.width - size + 1, outH = in.height - size + 1;
  Plane rows;  // horizontal pass: outW x in.height
  rows.width = outW;
  rows.height = in.height;
  rows.values.assign(size_t(outW) * size_t(in.height), 0.0);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < outW; ++x) {
      double s = 0;
      for (int k = 0; k < size; ++k) s += w[size_t(k)] * in.At(x + k, y);
      rows.values[size_t(y) * size_t(outW) + size_t(x)] = s;
    }
  Plane out;  // vertical pass: outW x outH
  out.width = outW;
  out.height = outH;
  out.values.assign(size_t(outW) * size_t(outH), 0.0);
  for (int y = 0; y < outH; ++y)
    for (int x = 0; x < outW; ++x) {
      double s = 0;
      for (int k = 0; k < size; ++k) s += w[size_t(k)] * rows.At(x, y + k);
      out.values[size_t(y) * size_t(outW) + size_t(x)] = s;
    }
  return out;
}

Plane Product(const Plane &a, const Plane &b) {
  Plane p = a;
  for (size_t i = 0; i < p.values.size(); ++i) p.values[i] = a.values[i] * b.values[i];
  return p;
}

// viridis (van der Walt and Smith, matplotlib; public domain, CC0) sampled at t = k/16, sRGB-encoded. Linear
// interpolation between 17 samples stays within about 1/255 of the full 256-entry table.
constexpr double kViridis[17][3] = {
    {0.2670, 0.0049, 0.3294}, {0.2823, 0.0950, 0.4173}, {0.2788, 0.1755, 0.4834}, {0.2590, 0.2515, 0.5247},
    {0.2297, 0.3224, 0.5457}, {0.1994, 0.3876, 0.5546}, {0.1727, 0.4488, 0.5579}, {0.1490, 0.5081, 0.5573},
    {0.1276, 0.5669, 0.5506}, {0.1206, 0.6258, 0.5335}, {0.1579, 0.6838, 0.5017}, {0.2461, 0.7389, 0.4520},
    {0.3692, 0.7889, 0.3829}, {0.5160, 0.8312, 0.2943}, {0.6785, 0.8637, 0.1895}, {0.8456, 0.8873, 0.0997},
    {0.9932, 0.9062, 0.1439}};

}  // namespace

Plane Luminance(const RgbImage &image) {
  RAD_CHECK(image.rgb.size() == size_t(image.width) * size_t(image.height) * 3, "RgbImage.rgb size is not 3*W*H");
  Plane y;
  y.width = image.width;
  y.height = image.height;
  y.values.resize(size_t(image.width) * size_t(image.height));
  for (size_t i = 0; i < y.values.size(); ++i)
    y.values[i] = 0.2126 * image.rgb[3 * i] + 0.7152 * image.rgb[3 * i + 1] + 0.0722 * image.rgb[3 * i + 2];
  return y;
}

double Mse(const RgbImage &a, const RgbImage &b) {
  RAD_CHECK(a.width == b.width && a.height == b.height && a.rgb.size() == b.rgb.size(), "Mse: sizes differ");
  if (a.rgb.empty()) return 0;
  double sum = 0;
  for (size_t i = 0; i < a.rgb.size(); ++i) {
    const double d = a.rgb[i] - b.rgb[i];
    sum += d * d;
  }
  return sum / double(a.rgb.size());
}

double Psnr(double mse, double range) {
  if (mse == 0) return std::numeric_limits<double>::infinity();
  return 10 * std::log10(range * range / mse);
}

std::vector<double> GaussianWindow1D(int size, double sigma) {
  RAD_CHECK(size > 0 && sigma > 0, "GaussianWindow1D: size and sigma must be positive");
  std::vector<double> w(static_cast<size_t>(size));
  const double centre = 0.5 * (size - 1);
  double sum = 0;
  for (int k = 0; k < size; ++k) {
    const double u = k - centre;
    w[size_t(k)] = std::exp(-u * u / (2 * sigma * sigma));
    sum += w[size_t(k)];
  }
  for (double &v : w) v /= sum;
  return w;
}

std::vector<double> GaussianWindow2D(int size, double sigma) {
  const std::vector<double> w = GaussianWindow1D(size, sigma);
  std::vector<double> out(static_cast<size_t>(size) * static_cast<size_t>(size));
  for (int r = 0; r < size; ++r)
    for (int c = 0; c < size; ++c) out[size_t(r) * size_t(size) + size_t(c)] = w[size_t(r)] * w[size_t(c)];
  return out;
}

Plane SsimMap(const Plane &x, const Plane &y, double range) {
  RAD_CHECK(x.width == y.width && x.height == y.height && x.values.size() == y.values.size(), "Ssim: sizes differ");
  if (x.width < kSsimWindow || x.height < kSsimWindow) return Plane{};
  const std::vector<double> w = GaussianWindow1D();
  const Plane muX = FilterValid(x, w), muY = FilterValid(y, w);
  const Plane xx = FilterValid(Product(x, x), w), yy = FilterValid(Product(y, y), w),
              xy = FilterValid(Product(x, y), w);
  const double c1 = (kSsimK1 * range) * (kSsimK1 * range), c2 = (kSsimK2 * range) * (kSsimK2 * range);
  Plane map = muX;
  for (size_t i = 0; i < map.values.size(); ++i) {
    const double mx = muX.values[i], my = muY.values[i];
    // sigma^2 = E[x^2] - mu^2, as in Wang et al.'s reference code. Written so that x == y gives numerator ==
    // denominator bit for bit (2*a*b and a*a + b*b agree exactly when a == b), hence SSIM exactly 1.
    const double sxx = xx.values[i] - mx * mx, syy = yy.values[i] - my * my, sxy = xy.values[i] - mx * my;
    map.values[i] = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2));
  }
  return map;
}

double Ssim(const Plane &x, const Plane &y, double range) {
  const Plane map = SsimMap(x, y, range);
  if (map.values.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double v : map.values) sum += v;
  return sum / double(map.values.size());
}

std::array<double, 3> HeatColourSrgb(double t) {
  if (!(t > 0)) t = 0;  // also NaN
  if (t > 1) t = 1;
  const double u = t * 16;
  const int k = std::min(15, int(u));
  const double f = u - k;
  std::array<double, 3> c{};
  for (int ch = 0; ch < 3; ++ch) c[size_t(ch)] = (1 - f) * kViridis[k][ch] + f * kViridis[k + 1][ch];
  return c;
}

}  // namespace rad
