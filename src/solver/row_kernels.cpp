#include "solver/row_kernels.h"

#include <algorithm>

#include "util/hd.h"
#include "util/simd.h"


namespace rad {

namespace {

// Four lanes of partial sums as one GCC vector: two SSE2 registers in the baseline build, one AVX register in
// the x86-64-v3 build. Written with vector types because the auto-vectoriser pairs the channels instead.
typedef double Lanes __attribute__((vector_size(32)));
typedef float FloatLanes __attribute__((vector_size(16)));
constexpr long long kLanes = 4;
constexpr long long kStep = 2 * kLanes;
constexpr long long kRowsPerGroup = 8;
constexpr long long kTileColumns = 256;  // a multiple of kStep; 6 vectors x 256 doubles = 12 KiB of L1

RAD_ALWAYS_INLINE Lanes Load(const double *p) {
  Lanes v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

RAD_ALWAYS_INLINE Lanes Load(const float *p) {
  FloatLanes v;
  __builtin_memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, Lanes);
}

RAD_ALWAYS_INLINE double Sum(Lanes v) { return (v[0] + v[1]) + (v[2] + v[3]); }

// Accumulates one row's tile [tile, end) against kVectors vectors into a[] and b[].
template <int kVectors, typename T>
RAD_ALWAYS_INLINE void Tile(const T *row, long long tile, long long end, const Channels *v, Lanes *a, Lanes *b) {
  for (long long j = tile; j < end; j += kStep) {
    const Lanes value0 = Load(row + j), value1 = Load(row + j + kLanes);
    for (int k = 0; k < kVectors; ++k) {
      a[3 * k + 0] += value0 * Load(v[k].r + j);
      a[3 * k + 1] += value0 * Load(v[k].g + j);
      a[3 * k + 2] += value0 * Load(v[k].b + j);
      b[3 * k + 0] += value1 * Load(v[k].r + j + kLanes);
      b[3 * k + 1] += value1 * Load(v[k].g + j + kLanes);
      b[3 * k + 2] += value1 * Load(v[k].b + j + kLanes);
    }
  }
}

// kVectors = 1: x only; 2: x over all columns and y over the columns below yColumns (the tiles that hold
// them; y must be zero from yColumns on). acc[k] holds the lanes of vector k / 3, channel k % 3.
template <int kVectors, typename T>
RAD_ALWAYS_INLINE void Group(const T *f, long long rows, long long n, const Channels *v, long long yColumns,
                             double *const *out) {
  constexpr int kSums = 3 * kVectors;
  Lanes acc[kRowsPerGroup][kSums];
  for (long long q = 0; q < rows; ++q)
    for (int k = 0; k < kSums; ++k) acc[q][k] = Lanes{0, 0, 0, 0};
  // Two sets of lanes per step: independent chains of additions, so the loop is not bound by FMA latency.
  const long long body = n - n % kStep;
  for (long long tile = 0; tile < body; tile += kTileColumns) {
    const long long end = std::min(body, tile + kTileColumns);
    const bool withY = kVectors > 1 && tile < yColumns;
    for (long long q = 0; q < rows; ++q) {
      const T *row = f + q * n;
      Lanes a[kSums], b[kSums];
      for (int k = 0; k < kSums; ++k) {
        a[k] = acc[q][k];
        b[k] = Lanes{0, 0, 0, 0};
      }
      if (withY) Tile<kVectors>(row, tile, end, v, a, b);
      else Tile<1>(row, tile, end, v, a, b);
      for (int k = 0; k < kSums; ++k) acc[q][k] = a[k] + b[k];
    }
  }
  for (long long q = 0; q < rows; ++q) {
    const T *row = f + q * n;
    for (int k = 0; k < kVectors; ++k) {
      double s[3] = {Sum(acc[q][3 * k]), Sum(acc[q][3 * k + 1]), Sum(acc[q][3 * k + 2])};
      const long long tailEnd = k == 0 ? n : std::min(n, std::max(body, yColumns));
      for (long long j = body; j < tailEnd; ++j) {
        const double value = double(row[j]);
        s[0] += value * v[k].r[j];
        s[1] += value * v[k].g[j];
        s[2] += value * v[k].b[j];
      }
      for (int c = 0; c < 3; ++c) out[k][3 * q + c] = s[c];
    }
  }
}

template <int kVectors, typename T>
RAD_ALWAYS_INLINE void AllRows(const T *f, long long rows, long long n, const Channels *v, long long yColumns,
                               double *const *out) {
  for (long long first = 0; first < rows; first += kRowsPerGroup) {
    double *const groupOut[2] = {out[0] + 3 * first, kVectors > 1 ? out[1] + 3 * first : nullptr};
    Group<kVectors>(f + first * n, std::min(kRowsPerGroup, rows - first), n, v, yColumns, groupOut);
  }
}

}  // namespace

RAD_HOST_CLONES void RowsDot(const double *f, long long rows, long long n, Channels x, double *out) {
  double *const o[1] = {out};
  AllRows<1>(f, rows, n, &x, 0, o);
}
RAD_HOST_CLONES void RowsDot(const float *f, long long rows, long long n, Channels x, double *out) {
  double *const o[1] = {out};
  AllRows<1>(f, rows, n, &x, 0, o);
}
RAD_HOST_CLONES void RowsDotAndPrefix(const double *f, long long rows, long long n, Channels x, Channels y,
                                       long long yColumns, double *outX, double *outY) {
  const Channels v[2] = {x, y};
  double *const o[2] = {outX, outY};
  AllRows<2>(f, rows, n, v, yColumns, o);
}
RAD_HOST_CLONES void RowsDotAndPrefix(const float *f, long long rows, long long n, Channels x, Channels y,
                                       long long yColumns, double *outX, double *outY) {
  const Channels v[2] = {x, y};
  double *const o[2] = {outX, outY};
  AllRows<2>(f, rows, n, v, yColumns, o);
}

}  // namespace rad
