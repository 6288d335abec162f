#include "solver/radiosity_solver.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "solver/row_kernels.h"
#include "util/error.h"
#include "util/mpi_check.h"

namespace rad {

SolverMethod ParseSolverMethod(const std::string &name) {
  if (name == "jacobi") return SolverMethod::kJacobi;
  if (name == "gauss-seidel") return SolverMethod::kGaussSeidel;
  throw InputError("--solver must be 'jacobi' or 'gauss-seidel', not '" + name + "'");
}

const char *SolverMethodName(SolverMethod method) {
  return method == SolverMethod::kJacobi ? "jacobi" : "gauss-seidel";
}

namespace {

// Rows per Gauss-Seidel block: the rows of a block are computed in parallel against the values at the start
// of the block, then corrected in order for the block's own earlier rows. The result is exact rank-local
// Gauss-Seidel for any block size; the size only trades synchronisation against the O(block^2) correction.
constexpr size_t kGaussSeidelBlock = 128;
// Rows per task: the row kernels take rows in groups of 8.
constexpr size_t kRowGrain = 8;

// A residual this many times the starting one means the iteration is running away.
constexpr double kDivergenceGrowth = 1e3;

// Three channels of a vector of n values each (structure of arrays, so that the row kernels vectorise).
struct ChannelVectors {
  std::vector<double> c[3];
  explicit ChannelVectors(size_t n) {
    for (auto &v : c) v.assign(n, 0.0);
  }
  Channels View() const { return {c[0].data(), c[1].data(), c[2].data()}; }
};

struct RowOfF {
  const double *f64;
  const float *f32;
};

RowOfF Row(const LocalSystem &s, size_t r) {
  const size_t offset = r * size_t(s.n);
  return {s.f64 ? s.f64 + offset : nullptr, s.f32 ? s.f32 + offset : nullptr};
}

// Rows [first, first + count) of the rank's block against x (and y).
void DotRows(const LocalSystem &s, size_t first, size_t count, Channels x, double *out) {
  const size_t offset = first * size_t(s.n);
  if (s.f64) RowsDot(s.f64 + offset, (long long)count, s.n, x, out);
  else RowsDot(s.f32 + offset, (long long)count, s.n, x, out);
}

void Dot2Rows(const LocalSystem &s, size_t first, size_t count, Channels x, Channels y, double *outX, double *outY) {
  const size_t offset = first * size_t(s.n);
  if (s.f64) RowsDot2(s.f64 + offset, (long long)count, s.n, x, y, outX, outY);
  else RowsDot2(s.f32 + offset, (long long)count, s.n, x, y, outX, outY);
}

double Entry(RowOfF row, long long j) { return row.f64 ? row.f64[j] : double(row.f32[j]); }

// Gauss-Seidel within a block: what the block's first `done` rows (global indices `blockRows`) changed,
// seen through this row of F.
template <typename T>
void CorrectForBlock(const T *row, const long long *blockRows, size_t done, const std::array<std::vector<double>, 3> &delta,
                     double sum[3]) {
  double r = 0, g = 0, b = 0;
  for (size_t q = 0; q < done; ++q) {
    const double f = double(row[blockRows[q]]);
    r += f * delta[0][q];
    g += f * delta[1][q];
    b += f * delta[2][q];
  }
  sum[0] += r;
  sum[1] += g;
  sum[2] += b;
}

// Checks the data (all finite) and finds max_i,c rho_ic * sum_j F_ij over all ranks.
void CheckSystem(MPI_Comm comm, const LocalSystem &s, SolverResult &result) {
  const size_t n = size_t(s.n);
  if (s.reflectance.size() != 3 * n || s.emission.size() != 3 * n)
    RAD_FATAL("LocalSystem: reflectance and emission need 3 values per patch");
  for (size_t k = 0; k < 3 * n; ++k)
    if (!std::isfinite(s.reflectance[k]) || !std::isfinite(s.emission[k]))
      throw InputError("patch " + std::to_string(k / 3) + " has a non-finite reflectance or emission");
  std::vector<double> rowSum(s.rows.size());
  std::vector<char> rowFinite(s.rows.size());
  tbb::parallel_for(size_t(0), s.rows.size(), [&](size_t r) {
    const RowOfF row = Row(s, r);
    double sum = 0;
    for (long long j = 0; j < s.n; ++j) sum += Entry(row, j);
    rowSum[r] = sum;
    rowFinite[r] = std::isfinite(sum);
  });
  struct {
    double value;
    int row;
  } local{-1.0, -1}, global{};
  long long badRow = -1;
  for (size_t r = 0; r < s.rows.size(); ++r) {
    if (!rowFinite[r]) {
      if (badRow < 0) badRow = s.rows[r];
      continue;
    }
    const size_t i = size_t(s.rows[r]);
    const double rho = std::max({s.reflectance[3 * i], s.reflectance[3 * i + 1], s.reflectance[3 * i + 2]});
    if (rho * rowSum[r] > local.value) local = {rho * rowSum[r], int(i)};
  }
  long long firstBad = 0;
  const long long mine = badRow < 0 ? s.n : badRow;
  RAD_MPI(MPI_Allreduce(&mine, &firstBad, 1, MPI_LONG_LONG, MPI_MIN, comm));
  if (firstBad < s.n) throw InputError("row " + std::to_string(firstBad) + " of F holds non-finite values");
  RAD_MPI(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
  result.contractionBound = std::max(global.value, 0.0);
  result.contractionRow = global.row;
}

// Every rank's rows, in rank order, so that the gathered values can be put back in place.
struct Exchange {
  std::vector<int> counts, displacements;  // in doubles (3 per row)
  std::vector<long long> allRows;          // rows of rank 0, then rank 1, ...
};

Exchange MakeExchange(MPI_Comm comm, const std::vector<long long> &rows) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  Exchange e;
  std::vector<int> rowCounts(size_t(size), 0), rowDispl(size_t(size), 0);
  const int mine = int(rows.size());
  RAD_MPI(MPI_Allgather(&mine, 1, MPI_INT, rowCounts.data(), 1, MPI_INT, comm));
  long long total = 0;
  for (int r = 0; r < size; ++r) {
    rowDispl[size_t(r)] = int(total);
    total += rowCounts[size_t(r)];
  }
  e.allRows.resize(size_t(total));
  RAD_MPI(MPI_Allgatherv(rows.data(), mine, MPI_LONG_LONG, e.allRows.data(), rowCounts.data(), rowDispl.data(),
                         MPI_LONG_LONG, comm));
  e.counts.resize(size_t(size));
  e.displacements.resize(size_t(size));
  for (int r = 0; r < size; ++r) {
    e.counts[size_t(r)] = 3 * rowCounts[size_t(r)];
    e.displacements[size_t(r)] = 3 * rowDispl[size_t(r)];
  }
  return e;
}

// One sweep over this rank's rows. `start` is the iterate being measured (B^k); `x` receives the rank's new
// values (Gauss-Seidel reads them back as it goes). Fills `packed` (3 per local row) and returns the rank's
// max residual of `start`, relative to maxEmission.
double Sweep(const LocalSystem &s, SolverMethod method, const ChannelVectors &start, ChannelVectors &x,
             std::vector<double> &packed, double maxEmission) {
  const size_t m = s.rows.size();
  std::vector<double> residual(m, 0.0);
  auto update = [&](size_t r, const double t[3], const double sum[3]) {
    const size_t i = size_t(s.rows[r]);
    double worst = 0;
    for (int c = 0; c < 3; ++c) {
      const double e = s.emission[3 * i + size_t(c)], rho = s.reflectance[3 * i + size_t(c)];
      worst = std::max(worst, std::fabs(e + rho * t[c] - start.c[c][i]));
      packed[3 * r + size_t(c)] = e + rho * sum[c];
    }
    residual[r] = worst / maxEmission;
  };
  if (method == SolverMethod::kJacobi) {
    std::vector<double> ts(3 * m);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, m, kRowGrain), [&](const tbb::blocked_range<size_t> &range) {
      DotRows(s, range.begin(), range.size(), start.View(), &ts[3 * range.begin()]);
      for (size_t r = range.begin(); r != range.end(); ++r) update(r, &ts[3 * r], &ts[3 * r]);
    });
  } else {
    std::vector<double> sums(3 * kGaussSeidelBlock), ts(3 * kGaussSeidelBlock);
    std::array<std::vector<double>, 3> delta;  // change of the block's rows so far, per channel
    for (auto &d : delta) d.assign(kGaussSeidelBlock, 0.0);
    for (size_t begin = 0; begin < m; begin += kGaussSeidelBlock) {
      const size_t end = std::min(m, begin + kGaussSeidelBlock);
      // In parallel: each row against B^k (for its residual) and against the newest values so far.
      tbb::parallel_for(tbb::blocked_range<size_t>(begin, end, kRowGrain), [&](const tbb::blocked_range<size_t> &range) {
        const size_t k = range.begin() - begin;
        Dot2Rows(s, range.begin(), range.size(), start.View(), x.View(), &ts[3 * k], &sums[3 * k]);
      });
      // In order: add what the block's earlier rows changed, then publish the row's new value.
      for (size_t r = begin; r < end; ++r) {
        double *sum = &sums[3 * (r - begin)];
        if (s.f64) CorrectForBlock(s.f64 + r * size_t(s.n), &s.rows[begin], r - begin, delta, sum);
        else CorrectForBlock(s.f32 + r * size_t(s.n), &s.rows[begin], r - begin, delta, sum);
        update(r, &ts[3 * (r - begin)], sum);
        const size_t i = size_t(s.rows[r]);
        for (int c = 0; c < 3; ++c) delta[c][r - begin] = packed[3 * r + size_t(c)] - start.c[c][i];
      }
      for (size_t r = begin; r < end; ++r)
        for (int c = 0; c < 3; ++c) x.c[c][size_t(s.rows[r])] = packed[3 * r + size_t(c)];
    }
  }
  double worst = 0;
  for (double v : residual) worst = std::max(worst, std::isnan(v) ? HUGE_VAL : v);
  return worst;
}

std::vector<double> Interleave(const ChannelVectors &v, size_t n) {
  std::vector<double> out(3 * n);
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) out[3 * i + size_t(c)] = v.c[c][i];
  return out;
}

}  // namespace

SolverResult SolveRadiosity(MPI_Comm comm, const LocalSystem &s, const SolverOptions &options, PhaseTimers &timers) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const size_t n = size_t(s.n);
  SolverResult result;
  Exchange exchange;
  double maxEmission = 0;
  {
    ScopedPhase phase(timers, "solve setup");
    CheckSystem(comm, s, result);
    exchange = MakeExchange(comm, s.rows);
    for (double e : s.emission) maxEmission = std::max(maxEmission, std::fabs(e));
  }
  if (rank == 0 && options.printProgress && result.contractionBound >= 1)
    std::fprintf(stderr,
                 "radiosity: warning: reflectance x row sum of F reaches %.6g (patch %lld); the iteration converges "
                 "only if the spectral radius is below 1\n",
                 result.contractionBound, result.contractionRow);
  if (maxEmission == 0) {  // nothing emits: B = 0 exactly
    result.radiance.assign(3 * n, 0.0);
    result.message = "no patch emits: B = 0";
    return result;
  }

  ChannelVectors x(n), start(n);
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) x.c[c][i] = s.emission[3 * i + size_t(c)];
  std::vector<double> packed(3 * s.rows.size()), gathered(3 * exchange.allRows.size());

  for (int k = 0;; ++k) {  // iterate B^k is in x at the top of the loop
    start = x;
    double localResidual, residual = 0;
    {
      ScopedPhase phase(timers, "solve sweeps");
      localResidual = Sweep(s, options.method, start, x, packed, maxEmission);
    }
    ++result.sweeps;
    {
      ScopedPhase phase(timers, "solve exchange");
      RAD_MPI(MPI_Allreduce(&localResidual, &residual, 1, MPI_DOUBLE, MPI_MAX, comm));
    }
    if (k == 0) result.initialResidual = residual;
    else result.residuals.push_back(residual);
    if (rank == 0 && options.printProgress)
      std::fprintf(stderr, "radiosity: solve: iteration %d: relative residual %.3e\n", k, residual);

    const bool converged = residual < options.tolerance;
    const bool diverged = !std::isfinite(residual) ||
                          (k > 0 && residual > kDivergenceGrowth * std::max(result.initialResidual, options.tolerance));
    if (converged || diverged || k == options.maxIterations) {
      result.iterations = k;
      result.finalResidual = residual;
      result.radiance = Interleave(start, n);
      char text[256];
      if (converged) {
        result.status = SolverStatus::kConverged;
        std::snprintf(text, sizeof text, "converged: relative residual %.3e < %.3e after %d iteration(s)", residual,
                      options.tolerance, k);
      } else if (diverged) {
        result.status = SolverStatus::kDiverged;
        std::snprintf(text, sizeof text,
                      "diverged: relative residual grew from %.3e to %.3e in %d iteration(s); reflectance x row sum "
                      "of F reaches %.6g at patch %lld (rows of F summing above 1, or reflectance >= 1?)",
                      result.initialResidual, residual, k, result.contractionBound, result.contractionRow);
      } else {
        result.status = SolverStatus::kMaxIterations;
        std::snprintf(text, sizeof text,
                      "not converged: relative residual %.3e is still above %.3e after %d iteration(s) "
                      "(raise --max-iterations or --tolerance)",
                      residual, options.tolerance, k);
      }
      result.message = text;
      return result;
    }
    {
      ScopedPhase phase(timers, "solve exchange");
      RAD_MPI(MPI_Allgatherv(packed.data(), int(packed.size()), MPI_DOUBLE, gathered.data(), exchange.counts.data(),
                             exchange.displacements.data(), MPI_DOUBLE, comm));
    }
    for (size_t q = 0; q < exchange.allRows.size(); ++q)
      for (int c = 0; c < 3; ++c) x.c[c][size_t(exchange.allRows[q])] = gathered[3 * q + size_t(c)];
  }
}

}  // namespace rad
