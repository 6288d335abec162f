#include "render/image.h"

#include <cmath>

namespace rad {

uint8_t LinearToSrgb8(double linear, double exposure) {
  const double v = linear * std::exp2(exposure);
  if (!(v > 0)) return 0;  // also NaN
  if (v >= 1) return 255;
  const double encoded = v <= 0.0031308 ? 12.92 * v : 1.055 * std::pow(v, 1 / 2.4) - 0.055;
  return uint8_t(encoded * 255 + 0.5);
}

}  // namespace rad
