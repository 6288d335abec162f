// CSR rows' columns held in 16 bits with a span table per row (formfactor/csr_columns.h, FormFactorRows): every
// column read back as it was given, at the spans' edges and across empty spans and rows, by each way the rows
// are read (in order, a lane's every stride-th entry, by entry, by column), and the solvers' row product over
// them against the same sum taken from the columns in full.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "formfactor/form_factor_rows.h"
#include "solver/sparse_transport.h"

namespace rad {
namespace {

// Rows of a scene of n patches whose columns sit on and around the spans' edges, with empty rows and rows that
// skip spans, and random rows; values from the row and column, so that a wrong column reads a wrong value.
struct Rows {
  FormFactorRows f;
  std::vector<std::vector<int32_t>> columns;  // per row, as given
};

double ValueOf(size_t r, int32_t j) { return 1.0 + double(r) * 1e-3 + double(j) * 1e-9; }

Rows MakeRows(long long n) {
  Rows t;
  t.f.n = n;
  t.f.storage = Storage::kCsr;
  t.f.indptr.assign(1, 0);
  std::vector<int32_t> edges;
  for (long long s = 0; s * kColumnSpan < n; ++s)
    for (long long d : {-1LL, 0LL, 1LL})
      if (s * kColumnSpan + d >= 0 && s * kColumnSpan + d < n) edges.push_back(int32_t(s * kColumnSpan + d));
  t.columns.push_back(edges);
  t.columns.push_back({});
  t.columns.push_back({0});
  t.columns.push_back({int32_t(n - 1)});
  if (n > 2 * kColumnSpan) t.columns.push_back({3, int32_t(2 * kColumnSpan + 5)});  // span 1 empty
  std::mt19937 rng(7);
  for (int r = 0; r < 20; ++r) {
    std::vector<uint8_t> in(size_t(n), 0);
    const int count = int(uint32_t(rng()) % 3000);
    for (int q = 0; q < count; ++q) in[uint32_t(rng()) % uint32_t(n)] = 1;
    std::vector<int32_t> row;
    for (long long j = 0; j < n; ++j)
      if (in[size_t(j)]) row.push_back(int32_t(j));
    t.columns.push_back(row);
  }
  for (size_t r = 0; r < t.columns.size(); ++r) {
    t.f.rows.push_back((long long)r);
    t.f.AppendRowColumns(t.columns[r].data(), t.columns[r].size());
    for (int32_t j : t.columns[r]) t.f.f64.push_back(ValueOf(r, j));
    t.f.indptr.push_back(t.f.EntryCount());
  }
  return t;
}

class CsrColumns : public testing::TestWithParam<long long> {};

TEST_P(CsrColumns, EveryColumnReadsBackAsGiven) {
  const long long n = GetParam();
  const Rows t = MakeRows(n);
  const FormFactorRows &f = t.f;
  EXPECT_EQ(f.columnSpanStart.size(), t.columns.size() * size_t(ColumnSpans(n) - 1));
  EXPECT_EQ(ColumnSpans(n), n <= kColumnSpan ? 1 : int((n + kColumnSpan - 1) / kColumnSpan));
  std::vector<int32_t> all;
  for (size_t r = 0; r < t.columns.size(); ++r) {
    all.insert(all.end(), t.columns[r].begin(), t.columns[r].end());
    std::vector<int32_t> read;
    f.ForEachEntry(r, [&](int32_t j, long long k) {
      read.push_back(j);
      EXPECT_EQ(f.ColumnOf(r, k), j);
      EXPECT_EQ(f.FindEntry(r, j), k);
      EXPECT_EQ(f.At(r, j), ValueOf(r, j));
    });
    EXPECT_EQ(read, t.columns[r]) << "row " << r;
    // A lane's entries, as a warp reads them (lane, lane + 32, ...).
    const CsrColumnsView v = f.Columns();
    for (int lane = 0; lane < 32; lane += 7) {
      RowColumnReader column(v, (long long)r);
      for (long long k = f.indptr[r] + lane; k < f.indptr[r + 1]; k += 32)
        ASSERT_EQ(column(k), t.columns[r][size_t(k - f.indptr[r])]) << "row " << r << ", lane " << lane;
    }
    // Columns not stored are not found: the neighbours of each stored one, where they are not stored either.
    for (int32_t j : t.columns[r])
      for (int32_t other : {j - 1, j + 1})
        if (other >= 0 && other < n && !std::binary_search(t.columns[r].begin(), t.columns[r].end(), other)) {
          EXPECT_EQ(f.FindEntry(r, other), -1) << "row " << r << ", column " << other;
          EXPECT_EQ(f.At(r, other), 0.0);
        }
  }
  EXPECT_EQ(f.ColumnsUnpacked(), all);

  // Rows copied one by one (AppendCsrRow), and the copy cut back (TruncateCsrRows), read as the originals.
  FormFactorRows copy;
  copy.n = n;
  copy.storage = Storage::kCsr;
  copy.indptr.assign(1, 0);
  for (size_t r = t.columns.size(); r-- > 0;) copy.AppendCsrRow(f, r);
  copy.AppendEmptyCsrRow();
  for (size_t r = 0; r < t.columns.size(); ++r) {
    std::vector<int32_t> read;
    copy.ForEachEntry(t.columns.size() - 1 - r, [&](int32_t j, long long) { read.push_back(j); });
    EXPECT_EQ(read, t.columns[r]);
  }
  copy.ForEachEntry(t.columns.size(), [&](int32_t, long long) { ADD_FAILURE() << "the empty row holds an entry"; });
  copy.TruncateCsrRows(3);
  EXPECT_EQ(copy.columnSpanStart.size(), 3 * size_t(ColumnSpans(n) - 1));
  std::vector<int32_t> last;
  copy.ForEachEntry(2, [&](int32_t j, long long) { last.push_back(j); });
  EXPECT_EQ(last, t.columns[t.columns.size() - 3]);

  // The solvers' row product (sparse_transport.h), whole and split among 32 lanes, against the sum over the
  // columns as given.
  std::vector<double> x(3 * size_t(n));
  for (size_t q = 0; q < x.size(); ++q) x[q] = double(q % 1013) * 0.25 + 1;
  const CsrRowsView<double> view{f.Columns(), f.f64.data()};
  for (size_t r = 0; r < t.columns.size(); ++r) {
    double expected[3] = {0, 0, 0}, whole[3] = {0, 0, 0}, lanes[3] = {0, 0, 0};
    for (int32_t j : t.columns[r])
      for (int c = 0; c < 3; ++c) expected[c] += ValueOf(r, j) * x[size_t(j) + size_t(c) * size_t(n)];
    AddRowTimes(view, (long long)r, x.data(), n, 0, 1, whole);
    for (int lane = 0; lane < 32; ++lane) AddRowTimes(view, (long long)r, x.data(), n, lane, 32, lanes);
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(whole[c], expected[c]) << "row " << r;  // the same sum in the same order
      EXPECT_NEAR(lanes[c], expected[c], 1e-12 * std::fabs(expected[c])) << "row " << r;
    }
  }
}

// One span (no table), exactly one span's columns, one more, and a million patches' 16 spans.
INSTANTIATE_TEST_SUITE_P(Sizes, CsrColumns, testing::Values(1000LL, kColumnSpan, kColumnSpan + 1, 1000000LL));

}  // namespace
}  // namespace rad
