// PETSc's binary matrix format, as MatView writes and MatLoad reads it (PETSc's MatLoad manual page), big-endian:
//   int32 MAT_FILE_CLASSID (1211216), int32 M, int32 N, int32 nnz,
//   int32 row lengths [M], int32 column indices [nnz] (0-based, row by row), float64 values [nnz].
// That is the layout for PETSc's default build (32-bit PetscInt, real double PetscScalar). Written collectively
// with MPI I/O at 64-bit offsets: each rank's rows are contiguous, so its row lengths, indices and values are
// three contiguous ranges of the file, written one row block at a time.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/sparse_rows.h"

namespace rad {

constexpr int32_t kPetscMatFileClassId = 1211216;

// True if the file starts with the big-endian MAT_FILE_CLASSID.
bool IsPetscMatrixFile(const std::string &path);

// Collective. InputError (before anything is created) if nnz or N does not fit the format's int32.
void WritePetscBinary(MPI_Comm comm, const std::string &path, const ExportRows &rows, const RowCounts &counts,
                      long long blockEntries = kExportBlockEntries);

// Collective: this rank's rows (dense, row-major, rows.size() x n) of the n x n matrix in `path`. Every rank reads
// the row lengths, then only its own rows' indices and values. Repeated columns in a row are summed. InputError
// naming the file for anything malformed or a size other than n. Data after the matrix (e.g. a vector MatView
// and VecView put in the same file) is ignored.
std::vector<double> ReadPetscBinaryRows(MPI_Comm comm, const std::string &path, long long n,
                                        const std::vector<long long> &rows);

}  // namespace rad
