// Inputs shared by the benchmarks, so that benchmarks compared side by side measure the same work: random
// segments between patches (the Embree and BVH ray benchmarks) and a synthetic radiosity system (the CPU and
// GPU solver benchmarks). All from counter-based random numbers: the same for any thread or rank count.
#pragma once

#include <tbb/parallel_for.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "formfactor/sampling.h"
#include "scene/patch.h"
#include "solver/radiosity_solver.h"
#include "util/decomposition.h"
#include "util/rng.h"

namespace bench {

// Segment k: from a random point of a random patch to a random point of another (possibly the same) patch.
inline void RandomSegment(const std::vector<rad::Patch> &patches, long long k, rad::Vec3 &from, rad::Vec3 &to) {
  const uint32_t n = uint32_t(patches.size());
  const rad::Philox4x32 x = rad::Philox(uint32_t(k), uint32_t(k >> 32), 1, 2, 3, 4);
  const rad::Patch &p = patches[x.v[0] % n], &q = patches[x.v[1] % n];
  double jacobian;
  from = rad::SquareToPatch(p.corners, p.cornerCount, rad::ToUnit(x.v[2]), rad::ToUnit(x.v[3]), jacobian);
  to = rad::SquareToPatch(q.corners, q.cornerCount, rad::ToUnit(x.v[3]), rad::ToUnit(x.v[2]), jacobian);
}

// The entries of `rows` held as T.
template <typename T>
std::vector<T> &Entries(rad::FormFactorRows &rows) {
  if constexpr (std::is_same_v<T, double>) return rows.f64;
  else return rows.f32;
}

// This rank's rows (cyclic, as in real runs) of a synthetic N x N system: F random with rows summing to about
// 0.9 (a sweep's time does not depend on the values), reflectance 0.7, every 97th patch emitting. F is
// written into `rows` by the threads that will read it (first touch); the system points at it.
template <typename T>
rad::LocalSystem SyntheticSystem(long long n, int rank, int ranks, rad::FormFactorRows &rows) {
  rad::LocalSystem s;
  rows.n = n;
  rows.rows = rad::OwnedRows(n, rank, ranks, rad::Distribution::kCyclic);
  rows.precision = std::is_same_v<T, double> ? rad::Precision::kDouble : rad::Precision::kFloat;
  std::vector<T> &f = Entries<T>(rows);
  const size_t m = rows.rows.size();
  f.assign(m * size_t(n), T(0));
  tbb::parallel_for(size_t(0), m, [&](size_t r) {
    for (long long j = 0; j < n; ++j) {
      const rad::Philox4x32 u = rad::Philox(uint32_t(rows.rows[r]), uint32_t(j), 0, 0, 7, 11);
      f[r * size_t(n) + size_t(j)] = T(1.8 / double(n) * rad::ToUnit(u.v[0]));
    }
  });
  s.reflectance.assign(3 * size_t(n), 0.7);
  s.emission.assign(3 * size_t(n), 0.0);
  for (long long i = 0; i < n; i += 97) s.emission[3 * size_t(i)] = 1.0;
  s.F = &rows;
  return s;
}

}  // namespace bench
