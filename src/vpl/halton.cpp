#include "vpl/halton.h"

#include <utility>

#include "util/error.h"
#include "util/rng.h"

namespace rad {

namespace {

constexpr uint32_t kHaltonStream = 0x48414C54u;  // "HALT": Philox counter word of the digit permutations

std::vector<uint32_t> FirstPrimes(int count) {
  std::vector<uint32_t> primes;
  for (uint32_t n = 2; int(primes.size()) < count; ++n) {
    bool prime = true;
    for (uint32_t p : primes) {
      if (p * p > n) break;
      if (n % p == 0) {
        prime = false;
        break;
      }
    }
    if (prime) primes.push_back(n);
  }
  return primes;
}

}  // namespace

ScrambledHalton::ScrambledHalton(int dimensions, uint64_t seed) {
  RAD_CHECK(dimensions >= 1, "ScrambledHalton: need at least one dimension");
  bases_ = FirstPrimes(dimensions);
  permutations_.resize(bases_.size());
  for (size_t d = 0; d < bases_.size(); ++d) {
    std::vector<uint32_t> &perm = permutations_[d];
    perm.resize(bases_[d]);
    for (uint32_t k = 0; k < bases_[d]; ++k) perm[k] = k;
    // Fisher-Yates with counter-based numbers (the same permutation on every rank) over the digits 1 .. b-1:
    // keeping 0 in place keeps the infinitely many leading zero digits of every index at 0, so the points stay
    // in [0, 1) and each base-b elementary interval still gets exactly one point.
    for (uint32_t k = bases_[d] - 1; k > 1; --k) {
      const Philox4x32 r = Philox(uint32_t(d), k, 0, kHaltonStream, uint32_t(seed), uint32_t(seed >> 32));
      const uint32_t j = 1 + uint32_t((uint64_t(r.v[0]) * k) >> 32);
      std::swap(perm[k], perm[j]);
    }
  }
}

double ScrambledHalton::Sample(int dim, uint64_t index) const {
  const uint32_t base = bases_[size_t(dim)];
  const std::vector<uint32_t> &perm = permutations_[size_t(dim)];
  const double inverse = 1.0 / base;
  double value = 0, factor = inverse;
  while (index > 0) {
    value += perm[index % base] * factor;
    index /= base;
    factor *= inverse;
  }
  return value < 1.0 ? value : 0x1.fffffffffffffp-1;  // rounding only
}

}  // namespace rad
