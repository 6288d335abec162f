// Full-reference image metrics (MSE, RMSE, PSNR, SSIM) and a heat-map colour map: pure functions on images of
// doubles, so that `compare` and the validation report use one definition and the tests can check it exactly.
//
// SSIM follows Wang, Bovik, Sheikh and Simoncelli, "Image quality assessment: from error visibility to
// structural similarity", IEEE TIP 13(4), 2004: a normalised 11x11 Gaussian window with sigma 1.5, K1 = 0.01,
// K2 = 0.03, C1 = (K1 L)^2, C2 = (K2 L)^2, local statistics by 'valid' convolution (the window lies wholly
// inside the image, no padding), and the mean of the SSIM map over those window positions.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

namespace rad {

// Three values (R, G, B) per pixel, rows from the top; the metrics do not care about the encoding.
struct RgbImage {
  int width = 0, height = 0;
  std::vector<double> rgb;  // size 3 * width * height
};

// One value per pixel, rows from the top.
struct Plane {
  int width = 0, height = 0;
  std::vector<double> values;  // size width * height
  double At(int x, int y) const { return values[std::size_t(y) * std::size_t(width) + std::size_t(x)]; }
};

constexpr int kSsimWindow = 11;
constexpr double kSsimSigma = 1.5;
constexpr double kSsimK1 = 0.01;
constexpr double kSsimK2 = 0.03;

// Rec. 709 / sRGB weights: Y = 0.2126 R + 0.7152 G + 0.0722 B, pixel by pixel.
Plane Luminance(const RgbImage &image);

// Mean over all pixels and the three channels of (a - b)^2. The images must have the same size.
double Mse(const RgbImage &a, const RgbImage &b);
// 10 log10(range^2 / mse) in dB; +infinity when mse == 0.
double Psnr(double mse, double range);

// The 1-D Gaussian exp(-k^2 / (2 sigma^2)), k = -(size-1)/2 .. (size-1)/2, normalised to sum 1. The 2-D
// window is the outer product of two of them: the same as normalising the 2-D Gaussian directly.
std::vector<double> GaussianWindow1D(int size = kSsimWindow, double sigma = kSsimSigma);
// size*size weights, row-major, summing to 1.
std::vector<double> GaussianWindow2D(int size = kSsimWindow, double sigma = kSsimSigma);

// The SSIM map: one value per valid window position, (width-10) x (height-10) for the 11x11 window; empty
// when an image is smaller than the window. `range` is L, the dynamic range of the values.
Plane SsimMap(const Plane &x, const Plane &y, double range);
// Mean of SsimMap; NaN when the images are smaller than the window (no valid position).
double Ssim(const Plane &x, const Plane &y, double range);

// A perceptually uniform colour map (viridis: dark purple at 0 through blue and green to yellow at 1) as
// sRGB-encoded values in [0,1]; t is clamped to [0,1].
std::array<double, 3> HeatColourSrgb(double t);

}  // namespace rad
