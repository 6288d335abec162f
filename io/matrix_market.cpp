#include "io/matrix_market.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <fstream>
#include <string_view>

#include "util/agree.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/memory_budget.h"
#include "util/mpi_check.h"

namespace rad {

namespace {

constexpr size_t kMaxEntryChars = 96;  // two 20-digit integers, a 24-character double, separators

// "i j v\n" with 1-based indices.
size_t FormatEntry(char *out, long long i, long long j, double v) {
  char *p = out, *end = out + kMaxEntryChars;
  p = std::to_chars(p, end, i + 1).ptr;
  *p++ = ' ';
  p = std::to_chars(p, end, j + 1).ptr;
  *p++ = ' ';
  p = std::to_chars(p, end, v).ptr;  // shortest representation that reads back to the same double
  *p++ = '\n';
  return size_t(p - out);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char &c : out) c = char(std::tolower((unsigned char)c));
  return out;
}

// Whitespace-separated fields of one line (spaces, tabs, a CR left by CRLF line ends).
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t k = 0;
  while (k < line.size()) {
    while (k < line.size() && std::isspace((unsigned char)line[k])) ++k;
    const size_t start = k;
    while (k < line.size() && !std::isspace((unsigned char)line[k])) ++k;
    if (k > start) out.push_back(line.substr(start, k - start));
  }
  return out;
}

bool ParseInteger(std::string_view s, long long &v) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool ParseReal(std::string_view s, double &v) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// The scan of one file by one rank; throws InputError("path:line: problem").
class MatrixMarketScanner {
 public:
  MatrixMarketScanner(const std::string &path, long long n, const RowLookup &lookup, std::vector<double> &out)
      : path_(path), n_(n), lookup_(lookup), out_(out) {}

  void Scan() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) throw InputError(path_ + ": cannot open (missing or unreadable)");
    std::string line;
    bool sized = false;
    while (std::getline(in, line)) {
      ++lineNo_;
      if (lineNo_ == 1) {
        Banner(line);
        continue;
      }
      const std::vector<std::string_view> f = Fields(line);
      if (f.empty() || f[0][0] == '%') continue;  // blank lines and comments
      if (!sized) {
        Size(f);
        sized = true;
      } else {
        Entry(f);
      }
    }
    if (in.bad()) throw InputError(path_ + ": read error");
    if (lineNo_ == 0) throw InputError(path_ + ": empty file");
    if (!sized) throw InputError(path_ + ": no size line (M N NNZ) after the MatrixMarket banner");
    if (seen_ != expected_)
      throw InputError(path_ + ": " + std::to_string(seen_) + " entries, but the size line announces " +
                       std::to_string(expected_) + " (truncated file?)");
  }

 private:
  [[noreturn]] void Fail(const std::string &what) const {
    throw InputError(path_ + ":" + std::to_string(lineNo_) + ": " + what);
  }

  void Banner(const std::string &line) {
    const std::vector<std::string_view> f = Fields(line);
    if (f.size() < 5 || Lower(f[0]) != "%%matrixmarket" || Lower(f[1]) != "matrix")
      Fail("not a MatrixMarket matrix banner (expected '%%MatrixMarket matrix coordinate real general')");
    const std::string format = Lower(f[2]), field = Lower(f[3]), symmetry = Lower(f[4]);
    if (format != "coordinate" && format != "array")
      Fail("format '" + std::string(f[2]) + "' is neither 'coordinate' nor 'array'");
    if (field != "real" && field != "integer" && field != "double")
      Fail("field '" + std::string(f[3]) + "' is not supported (real or integer: form factors are real numbers)");
    if (symmetry != "general")
      Fail("symmetry '" + std::string(f[4]) + "' is not supported (form-factor matrices are 'general')");
    array_ = format == "array";
  }

  void Size(const std::vector<std::string_view> &f) {
    long long m = -1, c = -1, nnz = -1;
    const size_t want = array_ ? 2 : 3;
    if (f.size() != want || !ParseInteger(f[0], m) || !ParseInteger(f[1], c) ||
        (!array_ && !ParseInteger(f[2], nnz)) || m < 0 || c < 0 || (!array_ && nnz < 0))
      Fail(std::string("bad size line: expected ") + (array_ ? "'M N'" : "'M N NNZ'") + " with non-negative integers");
    if (m != c) Fail("the matrix is " + std::to_string(m) + " x " + std::to_string(c) + ", not square");
    if (m != n_)
      Fail("the matrix is for N = " + std::to_string(m) + " patches, but there are " + std::to_string(n_) +
           " (check --input and --subdiv)");
    expected_ = array_ ? m * m : nnz;
  }

  void Entry(const std::vector<std::string_view> &f) {
    if (array_) {
      for (std::string_view s : f) {
        double v = 0;
        if (!ParseReal(s, v)) Fail("bad value '" + std::string(s) + "'");
        if (seen_ >= expected_) Fail("more values than the N * N of the size line");
        Add(seen_ % n_, seen_ / n_, v);  // column-major
        ++seen_;
      }
      return;
    }
    long long i = 0, j = 0;
    double v = 0;
    if (f.size() != 3 || !ParseInteger(f[0], i) || !ParseInteger(f[1], j) || !ParseReal(f[2], v))
      Fail("bad entry: expected 'row column value'");
    if (i < 1 || i > n_ || j < 1 || j > n_)
      Fail("entry (" + std::to_string(i) + ", " + std::to_string(j) + ") outside the " + std::to_string(n_) + " x " +
           std::to_string(n_) + " matrix (indices are 1-based)");
    if (seen_ >= expected_) Fail("more entries than the NNZ of the size line");
    Add(i - 1, j - 1, v);
    ++seen_;
  }

  void Add(long long i, long long j, double v) {
    const long long local = lookup_.Local(i);
    if (local >= 0) out_[size_t(local) * size_t(n_) + size_t(j)] += v;
  }

  const std::string &path_;
  long long n_;
  const RowLookup &lookup_;
  std::vector<double> &out_;
  long long lineNo_ = 0, seen_ = 0, expected_ = 0;
  bool array_ = false;
};

}  // namespace

bool IsMatrixMarketFile(const std::string &path) {
  static const char kBanner[] = "%%MatrixMarket";
  char head[sizeof kBanner - 1] = {};
  std::ifstream in(path, std::ios::binary);
  return in.read(head, sizeof head) && std::memcmp(head, kBanner, sizeof head) == 0;
}

void WriteMatrixMarket(MPI_Comm comm, const std::string &path, const ExportRows &rows, const RowCounts &counts,
                       const std::vector<std::string> &comments, long long blockEntries) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const long long n = rows.n;
  char entry[kMaxEntryChars];

  // Pass 1: the length of each row's text, hence this rank's byte offset.
  std::vector<long long> rowBytes(static_cast<size_t>(rows.rowCount), 0);
  long long myBytes = 0;
  for (long long r = 0; r < rows.rowCount; ++r) {
    long long bytes = 0;
    rows.ForEachNonzero(r, [&](long long j, double v) {
      if (rows.Keeps(v)) bytes += (long long)FormatEntry(entry, rows.firstRow + r, j, v);
    });
    rowBytes[size_t(r)] = bytes;
    myBytes += bytes;
  }
  const RankOffset nnz = ExclusiveScan(comm, counts.keptTotal);
  const RankOffset bytes = ExclusiveScan(comm, myBytes);

  std::string header = "%%MatrixMarket matrix coordinate real general\n";
  for (std::string c : comments) {
    std::replace(c.begin(), c.end(), '\n', ' ');
    header += "% " + c + "\n";
  }
  header += std::to_string(n) + " " + std::to_string(n) + " " + std::to_string(nnz.total) + "\n";

  PartialMpiFile out(comm, path);
  MPI_File fh = out.Open();
  RAD_MPI(MPI_File_write_at_all(fh, 0, rank == 0 ? header.data() : nullptr, rank == 0 ? int(header.size()) : 0,
                                MPI_CHAR, MPI_STATUS_IGNORE));

  // Pass 2: each row block formatted again and written at its offset.
  MPI_Offset offset = MPI_Offset(header.size()) + MPI_Offset(bytes.before);
  std::vector<char> text;
  for (const auto &[begin, end] : RowBlocks(comm, rows.rowCount, n, blockEntries)) {
    long long blockBytes = 0;
    for (long long r = begin; r < end; ++r) blockBytes += rowBytes[size_t(r)];
    RAD_CHECK(blockBytes < (1LL << 31), "a MatrixMarket row block must stay below 2 GiB");
    text.resize(size_t(blockBytes));
    size_t pos = 0;
    for (long long r = begin; r < end; ++r)
      rows.ForEachNonzero(r, [&](long long j, double v) {
        if (!rows.Keeps(v)) return;
        const size_t len = FormatEntry(entry, rows.firstRow + r, j, v);
        std::memcpy(text.data() + pos, entry, len);
        pos += len;
      });
    RAD_CHECK((long long)pos == blockBytes, "MatrixMarket text changed length between the two passes");
    RAD_MPI(MPI_File_write_at_all(fh, offset, text.data(), int(blockBytes), MPI_CHAR, MPI_STATUS_IGNORE));
    offset += blockBytes;
  }
  out.Commit(MPI_Offset(header.size()) + MPI_Offset(bytes.total));
}

std::vector<double> ReadMatrixMarketRows(MPI_Comm comm, const std::string &path, long long n,
                                         const std::vector<long long> &rows) {
  std::vector<double> out;
  AllocateOnEveryRank(comm, "the rank's rows of F", [&] { out.assign(rows.size() * size_t(n), 0.0); });
  const RowLookup lookup(rows);
  // Every rank scans the same file the same way, so all find the same first problem; agreeing keeps them together
  // even if one rank could not read the file at all.
  bool ok = true;
  std::string message;
  try {
    MatrixMarketScanner(path, n, lookup, out).Scan();
  } catch (const InputError &e) {
    ok = false;
    message = e.what();
  }
  AgreeOrThrow(comm, ok, message);
  return out;
}

}  // namespace rad
