// The solver tests' systems (CPU and GPU): a scene's form factors with all rows on this rank, and a direct
// solve of the radiosity system, the exact answer the iterative solvers are checked against, and a two-patch
// system with a closed-form solution.
#pragma once

#include <cmath>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "formfactor/cpu_form_factors.h"
#include "formfactor/embree_scene.h"
#include "formfactor/geometry.h"
#include "scene/scene.h"
#include "solver/radiosity_solver.h"

namespace rad::test {

// A scene's F on the CPU backend, all rows here; `local` points at `F` (reflectance, emission: 3 per patch),
// also in a copy.
struct SceneSystem {
  std::vector<Patch> patches;
  FormFactorRows F;
  std::vector<double> &f = F.f64;  // n x n
  LocalSystem local;

  SceneSystem() = default;
  SceneSystem(const SceneSystem &other) : patches(other.patches), F(other.F), local(other.local) { local.F = &F; }
  SceneSystem &operator=(const SceneSystem &) = delete;
  // The same system with F rounded to float32.
  FormFactorRows AsFloat() const {
    FormFactorRows narrow = F;
    narrow.precision = Precision::kFloat;
    narrow.f32.assign(F.f64.begin(), F.f64.end());
    narrow.f64.clear();
    return narrow;
  }
  // The same rows as CSR (its nonzero entries, columns ascending), as the hemicube and the sparse operator hold F.
  FormFactorRows AsCsr() const {
    FormFactorRows csr;
    csr.n = F.n;
    csr.rows = F.rows;
    csr.storage = Storage::kCsr;
    csr.indptr.assign(1, 0);
    std::vector<int32_t> columns;
    for (size_t r = 0; r < F.rows.size(); ++r) {
      for (long long j = 0; j < F.n; ++j)
        if (const double v = F.f64[r * size_t(F.n) + size_t(j)]; v != 0) {
          columns.push_back(int32_t(j));
          csr.f64.push_back(v);
        }
      csr.indptr.push_back((long long)columns.size());
    }
    csr.AssignColumns(columns);
    return csr;
  }
};

inline SceneSystem FormFactorsOf(const std::string &sceneFile, int subdiv) {
  const Scene scene = LoadScene(std::string(RAD_SOURCE_DIR) + "/" + sceneFile);
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, subdiv);
  EmbreeScene embree(scene);
  SceneSystem s;
  s.patches = g.patches;
  const long long n = (long long)g.patches.size();
  std::vector<long long> rows(static_cast<size_t>(n));
  std::iota(rows.begin(), rows.end(), 0LL);
  FormFactorOptions options;
  PhaseTimers timers;
  FormFactorCounters counters;
  ComputeRowsCpu(g, embree, rows, options, s.F.f64, timers, counters, false);
  s.F.n = n;
  s.F.rows = rows;
  s.local.F = &s.F;
  for (const Patch &p : s.patches)
    for (int c = 0; c < 3; ++c) {
      s.local.reflectance.push_back(p.reflectance[c]);
      s.local.emission.push_back(p.emission[c]);
    }
  return s;
}

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

// Two patches that see only each other with F = `f` both ways, reflectance `rho`, emission 1 on patch 0.
struct TinySystem {
  FormFactorRows F{2, {0, 1}, Precision::kDouble, {}, {}};
  std::vector<double> &f = F.f64;
  LocalSystem local;
  TinySystem(double f01, double rho) {
    f = {0, f01, f01, 0};
    local.F = &F;
    local.reflectance.assign(6, rho);
    local.emission = {1, 1, 1, 0, 0, 0};
  }
};

}  // namespace rad::test
