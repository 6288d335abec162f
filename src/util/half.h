// IEEE 754 binary16 ("half") as 16-bit patterns, for values held by the million where 11 significant bits are
// enough: the shape of the hierarchical operator's element links (element_links.h). Written out rather than
// taken from _Float16 or CUDA's __half so that the host (g++) and the device (nvcc) round the same way by the
// same code. Only finite values are held: a value beyond binary16's range is refused, never made infinite.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "util/hd.h"

namespace rad {

constexpr double kLargestHalf = 65504.0;  // the largest finite binary16

// x rounded to the nearest binary16 (ties to even), its sign kept (-0 too); false where x is not finite or its
// magnitude rounds beyond kLargestHalf (65520 and above), and `bits` is then left as it was.
RAD_HD RAD_INLINE bool DoubleToHalfBits(double x, uint16_t &bits) {
  if (!(std::fabs(x) < 65520.0)) return false;  // NaN fails the comparison too
  const uint16_t sign = std::signbit(x) ? 0x8000u : 0u;
  const double magnitude = std::fabs(x);
  if (magnitude < 0x1p-14) {  // subnormal (or 0): a multiple of 2^-24; 1024 of them rounds up to the least normal
    bits = uint16_t(sign | uint16_t(std::rint(magnitude * 0x1p24)));
    return true;
  }
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude in [2^(exponent - 1), 2^exponent)
  // The significand with 10 bits after the point, rounded: in [1024, 2048]; 2048 carries into the exponent.
  const double significand = std::rint(std::ldexp(magnitude, 11 - exponent));
  bits = uint16_t(sign | ((uint32_t(exponent - 1 + 15) << 10) + (uint32_t(significand) - 1024u)));
  return true;
}

// The value of binary16 bits that DoubleToHalfBits made (exponent field below 31), exactly: a subnormal as its
// multiple of 2^-24, a normal value's exponent and significand moved into a double's fields (no libm call: the
// solvers read far links' values this way every sweep).
RAD_HD RAD_INLINE double HalfBitsToDouble(uint16_t bits) {
  const uint64_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double magnitude;
  if (exponent == 0) {
    magnitude = double(mantissa) * 0x1p-24;
  } else {
    const uint64_t pattern = ((exponent - 15 + 1023) << 52) | (mantissa << 42);
    std::memcpy(&magnitude, &pattern, sizeof magnitude);
  }
  return (bits & 0x8000) ? -magnitude : magnitude;
}

}  // namespace rad
