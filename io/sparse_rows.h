// What the sparse exporters and importers share: a rank's contiguous block of rows of F, dense or CSR, seen as a
// sparse matrix (entries that are zero or below the drop threshold are left out), row blocks for streaming, the
// offsets of each rank's part of a file, and scattering read entries into a rank's dense rows.
//
// The rows stay the only large allocation (N^2 x bytes / P per rank dense, the stored entries CSR); each exporter
// formats one row block at a time into a buffer of at most about `blockEntries` entries and writes it
// collectively.
#pragma once

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "formfactor/csr_columns.h"
#include "io/radiosity_file.h"

namespace rad {

// Entries per streamed row block (~2M entries: 32 MiB of indices and values, ~100 MiB of MatrixMarket text).
constexpr long long kExportBlockEntries = 2LL << 20;

// The sparse exporters' view of a rank's block of rows of F (FormFactorRows, block distribution): rows
// [firstRow, firstRow + rowCount) of an n x n matrix, dense or CSR, and which of their entries are kept.
struct ExportRows {
  long long n = 0;
  long long firstRow = 0;
  long long rowCount = 0;
  const double *f64 = nullptr;  // exactly one of f64 / f32: rowCount x n dense, or the CSR values
  const float *f32 = nullptr;
  // CSR rows (FormFactorRows::IsCsr): local row r is entries [columns.ptr[r], columns.ptr[r + 1]) of the columns
  // and values, in column order. columns.ptr is null for dense rows.
  CsrColumnsView columns;
  double dropBelow = 0;  // entries with |F_ij| < dropBelow are dropped (0: nothing is dropped)

  // Calls visit(j, F_ij) for every nonzero entry of local row r, in column order (kept or not: see Keeps). A
  // dense row is scanned; a CSR row visits its stored entries only, so exports cost what is stored.
  template <typename Visit>
  void ForEachNonzero(long long r, Visit &&visit) const {
    auto value = [&](size_t k) { return f64 ? f64[k] : double(f32[k]); };
    if (!columns.ptr) {
      for (long long j = 0; j < n; ++j)
        if (const double v = value(size_t(r) * size_t(n) + size_t(j)); v != 0.0) visit(j, v);
      return;
    }
    RowColumnReader column(columns, r);
    for (long long k = columns.ptr[r]; k < columns.ptr[r + 1]; ++k)
      if (const double v = value(size_t(k)); v != 0.0) visit((long long)column(k), v);
  }
  // Exact zeros are never stored; entries below the threshold in magnitude are dropped.
  bool Keeps(double v) const { return v != 0.0 && !(std::fabs(v) < dropBelow); }
};

// The view of `f` (dense or CSR), whose rows must be contiguous (block distribution); `firstRow` is where the
// rank's block starts (BlockBegin: a rank without rows still has a place in the file).
ExportRows SparseView(const FormFactorRows &f, long long firstRow, double dropBelow);

// Per local row: entries kept, and the signed sum of the nonzero entries dropped (the energy lost per row).
struct RowCounts {
  std::vector<long long> kept;
  std::vector<double> dropped;
  std::vector<double> rowSum;    // all entries, kept and dropped
  long long keptTotal = 0;       // this rank
  long long droppedEntries = 0;  // this rank
};
RowCounts CountRows(const ExportRows &rows);

// Collective: this rank's rows in blocks [begin, end) of at most `blockEntries` entries (at least one row), and
// as many blocks on every rank (trailing empty blocks), as collective I/O needs.
std::vector<std::pair<long long, long long>> RowBlocks(MPI_Comm comm, long long rowCount, long long n,
                                                       long long blockEntries);

// Collective: the sum of `value` over lower ranks, and over all ranks.
struct RankOffset {
  long long before = 0, total = 0;
};
RankOffset ExclusiveScan(MPI_Comm comm, long long value);

// Summary over all rows of the dropped energy (collective): min / mean / max of the per-row sums and the row with
// the max (lowest such row). `rows` must be the block distribution (rank order = row order); the per-row sums are
// gathered and added in row order, so the figures do not depend on the number of ranks.
struct DropSummary {
  double minRow = 0, meanRow = 0, maxRow = 0, total = 0, matrixSum = 0;
  long long maxRowIndex = 0, entries = 0, kept = 0;
};
DropSummary SummariseDrops(MPI_Comm comm, const ExportRows &rows, const RowCounts &counts);

// A rank's rows as read by `solve` (any distribution: an evenly spaced sequence), for scattering entries read
// from a sparse file into dense rows.
class RowLookup {
 public:
  explicit RowLookup(const std::vector<long long> &rows) : seq_(AsSequence(rows)) {}
  // Local index of global row i, or -1 if this rank does not own it.
  long long Local(long long i) const {
    const long long d = i - seq_.first;
    if (d < 0 || d % seq_.step != 0) return -1;
    const long long k = d / seq_.step;
    return k < seq_.count ? k : -1;
  }

 private:
  RowSequence seq_;
};

// Byte order of the PETSc format (big-endian) on a little-endian host (x86-64, ppc64le, aarch64).
inline uint32_t ByteSwap32(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t ByteSwap64(uint64_t v) { return __builtin_bswap64(v); }

}  // namespace rad
