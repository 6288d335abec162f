// Sparse form factors in the project's HDF5 file (CONTRACTS.md): /formfactors/indptr int64 [N+1],
// /formfactors/indices int64 [nnz], /formfactors/data float64 or float32 [nnz] (CSR by row: row i's entries are
// indptr[i] .. indptr[i+1]-1), plus /formfactors/dropped_row_sum float64 [N] from `export --drop-below`.
// Written collectively (each rank's rows are one contiguous range of every dataset, one row block at a time);
// read back by `solve` into each rank's dense rows (any row distribution).
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "io/hdf5_util.h"
#include "io/radiosity_file.h"
#include "io/sparse_rows.h"

namespace rad {

// Collective: the same from a rank's CSR rows (the sparse operator's; block rows, so that each rank's part
// of every dataset is one range), with /formfactors/dropped_row_sum from f.dropped when known and
// /formfactors/sky_view_factor when `skyViewFactor` has one value per row.
void WriteCsrFormFactors(MPI_Comm comm, hid_t file, const FormFactorRows &f, const std::vector<double> &skyViewFactor,
                         const Attributes &attributes, long long blockEntries = kExportBlockEntries);

// Collective: creates the /formfactors group in `file` (opened for MPI I/O, e.g. RadiosityFileWriter::File()) and
// writes the CSR datasets, with `attributes` on the group.
void WriteCsrFormFactors(MPI_Comm comm, hid_t file, const ExportRows &rows, const RowCounts &counts,
                         Precision precision, const Attributes &attributes,
                         long long blockEntries = kExportBlockEntries);

// What rank 0 learns from a CSR file before the collective read.
struct CsrLayout {
  std::vector<long long> indptr;  // N + 1
  bool dataIsFloat = false;       // data stored in 4 bytes (read as float32, as stored)
  std::vector<long long> linkPtr;  // N + 1 when the file holds far links (far_links_hdf5.h), else empty
};

// One process (a serially opened file): checks /formfactors/indptr, indices and data for `n` patches (shapes,
// types, indptr starting at 0, non-decreasing, ending at nnz) and reads indptr. InputError naming `path`.
CsrLayout InspectCsr(hid_t file, const std::string &path, long long n);

// Collective: this rank's rows of the CSR matrix, dense and row-major (rows.size() x n), into f32 if
// `layout.dataIsFloat`, else f64. Column indices outside [0, n) are an InputError naming `path`.
void ReadCsrRows(MPI_Comm comm, hid_t file, const std::string &path, const CsrLayout &layout, long long n,
                 const std::vector<long long> &rows, std::vector<double> &f64, std::vector<float> &f32);

// Collective: this rank's rows f.rows (f.n set) of the CSR matrix kept as CSR (f.storage = kCsr, the stored
// precision), columns ascending within each row. Column indices outside [0, n) are an InputError naming `path`.
void ReadCsrRowsAsCsr(MPI_Comm comm, hid_t file, const std::string &path, const CsrLayout &layout,
                      FormFactorRows &f);

}  // namespace rad
