// The GPU solver's Gauss-Seidel, its row maths written once (RAD_HD: the kernels in cuda/gpu_solver.cu and the
// host reference below use the same functions), so that this machine, without a GPU, can check the algorithm.
//
// What one sweep computes (rank-local Gauss-Seidel, Jacobi between ranks, as the CPU solver):
// the rank's rows, in increasing order, are taken in blocks of b. For row i of a block,
//     B_newest . F_i = F_i . B^k + F_i . D,
// where B^k is the iterate the sweep starts from and D = B_newest - B^k is zero except at the rank's rows
// already updated in this sweep. For the whole block, both products come from one pass over its rows of F: a
// GEMM of (b x n) by the n x 6 matrix [B^k | D], with D holding the changes of the earlier blocks. Then, in
// order over the block's rows, each row adds what the block's own earlier rows q changed,
// sum_q F[i][row q] * d_q (the "diagonal block", a forward substitution), takes its new value
// E_i + rho_i * sum, and records its own change d_i in D. The GEMM's first three columns also give the
// residual of B^k at the row, |E_i + rho_i F_i . B^k - B^k_i|, so every GPU sweep measures the residual of the
// iterate it starts from, at no extra read of F.
// In exact arithmetic this is the CPU solver's Gauss-Seidel step; in floating point the sums are grouped
// differently (GEMM order), so the iterates agree to rounding only, and both converge to the same solution.
#pragma once

#include <math.h>

#include <algorithm>
#include <vector>

#include "util/hd.h"

namespace rad {

// Rows per group in the forward substitution: one warp solves a group's triangle (lane = row), then all the
// block's threads add the group's changes to the rows after it.
constexpr int kSubstitutionGroup = 32;

// A NaN residual must stop the solve, so it counts as infinitely large (fmax would drop it).
RAD_HD RAD_INLINE double WorseResidual(double a, double b) {
  if (isnan(a) || isnan(b)) return HUGE_VAL;
  return a > b ? a : b;
}

// Row i's relative residual of the iterate x (its three channels), from t = F_i . x.
RAD_HD RAD_INLINE double RowResidual(const double e[3], const double rho[3], const double t[3], const double x[3],
                                     double maxEmission) {
  double worst = 0;
  for (int c = 0; c < 3; ++c) worst = WorseResidual(worst, fabs(e[c] + rho[c] * t[c] - x[c]));
  return worst / maxEmission;
}

// acc += sum over q in [qBegin, qEnd), in increasing q, of F[i][blockRows[q]] * d[q] (three channels).
// `fRow` is row i of F; `blockRows` the block's global row indices; `d` the block's changes, 3 per row.
template <typename T>
RAD_HD RAD_INLINE void AddBlockChanges(const T *fRow, const long long *blockRows, int qBegin, int qEnd,
                                       const double *d, double acc[3]) {
  for (int q = qBegin; q < qEnd; ++q) {
    const double f = double(fRow[blockRows[q]]);
    for (int c = 0; c < 3; ++c) acc[c] += f * d[3 * q + c];
  }
}

// Column range [begin, end) of split s of n columns into `splits` (the product kernel's work division).
RAD_HD RAD_INLINE void ColumnSplit(long long n, int splits, int s, long long &begin, long long &end) {
  begin = n * s / splits;
  end = n * (s + 1) / splits;
}

// How many column splits the product kernel uses for `rows` rows of n columns, so that about `targetBlocks`
// thread blocks (of `rowsPerBlock` rows each) run at once, with at least `minColumns` columns per split.
inline int ChooseColumnSplits(long long rows, long long n, int rowsPerBlock, int targetBlocks, int minColumns,
                              int maxSplits) {
  const long long rowBlocks = std::max(1LL, (rows + rowsPerBlock - 1) / rowsPerBlock);
  long long splits = (targetBlocks + rowBlocks - 1) / rowBlocks;
  splits = std::min(splits, std::max(1LL, n / minColumns));
  splits = std::min<long long>(splits, maxSplits);
  return int(std::max(1LL, splits));
}

// One sweep of the GPU's Gauss-Seidel on the host, as specified above: blocks of `blockRows` local rows, the
// block's products with B^k and D first, then the in-order substitution in groups of kSubstitutionGroup rows
// (each group's own triangle first, then its changes added to the block's later rows: the kernel's order, so
// every row adds the changes of the rows before it in increasing order).
//   f: the rank's m rows of F, row-major (m x n); rows: their global indices, ascending;
//   e, rho: emission and reflectance of the local rows (3 per row);
//   b: B^k, n x 3 column-major; d: n x 3 column-major, zero on entry, the sweep's changes on return;
//   packed: the rank's new values (3 per local row).
// Returns the rank's max relative residual of B^k.
template <typename T>
double BlockGaussSeidelSweepHost(const T *f, long long n, const std::vector<long long> &rows, const double *e,
                                 const double *rho, const double *b, double *d, double maxEmission, int blockRows,
                                 double *packed) {
  const long long m = (long long)rows.size();
  const size_t nn = size_t(n);
  double worst = 0;
  std::vector<double> acc, changes;
  for (long long b0 = 0; b0 < m; b0 += blockRows) {
    const int count = int(std::min<long long>(blockRows, m - b0));
    const long long *blockRows_ = rows.data() + b0;
    acc.assign(3 * size_t(count), 0.0);
    changes.assign(3 * size_t(count), 0.0);
    // The product with [B^k | D]: the residual of B^k and the changes of the earlier blocks.
    for (int r = 0; r < count; ++r) {
      const T *fRow = f + size_t(b0 + r) * nn;
      double t[3] = {0, 0, 0}, u[3] = {0, 0, 0};
      for (size_t j = 0; j < nn; ++j)
        for (int c = 0; c < 3; ++c) {
          t[c] += double(fRow[j]) * b[j + size_t(c) * nn];
          u[c] += double(fRow[j]) * d[j + size_t(c) * nn];
        }
      const size_t i = size_t(blockRows_[r]);
      const double x[3] = {b[i], b[i + nn], b[i + 2 * nn]};
      worst = WorseResidual(worst, RowResidual(e + 3 * (b0 + r), rho + 3 * (b0 + r), t, x, maxEmission));
      for (int c = 0; c < 3; ++c) acc[3 * size_t(r) + size_t(c)] = t[c] + u[c];
    }
    // The diagonal block, group by group.
    for (int g0 = 0; g0 < count; g0 += kSubstitutionGroup) {
      const int g1 = std::min(count, g0 + kSubstitutionGroup);
      for (int r = g0; r < g1; ++r) {
        double *a = &acc[3 * size_t(r)];
        AddBlockChanges(f + size_t(b0 + r) * nn, blockRows_, g0, r, changes.data(), a);
        const size_t i = size_t(blockRows_[r]);
        for (int c = 0; c < 3; ++c) {
          const double value = e[3 * (b0 + r) + c] + rho[3 * (b0 + r) + c] * a[c];
          packed[3 * (b0 + r) + c] = value;
          changes[3 * size_t(r) + size_t(c)] = value - b[i + size_t(c) * nn];
        }
      }
      for (int r = g1; r < count; ++r)
        AddBlockChanges(f + size_t(b0 + r) * nn, blockRows_, g0, g1, changes.data(), &acc[3 * size_t(r)]);
    }
    for (int r = 0; r < count; ++r)
      for (int c = 0; c < 3; ++c) d[size_t(blockRows_[r]) + size_t(c) * nn] = changes[3 * size_t(r) + size_t(c)];
  }
  return worst;
}

}  // namespace rad
