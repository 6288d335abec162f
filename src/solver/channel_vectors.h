// The CPU solvers' vectors: three colour channels of n values each (structure of arrays, so that the row
// kernels vectorise), and the exchange that puts every rank's new values in place between sweeps.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "solver/row_kernels.h"
#include "solver/solver_common.h"
#include "util/mpi_check.h"

namespace rad {

struct ChannelVectors {
  std::vector<double> c[3];
  explicit ChannelVectors(size_t n) {
    for (auto &v : c) v.assign(n, 0.0);
  }
  Channels View() const { return {c[0].data(), c[1].data(), c[2].data()}; }
};

// B as [n][3] from the channels.
inline std::vector<double> Interleave(const ChannelVectors &v, size_t n) {
  std::vector<double> out(3 * n);
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) out[3 * i + size_t(c)] = v.c[c][i];
  return out;
}

// The channels from B as [n][3].
inline void Deinterleave(const std::vector<double> &b, ChannelVectors &v) {
  for (size_t i = 0; i < v.c[0].size(); ++i)
    for (int c = 0; c < 3; ++c) v.c[c][i] = b[3 * i + size_t(c)];
}

// Local row r's new values E + rho sum (3, into `out`), where sum is its product with the newest values, and
// its residual max_c |E + rho t - old| against the values `old`, t being its product with the vector measured.
inline double UpdateRow(const LocalSystem &s, size_t r, const double t[3], const double sum[3], Channels old,
                        double *out) {
  const size_t i = size_t(s.F->rows[r]);
  const double *oldValues[3] = {old.r, old.g, old.b};
  double worst = 0;
  for (int c = 0; c < 3; ++c) {
    const double e = s.emission[3 * i + size_t(c)], rho = s.reflectance[3 * i + size_t(c)];
    worst = std::max(worst, std::fabs(e + rho * t[c] - oldValues[c][i]));
    out[c] = e + rho * sum[c];
  }
  return worst;
}

// Collective: every rank's `packed` values (3 per local row) into `x` at their global rows.
inline void GatherInto(MPI_Comm comm, const Exchange &exchange, const std::vector<double> &packed,
                       std::vector<double> &gathered, ChannelVectors &x) {
  RAD_MPI(MPI_Allgatherv(packed.data(), int(packed.size()), MPI_DOUBLE, gathered.data(), exchange.counts.data(),
                         exchange.displacements.data(), MPI_DOUBLE, comm));
  for (size_t q = 0; q < exchange.allRows.size(); ++q)
    for (int c = 0; c < 3; ++c) x.c[c][size_t(exchange.allRows[q])] = gathered[3 * q + size_t(c)];
}

}  // namespace rad
