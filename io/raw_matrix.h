// The reference paper's raw `formfactors` file: little-endian int32 N, then N*N float64, value i*N+j = F[i][j].
// Written by all ranks collectively with MPI I/O: each rank's rows (an evenly spaced sequence) are described
// by one strided file view and written with MPI_File_write_at_all in a few large pieces, with 64-bit offsets.
// Like the HDF5 output, it is written to "<path>.partial" and renamed when complete.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "formfactor/form_factor_rows.h"

namespace rad {

// Float32 rows are widened to float64 a block of at most kRawWideningEntries values (or one row) at a time.
void WriteRawMatrix(MPI_Comm comm, const std::string &path, const FormFactorRows &f);
constexpr long long kRawWideningEntries = 1LL << 22;

// Collective: this rank's rows of a raw matrix file of N = n (the caller has checked the header and size).
std::vector<double> ReadRawMatrixRows(MPI_Comm comm, const std::string &path, long long n,
                                      const std::vector<long long> &rows);
// The same, a block of at most kRawWideningEntries values (or one row) at a time, handed to
// `take(firstLocalRow, rowCount, values)` rather than held whole (checkpoints read into rows already allocated).
void ReadRawMatrixRowBlocks(MPI_Comm comm, const std::string &path, long long n, const std::vector<long long> &rows,
                            const std::function<void(long long, long long, const double *)> &take);

}  // namespace rad
