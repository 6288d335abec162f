// A rank's block of rows of F: the one type that the producer (the form-factor stage), the readers
// (io/formfactor_input.h), the writers (HDF5, raw, the sparse exports) and the solvers (LocalSystem, CPU and
// GPU) share. Which rows a rank holds is util/decomposition.h's to say; they are global indices in ascending
// order. The entries are dense and row-major, in the stored precision. A sparse (CSR) block or a hierarchical
// operator is meant to answer the same questions (N, the rows held, a row's entries) when it comes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace rad {

enum class Precision { kDouble, kFloat };
Precision ParsePrecision(const std::string &name);  // "double" | "float"; throws InputError
const char *PrecisionName(Precision precision);

struct FormFactorRows {
  long long n = 0;                           // columns: every patch of the scene
  std::vector<long long> rows;               // this rank's global rows, ascending
  Precision precision = Precision::kDouble;  // which of f64 and f32 holds the entries
  std::vector<double> f64;                   // rows.size() x n with Precision::kDouble, else empty
  std::vector<float> f32;                    // rows.size() x n with Precision::kFloat, else empty

  size_t RowCount() const { return rows.size(); }
  // The entries in their precision; the other is null.
  const double *F64() const { return precision == Precision::kDouble ? f64.data() : nullptr; }
  const float *F32() const { return precision == Precision::kFloat ? f32.data() : nullptr; }
  // Entry (local row r, column j), widened to double.
  double At(size_t r, long long j) const {
    const size_t k = r * size_t(n) + size_t(j);
    return precision == Precision::kDouble ? f64[k] : double(f32[k]);
  }
  // Bytes the entries take.
  double StoredBytes() const { return double(f64.size()) * sizeof(double) + double(f32.size()) * sizeof(float); }
};

}  // namespace rad
