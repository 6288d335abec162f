// A rank's block of rows of F: the one type that the producer (the form-factor stage), the readers
// (io/formfactor_input.h), the writers (HDF5, raw, the sparse exports) and the solvers (LocalSystem, CPU and
// GPU) share. Which rows a rank holds is util/decomposition.h's to say; they are global indices in ascending
// order. The entries are either dense and row-major, or CSR (the sparse operator, sparse_form_factors.h, and
// CSR files read by `solve`), in the stored precision. Code that walks dense rows checks IsDense() first.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "formfactor/csr_columns.h"
#include "util/half.h"
#include "util/hd.h"

namespace rad {

struct PatchTree;
struct ElementForest;

// How a row at offset (du, dv) from an element's centre, along the axes u and v of the element's plane, reads
// each of the element's links: the weights of the link's value (1), gradient (du, dv) and curvature (uu, uv,
// vv: du^2 / 2, du dv, dv^2 / 2), so that the row reads value + g . d + d^T C d / 2.
constexpr int kElementLinkTerms = 6;
RAD_HD RAD_INLINE void ElementLinkTerms(const double *d, double t[kElementLinkTerms]) {
  t[0] = 1;
  t[1] = d[0];
  t[2] = d[1];
  t[3] = 0.5 * d[0] * d[0];
  t[4] = d[0] * d[1];
  t[5] = 0.5 * d[1] * d[1];
}

// A link's shape: its gradient (u, v) and curvature (uu, uv, vv) along the element's plane as fractions of its
// value, per the element's scale (ElementScale, element_links.h) and its square, each in binary16 (util/half.h).
// Measured so, a shape is of the order of the model's relative change across the element (element_links.cpp
// refuses a link whose model falls below 0 within it, which bounds the gradient's part by about 1), and
// binary16's 11 bits round each term by at most 2^-11 of it (terms under 6e-5 of the value, by 3e-8 of the
// value): far inside the links' own error (about 1e-3 of a row), for 10 bytes a link where the terms in float
// took 20.
constexpr int kElementLinkShape = kElementLinkTerms - 1;

// Link k's weights for those terms, from the arrays that hold them (ElementFarLinks's, on the host or a device):
// its value, and its value times each of its shape's terms.
RAD_HD RAD_INLINE void ElementLinkWeights(const float *value, const uint16_t *shape, long long k,
                                          double w[kElementLinkTerms]) {
  w[0] = value[k];
  for (int i = 0; i < kElementLinkShape; ++i) w[i + 1] = w[0] * HalfBitsToDouble(shape[kElementLinkShape * k + i]);
}

// Far links held by elements of the polygons (the hierarchical operator's receivers, element_links.h): every
// row below an element reads the element's links at its own centroid, value + gradient . d + d^T curvature d / 2
// for d its offset along the element's plane (ElementLinkTerms), so that a link is stored once for the element
// rather than once per row.
struct ElementFarLinks {
  std::shared_ptr<const ElementForest> forest;
  std::vector<int32_t> element;     // forest nodes with links above a row here, ascending
  std::vector<long long> ptr;       // element.size() + 1: element m's links are [ptr[m], ptr[m + 1])
  std::vector<int32_t> target;      // a node of FarLinks::tree
  // Values in float, as the rows' links (FarLinks::value): estimates good to about 1e-3 of a row. Files hold them
  // in float64, with the gradients and curvatures (value times shape, over the scale and its square).
  std::vector<float> value;         // the estimated sum of F over the target's patches at the element's centre
  std::vector<uint16_t> shape;      // kElementLinkShape per link (ElementLinkWeights)
  std::vector<long long> rowPtr;    // per local row + 1: the row's elements are [rowPtr[r], rowPtr[r + 1])
  std::vector<int32_t> rowElement;  // index into `element`, from the row's leaf up
  // 2 per (row, element): the row's centroid less the element's centre, along the element's axes u and v
  // (ElementAxes, element_links.h), in units of the element's scale (ElementScale): as its links' shapes read
  // them. The offsets stay double: files do not hold them (they come from the patches' centroids), so a reader
  // computes them as here.
  std::vector<double> rowOffset;
  bool Empty() const { return element.empty(); }
  // Bytes held: the links and the rows' elements and offsets.
  double StoredBytes() const {
    return double(element.size() + target.size() + rowElement.size()) * sizeof(int32_t) +
           double(ptr.size() + rowPtr.size()) * sizeof(long long) +
           double(value.size()) * sizeof(float) + double(shape.size()) * sizeof(uint16_t) +
           double(rowOffset.size()) * sizeof(double);
  }
  // Link k as the row's element q (an index into rowElement) reads it.
  double Read(size_t q, long long k) const {
    double t[kElementLinkTerms], weights[kElementLinkTerms], read = 0;
    ElementLinkTerms(&rowOffset[2 * q], t);
    ElementLinkWeights(value.data(), shape.data(), k, weights);
    for (int i = 0; i < kElementLinkTerms; ++i) read += weights[i] * t[i];
    return read;
  }
  double Sum(size_t r) const {
    double sum = 0;
    if (!Empty())
      for (long long q = rowPtr[r]; q < rowPtr[r + 1]; ++q) {
        const size_t m = size_t(rowElement[size_t(q)]);
        for (long long k = ptr[m]; k < ptr[m + 1]; ++k) sum += Read(size_t(q), k);
      }
    return sum;
  }
};

// A far link's value held in binary16 (util/half.h) as value times 2^10, so that values down to 2^-24 keep
// binary16's 11 significant bits (rounded by at most 2^-11 of themselves, 4.9e-4) and the largest held is 63.97
// (a far link carries a sum of F, at most about 1). The links' values are estimates good to about 1e-3 of a
// row; rounding each to nearest, independently, moves a row of some 500 links by about 1e-5 of its far sum by
// chance (measured: jobs/README.md), for 2 bytes a link where float took 4: a gigabyte at a million patches.
constexpr double kFarLinkScale = 0x1p10;
RAD_HD RAD_INLINE double FarLinkValue(uint16_t bits) { return HalfBitsToDouble(bits) * (1 / kFarLinkScale); }
// False where the value does not fit (not finite, or beyond 63.97).
RAD_HD RAD_INLINE bool FarLinkBits(double value, uint16_t &bits) { return DoubleToHalfBits(value * kFarLinkScale, bits); }

// A far link's target is a node of the patch tree (>= 0) or a single patch j (-(j + 1)). Held, it is a name
// among the tree's nodes and then the patches (nodes + patches names, some 3 N), so that a row's links, sorted
// by name, keep 16 bits each as CSR columns do (csr_columns.h).
RAD_HD RAD_INLINE int32_t FarLinkName(int32_t target, int32_t nodes) {
  return target >= 0 ? target : nodes - (target + 1);
}
RAD_HD RAD_INLINE int32_t FarLinkTarget(int32_t name, int32_t nodes) {
  return name < nodes ? name : -(name - nodes) - 1;
}

// One row's links, as the walk made them (targets and values in any order), sorted by name and value in place,
// names in place of the targets: as FarLinks::AppendRow takes them. The order is the far field's sum order, so
// that it depends on the links alone. `keys` is scratch.
inline void SortFarLinksByName(int32_t nodes, int32_t *targets, uint16_t *values, size_t count,
                               std::vector<uint64_t> &keys) {
  keys.resize(count);
  for (size_t k = 0; k < count; ++k) keys[k] = uint64_t(uint32_t(FarLinkName(targets[k], nodes))) << 16 | values[k];
  std::sort(keys.begin(), keys.end());
  for (size_t k = 0; k < count; ++k) {
    targets[k] = int32_t(keys[k] >> 16);
    values[k] = uint16_t(keys[k] & 0xffff);
  }
}

// The far field of the hierarchical operator: per row, links to the tree nodes and single patches that the
// walk left out, each carrying the estimated sum of the row's entries over its patches, and the links of the
// elements above the row. B reaches a row through a link as the area-weighted mean of B over the link's
// patches (far_links.h). A row's links are held sorted by their targets' names (FarLinkName), in 16 bits each
// with a span table per row, as CSR columns (csr_columns.h): 2 bytes a link where an int32 target took 4, and
// 4 bytes per row and span of 65536 names (46 spans at a million patches). Producers append rows with
// AppendRow; readers take them through ForEachLink or Names().
struct FarLinks {
  std::vector<long long> ptr;     // local rows + 1; empty: no far links
  int32_t nodes = 0;              // the tree's nodes, named first
  long long names = 0;            // nodes + patches
  std::vector<uint16_t> nameLow;         // per link: its name's low 16 bits
  std::vector<int32_t> nameSpanStart;    // per row, ColumnSpans(names) - 1
  // The estimated sum of F over the target's patches, in binary16 (FarLinkBits, FarLinkValue): the rows'
  // links are a quarter of a city's memory (50.6 M at N = 102096). Files hold them in float64.
  std::vector<uint16_t> value;
  std::shared_ptr<const PatchTree> tree;
  std::vector<double> area;       // per patch: the means' weights
  ElementFarLinks elements;
  bool Empty() const { return ptr.empty(); }
  double Value(size_t k) const { return FarLinkValue(value[k]); }
  long long LinkCount() const { return (long long)nameLow.size(); }
  // How many names the links of a tree of `treeNodes` nodes over `patches` patches take (their span tables').
  static long long NameCount(long long treeNodes, long long patches) { return treeNodes + patches; }
  // Rows begun (no row yet) for a tree of `treeNodes` nodes over `patches` patches.
  void Begin(long long treeNodes, long long patches) {
    ptr.assign(1, 0);
    nodes = int32_t(treeNodes);
    names = NameCount(treeNodes, patches);
    nameLow.clear();
    nameSpanStart.clear();
    value.clear();
  }
  // The rows' names as CSR columns (for loops written once for the host and the device).
  CsrColumnsView Names() const { return ViewColumns(ptr.data(), nameLow.data(), nameSpanStart.data(), names); }
  // Calls visit(target, k) for each link k of local row r, in name order (FarLinkTarget's encoding).
  template <typename Visit>
  void ForEachLink(size_t r, Visit &&visit) const {
    const CsrColumnsView v = Names();
    RowColumnReader name(v, (long long)r);
    for (long long k = ptr[r]; k < ptr[r + 1]; ++k) visit(FarLinkTarget(name(k), nodes), k);
  }
  // Appends a row of `count` links, names ascending (SortFarLinksByName).
  void AppendRow(const int32_t *sortedNames, const uint16_t *values, size_t count) {
    AppendRowColumnsTo(sortedNames, count, ColumnSpans(names), nameLow, nameSpanStart);
    value.insert(value.end(), values, values + count);
    ptr.push_back(LinkCount());
  }
  // Appends local row r of `from` (the same tree and patches).
  void AppendRowOf(const FarLinks &from, size_t r) {
    const size_t spans = size_t(ColumnSpans(names)) - 1;
    const auto first = long(from.ptr[r]), last = long(from.ptr[r + 1]);
    nameLow.insert(nameLow.end(), from.nameLow.begin() + first, from.nameLow.begin() + last);
    value.insert(value.end(), from.value.begin() + first, from.value.begin() + last);
    nameSpanStart.insert(nameSpanStart.end(), from.nameSpanStart.begin() + long(r * spans),
                         from.nameSpanStart.begin() + long((r + 1) * spans));
    ptr.push_back(LinkCount());
  }
  void AppendEmptyRow() {
    nameSpanStart.insert(nameSpanStart.end(), size_t(ColumnSpans(names) - 1), 0);
    ptr.push_back(ptr.back());
  }
  // The rows' arrays exchanged with other's, without a copy (the tree, areas and elements stay).
  void SwapRows(FarLinks &other) {
    std::swap(ptr, other.ptr);
    std::swap(nodes, other.nodes);
    std::swap(names, other.names);
    std::swap(nameLow, other.nameLow);
    std::swap(nameSpanStart, other.nameSpanStart);
    std::swap(value, other.value);
  }
  // Keeps the first `count` rows.
  void TruncateRows(size_t count) {
    ptr.resize(count + 1);
    nameLow.resize(size_t(ptr.back()));
    value.resize(size_t(ptr.back()));
    nameSpanStart.resize(count * size_t(ColumnSpans(names) - 1));
  }
  // Every link's target (FarLinkTarget's encoding), link by link: a copy, for checks, tools and files.
  std::vector<int32_t> TargetsUnpacked(long long first = 0, long long count = -1) const;
  // Bytes the rows' own links take (the elements' are elements.StoredBytes()).
  double StoredBytes() const {
    return double(ptr.size()) * sizeof(long long) + double(nameLow.size() + value.size()) * sizeof(uint16_t) +
           double(nameSpanStart.size()) * sizeof(int32_t);
  }
  double Sum(size_t r) const {
    double sum = 0;
    if (!Empty())
      for (long long k = ptr[r]; k < ptr[r + 1]; ++k) sum += Value(size_t(k));
    return sum + elements.Sum(r);
  }
};

// Per patch of n, its place among a rank's `rows` (FormFactorRows::rows), or -1 where another rank has it.
inline std::vector<int32_t> LocalRows(size_t n, const std::vector<long long> &rows) {
  std::vector<int32_t> local(n, -1);
  for (size_t r = 0; r < rows.size(); ++r) local[size_t(rows[r])] = int32_t(r);
  return local;
}

enum class Precision { kDouble, kFloat };
Precision ParsePrecision(const std::string &name);  // "double" | "float"; throws InputError
const char *PrecisionName(Precision precision);

enum class Storage { kDense, kCsr };

struct FormFactorRows {
  long long n = 0;                           // columns: every patch of the scene
  std::vector<long long> rows;               // this rank's global rows, ascending
  Precision precision = Precision::kDouble;  // which of f64 and f32 holds the entries
  Storage storage = Storage::kDense;
  // Dense: rows.size() x n values, row-major. CSR: the values of the stored entries, row by row.
  std::vector<double> f64;                   // with Precision::kDouble, else empty
  std::vector<float> f32;                    // with Precision::kFloat, else empty
  // CSR only: local row r's entries are [indptr[r], indptr[r + 1]) of the values and of the columns, which
  // ascend; entries not stored are 0. The columns are held in 16 bits each (csr_columns.h): per entry its low
  // bits, per row where each span of 65536 columns after the first begins. Producers append a row's columns with
  // AppendRowColumns; readers take them through ForEachEntry, FindEntry or Columns().
  std::vector<long long> indptr;
  std::vector<uint16_t> columnLow;
  std::vector<int32_t> columnSpanStart;  // per row, ColumnSpans(n) - 1
  // CSR from the sparse operator: per local row, the part of the row sum left out (entries computed and
  // dropped, exactly, plus cluster pairs skipped whole, estimated); empty when not known.
  std::vector<double> dropped;
  // CSR from the hierarchical operator: the far field, beside the exact near entries.
  FarLinks links;

  size_t RowCount() const { return rows.size(); }
  bool IsDense() const { return storage == Storage::kDense; }
  bool IsCsr() const { return storage == Storage::kCsr; }
  // The values in their precision; the other is null.
  const double *F64() const { return precision == Precision::kDouble ? f64.data() : nullptr; }
  const float *F32() const { return precision == Precision::kFloat ? f32.data() : nullptr; }
  // Entries stored (dense: rows x n).
  long long StoredEntries() const { return (long long)(precision == Precision::kDouble ? f64.size() : f32.size()); }
  double Value(size_t k) const { return precision == Precision::kDouble ? f64[k] : double(f32[k]); }
  // CSR: the columns as flat arrays (for loops written once for the host and the device).
  CsrColumnsView Columns() const { return ViewColumns(indptr.data(), columnLow.data(), columnSpanStart.data(), n); }
  // CSR: calls visit(j, k) for each entry k of local row r, j its column, in column order.
  template <typename Visit>
  void ForEachEntry(size_t r, Visit &&visit) const {
    const CsrColumnsView v = Columns();
    RowColumnReader column(v, (long long)r);
    for (long long k = indptr[r]; k < indptr[r + 1]; ++k) visit(column(k), k);
  }
  // CSR: the column of entry k, of local row r.
  int32_t ColumnOf(size_t r, long long k) const {
    const CsrColumnsView v = Columns();
    return RowColumnReader(v, (long long)r)(k);
  }
  // CSR: the entry of local row r at column j, or -1 where the row does not store it.
  long long FindEntry(size_t r, long long j) const {
    const CsrColumnsView v = Columns();
    const int span = int(j >> kColumnSpanBits);
    const uint16_t low = uint16_t(j & (kColumnSpan - 1));
    const auto begin = columnLow.begin() + v.SpanBegin((long long)r, span);
    const auto end = columnLow.begin() + v.SpanBegin((long long)r, span + 1);
    const auto it = std::lower_bound(begin, end, low);
    return it != end && *it == low ? (long long)(it - columnLow.begin()) : -1;
  }
  // CSR: appends `count` columns, ascending, as the next row's (its indptr is the caller's to push).
  void AppendRowColumns(const int32_t *columns, size_t count) {
    AppendRowColumnsTo(columns, count, ColumnSpans(n), columnLow, columnSpanStart);
  }
  // CSR: every row's columns at once, from all of them entry by entry (indptr set; each row's ascending).
  void AssignColumns(const std::vector<int32_t> &all) {
    columnLow.clear();
    columnSpanStart.clear();
    for (size_t r = 0; r + 1 < indptr.size(); ++r)
      AppendRowColumns(all.data() + indptr[r], size_t(indptr[r + 1] - indptr[r]));
  }
  // CSR: every entry's column in full, entry by entry: a copy, for checks and tools (the rows' loops read the
  // columns where they are held).
  std::vector<int32_t> ColumnsUnpacked() const {
    std::vector<int32_t> all(columnLow.size());
    for (size_t r = 0; r + 1 < indptr.size(); ++r) ForEachEntry(r, [&](int32_t j, long long k) { all[size_t(k)] = j; });
    return all;
  }
  // Entries held (CSR).
  long long EntryCount() const { return (long long)columnLow.size(); }
  // Entry (local row r, column j), widened to double.
  double At(size_t r, long long j) const {
    if (IsDense()) return Value(r * size_t(n) + size_t(j));
    const long long k = FindEntry(r, j);
    return k >= 0 ? Value(size_t(k)) : 0.0;
  }
  // Sum of local row r's entries, in column order (and then its far links').
  double RowSum(size_t r) const {
    double sum = 0;
    const size_t begin = IsDense() ? r * size_t(n) : size_t(indptr[r]);
    const size_t end = IsDense() ? begin + size_t(n) : size_t(indptr[r + 1]);
    for (size_t k = begin; k < end; ++k) sum += Value(k);
    return sum + links.Sum(r);
  }
  // Local row r's entries against x (one value per patch), in column order; the far links are not read.
  double RowDot(size_t r, const double *x) const {
    double sum = 0;
    if (IsDense()) {
      for (long long j = 0; j < n; ++j) sum += Value(r * size_t(n) + size_t(j)) * x[j];
    } else {
      ForEachEntry(r, [&](int32_t j, long long k) { sum += Value(size_t(k)) * x[j]; });
    }
    return sum;
  }
  // CSR: appends local row r of `from` (CSR, the same precision) as the next row; with `sums`, its dropped sum
  // too (0 when `from` has none), and its own far links when these rows hold links (links.ptr begun).
  void AppendCsrRow(const FormFactorRows &from, size_t r, bool sums = false) {
    const size_t begin = size_t(from.indptr[r]), end = size_t(from.indptr[r + 1]);
    const size_t spans = size_t(ColumnSpans(n)) - 1;
    columnLow.insert(columnLow.end(), from.columnLow.begin() + long(begin), from.columnLow.begin() + long(end));
    columnSpanStart.insert(columnSpanStart.end(), from.columnSpanStart.begin() + long(r * spans),
                           from.columnSpanStart.begin() + long((r + 1) * spans));
    if (precision == Precision::kDouble) f64.insert(f64.end(), from.f64.begin() + long(begin), from.f64.begin() + long(end));
    else f32.insert(f32.end(), from.f32.begin() + long(begin), from.f32.begin() + long(end));
    indptr.push_back((long long)columnLow.size());
    if (sums) dropped.push_back(from.dropped.empty() ? 0.0 : from.dropped[r]);
    if (!links.ptr.empty()) {
      if (!from.links.Empty()) links.AppendRowOf(from.links, r);
      else links.AppendEmptyRow();
    }
  }
  // CSR: keeps the first `count` rows (with `sums`, their dropped sums; their links, where these rows hold links).
  void TruncateCsrRows(size_t count, bool sums = false) {
    indptr.resize(count + 1);
    columnLow.resize(size_t(indptr.back()));
    columnSpanStart.resize(count * size_t(ColumnSpans(n) - 1));
    if (precision == Precision::kDouble) f64.resize(columnLow.size());
    else f32.resize(columnLow.size());
    if (sums) dropped.resize(count);
    if (!links.ptr.empty()) links.TruncateRows(count);
  }
  // CSR: appends an empty row (with `sums`, a dropped sum of 0; no links, where these rows hold links).
  void AppendEmptyCsrRow(bool sums = false) {
    indptr.push_back(indptr.back());
    columnSpanStart.insert(columnSpanStart.end(), size_t(ColumnSpans(n) - 1), 0);
    if (sums) dropped.push_back(0.0);
    if (!links.ptr.empty()) links.AppendEmptyRow();
  }
  // Bytes the entries take (with the CSR index arrays).
  double StoredBytes() const {
    return double(f64.size()) * sizeof(double) + double(f32.size()) * sizeof(float) +
           double(indptr.size()) * sizeof(long long) + double(columnLow.size()) * sizeof(uint16_t) +
           double(columnSpanStart.size()) * sizeof(int32_t);
  }
};

}  // namespace rad
