#include "solver/radiosity_solver.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>

#include "solver/channel_vectors.h"
#include "solver/csr_solver.h"
#include "solver/krylov_solver.h"
#include "solver/row_kernels.h"
#include "solver/solve_iteration.h"
#include "solver/solver_common.h"
#include "util/error.h"
#include "util/mpi_check.h"

namespace rad {

SolverMethod ParseSolverMethod(const std::string &name) {
  if (name == "jacobi") return SolverMethod::kJacobi;
  if (name == "gauss-seidel") return SolverMethod::kGaussSeidel;
  if (name == "gmres") return SolverMethod::kGmres;
  throw InputError("--solver must be 'jacobi', 'gauss-seidel' or 'gmres', not '" + name + "'");
}

const char *SolverMethodName(SolverMethod method) {
  switch (method) {
    case SolverMethod::kJacobi: return "jacobi";
    case SolverMethod::kGaussSeidel: return "gauss-seidel";
    case SolverMethod::kGmres: return "gmres";
  }
  return "?";
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

// Rows [first, first + count) of the rank's block against x (and y).
void DotRows(const LocalSystem &s, size_t first, size_t count, Channels x, double *out) {
  const size_t offset = first * size_t(s.F->n);
  if (s.F->F64()) RowsDot(s.F->F64() + offset, (long long)count, s.F->n, x, out);
  else RowsDot(s.F->F32() + offset, (long long)count, s.F->n, x, out);
}

void DotRowsAndPrefix(const LocalSystem &s, size_t first, size_t count, Channels x, Channels y, long long yColumns,
                      double *outX, double *outY) {
  const size_t offset = first * size_t(s.F->n);
  if (s.F->F64()) RowsDotAndPrefix(s.F->F64() + offset, (long long)count, s.F->n, x, y, yColumns, outX, outY);
  else RowsDotAndPrefix(s.F->F32() + offset, (long long)count, s.F->n, x, y, yColumns, outX, outY);
}

// The block's own columns of its rows (the lower triangle: row k's entries for the block's rows before it),
// copied by the threads right after their rows were streamed, while those rows are still in cache, so that the
// in-order correction below reads a few KiB instead of walking the rows in memory one cache miss at a time.
struct BlockTriangle {
  std::vector<double> f;  // kGaussSeidelBlock x kGaussSeidelBlock, row-major
  BlockTriangle() : f(kGaussSeidelBlock * kGaussSeidelBlock) {}
  template <typename T>
  void Copy(const T *f0, long long n, const long long *blockRows, size_t first, size_t last) {
    for (size_t k = first; k < last; ++k) {
      const T *row = f0 + k * size_t(n);
      for (size_t q = 0; q < k; ++q) f[k * kGaussSeidelBlock + q] = double(row[blockRows[q]]);
    }
  }
};

// Gauss-Seidel within a block: what the block's first `done` rows (global indices `blockRows`) changed, seen
// through row `done` of the block (its entries in `triangle`).
void CorrectForBlock(const BlockTriangle &triangle, const long long *blockRows, size_t done, Channels delta,
                     double sum[3]) {
  const double *f = &triangle.f[done * kGaussSeidelBlock];
  double r = 0, g = 0, b = 0;
  for (size_t q = 0; q < done; ++q) {
    const size_t j = size_t(blockRows[q]);
    r += f[q] * delta.r[j];
    g += f[q] * delta.g[j];
    b += f[q] * delta.b[j];
  }
  sum[0] += r;
  sum[1] += g;
  sum[2] += b;
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
    residual[r] = UpdateRow(s, r, t, sum, old, &packed[3 * r]) / maxEmission;
  }
  double Worst() const {
    double worst = 0;
    for (double v : residual) worst = std::max(worst, std::isnan(v) ? HUGE_VAL : v);
    return worst;
  }
  // In order over the block's rows: adds to each row's sum what the block's earlier rows changed (delta, at
  // their global indices), makes the row's new values, and records its own change in delta.
  // Copies rows [first, last) of the block starting at `begin` into `triangle` (called by the threads).
  void CopyTriangle(size_t begin, size_t first, size_t last, BlockTriangle &triangle) const {
    const size_t offset = begin * size_t(s.F->n);
    if (s.F->F64()) triangle.Copy(s.F->F64() + offset, s.F->n, &s.F->rows[begin], first - begin, last - begin);
    else triangle.Copy(s.F->F32() + offset, s.F->n, &s.F->rows[begin], first - begin, last - begin);
  }
  void FinishBlock(size_t begin, size_t end, double *ts, double *sums, const BlockTriangle &triangle,
                   ChannelVectors &delta, Channels old) {
    for (size_t r = begin; r < end; ++r) {
      double *t = &ts[3 * (r - begin)], *sum = &sums[3 * (r - begin)];
      CorrectForBlock(triangle, &s.F->rows[begin], r - begin, delta.View(), sum);
      if (t != sum)
        for (int c = 0; c < 3; ++c) sum[c] += t[c];
      Update(r, t, sum, old);
      const size_t i = size_t(s.F->rows[r]);
      const double *oldValues[3] = {old.r, old.g, old.b};
      for (int c = 0; c < 3; ++c) delta.c[c][i] = packed[3 * r + size_t(c)] - oldValues[c][i];
    }
  }
};

// Jacobi: every row from B^k (`start`); the residual is that of B^k.
double JacobiSweep(SweepContext &ctx, const ChannelVectors &start) {
  const size_t m = ctx.s.F->rows.size();
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
  const size_t m = s.F->rows.size();
  std::vector<double> sums(3 * kGaussSeidelBlock);
  BlockTriangle triangle;
  ChannelVectors delta(size_t(s.F->n));  // the block's changes so far, at their global indices
  for (size_t begin = 0; begin < m; begin += kGaussSeidelBlock) {
    const size_t end = std::min(m, begin + kGaussSeidelBlock);
    tbb::parallel_for(tbb::blocked_range<size_t>(begin, end, kRowGrain), [&](const tbb::blocked_range<size_t> &range) {
      for (size_t first = range.begin(); first < range.end(); first += kRowGrain) {  // copy while cached
        const size_t last = std::min(range.end(), first + kRowGrain);
        DotRows(s, first, last - first, x.View(), &sums[3 * (first - begin)]);
        ctx.CopyTriangle(begin, first, last, triangle);
      }
    }, tbb::static_partitioner());
    ctx.FinishBlock(begin, end, sums.data(), sums.data(), triangle, delta, x.View());
    for (size_t r = begin; r < end; ++r)
      for (int c = 0; c < 3; ++c) x.c[c][size_t(s.F->rows[r])] = ctx.packed[3 * r + size_t(c)];
  }
  return ctx.Worst();
}

// Gauss-Seidel that also measures the residual of B^k (`start`), in the same pass over F: row r's newest
// product is F_r . B^k (which the residual needs) plus F_r . delta, delta being the changes already made this
// sweep, which are non-zero only at the rank's rows done so far, so only the columns before the block are
// read against it (about half a row on average). The result is the same Gauss-Seidel step.
double MeasuredGaussSeidelSweep(SweepContext &ctx, const ChannelVectors &start) {
  const LocalSystem &s = ctx.s;
  const size_t m = s.F->rows.size();
  std::vector<double> sums(3 * kGaussSeidelBlock), ts(3 * kGaussSeidelBlock);
  BlockTriangle triangle;
  ChannelVectors delta(size_t(s.F->n));  // B_newest - B^k
  for (size_t begin = 0; begin < m; begin += kGaussSeidelBlock) {
    const size_t end = std::min(m, begin + kGaussSeidelBlock);
    // Rows are in increasing order, so every row done before this block has a column below `done`.
    const long long done = begin == 0 ? 0 : s.F->rows[begin - 1] + 1;
    tbb::parallel_for(tbb::blocked_range<size_t>(begin, end, kRowGrain), [&](const tbb::blocked_range<size_t> &range) {
      for (size_t first = range.begin(); first < range.end(); first += kRowGrain) {  // copy while cached
        const size_t last = std::min(range.end(), first + kRowGrain), k = first - begin;
        DotRowsAndPrefix(s, first, last - first, start.View(), delta.View(), done, &ts[3 * k], &sums[3 * k]);
        ctx.CopyTriangle(begin, first, last, triangle);
      }
    }, tbb::static_partitioner());
    ctx.FinishBlock(begin, end, ts.data(), sums.data(), triangle, delta, start.View());
  }
  return ctx.Worst();
}

// The CPU's sweeps for IterateSolve: all values in host memory, the rows' products on the rank's threads.
class HostSweeps {
 public:
  HostSweeps(MPI_Comm comm, const LocalSystem &s, const SolveSetup &setup, SolverMethod method)
      : comm_(comm), s_(s), setup_(setup), method_(method), x_(size_t(s.F->n)), start_(size_t(s.F->n)), packed_(3 * s.F->rows.size()),
        gathered_(3 * setup.exchange.allRows.size()) {
    for (size_t i = 0; i < size_t(s.F->n); ++i)
      for (int c = 0; c < 3; ++c) x_.c[c][i] = s.emission[3 * i + size_t(c)];
  }

  // Gauss-Seidel sweeps measure only their own rows' residuals until the monitor asks for B^k's.
  double Sweep(bool measured) {
    start_ = x_;
    SweepContext ctx{s_, packed_, setup_.maxEmission, std::vector<double>(s_.F->rows.size(), 0.0)};
    if (method_ == SolverMethod::kJacobi) return JacobiSweep(ctx, start_);
    if (measured) return MeasuredGaussSeidelSweep(ctx, start_);
    return GaussSeidelSweep(ctx, x_);
  }

  std::vector<double> Radiance() const { return Interleave(start_, size_t(s_.F->n)); }

  void Exchange() { GatherInto(comm_, setup_.exchange, packed_, gathered_, x_); }

  // B^k between sweeps, for a checkpoint; and the iterate a solve continues from.
  std::vector<double> Iterate() const { return Interleave(x_, size_t(s_.F->n)); }
  void SetIterate(const std::vector<double> &b) { Deinterleave(b, x_); }

 private:
  MPI_Comm comm_;
  const LocalSystem &s_;
  const SolveSetup &setup_;
  SolverMethod method_;
  ChannelVectors x_, start_;  // the newest values, and B^k
  std::vector<double> packed_, gathered_;
};

}  // namespace

SolverResult SolveRadiosity(MPI_Comm comm, const LocalSystem &s, const SolverOptions &options, PhaseTimers &timers) {
  if (options.method == SolverMethod::kGmres) return SolveRadiosityKrylov(comm, s, options, timers);
  if (s.F->IsCsr()) return SolveRadiosityCsr(comm, s, options, timers);
  return IterateSolve(comm, s, options, timers, false, [&](const SolveSetup &setup) {
    return std::make_unique<HostSweeps>(comm, s, setup, options.method);
  });
}

}  // namespace rad
