// Counter-based random numbers (Philox4x32-10, Salmon et al. 2011): the numbers for a shadow ray depend only
// on (seed, i, j, sample), never on which rank or thread computes it, so results are bitwise the same for any
// number of ranks and threads.
#pragma once

#include <cstdint>

#include "util/hd.h"

namespace rad {

struct Philox4x32 {
  uint32_t v[4];
};

RAD_HD RAD_INLINE void MulHiLo(uint32_t a, uint32_t b, uint32_t &hi, uint32_t &lo) {
  const uint64_t p = uint64_t(a) * uint64_t(b);
  hi = uint32_t(p >> 32);
  lo = uint32_t(p);
}

// counter = (c0, c1, c2, c3), key = (k0, k1).
RAD_HD RAD_INLINE Philox4x32 Philox(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0,
                                    uint32_t k1) {
  uint32_t x0 = c0, x1 = c1, x2 = c2, x3 = c3;
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    MulHiLo(0xD2511F53u, x0, hi0, lo0);
    MulHiLo(0xCD9E8D57u, x2, hi1, lo1);
    x0 = hi1 ^ x1 ^ k0;
    x1 = lo1;
    x2 = hi0 ^ x3 ^ k1;
    x3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return Philox4x32{{x0, x1, x2, x3}};
}

// Uniform double in [0,1) from 32 random bits.
RAD_HD RAD_INLINE double ToUnit(uint32_t bits) { return bits * (1.0 / 4294967296.0); }

}  // namespace rad
