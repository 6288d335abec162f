// The inner loop of the solver: consecutive rows of F against the three colour channels of one vector (Jacobi),
// or of one vector over all columns and a second over a leading range of columns (Gauss-Seidel: the iterate
// being measured, and the changes this sweep has made so far), so that F is streamed from memory once per
// sweep whatever the method. Rows are taken a few at a time and columns in tiles
// whose slice of the vectors stays in the L1 cache, so the vectors cost no memory traffic next to F.
// Each row's sum uses the same fixed pattern of partial sums (per column mod 8 within tiles of 256 columns),
// so its result depends neither on threads, ranks nor how rows are grouped. Built twice and picked at run time
// (GCC target_clones): baseline x86-64 and x86-64-v3 (AVX2 + FMA).
#pragma once

namespace rad {

struct Channels {
  const double *r, *g, *b;
};

// For q < rows: out[3q + c] = sum_j f[q n + j] * x.c[j]
void RowsDot(const double *f, long long rows, long long n, Channels x, double *out);
void RowsDot(const float *f, long long rows, long long n, Channels x, double *out);

// The same against x, and in the same pass against y over columns [0, yColumns) (rounded up to whole tiles:
// y must be zero from yColumns on): outY[3q + c] = sum_{j < yColumns} f[q n + j] * y.c[j].
void RowsDotAndPrefix(const double *f, long long rows, long long n, Channels x, Channels y, long long yColumns,
                      double *outX, double *outY);
void RowsDotAndPrefix(const float *f, long long rows, long long n, Channels x, Channels y, long long yColumns,
                      double *outX, double *outY);

}  // namespace rad
