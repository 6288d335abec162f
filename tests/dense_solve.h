// A direct solve of the radiosity system for the solver tests: the exact answer the iterative solvers (CPU and
// GPU) are checked against, independent of both.
#pragma once

#include <cmath>
#include <utility>
#include <vector>

namespace rad::test {

// Solves (I - rho F) B = E for one channel by Gaussian elimination with partial pivoting (independent of the
// iterative solvers).
inline std::vector<double> DenseSolve(long long size, const std::vector<double> &f, const std::vector<double> &rho,
                               const std::vector<double> &e, int channel) {
  const size_t n = size_t(size);
  std::vector<double> a(n * n), b(n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) a[i * n + j] = (i == j ? 1.0 : 0.0) - rho[3 * i + size_t(channel)] * f[i * n + j];
    b[i] = e[3 * i + size_t(channel)];
  }
  for (size_t k = 0; k < n; ++k) {
    size_t pivot = k;
    for (size_t i = k + 1; i < n; ++i)
      if (std::fabs(a[i * n + k]) > std::fabs(a[pivot * n + k])) pivot = i;
    for (size_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[pivot * n + j]);
    std::swap(b[k], b[pivot]);
    for (size_t i = k + 1; i < n; ++i) {
      const double factor = a[i * n + k] / a[k * n + k];
      for (size_t j = k; j < n; ++j) a[i * n + j] -= factor * a[k * n + j];
      b[i] -= factor * b[k];
    }
  }
  std::vector<double> x(n);
  for (size_t k = n; k-- > 0;) {
    double v = b[k];
    for (size_t j = k + 1; j < n; ++j) v -= a[k * n + j] * x[j];
    x[k] = v / a[k * n + k];
  }
  return x;
}

}  // namespace rad::test
