// The inner loop of the solver: consecutive rows of F against the three colour channels of one vector (Jacobi)
// or of two vectors at once (Gauss-Seidel: the iterate being measured and the newest values), so that F is
// streamed from memory once per sweep whatever the method. Rows are taken a few at a time and columns in tiles
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

// The same against x and y in one pass over f.
void RowsDot2(const double *f, long long rows, long long n, Channels x, Channels y, double *outX, double *outY);
void RowsDot2(const float *f, long long rows, long long n, Channels x, Channels y, double *outX, double *outY);

}  // namespace rad
