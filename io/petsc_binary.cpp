#include "io/petsc_binary.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "util/agree.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/memory_budget.h"
#include "util/mpi_check.h"

namespace rad {

namespace {

constexpr MPI_Offset kHeaderBytes = 16;

int32_t BigEndianInt(int32_t v) { return int32_t(ByteSwap32(uint32_t(v))); }

// Doubles cross the byte swap as integers, so that no swapped bit pattern is ever held as a floating-point value.
uint64_t BigEndianBits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  return ByteSwap64(bits);
}

double FromBigEndianBits(uint64_t bits) {
  bits = ByteSwap64(bits);
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}

struct PetscHeader {
  long long m = 0, n = 0, nnz = 0;
};

}  // namespace

bool IsPetscMatrixFile(const std::string &path) {
  int32_t head = 0;
  std::ifstream in(path, std::ios::binary);
  return in.read(reinterpret_cast<char *>(&head), 4) && BigEndianInt(head) == kPetscMatFileClassId;
}

void WritePetscBinary(MPI_Comm comm, const std::string &path, const ExportRows &rows, const RowCounts &counts,
                      long long blockEntries) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const long long n = rows.n;
  const RankOffset nnz = ExclusiveScan(comm, counts.keptTotal);
  if (n > INT32_MAX) throw InputError(path + ": N = " + std::to_string(n) + " does not fit PETSc's int32 header");
  if (nnz.total > INT32_MAX)
    throw InputError(path + ": " + std::to_string(nnz.total) + " nonzeros do not fit PETSc's 32-bit indices; use "
                     "--drop-below to keep fewer, or --format csr (64-bit indices)");

  PartialMpiFile out(comm, path);
  MPI_File fh = out.Open();
  const int32_t header[4] = {BigEndianInt(kPetscMatFileClassId), BigEndianInt(int32_t(n)), BigEndianInt(int32_t(n)),
                             BigEndianInt(int32_t(nnz.total))};
  RAD_MPI(MPI_File_write_at_all(fh, 0, header, rank == 0 ? 4 : 0, MPI_INT32_T, MPI_STATUS_IGNORE));

  std::vector<int32_t> lengths(static_cast<size_t>(rows.rowCount));
  for (size_t r = 0; r < lengths.size(); ++r) lengths[r] = BigEndianInt(int32_t(counts.kept[r]));
  RAD_MPI(MPI_File_write_at_all(fh, kHeaderBytes + 4 * MPI_Offset(rows.firstRow), lengths.data(), int(lengths.size()),
                                MPI_INT32_T, MPI_STATUS_IGNORE));
  lengths = {};

  const MPI_Offset indexBase = kHeaderBytes + 4 * MPI_Offset(n);
  const MPI_Offset valueBase = indexBase + 4 * MPI_Offset(nnz.total);
  MPI_Offset written = nnz.before;  // entries before this block, over all ranks
  std::vector<int32_t> indices;
  std::vector<uint64_t> values;
  for (const auto &[begin, end] : RowBlocks(comm, rows.rowCount, n, blockEntries)) {
    indices.clear();
    values.clear();
    for (long long r = begin; r < end; ++r)
      rows.ForEachNonzero(r, [&](long long j, double v) {
        if (!rows.Keeps(v)) return;
        indices.push_back(BigEndianInt(int32_t(j)));
        values.push_back(BigEndianBits(v));
      });
    const int count = int(indices.size());
    RAD_MPI(MPI_File_write_at_all(fh, indexBase + 4 * written, indices.data(), count, MPI_INT32_T, MPI_STATUS_IGNORE));
    RAD_MPI(MPI_File_write_at_all(fh, valueBase + 8 * written, values.data(), count, MPI_UINT64_T, MPI_STATUS_IGNORE));
    written += count;
  }
  out.Commit(valueBase + 8 * MPI_Offset(nnz.total));
}

std::vector<double> ReadPetscBinaryRows(MPI_Comm comm, const std::string &path, long long n,
                                        const std::vector<long long> &rows) {
  PetscHeader h;
  OnRankZero(comm, [&] {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot open (missing or unreadable)");
    int32_t raw[4] = {};
    if (!in.read(reinterpret_cast<char *>(raw), sizeof raw))
      throw InputError(path + ": too short for a PETSc binary matrix (16-byte header)");
    if (BigEndianInt(raw[0]) != kPetscMatFileClassId)
      throw InputError(path + ": not a PETSc binary matrix (first int32 is not MAT_FILE_CLASSID 1211216)");
    h.m = BigEndianInt(raw[1]);
    h.n = BigEndianInt(raw[2]);
    h.nnz = BigEndianInt(raw[3]);
    if (h.m < 0 || h.n < 0 || h.nnz < 0)
      throw InputError(path + ": negative size in the PETSc header (a PETSc build with 64-bit indices writes a "
                       "layout this reader does not take)");
    if (h.m != h.n)
      throw InputError(path + ": the matrix is " + std::to_string(h.m) + " x " + std::to_string(h.n) + ", not square");
    if (h.m != n)
      throw InputError(path + ": the matrix is for N = " + std::to_string(h.m) + " patches, but there are " +
                       std::to_string(n) + " (check --input and --subdiv)");
    std::error_code ec;
    const unsigned long long bytes = std::filesystem::file_size(path, ec);
    const unsigned long long expected = 16ULL + 4ULL * (unsigned long long)h.m + 12ULL * (unsigned long long)h.nnz;
    if (ec || bytes < expected)
      throw InputError(path + ": " + std::to_string(bytes) + " bytes, but the header (N = " + std::to_string(h.m) +
                       ", nnz = " + std::to_string(h.nnz) + ") needs " + std::to_string(expected) + " (truncated?)");
  });
  long long sizes[3] = {h.m, h.n, h.nnz};
  RAD_MPI(MPI_Bcast(sizes, 3, MPI_LONG_LONG, 0, comm));
  h = {sizes[0], sizes[1], sizes[2]};

  MPI_File fh;
  const int rc = MPI_File_open(comm, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
  AgreeOrThrow(comm, rc == MPI_SUCCESS, path + ": cannot open the PETSc binary file");

  // Every rank reads all row lengths (4 N bytes): they locate its rows in the index and value sections.
  std::vector<int32_t> lengths(static_cast<size_t>(h.m));
  RAD_MPI(MPI_File_read_at_all(fh, kHeaderBytes, lengths.data(), int(lengths.size()), MPI_INT32_T, MPI_STATUS_IGNORE));
  std::vector<long long> start(static_cast<size_t>(h.m) + 1, 0);
  bool ok = true;
  std::string message;
  for (size_t i = 0; i < lengths.size(); ++i) {
    const long long len = BigEndianInt(lengths[i]);
    if (ok && (len < 0 || len > h.n)) {
      ok = false;
      message = path + ": row " + std::to_string(i) + " has " + std::to_string(len) + " entries (0 to N allowed)";
    }
    start[i + 1] = start[i] + std::max(0LL, len);
  }
  if (ok && start.back() != h.nnz) {
    ok = false;
    message = path + ": the row lengths add up to " + std::to_string(start.back()) + ", but the header says nnz = " +
              std::to_string(h.nnz);
  }
  lengths = {};
  if (!ok) MPI_File_close(&fh);
  AgreeOrThrow(comm, ok, message);

  const MPI_Offset indexBase = kHeaderBytes + 4 * MPI_Offset(h.m);
  const MPI_Offset valueBase = indexBase + 4 * MPI_Offset(h.nnz);
  std::vector<double> out;
  try {
    AllocateOnEveryRank(comm, "the rank's rows of F", [&] { out.assign(rows.size() * size_t(n), 0.0); });
  } catch (const InputError &) {
    MPI_File_close(&fh);  // collective, and every rank is here
    throw;
  }
  // Rounds of this rank's rows, each read through one indexed file view per section (a row is a contiguous run).
  const auto blocks = RowBlocks(comm, (long long)rows.size(), n, kExportBlockEntries);
  std::vector<int32_t> indices;
  std::vector<uint64_t> values;
  std::vector<int> runLengths;
  std::vector<MPI_Aint> runStarts;
  for (const auto &[begin, end] : blocks) {
    runLengths.clear();
    runStarts.clear();
    long long entries = 0;
    for (long long k = begin; k < end; ++k) {
      const size_t i = size_t(rows[size_t(k)]);
      const long long len = start[i + 1] - start[i];
      if (len == 0) continue;
      runLengths.push_back(int(len));
      runStarts.push_back(MPI_Aint(start[i]));
      entries += len;
    }
    indices.resize(size_t(entries));
    values.resize(size_t(entries));
    for (int section = 0; section < 2; ++section) {
      const MPI_Datatype elem = section == 0 ? MPI_INT32_T : MPI_UINT64_T;
      const MPI_Aint width = section == 0 ? 4 : 8;
      MPI_Datatype fileType = elem;
      std::vector<MPI_Aint> displacements(runStarts.size());
      for (size_t k = 0; k < runStarts.size(); ++k) displacements[k] = runStarts[k] * width;
      if (!runLengths.empty()) {
        RAD_MPI(MPI_Type_create_hindexed(int(runLengths.size()), runLengths.data(), displacements.data(), elem,
                                         &fileType));
        RAD_MPI(MPI_Type_commit(&fileType));
      }
      RAD_MPI(MPI_File_set_view(fh, section == 0 ? indexBase : valueBase, elem, fileType, "native", MPI_INFO_NULL));
      void *buffer = section == 0 ? (void *)indices.data() : (void *)values.data();
      RAD_MPI(MPI_File_read_at_all(fh, 0, buffer, int(entries), elem, MPI_STATUS_IGNORE));
      if (!runLengths.empty()) RAD_MPI(MPI_Type_free(&fileType));
    }
    size_t pos = 0;
    for (long long k = begin; k < end && ok; ++k) {
      const size_t i = size_t(rows[size_t(k)]);
      double *row = out.data() + size_t(k) * size_t(n);
      for (long long e = start[i]; e < start[i + 1]; ++e, ++pos) {
        const long long j = BigEndianInt(indices[pos]);
        if (j < 0 || j >= n) {
          ok = false;
          message = path + ": row " + std::to_string(i) + " has column index " + std::to_string(j) +
                    " outside [0, " + std::to_string(n) + ")";
          break;
        }
        row[j] += FromBigEndianBits(values[pos]);
      }
    }
  }
  RAD_MPI(MPI_File_close(&fh));
  AgreeOrThrow(comm, ok, message);
  return out;
}

}  // namespace rad
