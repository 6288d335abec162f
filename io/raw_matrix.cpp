#include "io/raw_matrix.h"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "io/radiosity_file.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/memory_budget.h"
#include "util/mpi_check.h"

namespace rad {

namespace {

constexpr MPI_Offset kHeaderBytes = 4;

// Calls `io(begin, count, rowType)` for each block of this rank's rows (evenly spaced rows, described by one
// strided file view per block), in blocks of at most ~256 MiB and within an int count of doubles; every rank
// makes the same number of calls, as collective I/O needs.
template <typename Io>
void ForEachRowBlock(MPI_Comm comm, MPI_File fh, long long n, const std::vector<long long> &rows, Io &&io,
                     long long blockEntries = (256LL << 20) / 8) {
  const RowSequence seq = AsSequence(rows);
  const long long rowLimit = std::max<long long>(1, std::min<long long>(blockEntries, INT_MAX) / n);
  long long rounds = (seq.count + rowLimit - 1) / rowLimit, maxRounds = 0;
  RAD_MPI(MPI_Allreduce(&rounds, &maxRounds, 1, MPI_LONG_LONG, MPI_MAX, comm));
  MPI_Datatype rowType;
  RAD_MPI(MPI_Type_contiguous(int(n), MPI_DOUBLE, &rowType));
  RAD_MPI(MPI_Type_commit(&rowType));
  for (long long round = 0; round < maxRounds; ++round) {
    const long long begin = std::min(seq.count, round * rowLimit);
    const long long count = std::min(seq.count, begin + rowLimit) - begin;
    // File view: `count` rows, `step` rows apart, starting at this block's first row.
    MPI_Datatype fileType;
    const MPI_Aint strideBytes = MPI_Aint(seq.step) * MPI_Aint(n) * 8;
    RAD_MPI(MPI_Type_create_hvector(int(std::max<long long>(count, 1)), 1, strideBytes, rowType, &fileType));
    RAD_MPI(MPI_Type_commit(&fileType));
    const MPI_Offset displacement = kHeaderBytes + MPI_Offset(seq.first + begin * seq.step) * MPI_Offset(n) * 8;
    RAD_MPI(MPI_File_set_view(fh, displacement, MPI_DOUBLE, fileType, "native", MPI_INFO_NULL));
    io(begin, count, rowType);
    RAD_MPI(MPI_Type_free(&fileType));
  }
  RAD_MPI(MPI_Type_free(&rowType));
}

// Writes this rank's rows, handing each block's float64 values to MPI I/O as `values(begin, count)` gives them.
template <typename Values>
void WriteRawRows(MPI_Comm comm, const std::string &path, long long n, const std::vector<long long> &rows,
                  long long blockEntries, Values &&values) {
  static_assert(sizeof(double) == 8, "raw format stores float64");
  if (n > INT32_MAX) throw InputError(path + ": N does not fit the raw format's int32 header");
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  PartialMpiFile out(comm, path);
  MPI_File fh = out.Open();

  const int32_t header32 = int32_t(n);  // x86-64 and POWER9 (ppc64le) are little-endian
  RAD_MPI(MPI_File_write_at_all(fh, 0, rank == 0 ? &header32 : nullptr, rank == 0 ? 1 : 0, MPI_INT32_T,
                                MPI_STATUS_IGNORE));

  ForEachRowBlock(
      comm, fh, n, rows,
      [&](long long begin, long long count, MPI_Datatype rowType) {
        const double *data = count > 0 ? values(begin, count) : nullptr;
        RAD_MPI(MPI_File_write_at_all(fh, 0, data, int(count), rowType, MPI_STATUS_IGNORE));
      },
      blockEntries);
  out.Commit(kHeaderBytes + MPI_Offset(n) * MPI_Offset(n) * 8);
}

}  // namespace

void WriteRawMatrix(MPI_Comm comm, const std::string &path, const FormFactorRows &f) {
  const long long n = f.n;
  if (f.precision == Precision::kDouble) {
    WriteRawRows(comm, path, n, f.rows, (256LL << 20) / 8,
                 [&](long long begin, long long) { return f.f64.data() + size_t(begin) * size_t(n); });
    return;
  }
  std::vector<double> wide;
  WriteRawRows(comm, path, n, f.rows, kRawWideningEntries, [&](long long begin, long long count) {
    const float *first = f.f32.data() + size_t(begin) * size_t(n);
    wide.assign(first, first + size_t(count) * size_t(n));
    return static_cast<const double *>(wide.data());
  });
}

std::vector<double> ReadRawMatrixRows(MPI_Comm comm, const std::string &path, long long n,
                                      const std::vector<long long> &rows) {
  std::vector<double> local;
  AllocateOnEveryRank(comm, "the rank's rows of F", [&] { local.resize(rows.size() * size_t(n)); });
  MPI_File fh;
  if (MPI_File_open(comm, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
    throw InputError(path + ": cannot open the raw matrix file");
  ForEachRowBlock(comm, fh, n, rows, [&](long long begin, long long count, MPI_Datatype rowType) {
    double *data = count > 0 ? local.data() + size_t(begin) * size_t(n) : nullptr;
    RAD_MPI(MPI_File_read_at_all(fh, 0, data, int(count), rowType, MPI_STATUS_IGNORE));
  });
  RAD_MPI(MPI_File_close(&fh));
  return local;
}

void ReadRawMatrixRowBlocks(MPI_Comm comm, const std::string &path, long long n, const std::vector<long long> &rows,
                            const std::function<void(long long, long long, const double *)> &take) {
  std::vector<double> block;
  AllocateOnEveryRank(comm, "a block of the raw matrix's rows",
                      [&] { block.resize(size_t(std::max<long long>(n, std::min<long long>(kRawWideningEntries, (long long)rows.size() * n)))); });
  MPI_File fh;
  if (MPI_File_open(comm, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
    throw InputError(path + ": cannot open the raw matrix file");
  ForEachRowBlock(
      comm, fh, n, rows,
      [&](long long begin, long long count, MPI_Datatype rowType) {
        RAD_MPI(MPI_File_read_at_all(fh, 0, count > 0 ? block.data() : nullptr, int(count), rowType, MPI_STATUS_IGNORE));
        if (count > 0) take(begin, count, block.data());
      },
      kRawWideningEntries);
  RAD_MPI(MPI_File_close(&fh));
}

}  // namespace rad
