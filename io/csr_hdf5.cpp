#include "io/csr_hdf5.h"

#include <algorithm>

#include "io/far_links_hdf5.h"
#include "util/agree.h"
#include "util/error.h"
#include "util/memory_budget.h"
#include "util/mpi_check.h"

namespace rad {

namespace {

// Dimensions of a dataset, or an InputError naming it.
std::vector<hsize_t> Dims(hid_t file, const std::string &path, const char *name, H5T_class_t wantClass,
                          const char *wantWhat) {
  H5QuietErrors quiet;
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) throw InputError(path + ": no " + name + " dataset");
  const hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  if (d < 0) throw InputError(path + ": " + name + " is not a dataset");
  H5Handle dset(d);
  H5Handle type(RAD_H5(H5Dget_type(dset)));
  if (H5Tget_class(type) != wantClass) throw InputError(path + ": " + name + " is not " + wantWhat);
  H5Handle space(RAD_H5(H5Dget_space(dset)));
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<size_t>(std::max(rank, 0)));
  if (rank > 0) RAD_H5(H5Sget_simple_extent_dims(space, dims.data(), nullptr));
  return dims;
}

}  // namespace

namespace {

// The CSR datasets of rows [firstRow, firstRow + kept.size()) of an n x n matrix, whatever holds them:
// `appendRows(begin, end, columns, values, narrow)` appends the entries of local rows [begin, end) in order.
// `perRow` datasets (float64 [N]) are written alongside, each rank its rows.
template <typename AppendRows>
void WriteCsr(MPI_Comm comm, hid_t file, long long n, long long firstRow, const std::vector<long long> &kept,
              const std::vector<std::pair<const char *, const std::vector<double> *>> &perRow, Precision precision,
              const Attributes &attributes, long long blockEntries, AppendRows &&appendRows) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const long long rowCount = (long long)kept.size();
  long long keptTotal = 0;
  for (long long k : kept) keptTotal += k;
  const RankOffset nnz = ExclusiveScan(comm, keptTotal);
  H5Handle group(RAD_H5(H5Gcreate2(file, "formfactors", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));

  // indptr: rank 0 also writes the leading 0, so every rank's part is one range even when it owns no row.
  {
    H5Handle dset = Create1d(group, "indptr", H5T_STD_I64LE, n + 1);
    std::vector<long long> ptr;
    if (rank == 0) ptr.push_back(0);
    long long running = nnz.before;
    for (long long k : kept) ptr.push_back(running += k);
    Write1d(dset, rank == 0 ? 0 : firstRow + 1, (long long)ptr.size(), ptr.data(), H5T_NATIVE_LLONG);
  }
  for (const auto &[name, values] : perRow) {
    H5Handle dset = Create1d(group, name, H5T_IEEE_F64LE, n);
    if (n > 0) Write1d(dset, firstRow, rowCount, values->data(), H5T_NATIVE_DOUBLE);
  }
  H5Handle indices = Create1d(group, "indices", H5T_STD_I64LE, nnz.total);
  const bool asFloat = precision == Precision::kFloat;
  H5Handle data = Create1d(group, "data", asFloat ? H5T_IEEE_F32LE : H5T_IEEE_F64LE, nnz.total);
  if (nnz.total > 0) {
    long long written = nnz.before;
    std::vector<long long> columns;
    std::vector<double> values;
    std::vector<float> narrow;
    for (const auto &[begin, end] : RowBlocks(comm, rowCount, n, blockEntries)) {
      columns.clear();
      values.clear();
      narrow.clear();
      appendRows(begin, end, columns, values, narrow);
      const long long count = (long long)columns.size();
      Write1d(indices, written, count, columns.data(), H5T_NATIVE_LLONG);
      // Converted here, not by HDF5: a type conversion would turn the collective write into independent ones.
      if (asFloat) Write1d(data, written, count, narrow.data(), H5T_NATIVE_FLOAT);
      else Write1d(data, written, count, values.data(), H5T_NATIVE_DOUBLE);
      written += count;
    }
  }
  for (const auto &[k, v] : attributes.strings) WriteStringAttribute(group, k, v);
  for (const auto &[k, v] : attributes.numbers) WriteDoubleAttribute(group, k, v);
}

}  // namespace

void WriteCsrFormFactors(MPI_Comm comm, hid_t file, const ExportRows &rows, const RowCounts &counts,
                         Precision precision, const Attributes &attributes, long long blockEntries) {
  const bool asFloat = precision == Precision::kFloat;
  WriteCsr(comm, file, rows.n, rows.firstRow, counts.kept, {{"dropped_row_sum", &counts.dropped}}, precision,
           attributes, blockEntries,
           [&](long long begin, long long end, std::vector<long long> &columns, std::vector<double> &values,
               std::vector<float> &narrow) {
             for (long long r = begin; r < end; ++r)
               rows.ForEachNonzero(r, [&](long long j, double v) {
                 if (!rows.Keeps(v)) return;
                 columns.push_back(j);
                 if (asFloat) narrow.push_back(float(v));
                 else values.push_back(v);
               });
           });
}

void WriteCsrFormFactors(MPI_Comm comm, hid_t file, const FormFactorRows &f, const std::vector<double> &skyViewFactor,
                         const Attributes &attributes, long long blockEntries) {
  RAD_CHECK(f.IsCsr(), "WriteCsrFormFactors: the rows are not CSR");
  for (size_t r = 1; r < f.rows.size(); ++r)
    RAD_CHECK(f.rows[r] == f.rows[0] + (long long)r, "WriteCsrFormFactors: a CSR file needs block rows");
  std::vector<long long> kept(f.RowCount());
  for (size_t r = 0; r < kept.size(); ++r) kept[r] = f.indptr[r + 1] - f.indptr[r];
  std::vector<std::pair<const char *, const std::vector<double> *>> perRow;
  if (f.dropped.size() == f.RowCount()) perRow.emplace_back("dropped_row_sum", &f.dropped);
  if (skyViewFactor.size() == f.RowCount()) perRow.emplace_back("sky_view_factor", &skyViewFactor);
  const bool asFloat = f.precision == Precision::kFloat;
  WriteCsr(comm, file, f.n, f.rows.empty() ? 0 : f.rows[0], kept, perRow, f.precision, attributes, blockEntries,
           [&](long long begin, long long end, std::vector<long long> &columns, std::vector<double> &values,
               std::vector<float> &narrow) {
             for (long long r = begin; r < end; ++r)
               f.ForEachEntry(size_t(r), [&](int32_t j, long long k) {
                 columns.push_back(j);
                 if (asFloat) narrow.push_back(f.f32[size_t(k)]);
                 else values.push_back(f.f64[size_t(k)]);
               });
           });
  if (!f.links.Empty()) WriteFarLinks(comm, file, f);
}

CsrLayout InspectCsr(hid_t file, const std::string &path, long long n) {
  const std::vector<hsize_t> ptrDims = Dims(file, path, "/formfactors/indptr", H5T_INTEGER, "integer");
  const std::vector<hsize_t> idxDims = Dims(file, path, "/formfactors/indices", H5T_INTEGER, "integer");
  const std::vector<hsize_t> dataDims = Dims(file, path, "/formfactors/data", H5T_FLOAT, "floating point");
  if (ptrDims.size() != 1 || ptrDims[0] != hsize_t(n + 1))
    throw InputError(path + ": /formfactors/indptr must have N + 1 = " + std::to_string(n + 1) +
                     " values for the file's " + std::to_string(n) + " patches");
  if (idxDims.size() != 1 || dataDims.size() != 1 || idxDims[0] != dataDims[0])
    throw InputError(path + ": /formfactors/indices and /formfactors/data must be 1-D and of the same length");
  CsrLayout layout;
  layout.indptr.resize(size_t(n) + 1);
  H5Handle ptr(RAD_H5(H5Dopen2(file, "/formfactors/indptr", H5P_DEFAULT)));
  RAD_H5(H5Dread(ptr, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, layout.indptr.data()));
  const long long nnz = (long long)idxDims[0];
  if (layout.indptr[0] != 0) throw InputError(path + ": /formfactors/indptr[0] must be 0");
  for (long long i = 0; i < n; ++i)
    if (layout.indptr[size_t(i) + 1] < layout.indptr[size_t(i)])
      throw InputError(path + ": /formfactors/indptr decreases at row " + std::to_string(i));
  if (layout.indptr.back() != nnz)
    throw InputError(path + ": /formfactors/indptr ends at " + std::to_string(layout.indptr.back()) +
                     " but there are " + std::to_string(nnz) + " entries in /formfactors/data");
  H5Handle data(RAD_H5(H5Dopen2(file, "/formfactors/data", H5P_DEFAULT)));
  H5Handle type(RAD_H5(H5Dget_type(data)));
  layout.dataIsFloat = H5Tget_size(type) <= 4;
  layout.linkPtr = InspectFarLinks(file, path, n);
  return layout;
}

namespace {

// Collective: every stored entry of this rank's rows, read in row blocks: entry(k, j, pos, values) for local
// row k, column j and the entry's place `pos` in the block's `values` (double) or `narrow` (float) arrays, in
// file order. A column outside [0, n) is an InputError naming `path`, on every rank.
template <typename Entry>
void ForEachStoredEntry(MPI_Comm comm, hid_t file, const std::string &path, const CsrLayout &layout, long long n,
                        const std::vector<long long> &rows, Entry &&entry) {
  const bool asFloat = layout.dataIsFloat;
  H5Handle indices(RAD_H5(H5Dopen2(file, "/formfactors/indices", H5P_DEFAULT)));
  H5Handle data(RAD_H5(H5Dopen2(file, "/formfactors/data", H5P_DEFAULT)));
  H5Handle dxpl(RAD_H5(H5Pcreate(H5P_DATASET_XFER)));
  RAD_H5(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
  const std::vector<long long> &ptr = layout.indptr;
  bool ok = true;
  std::string message;
  std::vector<long long> columns;
  std::vector<double> values;
  std::vector<float> narrow;
  for (const auto &[begin, end] : RowBlocks(comm, (long long)rows.size(), n, kExportBlockEntries)) {
    // The union of this block's rows as runs of entries (adjacent rows merge: a block of rows is one run).
    H5Handle fileSpace(RAD_H5(H5Dget_space(indices)));
    const long long entries = SelectRowRuns(fileSpace, ptr, rows.data() + begin, size_t(end - begin));
    const hsize_t memDims[1] = {hsize_t(std::max<long long>(entries, 1))};
    H5Handle memSpace(RAD_H5(H5Screate_simple(1, memDims, nullptr)));
    if (entries == 0) RAD_H5(H5Sselect_none(memSpace));
    columns.resize(size_t(std::max<long long>(entries, 1)));
    RAD_H5(H5Dread(indices, H5T_NATIVE_LLONG, memSpace, fileSpace, dxpl, columns.data()));
    if (asFloat) {
      narrow.resize(columns.size());
      RAD_H5(H5Dread(data, H5T_NATIVE_FLOAT, memSpace, fileSpace, dxpl, narrow.data()));
    } else {
      values.resize(columns.size());
      RAD_H5(H5Dread(data, H5T_NATIVE_DOUBLE, memSpace, fileSpace, dxpl, values.data()));
    }
    size_t pos = 0;
    for (long long k = begin; k < end && ok; ++k) {
      const size_t i = size_t(rows[size_t(k)]);
      for (long long e = ptr[i]; e < ptr[i + 1]; ++e, ++pos) {
        const long long j = columns[pos];
        if (j < 0 || j >= n) {
          ok = false;
          message = path + ": /formfactors/indices: row " + std::to_string(i) + " has column " + std::to_string(j) +
                    " outside [0, " + std::to_string(n) + ")";
          break;
        }
        if (asFloat) entry(size_t(k), j, double(narrow[pos]), narrow[pos]);
        else entry(size_t(k), j, values[pos], float(0));
      }
    }
  }
  AgreeOrThrow(comm, ok, message);
}

}  // namespace

void ReadCsrRows(MPI_Comm comm, hid_t file, const std::string &path, const CsrLayout &layout, long long n,
                 const std::vector<long long> &rows, std::vector<double> &f64, std::vector<float> &f32) {
  const bool asFloat = layout.dataIsFloat;
  AllocateOnEveryRank(comm, "the rank's rows of F", [&] {
    if (asFloat) f32.assign(rows.size() * size_t(n), 0.0f);
    else f64.assign(rows.size() * size_t(n), 0.0);
  });
  ForEachStoredEntry(comm, file, path, layout, n, rows, [&](size_t k, long long j, double value, float narrow) {
    if (asFloat) f32[k * size_t(n) + size_t(j)] += narrow;
    else f64[k * size_t(n) + size_t(j)] += value;
  });
}

void ReadCsrRowsAsCsr(MPI_Comm comm, hid_t file, const std::string &path, const CsrLayout &layout,
                      FormFactorRows &f) {
  const bool asFloat = layout.dataIsFloat;
  f.storage = Storage::kCsr;
  f.precision = asFloat ? Precision::kFloat : Precision::kDouble;
  f.indptr.assign(1, 0);
  for (long long i : f.rows) f.indptr.push_back(f.indptr.back() + layout.indptr[size_t(i) + 1] - layout.indptr[size_t(i)]);
  const size_t entries = size_t(f.indptr.back());
  std::vector<int32_t> columns;  // as read, then per row as held (in 16 bits, AppendRowColumns)
  AllocateOnEveryRank(comm, "the rank's CSR rows of F", [&] {
    columns.assign(entries, 0);
    f.columnLow.reserve(entries);
    if (asFloat) f.f32.assign(entries, 0.0f);
    else f.f64.assign(entries, 0.0);
  });
  f.columnLow.clear();
  f.columnSpanStart.clear();
  std::vector<long long> next(f.indptr.begin(), f.indptr.end() - 1);
  ForEachStoredEntry(comm, file, path, layout, f.n, f.rows, [&](size_t k, long long j, double value, float narrow) {
    const size_t at = size_t(next[k]++);
    columns[at] = int32_t(j);
    if (asFloat) f.f32[at] = narrow;
    else f.f64[at] = value;
  });
  // Columns ascending within each row (files from other tools need not be), a column stored twice summed in
  // file order, as the dense reader does.
  std::vector<std::pair<int32_t, double>> row;
  std::vector<int32_t> rowColumns;
  long long write = 0;
  for (size_t k = 0; k < f.rows.size(); ++k) {
    row.clear();
    for (long long e = f.indptr[k]; e < f.indptr[k + 1]; ++e) row.emplace_back(columns[size_t(e)], f.Value(size_t(e)));
    std::stable_sort(row.begin(), row.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    f.indptr[k] = write;
    rowColumns.clear();
    for (size_t q = 0; q < row.size(); ++q) {
      if (q > 0 && row[q].first == row[q - 1].first) {
        if (asFloat) f.f32[size_t(write) - 1] += float(row[q].second);
        else f.f64[size_t(write) - 1] += row[q].second;
        continue;
      }
      rowColumns.push_back(row[q].first);
      if (asFloat) f.f32[size_t(write)] = float(row[q].second);
      else f.f64[size_t(write)] = row[q].second;
      ++write;
    }
    f.AppendRowColumns(rowColumns.data(), rowColumns.size());
  }
  std::vector<int32_t>().swap(columns);
  f.indptr.back() = write;
  f.columnLow.shrink_to_fit();
  if (asFloat) f.f32.resize(size_t(write));
  else f.f64.resize(size_t(write));
}

}  // namespace rad
