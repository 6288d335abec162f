// Scrambled Halton points (bases 2, 3, 5, 7, ...: dimension d uses the d-th prime), indexed by the VPL path
// number, so the lights depend only on (seed, path) and never on ranks or threads. Each dimension's non-zero digits go
// through a fixed random permutation (Philox keyed by the seed): plain Halton points in neighbouring large
// prime bases are nearly collinear for the first hundreds of indices, which would correlate the bounces.
#pragma once

#include <cstdint>
#include <vector>

namespace rad {

class ScrambledHalton {
 public:
  ScrambledHalton(int dimensions, uint64_t seed);
  int Dimensions() const { return int(bases_.size()); }
  // Coordinate `dim` of point `index`, in [0, 1).
  double Sample(int dim, uint64_t index) const;

 private:
  std::vector<uint32_t> bases_;
  std::vector<std::vector<uint32_t>> permutations_;  // one per dimension, of the digits 0 .. base-1
};

}  // namespace rad
