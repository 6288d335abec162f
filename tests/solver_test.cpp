// The radiosity solver against exact answers: the white furnace (B = E / (1 - rho) in a closed box) and a
// dense direct solve (LU with partial pivoting) of the same system; divergence and non-convergence are reported.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <numeric>

#include "formfactor/cpu_form_factors.h"
#include "formfactor/embree_scene.h"
#include "formfactor/geometry.h"
#include "scene/scene.h"
#include "solver/radiosity_solver.h"
#include "tests/dense_solve.h"
#include "util/error.h"
#include "util/thread_limit.h"

namespace rad {
namespace {

using System = test::SceneSystem;
using test::FormFactorsOf;

std::vector<double> DirectSolve(const System &s, int channel) {
  return test::DenseSolve(s.F.n, s.f, s.local.reflectance, s.local.emission, channel);
}

SolverResult Solve(const LocalSystem &system, SolverMethod method, double tolerance, int maxIterations = 1000) {
  SolverOptions options;
  options.method = method;
  options.tolerance = tolerance;
  options.maxIterations = maxIterations;
  PhaseTimers timers;
  return SolveRadiosity(MPI_COMM_WORLD, system, options, timers);
}

TEST(Solver, WhiteFurnaceGivesTwoEverywhere) {
  // Kd 0.5, Ke 1 on every wall of a closed cube: B = 1 / (1 - 0.5) = 2 on every patch and channel.
  const System s = FormFactorsOf("meshes/tests/furnace_cube.obj", 2);
  for (SolverMethod method : {SolverMethod::kJacobi, SolverMethod::kGaussSeidel}) {
    const SolverResult r = Solve(s.local, method, 1e-10);
    ASSERT_EQ(r.status, SolverStatus::kConverged) << r.message;
    ASSERT_EQ(r.radiance.size(), 3 * s.patches.size());
    for (double b : r.radiance) EXPECT_NEAR(b, 2.0, 1e-6);
    EXPECT_LT(r.finalResidual, 1e-10);
    EXPECT_EQ(int(r.residuals.size()), r.iterations);
  }
}

TEST(Solver, MatchesDirectSolveAndGaussSeidelNeedsFewerIterations) {
  const System s = FormFactorsOf("meshes/cornell_sphere.obj", 0);
  const SolverResult jacobi = Solve(s.local, SolverMethod::kJacobi, 1e-13);
  const SolverResult gaussSeidel = Solve(s.local, SolverMethod::kGaussSeidel, 1e-13);
  ASSERT_EQ(jacobi.status, SolverStatus::kConverged) << jacobi.message;
  ASSERT_EQ(gaussSeidel.status, SolverStatus::kConverged) << gaussSeidel.message;
  EXPECT_LT(gaussSeidel.iterations, jacobi.iterations);
  for (int c = 0; c < 3; ++c) {
    const std::vector<double> exact = DirectSolve(s, c);
    for (size_t i = 0; i < s.patches.size(); ++i) {
      EXPECT_NEAR(jacobi.radiance[3 * i + size_t(c)], exact[i], 1e-9) << "patch " << i << " channel " << c;
      EXPECT_NEAR(gaussSeidel.radiance[3 * i + size_t(c)], exact[i], 1e-9) << "patch " << i << " channel " << c;
    }
  }
  // The residual history falls (both methods contract in the max norm when rho * row sum < 1).
  EXPECT_LT(gaussSeidel.contractionBound, 1.0);
  for (size_t k = 1; k < gaussSeidel.residuals.size(); ++k)
    EXPECT_LE(gaussSeidel.residuals[k], gaussSeidel.residuals[k - 1]);
}

TEST(Solver, FloatMatrixGivesTheSameSolutionToItsPrecision) {
  const System s = FormFactorsOf("meshes/cornell_sphere.obj", 0);
  const FormFactorRows narrow = s.AsFloat();
  LocalSystem asFloat = s.local;
  asFloat.F = &narrow;
  const SolverResult a = Solve(s.local, SolverMethod::kGaussSeidel, 1e-12);
  const SolverResult b = Solve(asFloat, SolverMethod::kGaussSeidel, 1e-12);
  ASSERT_EQ(b.status, SolverStatus::kConverged);
  for (size_t k = 0; k < a.radiance.size(); ++k) EXPECT_NEAR(a.radiance[k], b.radiance[k], 1e-5 * (1 + a.radiance[k]));
}

TEST(Solver, SameBitsForAnyThreadCount) {
  const System s = FormFactorsOf("meshes/cornell_sphere.obj", 1);
  SolverResult one, two;
  {
    ThreadLimit limit(1);
    one = Solve(s.local, SolverMethod::kGaussSeidel, 1e-10);
  }
  {
    ThreadLimit limit(2);
    two = Solve(s.local, SolverMethod::kGaussSeidel, 1e-10);
  }
  EXPECT_EQ(one.iterations, two.iterations);
  EXPECT_EQ(one.radiance, two.radiance);
}

// Keeps every iterate the solve offers, and hands one back to continue from.
class KeepEveryIterate : public IterateKeeper {
 public:
  std::vector<SolverIterate> kept;
  const SolverIterate *resumeFrom = nullptr;
  const SolverIterate *Resume() override { return resumeFrom; }
  void AfterExchange(int k, const std::function<SolverIterate()> &iterate) override {
    kept.push_back(iterate());
    EXPECT_EQ(kept.back().iteration, k);
  }
};

TEST(Solver, ContinuedFromAnyKeptIterateEndsAsIfNeverStopped) {
  // A solve restarted from the iterate before sweep k (a checkpoint) must make the same sweeps as one never
  // stopped: the same B, residuals, iterations and sweeps, bit for bit, whether k falls before Gauss-Seidel starts
  // measuring the iterate's residual, after, or within one of --max-iterations.
  // Dense rows and CSR rows (the hemicube's), each with the sweeps that solve them.
  const System s = FormFactorsOf("meshes/cornell_sphere.obj", 1);
  const FormFactorRows csr = s.AsCsr();
  LocalSystem csrSystem = s.local;
  csrSystem.F = &csr;
  const LocalSystem &asCsr = csrSystem;
  for (const LocalSystem *system : {&s.local, &asCsr}) {
    for (SolverMethod method : {SolverMethod::kJacobi, SolverMethod::kGaussSeidel})
      for (int maxIterations : {1000, 6}) {
        SolverOptions options;
        options.method = method;
        options.tolerance = 1e-10;
        options.maxIterations = maxIterations;
        KeepEveryIterate keeper;
        options.keeper = &keeper;
        PhaseTimers timers;
        const SolverResult whole = SolveRadiosity(MPI_COMM_WORLD, *system, options, timers);
        ASSERT_EQ(int(keeper.kept.size()), whole.iterations) << "an iterate after every exchange";
        const std::vector<SolverIterate> kept = keeper.kept;
        for (const SolverIterate &from : kept) {
          SCOPED_TRACE(std::string(system->F->IsCsr() ? "CSR, " : "dense, ") + SolverMethodName(method) + ", max " +
                       std::to_string(maxIterations) +
                       ", continued before sweep " + std::to_string(from.iteration));
          KeepEveryIterate again;
          again.resumeFrom = &from;
          options.keeper = &again;
          const SolverResult continued = SolveRadiosity(MPI_COMM_WORLD, *system, options, timers);
          EXPECT_EQ(continued.status, whole.status);
          EXPECT_EQ(continued.message, whole.message);
          EXPECT_EQ(continued.iterations, whole.iterations);
          EXPECT_EQ(continued.sweeps, whole.sweeps);
          EXPECT_EQ(continued.initialResidual, whole.initialResidual);
          EXPECT_EQ(continued.residuals, whole.residuals);
          EXPECT_EQ(continued.radiance, whole.radiance);
          EXPECT_EQ(again.kept.size(), kept.size() - size_t(from.iteration)) << "iterates after the one continued from";
        }
      }
  }
}

TEST(Solver, TwoPatchSystemHasItsClosedForm) {
  // B0 = 1 + rho f B1, B1 = rho f B0  ->  B0 = 1 / (1 - (rho f)^2), B1 = rho f B0.
  const test::TinySystem t(0.8, 0.7);
  const SolverResult r = Solve(t.local, SolverMethod::kGaussSeidel, 1e-14);
  ASSERT_EQ(r.status, SolverStatus::kConverged);
  const double k = 0.8 * 0.7, b0 = 1 / (1 - k * k);
  EXPECT_NEAR(r.radiance[0], b0, 1e-13);
  EXPECT_NEAR(r.radiance[3], k * b0, 1e-13);
  EXPECT_NEAR(r.contractionBound, 0.56, 1e-15);
}

TEST(Solver, RowsSummingAboveOneDiverge) {
  const test::TinySystem t(1.5, 0.9);  // rho * F = 1.35: the iterates grow without bound
  const SolverResult r = Solve(t.local, SolverMethod::kGaussSeidel, 1e-6);
  EXPECT_EQ(r.status, SolverStatus::kDiverged);
  EXPECT_NE(r.message.find("diverged"), std::string::npos);
  EXPECT_NEAR(r.contractionBound, 1.35, 1e-12);
  const SolverResult j = Solve(t.local, SolverMethod::kJacobi, 1e-6);
  EXPECT_EQ(j.status, SolverStatus::kDiverged);
}

TEST(Solver, StopsAtMaxIterationsAndSaysSo) {
  const test::TinySystem t(0.99, 0.99);  // converges, but slowly
  const SolverResult r = Solve(t.local, SolverMethod::kJacobi, 1e-12, 5);
  EXPECT_EQ(r.status, SolverStatus::kMaxIterations);
  EXPECT_EQ(r.iterations, 5);
  EXPECT_EQ(r.residuals.size(), 5u);
  EXPECT_GT(r.finalResidual, 1e-12);
  EXPECT_NE(r.message.find("not converged"), std::string::npos);
}

TEST(Solver, NonFiniteFormFactorIsAnInputError) {
  test::TinySystem t(0.5, 0.5);
  t.f[1] = std::nan("");
  EXPECT_THROW(Solve(t.local, SolverMethod::kGaussSeidel, 1e-6), InputError);
}

TEST(Solver, NothingEmittingGivesZero) {
  test::TinySystem t(0.5, 0.5);
  t.local.emission.assign(6, 0.0);
  const SolverResult r = Solve(t.local, SolverMethod::kGaussSeidel, 1e-6);
  EXPECT_EQ(r.status, SolverStatus::kConverged);
  for (double b : r.radiance) EXPECT_EQ(b, 0.0);
}

}  // namespace
}  // namespace rad
