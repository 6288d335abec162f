#include "io/sparse_rows.h"

#include <algorithm>

#include "util/error.h"
#include "util/mpi_check.h"

namespace rad {

ExportRows SparseView(const FormFactorRows &f, long long firstRow, double dropBelow) {
  if (!f.rows.empty() && f.rows.back() - f.rows.front() + 1 != (long long)f.rows.size())
    RAD_FATAL("SparseView: the rows are not contiguous (the exports read F by block)");
  ExportRows rows;
  rows.n = f.n;
  rows.firstRow = f.rows.empty() ? firstRow : f.rows.front();
  rows.rowCount = (long long)f.RowCount();
  rows.f64 = f.F64();
  rows.f32 = f.F32();
  if (f.IsCsr()) rows.columns = f.Columns();
  rows.dropBelow = dropBelow;
  return rows;
}

RowCounts CountRows(const ExportRows &rows) {
  RowCounts c;
  c.kept.assign(size_t(rows.rowCount), 0);
  c.dropped.assign(size_t(rows.rowCount), 0.0);
  c.rowSum.assign(size_t(rows.rowCount), 0.0);
  for (long long r = 0; r < rows.rowCount; ++r) {
    long long kept = 0, dropped = 0;
    double droppedSum = 0, sum = 0;  // sequential over j: the same on any number of ranks
    rows.ForEachNonzero(r, [&](long long, double v) {
      sum += v;
      if (rows.Keeps(v)) {
        ++kept;
      } else {
        ++dropped;
        droppedSum += v;
      }
    });
    c.kept[size_t(r)] = kept;
    c.dropped[size_t(r)] = droppedSum;
    c.rowSum[size_t(r)] = sum;
    c.keptTotal += kept;
    c.droppedEntries += dropped;
  }
  return c;
}

std::vector<std::pair<long long, long long>> RowBlocks(MPI_Comm comm, long long rowCount, long long n,
                                                       long long blockEntries) {
  const long long rowsPerBlock = std::max<long long>(1, blockEntries / std::max<long long>(n, 1));
  std::vector<std::pair<long long, long long>> blocks;
  for (long long begin = 0; begin < rowCount; begin += rowsPerBlock)
    blocks.push_back({begin, std::min(rowCount, begin + rowsPerBlock)});
  long long mine = (long long)blocks.size(), most = 0;
  RAD_MPI(MPI_Allreduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, comm));
  while ((long long)blocks.size() < most) blocks.push_back({rowCount, rowCount});
  return blocks;
}

RankOffset ExclusiveScan(MPI_Comm comm, long long value) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  RankOffset o;
  RAD_MPI(MPI_Exscan(&value, &o.before, 1, MPI_LONG_LONG, MPI_SUM, comm));
  if (rank == 0) o.before = 0;  // MPI_Exscan leaves rank 0's result undefined
  RAD_MPI(MPI_Allreduce(&value, &o.total, 1, MPI_LONG_LONG, MPI_SUM, comm));
  return o;
}

DropSummary SummariseDrops(MPI_Comm comm, const ExportRows &rows, const RowCounts &counts) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  DropSummary s;
  long long local[2] = {counts.droppedEntries, counts.keptTotal}, global[2] = {0, 0};
  RAD_MPI(MPI_Allreduce(local, global, 2, MPI_LONG_LONG, MPI_SUM, comm));
  s.entries = global[0];
  s.kept = global[1];
  // N doubles twice on rank 0: small next to the rows themselves.
  int mine = int(rows.rowCount);
  std::vector<int> counts0(static_cast<size_t>(size)), displs(static_cast<size_t>(size), 0);
  RAD_MPI(MPI_Gather(&mine, 1, MPI_INT, counts0.data(), 1, MPI_INT, 0, comm));
  for (int r = 1; r < size; ++r) displs[size_t(r)] = displs[size_t(r) - 1] + counts0[size_t(r) - 1];
  std::vector<double> dropped(rank == 0 ? size_t(rows.n) : 0), sums(rank == 0 ? size_t(rows.n) : 0);
  RAD_MPI(MPI_Gatherv(counts.dropped.data(), mine, MPI_DOUBLE, dropped.data(), counts0.data(), displs.data(),
                      MPI_DOUBLE, 0, comm));
  RAD_MPI(MPI_Gatherv(counts.rowSum.data(), mine, MPI_DOUBLE, sums.data(), counts0.data(), displs.data(), MPI_DOUBLE,
                      0, comm));
  double figures[6] = {0, 0, 0, 0, 0, 0};  // min, mean, max, total, matrix sum, row of the max
  if (rank == 0 && rows.n > 0) {
    double mn = dropped[0], mx = dropped[0], total = 0, matrix = 0;
    long long at = 0;
    for (long long i = 0; i < rows.n; ++i) {
      const double d = dropped[size_t(i)];
      mn = std::min(mn, d);
      if (d > mx) {  // strict: the lowest row wins ties
        mx = d;
        at = i;
      }
      total += d;
      matrix += sums[size_t(i)];
    }
    figures[0] = mn;
    figures[1] = total / double(rows.n);
    figures[2] = mx;
    figures[3] = total;
    figures[4] = matrix;
    figures[5] = double(at);
  }
  RAD_MPI(MPI_Bcast(figures, 6, MPI_DOUBLE, 0, comm));
  s.minRow = figures[0];
  s.meanRow = figures[1];
  s.maxRow = figures[2];
  s.total = figures[3];
  s.matrixSum = figures[4];
  s.maxRowIndex = (long long)figures[5];
  return s;
}

}  // namespace rad
