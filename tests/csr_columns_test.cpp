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

namespace rad {
namespace {

// A hierarchical operator's far links held by name (FarLinks: the tree's nodes, then the patches) in 16 bits
// with a span table per row, over 150000 nodes and 100000 patches (four spans of names): every row's links come
// back as the multiset given, in name order, by each way they are read (ForEachLink, TargetsUnpacked over any
// window, the solvers' far field by lanes), and rows copied, emptied and cut keep theirs.
TEST(FarLinkNames, RowsReadBackSortedByNameInEveryWay) {
  const int32_t nodes = 150000;
  const long long n = 100000;
  std::vector<std::vector<std::pair<int32_t, uint16_t>>> given;  // per row, (target, value bits) in any order
  auto patch = [](long long j) { return int32_t(-(j + 1)); };
  // Names at the spans' edges (65535, 65536, 131072 among the nodes; the first and last patches; 196608 a patch).
  given.push_back({{65536, 3}, {65535, 4}, {patch(0), 5}, {131072, 6}, {nodes - 1, 7}, {patch(n - 1), 8},
                   {patch(196608 - nodes), 9}, {0, 10}});
  given.push_back({});
  given.push_back({{patch(5), 1}, {patch(5), 2}, {7, 3}, {7, 3}});  // duplicates: the same bits whatever the order
  given.push_back({{patch(n - 1), 11}});  // the last span alone
  std::mt19937 rng(11);
  for (int r = 0; r < 30; ++r) {
    std::vector<std::pair<int32_t, uint16_t>> row;
    const int count = int(uint32_t(rng()) % 2000);
    for (int q = 0; q < count; ++q) {
      const uint32_t name = uint32_t(rng()) % uint32_t(nodes + n);
      row.push_back({FarLinkTarget(int32_t(name), nodes), uint16_t(0x3000 + uint32_t(rng()) % 0x3000)});
    }
    given.push_back(row);
  }
  FarLinks links;
  links.Begin(nodes, n);
  std::vector<uint64_t> keys;
  for (const auto &row : given) {
    std::vector<int32_t> targets;
    std::vector<uint16_t> values;
    for (const auto &[t, v] : row) targets.push_back(t), values.push_back(v);
    SortFarLinksByName(links.nodes, targets.data(), values.data(), targets.size(), keys);
    links.AppendRow(targets.data(), values.data(), targets.size());
  }
  ASSERT_EQ(links.names, nodes + n);
  ASSERT_EQ(links.nameSpanStart.size(), given.size() * 3);
  // Each row: the given links sorted by (name, value).
  std::vector<int32_t> expectedTargets;
  for (size_t r = 0; r < given.size(); ++r) {
    std::vector<std::pair<int32_t, uint16_t>> sorted;
    for (const auto &[t, v] : given[r]) sorted.push_back({FarLinkName(t, nodes), v});
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::pair<int32_t, uint16_t>> read;
    links.ForEachLink(r, [&](int32_t t, long long k) { read.push_back({FarLinkName(t, nodes), links.value[size_t(k)]}); });
    ASSERT_EQ(read, sorted) << "row " << r;
    for (const auto &[name, v] : sorted) expectedTargets.push_back(FarLinkTarget(name, nodes));
  }
  EXPECT_EQ(FarLinkTarget(FarLinkName(patch(n - 1), nodes), nodes), patch(n - 1));
  EXPECT_EQ(links.TargetsUnpacked(), expectedTargets);
  const long long all = links.LinkCount();
  for (long long first : {0LL, 1LL, 7LL, 8LL, all / 3, all - 1})
    for (long long count : {0LL, 1LL, 9LL, all / 2})
      if (first + count <= all)
        EXPECT_EQ(links.TargetsUnpacked(first, count),
                  std::vector<int32_t>(expectedTargets.begin() + first, expectedTargets.begin() + first + count))
            << first << " + " << count;

  // The solvers' far field (sparse_transport.h) by lanes: each link's value times x at its patch or its node's
  // mean, as the targets say.
  FarFieldView view;
  view.hasLinks = true;
  view.nodes = nodes;
  view.linkNames = links.Names();
  view.linkValue = links.value.data();
  std::vector<double> x(3 * size_t(n)), means(3 * size_t(nodes));
  for (size_t j = 0; j < x.size(); ++j) x[j] = 1 + 1e-6 * double(j);
  for (size_t k = 0; k < means.size(); ++k) means[k] = 2 + 1e-7 * double(k);
  for (size_t r = 0; r < given.size(); ++r) {
    double expected[3] = {0, 0, 0}, lanes[3] = {0, 0, 0};
    for (const auto &[t, v] : given[r])
      for (int c = 0; c < 3; ++c)
        expected[c] += FarLinkValue(v) * (t >= 0 ? means[size_t(t) + size_t(c) * size_t(nodes)]
                                                 : x[size_t(-(t + 1)) + size_t(c) * size_t(n)]);
    for (int lane = 0; lane < 32; ++lane)
      AddRowFarField(view, (long long)r, x.data(), n, means.data(), nullptr, lane, 32, lanes);
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(lanes[c], expected[c], 1e-12 * std::abs(expected[c])) << "row " << r;
  }

  // Rows copied one by one, with an empty row between, then cut back: the same links.
  FarLinks copy;
  copy.Begin(nodes, n);
  for (size_t r = 0; r < given.size(); ++r) {
    copy.AppendRowOf(links, r);
    if (r == 0) copy.AppendEmptyRow();
  }
  ASSERT_EQ(copy.LinkCount(), all);
  ASSERT_EQ(copy.ptr[1], copy.ptr[2]);  // the empty row
  copy.TruncateRows(2);
  EXPECT_EQ(copy.TargetsUnpacked(), std::vector<int32_t>(expectedTargets.begin(), expectedTargets.begin() + links.ptr[1]));
  EXPECT_EQ(copy.nameSpanStart.size(), 2u * 3);
  EXPECT_EQ(copy.StoredBytes(), 3.0 * 8 + double(links.ptr[1]) * 4 + 6.0 * 4);
}

}  // namespace
}  // namespace rad
