// The export formats (MatrixMarket, PETSc binary, CSR in HDF5) against independent decoders written here from the
// formats' specifications, and their readers against the matrices written: round trips for any row
// distribution, drops, and malformed files as input errors naming the file.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "io/csr_hdf5.h"
#include "io/formfactor_input.h"
#include "io/matrix_market.h"
#include "io/petsc_binary.h"
#include "io/radiosity_file.h"
#include "io/radiosity_file_reader.h"
#include "io/sparse_rows.h"
#include "tests/temp_file.h"
#include "util/error.h"

namespace rad {
namespace {

using test::TempFile;

constexpr long long kN = 5;

// Zeros (one whole row), values whose decimal forms need all 17 digits, a tiny negative and tiny positive
// entries below the drop threshold used below (1e-6), extremes of the double range.
std::vector<double> TestMatrix() {
  return {0.0,       0.1,         1.0 / 3.0, 5e-7, 0.25,         //
          2.0 / 3.0, 0.0,         -2e-7,     1e-300, 0.0,        //
          0.0,       0.0,         0.0,       0.0,  0.0,          //
          1e-6,      0.123456789, 0.0,       0.0,  1.0 - 1e-16,  //
          3e-7,      1e300,       7.5,       0.0,  1e-7};
}

ExportRows AllRows(const std::vector<double> &f, double dropBelow) {
  ExportRows rows;
  rows.n = kN;
  rows.rowCount = kN;
  rows.f64 = f.data();
  rows.dropBelow = dropBelow;
  return rows;
}

// The matrix as it should come back: dropped entries (|F_ij| < X) zero.
std::vector<double> Dropped(std::vector<double> f, double dropBelow) {
  for (double &v : f)
    if (std::fabs(v) < dropBelow) v = 0.0;
  return f;
}

std::vector<double> RowsOf(const std::vector<double> &f, const std::vector<long long> &rows) {
  std::vector<double> out;
  for (long long i : rows) out.insert(out.end(), f.begin() + i * kN, f.begin() + (i + 1) * kN);
  return out;
}

std::string ReadText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteText(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::vector<Patch> UnitPatches(long long n) {
  std::vector<Patch> patches(static_cast<size_t>(n));
  for (long long i = 0; i < n; ++i) {
    Patch &p = patches[size_t(i)];
    p.cornerCount = 4;
    p.area = 1.0 + double(i);
    p.face = int(i);
    p.normal = Vec3{0, 0, 1};
    p.reflectance = Vec3{0.5, 0.5, 0.5};
  }
  return patches;
}

// Expects an InputError whose message contains every one of `parts`.
template <typename F>
void ExpectInputError(F &&f, const std::vector<std::string> &parts) {
  try {
    f();
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError &e) {
    for (const std::string &p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(Export, CountsAndDroppedEnergyPerRow) {
  const std::vector<double> f = TestMatrix();
  const ExportRows rows = AllRows(f, 1e-6);
  const RowCounts c = CountRows(rows);
  // Row 0 drops 5e-7; row 1 drops -2e-7 and 1e-300 (magnitude below X); row 3 keeps 1e-6 (not below X);
  // row 4 drops 3e-7 and 1e-7.
  EXPECT_EQ(c.kept, (std::vector<long long>{3, 1, 0, 3, 2}));
  EXPECT_EQ(c.dropped, (std::vector<double>{5e-7, -2e-7 + 1e-300, 0.0, 0.0, 3e-7 + 1e-7}));
  EXPECT_EQ(c.keptTotal, 9);
  EXPECT_EQ(c.droppedEntries, 5);
  const DropSummary s = SummariseDrops(MPI_COMM_WORLD, rows, c);
  EXPECT_EQ(s.kept, 9);
  EXPECT_EQ(s.entries, 5);
  EXPECT_EQ(s.minRow, -2e-7 + 1e-300);
  EXPECT_EQ(s.maxRow, 5e-7);
  EXPECT_EQ(s.maxRowIndex, 0);
  EXPECT_DOUBLE_EQ(s.total, 5e-7 - 2e-7 + 3e-7 + 1e-7);
  EXPECT_DOUBLE_EQ(s.meanRow, s.total / kN);
  // Without a threshold only exact zeros are left out.
  const RowCounts all = CountRows(AllRows(f, 0.0));
  EXPECT_EQ(all.keptTotal, 14);
  EXPECT_EQ(all.droppedEntries, 0);
}

TEST(Export, RowBlocksCoverTheRowsWithinTheLimit) {
  const auto blocks = RowBlocks(MPI_COMM_WORLD, 7, 10, 25);  // 2 rows of 10 per block
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[0], (std::pair<long long, long long>{0, 2}));
  EXPECT_EQ(blocks[3], (std::pair<long long, long long>{6, 7}));
  EXPECT_EQ(RowBlocks(MPI_COMM_WORLD, 3, 100, 5).size(), 3u);  // at least one row per block
}

TEST(Export, RowLookupFindsCyclicAndBlockRows) {
  const RowLookup cyclic(std::vector<long long>{1, 4, 7});
  EXPECT_EQ(cyclic.Local(1), 0);
  EXPECT_EQ(cyclic.Local(7), 2);
  EXPECT_EQ(cyclic.Local(4), 1);
  EXPECT_EQ(cyclic.Local(2), -1);
  EXPECT_EQ(cyclic.Local(10), -1);
  EXPECT_EQ(cyclic.Local(0), -1);
  const RowLookup none(std::vector<long long>{});
  EXPECT_EQ(none.Local(0), -1);
}

// An independent MatrixMarket reader: banner, comments, size line, 1-based entries.
struct ParsedMtx {
  std::string banner;
  std::vector<std::string> comments;
  long long m = 0, n = 0, nnz = 0;
  std::vector<double> dense;
  long long entries = 0;
};

ParsedMtx ParseMtx(const std::string &text) {
  ParsedMtx p;
  std::istringstream in(text);
  std::string line;
  std::getline(in, p.banner);
  while (std::getline(in, line) && line[0] == '%') p.comments.push_back(line);
  std::istringstream size(line);
  size >> p.m >> p.n >> p.nnz;
  p.dense.assign(size_t(p.m * p.n), 0.0);
  long long i, j;
  std::string value;
  while (in >> i >> j >> value) {
    p.dense[size_t((i - 1) * p.n + (j - 1))] = std::strtod(value.c_str(), nullptr);
    ++p.entries;
  }
  return p;
}

TEST(Export, MatrixMarketHoldsTheMatrixExactly) {
  const std::vector<double> f = TestMatrix();
  for (double drop : {0.0, 1e-6}) {
    SCOPED_TRACE("drop-below " + std::to_string(drop));
    TempFile file(".mtx");
    const ExportRows rows = AllRows(f, drop);
    const RowCounts counts = CountRows(rows);
    // One row per block: the offsets of consecutive blocks must join up.
    WriteMatrixMarket(MPI_COMM_WORLD, file.path, rows, counts, {"a comment", "two\nlines"}, kN);
    const std::string text = ReadText(file.path);
    const ParsedMtx p = ParseMtx(text);
    EXPECT_EQ(p.banner, "%%MatrixMarket matrix coordinate real general");
    EXPECT_EQ(p.comments, (std::vector<std::string>{"% a comment", "% two lines"}));
    EXPECT_EQ(p.m, kN);
    EXPECT_EQ(p.n, kN);
    EXPECT_EQ(p.nnz, counts.keptTotal);
    EXPECT_EQ(p.entries, counts.keptTotal);
    EXPECT_EQ(p.dense, Dropped(f, drop));  // exact: the shortest round-trip decimal form
    EXPECT_NE(text.find("\n1 2 0.1\n"), std::string::npos) << "0.1 is written in its shortest form";
    EXPECT_TRUE(IsMatrixMarketFile(file.path));
    EXPECT_EQ(DetectMatrixFileFormat(file.path), MatrixFileFormat::kMatrixMarket);

    for (const std::vector<long long> &mine : {std::vector<long long>{0, 1, 2, 3, 4}, {1, 3}, {2}, {}}) {
      EXPECT_EQ(ReadMatrixMarketRows(MPI_COMM_WORLD, file.path, kN, mine), RowsOf(Dropped(f, drop), mine));
    }
  }
}

TEST(Export, MatrixMarketReaderTakesScipyStyleFiles) {
  TempFile file(".mtx");
  // Array format (column-major, as scipy.io.mmwrite writes a dense array), CRLF line ends, integer-valued reals.
  WriteText(file.path, "%%MatrixMarket matrix array real general\r\n%\r\n2 2\r\n1\r\n0.5\r\n0\r\n2.5e-3\r\n");
  EXPECT_EQ(ReadMatrixMarketRows(MPI_COMM_WORLD, file.path, 2, {0, 1}), (std::vector<double>{1, 0, 0.5, 2.5e-3}));
  // Coordinate, duplicates summed, entries in any order, blank lines ignored.
  WriteText(file.path, "%%MatrixMarket matrix coordinate real general\n2 2 3\n\n2 1 0.25\n1 2 0.5\n2 1 0.25\n");
  EXPECT_EQ(ReadMatrixMarketRows(MPI_COMM_WORLD, file.path, 2, {1}), (std::vector<double>{0.5, 0}));
}

TEST(Export, MalformedMatrixMarketFilesAreInputErrors) {
  TempFile file(".mtx");
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"%%MatrixMarket matrix coordinate complex general\n2 2 0\n", {":1:", "complex"}},
      {"%%MatrixMarket matrix coordinate real symmetric\n2 2 0\n", {":1:", "symmetric"}},
      {"%%MatrixMarket vector coordinate real general\n2 2 0\n", {":1:", "banner"}},
      {banner + "3 3 0\n", {":2:", "N = 3", "2"}},
      {banner + "2 3 0\n", {":2:", "not square"}},
      {banner + "2 2\n", {":2:", "size line"}},
      {banner + "2 2 1\n1 3 0.5\n", {":3:", "outside"}},
      {banner + "2 2 1\n0 1 0.5\n", {":3:", "outside"}},
      {banner + "2 2 1\n1 1 abc\n", {":3:", "bad entry"}},
      {banner + "2 2 1\n1 1 0.5 7\n", {":3:", "bad entry"}},
      {banner + "2 2 2\n1 1 0.5\n", {"1 entries", "announces 2"}},
      {banner + "2 2 1\n1 1 0.5\n2 2 0.5\n", {":4:", "more entries"}},
      {banner, {"no size line"}},
  };
  for (const auto &[text, parts] : cases) {
    SCOPED_TRACE(text);
    WriteText(file.path, text);
    std::vector<std::string> expected = parts;
    expected.push_back(file.path);
    ExpectInputError([&] { ReadMatrixMarketRows(MPI_COMM_WORLD, file.path, 2, {0, 1}); }, expected);
  }
}

// An independent PETSc binary decoder (big-endian int32 and float64).
int32_t Be32(const std::string &b, size_t at) {
  const unsigned char *p = reinterpret_cast<const unsigned char *>(b.data()) + at;
  return int32_t(uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]));
}

double Be64(const std::string &b, size_t at) {
  uint64_t bits = 0;
  for (int k = 0; k < 8; ++k) bits = bits << 8 | uint64_t(static_cast<unsigned char>(b[at + size_t(k)]));
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}

TEST(Export, PetscBinaryMatchesMatLoadLayout) {
  const std::vector<double> f = TestMatrix();
  for (double drop : {0.0, 1e-6}) {
    SCOPED_TRACE("drop-below " + std::to_string(drop));
    TempFile file(".petsc");
    const ExportRows rows = AllRows(f, drop);
    const RowCounts counts = CountRows(rows);
    WritePetscBinary(MPI_COMM_WORLD, file.path, rows, counts, 2 * kN);
    const std::string b = ReadText(file.path);
    const long long nnz = counts.keptTotal;
    ASSERT_EQ((long long)b.size(), 16 + 4 * kN + 12 * nnz);
    EXPECT_EQ(Be32(b, 0), 1211216);
    EXPECT_EQ(Be32(b, 4), kN);
    EXPECT_EQ(Be32(b, 8), kN);
    EXPECT_EQ(Be32(b, 12), nnz);
    std::vector<double> dense(static_cast<size_t>(kN * kN), 0.0);
    size_t entry = 0;
    for (long long i = 0; i < kN; ++i) {
      const int32_t len = Be32(b, 16 + 4 * size_t(i));
      EXPECT_EQ(len, counts.kept[size_t(i)]);
      int32_t previous = -1;
      for (int32_t k = 0; k < len; ++k, ++entry) {
        const int32_t j = Be32(b, 16 + 4 * size_t(kN) + 4 * entry);
        EXPECT_GT(j, previous) << "columns ascend within a row";
        previous = j;
        dense[size_t(i * kN + j)] = Be64(b, 16 + 4 * size_t(kN) + 4 * size_t(nnz) + 8 * entry);
      }
    }
    EXPECT_EQ(dense, Dropped(f, drop));
    EXPECT_TRUE(IsPetscMatrixFile(file.path));
    EXPECT_EQ(DetectMatrixFileFormat(file.path), MatrixFileFormat::kPetsc);
    for (const std::vector<long long> &mine : {std::vector<long long>{0, 1, 2, 3, 4}, {0, 2, 4}, {3}, {}})
      EXPECT_EQ(ReadPetscBinaryRows(MPI_COMM_WORLD, file.path, kN, mine), RowsOf(Dropped(f, drop), mine));
  }
}

TEST(Export, MalformedPetscFilesAreInputErrors) {
  const std::vector<double> f = TestMatrix();
  TempFile good(".petsc"), bad(".bad");
  const ExportRows rows = AllRows(f, 0.0);
  WritePetscBinary(MPI_COMM_WORLD, good.path, rows, CountRows(rows));
  const std::string b = ReadText(good.path);
  auto setBe32 = [](std::string s, size_t at, uint32_t v) {
    for (int k = 0; k < 4; ++k) s[at + size_t(k)] = char((v >> (24 - 8 * k)) & 0xff);
    return s;
  };
  const size_t firstIndex = 16 + 4 * size_t(kN);
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {b.substr(0, b.size() - 8), {"truncated"}},
      {b.substr(0, 10), {"too short"}},
      {setBe32(b, 4, 6), {"not square"}},
      {setBe32(setBe32(b, 4, 6), 8, 6), {"N = 6", "5"}},
      {setBe32(b, 16, 2), {"add up to"}},  // row 0 holds 4 entries
      {setBe32(b, 16, uint32_t(-1)), {"row 0", "-1 entries"}},
      {setBe32(b, firstIndex, 5), {"row 0", "column index 5"}},
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    const auto &[bytes, parts] = cases[k];
    SCOPED_TRACE("case " + std::to_string(k));
    WriteText(bad.path, bytes);
    std::vector<std::string> expected = parts;
    expected.push_back(bad.path);
    ExpectInputError([&] { ReadPetscBinaryRows(MPI_COMM_WORLD, bad.path, kN, {0, 1, 2, 3, 4}); }, expected);
  }
}

TEST(Export, NothingIsLeftBehindWhenTheOutputCannotBeCreated) {
  const std::vector<double> f = TestMatrix();
  const ExportRows rows = AllRows(f, 0.0);
  const std::string path = "/nonexistent_folder_for_radiosity_tests/out.mtx";
  ExpectInputError([&] { WriteMatrixMarket(MPI_COMM_WORLD, path, rows, CountRows(rows), {}); },
                   {path, "cannot create"});
  ExpectInputError([&] { WritePetscBinary(MPI_COMM_WORLD, path, rows, CountRows(rows)); }, {path});
}

// Writes a complete radiosity file with the test matrix as CSR.
void WriteCsrFile(const std::string &path, const ExportRows &rows, const RowCounts &counts, Precision precision) {
  RadiosityFileWriter writer(MPI_COMM_WORLD, path);
  writer.WritePatches(UnitPatches(rows.n));
  Attributes a;
  a.strings["layout"] = "csr";
  a.numbers["drop_below"] = rows.dropBelow;
  WriteCsrFormFactors(MPI_COMM_WORLD, writer.File(), rows, counts, precision, a, kN);
  writer.Commit();
}

TEST(Export, CsrInHdf5RoundTrips) {
  const std::vector<double> f = TestMatrix();
  for (double drop : {0.0, 1e-6}) {
    SCOPED_TRACE("drop-below " + std::to_string(drop));
    TempFile file(".h5");
    const ExportRows rows = AllRows(f, drop);
    const RowCounts counts = CountRows(rows);
    WriteCsrFile(file.path, rows, counts, Precision::kDouble);

    // The datasets, read serially and expanded here.
    RadiosityFileReader reader(file.path);
    EXPECT_TRUE(reader.Complete());
    const std::vector<double> indptr = reader.ReadDoubles("/formfactors/indptr");
    const std::vector<double> indices = reader.ReadDoubles("/formfactors/indices");
    const std::vector<double> data = reader.ReadDoubles("/formfactors/data");
    ASSERT_EQ(indptr.size(), size_t(kN + 1));
    EXPECT_EQ(indptr.front(), 0);
    EXPECT_EQ(indptr.back(), counts.keptTotal);
    ASSERT_EQ(indices.size(), size_t(counts.keptTotal));
    std::vector<double> dense(static_cast<size_t>(kN * kN), 0.0);
    for (long long i = 0; i < kN; ++i)
      for (long long e = (long long)indptr[size_t(i)]; e < (long long)indptr[size_t(i) + 1]; ++e)
        dense[size_t(i * kN + (long long)indices[size_t(e)])] = data[size_t(e)];
    EXPECT_EQ(dense, Dropped(f, drop));
    EXPECT_EQ(reader.ReadDoubles("/formfactors/dropped_row_sum"), counts.dropped);

    // solve's reader: every distribution gives the rows back.
    for (Distribution d : {Distribution::kCyclic, Distribution::kBlock}) {
      const FormFactorInput in = ReadFormFactorsHdf5(MPI_COMM_WORLD, file.path, d);
      EXPECT_EQ(in.layout, "HDF5 CSR");
      EXPECT_EQ(in.PatchCount(), kN);
      EXPECT_TRUE(in.f.f32.empty());
      EXPECT_EQ(in.f.f64, RowsOf(Dropped(f, drop), in.f.rows));
    }
  }
}

TEST(Export, CsrInFloatPrecisionReadsBackAsFloat) {
  const std::vector<double> f = TestMatrix();
  std::vector<float> narrow(f.begin(), f.end());
  narrow[21] = 0.5f;  // 1e300 does not fit a float
  ExportRows rows;
  rows.n = rows.rowCount = kN;
  rows.f32 = narrow.data();
  TempFile file(".h5");
  const RowCounts counts = CountRows(rows);
  WriteCsrFile(file.path, rows, counts, Precision::kFloat);
  const FormFactorInput in = ReadFormFactorsHdf5(MPI_COMM_WORLD, file.path, Distribution::kCyclic);
  EXPECT_TRUE(in.f.f64.empty());
  std::vector<float> expected = narrow;
  EXPECT_EQ(in.f.f32, expected);
}

TEST(Export, MalformedCsrIsAnInputError) {
  const std::vector<double> f = TestMatrix();
  TempFile file(".h5");
  const ExportRows rows = AllRows(f, 0.0);
  WriteCsrFile(file.path, rows, CountRows(rows), Precision::kDouble);
  {
    // indptr made to decrease at row 2 (a file edited by hand).
    H5Handle h(H5Fopen(file.path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    H5Handle d(H5Dopen2(h, "/formfactors/indptr", H5P_DEFAULT));
    std::vector<long long> ptr(static_cast<size_t>(kN + 1));
    ASSERT_GE(H5Dread(d, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptr.data()), 0);
    ptr[3] = ptr[2] - 1;
    ASSERT_GE(H5Dwrite(d, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptr.data()), 0);
  }
  ExpectInputError([&] { ReadFormFactorsHdf5(MPI_COMM_WORLD, file.path, Distribution::kCyclic); },
                   {file.path, "indptr decreases at row 2"});
}

TEST(Export, FormatIsDetectedFromContent) {
  TempFile raw(".raw"), h5(".h5");
  WriteText(raw.path, std::string("\x02\x00\x00\x00", 4) + std::string(32, '\0'));
  EXPECT_EQ(DetectMatrixFileFormat(raw.path), MatrixFileFormat::kRaw);
  const std::vector<double> f = TestMatrix();
  const ExportRows rows = AllRows(f, 0.0);
  WriteCsrFile(h5.path, rows, CountRows(rows), Precision::kDouble);
  EXPECT_EQ(DetectMatrixFileFormat(h5.path), MatrixFileFormat::kHdf5);
}

}  // namespace
}  // namespace rad
