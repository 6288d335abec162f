// MatrixMarket coordinate files (NIST's text format; scipy.io.mmread/mmwrite, Matlab, Julia, PETSc tools):
//   %%MatrixMarket matrix coordinate real general
//   % comments
//   M N NNZ
//   i j value        (1-based, one entry per line)
// Written collectively: each rank formats its row blocks twice (once to size its text, once to write it at the
// offset MPI_Exscan gives), so the file is the same for any number of ranks and no rank holds all its text.
// Read back by `solve`: every rank scans the file and keeps its own rows; `array` (dense, column-major) files
// as scipy writes for dense matrices are accepted too.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "io/sparse_rows.h"

namespace rad {

// True if the file starts with "%%MatrixMarket".
bool IsMatrixMarketFile(const std::string &path);

// Collective. `comments` become "% ..." lines after the banner. Values are written in the shortest form that
// reads back as the same double (std::to_chars), so the file holds the matrix exactly.
void WriteMatrixMarket(MPI_Comm comm, const std::string &path, const ExportRows &rows, const RowCounts &counts,
                       const std::vector<std::string> &comments, long long blockEntries = kExportBlockEntries);

// Collective: this rank's rows (dense, row-major, rows.size() x n) of the n x n matrix in `path`. Duplicate
// entries are summed (as scipy does). InputError naming the file (and line) for anything malformed or a size
// other than n.
std::vector<double> ReadMatrixMarketRows(MPI_Comm comm, const std::string &path, long long n,
                                         const std::vector<long long> &rows);

}  // namespace rad
