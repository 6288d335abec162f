#include "solver/radiosity_solver.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

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

// Rows per Gauss-Seidel block. Rank-local Gauss-Seidel needs, for row i, F_i . B_newest, where B_newest is the
// sweep's starting iterate plus the changes delta already made to the rank's earlier rows in this sweep. So
// each row is taken as F_i . B_start (which its residual needs anyway) plus F_i . delta. The rows of a block
// compute both in parallel, the second only over the columns before the block (delta is zero beyond the rows
// already done, so this is about half a row on average); then, in order, each row adds what the block's own
// earlier rows changed. The result is exact rank-local Gauss-Seidel for any block size; the size only trades
// synchronisation against the O(block^2) in-order correction.
constexpr size_t kGaussSeidelBlock = 64;
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

void DotRowsAndPrefix(const LocalSystem &s, size_t first, size_t count, Channels x, Channels y, long long yColumns,
                      double *outX, double *outY) {
  const size_t offset = first * size_t(s.n);
  if (s.f64) RowsDotAndPrefix(s.f64 + offset, (long long)count, s.n, x, y, yColumns, outX, outY);
  else RowsDotAndPrefix(s.f32 + offset, (long long)count, s.n, x, y, yColumns, outX, outY);
}

double Entry(RowOfF row, long long j) { return row.f64 ? row.f64[j] : double(row.f32[j]); }

// Gauss-Seidel within a block: what the block's first `done` rows (global indices `blockRows`) changed,
// seen through this row of F.
template <typename T>
void CorrectForBlock(const T *row, const long long *blockRows, size_t done, Channels delta, double sum[3]) {
  double r = 0, g = 0, b = 0;
  for (size_t q = 0; q < done; ++q) {
    const size_t j = size_t(blockRows[q]);
    const double f = double(row[j]);
    r += f * delta.r[j];
    g += f * delta.g[j];
    b += f * delta.b[j];
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

// Sweeps over this rank's rows. Each fills `packed` with the rank's new values (3 per local row) and returns
// the rank's max residual relative to maxEmission.
struct SweepContext {
  const LocalSystem &s;
  std::vector<double> &packed;
  double maxEmission;
  std::vector<double> residual;  // per local row

  // Row r's new values from its sum F_r . B, and the residual |E + rho t - old| of the values `old`, where t is
  // the product of row r with the vector whose residual is measured.
  void Update(size_t r, const double t[3], const double sum[3], Channels old) {
    const size_t i = size_t(s.rows[r]);
    const double *oldValues[3] = {old.r, old.g, old.b};
    double worst = 0;
    for (int c = 0; c < 3; ++c) {
      const double e = s.emission[3 * i + size_t(c)], rho = s.reflectance[3 * i + size_t(c)];
      worst = std::max(worst, std::fabs(e + rho * t[c] - oldValues[c][i]));
      packed[3 * r + size_t(c)] = e + rho * sum[c];
    }
    residual[r] = worst / maxEmission;
  }
  double Worst() const {
    double worst = 0;
    for (double v : residual) worst = std::max(worst, std::isnan(v) ? HUGE_VAL : v);
    return worst;
  }
  // In order over the block's rows: adds to each row's sum what the block's earlier rows changed (delta, at
  // their global indices), makes the row's new values, and records its own change in delta.
  void FinishBlock(size_t begin, size_t end, double *ts, double *sums, ChannelVectors &delta, Channels old) {
    for (size_t r = begin; r < end; ++r) {
      double *t = &ts[3 * (r - begin)], *sum = &sums[3 * (r - begin)];
      if (s.f64) CorrectForBlock(s.f64 + r * size_t(s.n), &s.rows[begin], r - begin, delta.View(), sum);
      else CorrectForBlock(s.f32 + r * size_t(s.n), &s.rows[begin], r - begin, delta.View(), sum);
      if (t != sum)
        for (int c = 0; c < 3; ++c) sum[c] += t[c];
      Update(r, t, sum, old);
      const size_t i = size_t(s.rows[r]);
      const double *oldValues[3] = {old.r, old.g, old.b};
      for (int c = 0; c < 3; ++c) delta.c[c][i] = packed[3 * r + size_t(c)] - oldValues[c][i];
    }
  }
};

// Jacobi: every row from B^k (`start`); the residual is that of B^k.
double JacobiSweep(SweepContext &ctx, const ChannelVectors &start) {
  const size_t m = ctx.s.rows.size();
  std::vector<double> ts(3 * m);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, m, kRowGrain), [&](const tbb::blocked_range<size_t> &range) {
    DotRows(ctx.s, range.begin(), range.size(), start.View(), &ts[3 * range.begin()]);
    for (size_t r = range.begin(); r != range.end(); ++r) ctx.Update(r, &ts[3 * r], &ts[3 * r], start.View());
  });
  return ctx.Worst();
}

// Gauss-Seidel, one pass over F: each row uses the newest values in `x`, which it updates in place. The
// residual is each row's own at its update, max|E + rho F_r . x - x_r| over the values x held just then (the
// usual Gauss-Seidel residual: it measures how far each row was from its equation, not the residual of one
// iterate), so it steers the iteration but does not decide convergence.
double GaussSeidelSweep(SweepContext &ctx, ChannelVectors &x) {
  const LocalSystem &s = ctx.s;
  const size_t m = s.rows.size();
  std::vector<double> sums(3 * kGaussSeidelBlock);
  ChannelVectors delta(size_t(s.n));  // the block's changes so far, at their global indices
  for (size_t begin = 0; begin < m; begin += kGaussSeidelBlock) {
    const size_t end = std::min(m, begin + kGaussSeidelBlock);
    tbb::parallel_for(tbb::blocked_range<size_t>(begin, end, kRowGrain), [&](const tbb::blocked_range<size_t> &range) {
      DotRows(s, range.begin(), range.size(), x.View(), &sums[3 * (range.begin() - begin)]);
    }, tbb::static_partitioner());
    ctx.FinishBlock(begin, end, sums.data(), sums.data(), delta, x.View());
    for (size_t r = begin; r < end; ++r)
      for (int c = 0; c < 3; ++c) x.c[c][size_t(s.rows[r])] = ctx.packed[3 * r + size_t(c)];
  }
  return ctx.Worst();
}

// Gauss-Seidel that also measures the residual of B^k (`start`), in the same pass over F: row r's newest
// product is F_r . B^k (which the residual needs) plus F_r . delta, delta being the changes already made this
// sweep, which are non-zero only at the rank's rows done so far, so only the columns before the block are
// read against it (about half a row on average). The result is the same Gauss-Seidel step.
double MeasuredGaussSeidelSweep(SweepContext &ctx, const ChannelVectors &start) {
  const LocalSystem &s = ctx.s;
  const size_t m = s.rows.size();
  std::vector<double> sums(3 * kGaussSeidelBlock), ts(3 * kGaussSeidelBlock);
  ChannelVectors delta(size_t(s.n));  // B_newest - B^k
  for (size_t begin = 0; begin < m; begin += kGaussSeidelBlock) {
    const size_t end = std::min(m, begin + kGaussSeidelBlock);
    // Rows are in increasing order, so every row done before this block has a column below `done`.
    const long long done = begin == 0 ? 0 : s.rows[begin - 1] + 1;
    tbb::parallel_for(tbb::blocked_range<size_t>(begin, end, kRowGrain), [&](const tbb::blocked_range<size_t> &range) {
      const size_t k = range.begin() - begin;
      DotRowsAndPrefix(s, range.begin(), range.size(), start.View(), delta.View(), done, &ts[3 * k], &sums[3 * k]);
    }, tbb::static_partitioner());
    ctx.FinishBlock(begin, end, ts.data(), sums.data(), delta, start.View());
  }
  return ctx.Worst();
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

  // Gauss-Seidel sweeps measure only their own rows' residuals; once those fall below the tolerance (or the
  // iteration budget is nearly spent), the sweeps also measure the residual of the iterate they start from.
  bool measure = options.method == SolverMethod::kJacobi || options.maxIterations == 0;
  for (int k = 0;; ++k) {  // iterate B^k is in x at the top of the loop
    start = x;
    const bool measured = measure;
    double localResidual, residual = 0;
    {
      ScopedPhase phase(timers, "solve sweeps");
      SweepContext ctx{s, packed, maxEmission, std::vector<double>(s.rows.size(), 0.0)};
      if (options.method == SolverMethod::kJacobi) localResidual = JacobiSweep(ctx, start);
      else if (measured) localResidual = MeasuredGaussSeidelSweep(ctx, start);
      else localResidual = GaussSeidelSweep(ctx, x);
    }
    ++result.sweeps;
    {
      ScopedPhase phase(timers, "solve exchange");
      RAD_MPI(MPI_Allreduce(&localResidual, &residual, 1, MPI_DOUBLE, MPI_MAX, comm));
    }
    if (k == 0) result.initialResidual = residual;
    else result.residuals.push_back(residual);
    if (rank == 0 && options.printProgress)
      std::fprintf(stderr, "radiosity: solve: iteration %d: relative residual %.3e%s\n", k, residual,
                   measured ? "" : " (Gauss-Seidel: each row at its update)");

    const bool converged = measured && residual < options.tolerance;
    measure = measure || residual < options.tolerance || k + 1 >= options.maxIterations;
    const bool diverged = !std::isfinite(residual) ||
                          (k > 0 && residual > kDivergenceGrowth * std::max(result.initialResidual, options.tolerance));
    if (converged || diverged || (measured && k >= options.maxIterations)) {
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
