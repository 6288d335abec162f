// The row driver of the per-entry form-factor steps (pair_kernels.h: every entry (i, j) on its own, then shadow
// rays for the entries that need them), once for every place that runs them: the host's threads
// (kernel_form_factors.cpp, the GPU's stand-in in the tests) and the GPU (cuda/gpu_form_factors.cu). A Backend
// provides
//   long long ChunkRows() const                       rows of F per chunk (at least one)
//   long long StagingEntries() const                  float64 values a float32 row block passes through
//   void ComputeEntries(long long first, long long count)   the chunk's entries and which need rays
//   void TraceRays(long long first, long long count)        the rays of those that do
//   void ReadRows(long long row, long long count, double *to)  `count` rows of the chunk from its row `row`
//   void AddCounters(FormFactorCounters &counters)          its tallies, once at the end
// and this file runs the chunks, times the phases ("form-factor kernel", "visibility rays", "device memory"),
// and makes the rows final: --normalize-rows in double, then float32 rows rounded once.
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

#include "formfactor/cpu_form_factors.h"
#include "formfactor/kernel_form_factors.h"
#include "util/progress.h"
#include "util/timers.h"

namespace rad {

template <typename T, typename Backend>
void ComputeRowsByEntries(Backend &backend, long long m, long long n, bool normalizeRows, std::vector<T> &out,
                          PhaseTimers &timers, FormFactorCounters &counters, const char *progressName,
                          bool showProgress) {
  constexpr bool kDouble = std::is_same_v<T, double>;
  out.assign(size_t(m) * size_t(n), T(0));
  if (m == 0 || n == 0) return;
  const long long chunkRows = backend.ChunkRows();
  const long long stagingRows = std::max(1LL, std::min(chunkRows, backend.StagingEntries() / n));
  std::vector<double> staging(kDouble ? 0 : size_t(stagingRows * n));
  Progress progress(progressName, m, showProgress);
  for (long long first = 0; first < m; first += chunkRows) {
    const long long count = std::min(chunkRows, m - first);
    {
      ScopedPhase phase(timers, "form-factor kernel");
      backend.ComputeEntries(first, count);
    }
    {
      ScopedPhase phase(timers, "visibility rays");
      backend.TraceRays(first, count);
    }
    if constexpr (kDouble) {
      {
        ScopedPhase phase(timers, "device memory");
        backend.ReadRows(0, count, out.data() + size_t(first * n));
      }
      if (normalizeRows)
        for (long long r = first; r < first + count; ++r) NormalizeRow(out.data() + size_t(r * n), n);
    } else {
      // Float rows: whole rows at a time through the staging area, normalised in double, then rounded once.
      ScopedPhase phase(timers, "device memory");
      for (long long piece = 0; piece < count; piece += stagingRows) {
        const long long pieceRows = std::min(stagingRows, count - piece);
        backend.ReadRows(piece, pieceRows, staging.data());
        for (long long r = 0; r < pieceRows; ++r) {
          double *row = staging.data() + size_t(r * n);
          if (normalizeRows) NormalizeRow(row, n);
          std::copy(row, row + n, out.begin() + size_t((first + piece + r) * n));
        }
      }
    }
    progress.Advance(count);
  }
  backend.AddCounters(counters);
}

}  // namespace rad
