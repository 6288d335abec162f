// The GPU radiosity solver. Host tests (they run everywhere): the GPU's block Gauss-Seidel sweep, run on the
// host with the same row maths as the kernels, is exact rank-local Gauss-Seidel and converges to a dense LU
// solve; the column splits of the product kernel; the shared stopping rules as the GPU uses them; a clear input
// error without a device. GPU tests (skipped without a device): the white furnace, a dense LU solve for Jacobi
// and block Gauss-Seidel (cuBLAS and the project's product kernel), float F, divergence, the iteration limit.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "solver/block_gauss_seidel.h"
#include "solver/radiosity_solver.h"
#include "solver/solver_common.h"
#include "tests/dense_solve.h"
#include "util/decomposition.h"
#include "util/error.h"
#include "util/rng.h"

#include "cuda/device_info.h"
#include "cuda/gpu_solver.h"
#include "formfactor/cpu_form_factors.h"
#include "formfactor/embree_scene.h"
#include "formfactor/geometry.h"
#include "scene/scene.h"

namespace rad {
namespace {

// A synthetic system: F with zero diagonal and row i summing to 0.5 + 0.4 * (i mod 3) / 2 (below 1, as in a
// closed scene with some loss), reflectance in [0.2, 0.8), emission on every fifth patch.
struct SyntheticSystem {
  long long n;
  std::vector<double> f;       // n x n, row-major
  std::vector<double> rho, e;  // 3 per patch
  SyntheticSystem(long long size, uint32_t seed)
      : n(size), f(size_t(size * size)), rho(3 * size_t(size)), e(3 * size_t(size)) {
    for (long long i = 0; i < n; ++i) {
      double sum = 0;
      for (long long j = 0; j < n; ++j) {
        const double u = i == j ? 0.0 : ToUnit(Philox(uint32_t(i), uint32_t(j), 0, 0, seed, 1).v[0]);
        f[size_t(i * n + j)] = u;
        sum += u;
      }
      const double target = 0.5 + 0.2 * double(i % 3);
      for (long long j = 0; j < n; ++j) f[size_t(i * n + j)] *= target / sum;
      for (int c = 0; c < 3; ++c) {
        rho[3 * size_t(i) + size_t(c)] = 0.2 + 0.6 * ToUnit(Philox(uint32_t(i), uint32_t(c), 1, 0, seed, 2).v[0]);
        e[3 * size_t(i) + size_t(c)] = i % 5 == 0 ? 1.0 + double(c) : 0.0;
      }
    }
  }
  double MaxEmission() const {
    double m = 0;
    for (double v : e) m = std::max(m, std::fabs(v));
    return m;
  }
};

// Rank `rank` of `ranks` in a cyclic distribution: its rows, their rows of F (as T), E and rho.
template <typename T>
struct RankShare {
  std::vector<long long> rows;
  std::vector<T> f;
  std::vector<double> e, rho;
  RankShare(const SyntheticSystem &s, int rank, int ranks) {
    for (long long i : OwnedRows(s.n, rank, ranks, Distribution::kCyclic)) {
      rows.push_back(i);
      for (long long j = 0; j < s.n; ++j) f.push_back(T(s.f[size_t(i * s.n + j)]));
      for (int c = 0; c < 3; ++c) {
        e.push_back(s.e[3 * size_t(i) + size_t(c)]);
        rho.push_back(s.rho[3 * size_t(i) + size_t(c)]);
      }
    }
  }
};

TEST(GpuSolver, BlockGaussSeidelSweepIsPointGaussSeidel) {
  const SyntheticSystem s(75, 3);
  const size_t n = size_t(s.n);
  // A starting iterate that is not the emission, so that every row changes.
  std::vector<double> b(3 * n);
  for (size_t k = 0; k < b.size(); ++k) b[k] = 0.3 + ToUnit(Philox(uint32_t(k), 0, 0, 0, 9, 9).v[0]);
  for (int ranks : {1, 3}) {
    const int rank = ranks - 1;
    const RankShare<double> share(s, rank, ranks);
    const size_t m = share.rows.size();
    // Point Gauss-Seidel: the rank's rows in order, each from the newest values; other ranks' rows stay B^k.
    std::vector<double> newest(b), expected(3 * m);
    for (size_t r = 0; r < m; ++r) {
      const size_t i = size_t(share.rows[r]);
      for (int c = 0; c < 3; ++c) {
        double sum = 0;
        for (size_t j = 0; j < n; ++j) sum += s.f[i * n + j] * newest[j + size_t(c) * n];
        expected[3 * r + size_t(c)] = share.e[3 * r + size_t(c)] + share.rho[3 * r + size_t(c)] * sum;
      }
      for (int c = 0; c < 3; ++c) newest[i + size_t(c) * n] = expected[3 * r + size_t(c)];
    }
    // The residual of B^k over the rank's rows, straight from its definition.
    double residual = 0;
    for (size_t r = 0; r < m; ++r) {
      const size_t i = size_t(share.rows[r]);
      for (int c = 0; c < 3; ++c) {
        double t = 0;
        for (size_t j = 0; j < n; ++j) t += s.f[i * n + j] * b[j + size_t(c) * n];
        residual = std::max(residual, std::fabs(share.e[3 * r + size_t(c)] + share.rho[3 * r + size_t(c)] * t -
                                                b[i + size_t(c) * n]));
      }
    }
    residual /= s.MaxEmission();
    ASSERT_GT(residual, 0.01);
    // Blocks of 1 row, of less than a substitution group, of one group and one more, and of all rows.
    for (int blockRows : {1, 7, 32, 33, 64, int(m), 512}) {
      std::vector<double> d(3 * n, 0.0), packed(3 * m, -1.0);
      const double got = BlockGaussSeidelSweepHost(share.f.data(), s.n, share.rows, share.e.data(), share.rho.data(),
                                                   b.data(), d.data(), s.MaxEmission(), blockRows, packed.data());
      EXPECT_NEAR(got, residual, 1e-14) << "ranks " << ranks << ", block " << blockRows;
      for (size_t r = 0; r < m; ++r)
        for (int c = 0; c < 3; ++c) {
          const size_t i = size_t(share.rows[r]);
          EXPECT_NEAR(packed[3 * r + size_t(c)], expected[3 * r + size_t(c)], 1e-14)
              << "ranks " << ranks << ", block " << blockRows << ", row " << i;
          // D holds the sweep's change at the rank's rows...
          EXPECT_NEAR(d[i + size_t(c) * n], expected[3 * r + size_t(c)] - b[i + size_t(c) * n], 1e-14);
        }
      // ... and nothing anywhere else.
      for (size_t i = 0; i < n; ++i) {
        if (ranks == 1 || CyclicOwner(i, ranks) == rank) continue;
        for (int c = 0; c < 3; ++c) EXPECT_EQ(d[i + size_t(c) * n], 0.0);
      }
    }
  }
}

// Iterates the GPU's sweep on the host over `ranks` simulated ranks (Jacobi between them), until the residual
// of the iterate is below `tolerance`; returns B as [n][3].
template <typename T>
std::vector<double> IterateBlockGaussSeidel(const SyntheticSystem &s, int ranks, int blockRows, double tolerance,
                                            int &iterations) {
  const size_t n = size_t(s.n);
  std::vector<RankShare<T>> shares;
  for (int r = 0; r < ranks; ++r) shares.emplace_back(s, r, ranks);
  std::vector<double> b(3 * n);
  for (size_t i = 0; i < n; ++i)
    for (size_t c = 0; c < 3; ++c) b[i + c * n] = s.e[3 * i + c];
  for (iterations = 0; iterations < 500; ++iterations) {
    std::vector<double> next(b);
    double residual = 0;
    for (const RankShare<T> &share : shares) {
      std::vector<double> d(3 * n, 0.0), packed(3 * share.rows.size());
      residual = std::max(residual, BlockGaussSeidelSweepHost(share.f.data(), s.n, share.rows, share.e.data(),
                                                              share.rho.data(), b.data(), d.data(), s.MaxEmission(),
                                                              blockRows, packed.data()));
      for (size_t r = 0; r < share.rows.size(); ++r)
        for (size_t c = 0; c < 3; ++c) next[size_t(share.rows[r]) + c * n] = packed[3 * r + c];
    }
    if (residual < tolerance) break;
    b = next;
  }
  std::vector<double> out(3 * n);
  for (size_t i = 0; i < n; ++i)
    for (size_t c = 0; c < 3; ++c) out[3 * i + c] = b[i + c * n];
  return out;
}

TEST(GpuSolver, BlockGaussSeidelConvergesToTheDenseSolution) {
  const SyntheticSystem s(90, 5);
  std::vector<double> exact[3];
  for (int c = 0; c < 3; ++c) exact[c] = test::DenseSolve(s.n, s.f, s.rho, s.e, c);
  int itersOneRank = 0, itersFourRanks = 0, itersFloat = 0;
  const std::vector<double> one = IterateBlockGaussSeidel<double>(s, 1, 32, 1e-14, itersOneRank);
  const std::vector<double> four = IterateBlockGaussSeidel<double>(s, 4, 7, 1e-14, itersFourRanks);
  const std::vector<double> narrow = IterateBlockGaussSeidel<float>(s, 2, 32, 1e-7, itersFloat);
  ASSERT_LT(itersOneRank, 500);
  ASSERT_LT(itersFourRanks, 500);
  ASSERT_LT(itersFloat, 500);
  // Gauss-Seidel within one rank converges faster than with Jacobi between four.
  EXPECT_LT(itersOneRank, itersFourRanks);
  for (size_t i = 0; i < size_t(s.n); ++i)
    for (int c = 0; c < 3; ++c) {
      const double want = exact[c][i];
      EXPECT_NEAR(one[3 * i + size_t(c)], want, 1e-12) << "patch " << i;
      EXPECT_NEAR(four[3 * i + size_t(c)], want, 1e-12) << "patch " << i;
      // F rounded to float is another system: its solution differs by about float's precision.
      EXPECT_NEAR(narrow[3 * i + size_t(c)], want, 1e-6 * (1 + want)) << "patch " << i;
    }
}

TEST(GpuSolver, ColumnSplitsCoverEveryColumnOnce) {
  for (long long n : {1LL, 31LL, 1000LL, 11776LL})
    for (int splits : {1, 2, 7, 64}) {
      long long expectedBegin = 0;
      for (int s = 0; s < splits; ++s) {
        long long begin, end;
        ColumnSplit(n, splits, s, begin, end);
        EXPECT_EQ(begin, expectedBegin);
        EXPECT_LE(begin, end);
        expectedBegin = end;
      }
      EXPECT_EQ(expectedBegin, n);
    }
  // Many rows: one split; one block of rows: enough splits to fill the device, none narrower than asked.
  EXPECT_EQ(ChooseColumnSplits(11776, 11776, 32, 264, 1024, 64), 1);
  EXPECT_EQ(ChooseColumnSplits(512, 11776, 32, 264, 1024, 64), 11);
  EXPECT_EQ(ChooseColumnSplits(512, 100000, 32, 264, 1024, 64), 17);
  EXPECT_EQ(ChooseColumnSplits(32, 1000000, 32, 264, 1024, 64), 64);
  EXPECT_EQ(ChooseColumnSplits(32, 500, 32, 264, 1024, 64), 1);
  EXPECT_EQ(ChooseColumnSplits(0, 500, 32, 264, 1024, 64), 1);
}

TEST(GpuSolver, NanResidualCountsAsInfinite) {
  EXPECT_EQ(WorseResidual(0.5, std::nan("")), HUGE_VAL);
  EXPECT_EQ(WorseResidual(std::nan(""), 0.5), HUGE_VAL);
  EXPECT_EQ(WorseResidual(0.25, 0.5), 0.5);
  const double e[3] = {1, 0, 0}, rho[3] = {0.5, 0.5, 0.5}, t[3] = {1, std::nan(""), 0}, x[3] = {1.5, 0, 0};
  EXPECT_EQ(RowResidual(e, rho, t, x, 1.0), HUGE_VAL);
}

// The GPU solver measures the iterate's residual in every sweep (measureEverySweep): Gauss-Seidel then stops
// at the first sweep whose residual is below the tolerance, as Jacobi does.
TEST(GpuSolver, StoppingRulesWhenEverySweepIsMeasured) {
  SolverOptions options;
  options.method = SolverMethod::kGaussSeidel;
  options.tolerance = 1e-6;
  options.maxIterations = 10;
  {
    IterationMonitor monitor(options, 0, true);
    SolverResult result;
    const double residuals[] = {1.0, 1e-3, 1e-7};
    int k = 0;
    for (; k < 3; ++k) {
      EXPECT_TRUE(monitor.MeasureNext());
      if (monitor.Record(k, residuals[k], result)) break;
    }
    EXPECT_EQ(k, 2);
    EXPECT_EQ(result.status, SolverStatus::kConverged);
    EXPECT_EQ(result.iterations, 2);
    EXPECT_EQ(result.sweeps, 3);
    EXPECT_EQ(result.initialResidual, 1.0);
    EXPECT_EQ(result.finalResidual, 1e-7);
    EXPECT_EQ(result.residuals, (std::vector<double>{1e-3, 1e-7}));
    EXPECT_NE(result.message.find("converged"), std::string::npos);
  }
  {
    // Without measuring every sweep, the CPU's Gauss-Seidel needs one more sweep to measure the iterate.
    IterationMonitor monitor(options, 0, false);
    SolverResult result;
    EXPECT_FALSE(monitor.MeasureNext());
    EXPECT_FALSE(monitor.Record(0, 1.0, result));
    EXPECT_FALSE(monitor.Record(1, 1e-7, result));
    EXPECT_TRUE(monitor.MeasureNext());
    EXPECT_TRUE(monitor.Record(2, 5e-8, result));
    EXPECT_EQ(result.iterations, 2);
  }
  {
    IterationMonitor monitor(options, 0, true);
    SolverResult result;
    EXPECT_FALSE(monitor.Record(0, 1.0, result));
    EXPECT_TRUE(monitor.Record(1, 2e3, result));  // grew more than 1000 times
    EXPECT_EQ(result.status, SolverStatus::kDiverged);
    EXPECT_NE(result.message.find("diverged"), std::string::npos);
  }
  {
    options.maxIterations = 3;
    IterationMonitor monitor(options, 0, true);
    SolverResult result;
    int k = 0;
    while (!monitor.Record(k, 0.5, result)) ++k;
    EXPECT_EQ(k, 3);
    EXPECT_EQ(result.status, SolverStatus::kMaxIterations);
    EXPECT_EQ(result.residuals.size(), 3u);
    EXPECT_NE(result.message.find("not converged"), std::string::npos);
  }
}


#define RAD_REQUIRE_DEVICE() \
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << DescribeCudaDevices()

TEST(GpuSolver, NoDeviceIsAnInputError) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a CUDA device is present: " << DescribeCudaDevices();
  const SyntheticSystem s(4, 1);
  const FormFactorRows rows{s.n, {0, 1, 2, 3}, Precision::kDouble, Storage::kDense, s.f, {}};
  LocalSystem local;
  local.F = &rows;
  local.reflectance = s.rho;
  local.emission = s.e;
  PhaseTimers timers;
  try {
    SolveRadiosityGpu(MPI_COMM_WORLD, local, SolverOptions(), timers);
    FAIL() << "no InputError";
  } catch (const InputError &error) {
    EXPECT_NE(std::string(error.what()).find("CUDA device"), std::string::npos) << error.what();
  }
}

using test::FormFactorsOf;
using test::SceneSystem;

SolverResult SolveOnGpu(const LocalSystem &system, SolverMethod method, double tolerance, int maxIterations = 1000,
                        GpuSolverSettings settings = GpuSolverSettings()) {
  SolverOptions options;
  options.method = method;
  options.tolerance = tolerance;
  options.maxIterations = maxIterations;
  PhaseTimers timers;
  return SolveRadiosityGpu(MPI_COMM_WORLD, system, options, timers, settings);
}

TEST(GpuSolver, WhiteFurnaceGivesTwoEverywhere) {
  RAD_REQUIRE_DEVICE();
  // Kd 0.5, Ke 1 on every wall of a closed cube: B = 1 / (1 - 0.5) = 2 on every patch and channel.
  const SceneSystem s = FormFactorsOf("meshes/tests/furnace_cube.obj", 2);
  for (SolverMethod method : {SolverMethod::kJacobi, SolverMethod::kGaussSeidel}) {
    const SolverResult r = SolveOnGpu(s.local, method, 1e-10);
    ASSERT_EQ(r.status, SolverStatus::kConverged) << r.message;
    ASSERT_EQ(r.radiance.size(), 3 * s.patches.size());
    for (double b : r.radiance) EXPECT_NEAR(b, 2.0, 1e-6);
    EXPECT_LT(r.finalResidual, 1e-10);
    EXPECT_EQ(int(r.residuals.size()), r.iterations);
    EXPECT_EQ(r.sweeps, r.iterations + 1);
  }
}

TEST(GpuSolver, MatchesDenseSolveWithJacobiAndBlockGaussSeidel) {
  RAD_REQUIRE_DEVICE();
  const SceneSystem s = FormFactorsOf("meshes/cornell_sphere.obj", 0);
  std::vector<double> exact[3];
  for (int c = 0; c < 3; ++c) exact[c] = test::DenseSolve(s.F.n, s.f, s.local.reflectance, s.local.emission, c);
  GpuSolverSettings ownKernel;
  ownKernel.cublasForDouble = false;
  GpuSolverSettings smallBlocks;  // several blocks even for this small scene
  smallBlocks.blockRows = 32;
  const SolverResult jacobi = SolveOnGpu(s.local, SolverMethod::kJacobi, 1e-13);
  const SolverResult jacobiOwn = SolveOnGpu(s.local, SolverMethod::kJacobi, 1e-13, 1000, ownKernel);
  const SolverResult gs = SolveOnGpu(s.local, SolverMethod::kGaussSeidel, 1e-13, 1000, smallBlocks);
  const SolverResult gsOwn = SolveOnGpu(s.local, SolverMethod::kGaussSeidel, 1e-13, 1000, ownKernel);
  for (const SolverResult *r : {&jacobi, &jacobiOwn, &gs, &gsOwn}) {
    ASSERT_EQ(r->status, SolverStatus::kConverged) << r->message;
    for (size_t i = 0; i < s.patches.size(); ++i)
      for (int c = 0; c < 3; ++c)
        EXPECT_NEAR(r->radiance[3 * i + size_t(c)], exact[c][i], 1e-9) << "patch " << i << " channel " << c;
  }
  EXPECT_LT(gs.iterations, jacobi.iterations);
  EXPECT_EQ(gs.contractionBound, jacobi.contractionBound);
  EXPECT_LT(gs.contractionBound, 1.0);
}

TEST(GpuSolver, FloatMatrixGivesTheSameSolutionToItsPrecision) {
  RAD_REQUIRE_DEVICE();
  const SceneSystem s = FormFactorsOf("meshes/cornell_sphere.obj", 0);
  const FormFactorRows narrow = s.AsFloat();
  LocalSystem asFloat = s.local;
  asFloat.F = &narrow;
  std::vector<double> exact[3];
  for (int c = 0; c < 3; ++c) exact[c] = test::DenseSolve(s.F.n, s.f, s.local.reflectance, s.local.emission, c);
  for (SolverMethod method : {SolverMethod::kJacobi, SolverMethod::kGaussSeidel}) {
    const SolverResult r = SolveOnGpu(asFloat, method, 1e-12);
    ASSERT_EQ(r.status, SolverStatus::kConverged) << r.message;
    for (size_t i = 0; i < s.patches.size(); ++i)
      for (int c = 0; c < 3; ++c)
        EXPECT_NEAR(r.radiance[3 * i + size_t(c)], exact[c][i], 1e-5 * (1 + exact[c][i])) << "patch " << i;
  }
}

TEST(GpuSolver, TwoPatchSystemHasItsClosedForm) {
  RAD_REQUIRE_DEVICE();
  const test::TinySystem t(0.8, 0.7);
  const double k = 0.8 * 0.7, b0 = 1 / (1 - k * k);
  for (SolverMethod method : {SolverMethod::kJacobi, SolverMethod::kGaussSeidel}) {
    const SolverResult r = SolveOnGpu(t.local, method, 1e-14);
    ASSERT_EQ(r.status, SolverStatus::kConverged) << r.message;
    EXPECT_NEAR(r.radiance[0], b0, 1e-13);
    EXPECT_NEAR(r.radiance[3], k * b0, 1e-13);
  }
}

TEST(GpuSolver, RowsSummingAboveOneDiverge) {
  RAD_REQUIRE_DEVICE();
  const test::TinySystem t(1.5, 0.9);  // rho * F = 1.35: the iterates grow without bound
  for (SolverMethod method : {SolverMethod::kJacobi, SolverMethod::kGaussSeidel}) {
    const SolverResult r = SolveOnGpu(t.local, method, 1e-6);
    EXPECT_EQ(r.status, SolverStatus::kDiverged);
    EXPECT_NE(r.message.find("diverged"), std::string::npos);
    EXPECT_NEAR(r.contractionBound, 1.35, 1e-12);
  }
}

TEST(GpuSolver, StopsAtMaxIterationsAndSaysSo) {
  RAD_REQUIRE_DEVICE();
  const test::TinySystem t(0.99, 0.99);  // converges, but slowly
  const SolverResult r = SolveOnGpu(t.local, SolverMethod::kGaussSeidel, 1e-12, 5);
  EXPECT_EQ(r.status, SolverStatus::kMaxIterations);
  EXPECT_EQ(r.iterations, 5);
  EXPECT_EQ(r.residuals.size(), 5u);
  EXPECT_NE(r.message.find("not converged"), std::string::npos);
}

TEST(GpuSolver, NothingEmittingGivesZero) {
  RAD_REQUIRE_DEVICE();
  test::TinySystem t(0.5, 0.5);
  t.local.emission.assign(6, 0.0);
  const SolverResult r = SolveOnGpu(t.local, SolverMethod::kGaussSeidel, 1e-6);
  EXPECT_EQ(r.status, SolverStatus::kConverged);
  for (double b : r.radiance) EXPECT_EQ(b, 0.0);
}


}  // namespace
}  // namespace rad
