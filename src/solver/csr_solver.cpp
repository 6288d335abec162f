#include "solver/csr_solver.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "solver/channel_vectors.h"
#include "solver/read_exchange.h"
#include "solver/solve_iteration.h"
#include "solver/sparse_transport.h"
#include "util/error.h"

namespace rad {

namespace {

// Local row r of F against the three channels of x.
template <typename T>
void RowDot(const FormFactorRows &f, const T *values, size_t r, Channels x, double out[3]) {
  double red = 0, green = 0, blue = 0;
  f.ForEachEntry(r, [&](int32_t j, long long k) {
    const double v = double(values[k]);
    red += v * x.r[j];
    green += v * x.g[j];
    blue += v * x.b[j];
  });
  out[0] = red;
  out[1] = green;
  out[2] = blue;
}

class CsrSweeps {
 public:
  CsrSweeps(MPI_Comm comm, const LocalSystem &s, const SolveSetup &setup, SolverMethod method,
            SweepExchange exchange)
      : comm_(comm), s_(s), setup_(setup), method_(method), x_(size_t(s.F->n)), start_(size_t(s.F->n)),
        packed_(3 * s.F->rows.size()), gathered_(3 * setup.exchange.allRows.size()), residual_(s.F->rows.size()),
        nodes_(FlattenTreeNodes(s.F->links)), exchange_(comm, *s.F, setup.exchange, nodes_.area, exchange) {
    for (size_t i = 0; i < size_t(s.F->n); ++i)
      for (int c = 0; c < 3; ++c) x_.c[c][i] = s.emission[3 * i + size_t(c)];
    if (!s.F->links.Empty())
      farView_ = ViewFarField(s.F->links, nodes_, [](const auto &host) { return host.data(); });
  }

  // Jacobi measures B^k every sweep; Gauss-Seidel measures each row's own residual at its update until the
  // monitor asks for B^k's, which takes a second product per row (against B^k) in the same pass.
  double Sweep(bool measured) {
    if (farView_.hasLinks) exchange_.NodeMeans(x_, means_);  // collective
    start_ = x_;
    const size_t m = s_.F->rows.size();
    if (farView_.hasLinks) {
      // Every row's far field at once, on all threads, with the GPU's functions (sparse_transport.h): it reads
      // B^k only, so Gauss-Seidel's pass in row order need not compute it (twice, in a measured sweep) one row
      // at a time. They read B^k column-major (n x 3).
      const size_t n = size_t(s_.F->n);
      startColumns_.resize(3 * n);
      for (int c = 0; c < 3; ++c) std::copy(start_.c[c].begin(), start_.c[c].end(), startColumns_.begin() + c * n);
      FarFieldFromMeans(farView_, (long long)m, startColumns_.data(), s_.F->n, means_, far_);
    }
    if (method_ == SolverMethod::kJacobi) {
      tbb::parallel_for(size_t(0), m, [&](size_t r) {
        double t[3];
        Dot(r, start_.View(), t);
        AddFarField(r, t);
        Update(r, t, t, start_.View());
      });
    } else {
      for (size_t r = 0; r < m; ++r) {  // in order: each row sees the rank's earlier rows' new values
        double t[3], sum[3];
        Dot(r, x_.View(), sum);
        AddFarField(r, sum);
        if (measured) {
          Dot(r, start_.View(), t);
          AddFarField(r, t);
        }
        Update(r, measured ? t : sum, sum, measured ? start_.View() : x_.View());
        const size_t i = size_t(s_.F->rows[r]);
        for (int c = 0; c < 3; ++c) x_.c[c][i] = packed_[3 * r + size_t(c)];
      }
    }
    double worst = 0;
    for (double v : residual_) worst = std::max(worst, std::isnan(v) ? HUGE_VAL : v);
    return worst;
  }

  // Between sweeps each rank receives only what its rows read (ReadExchange); B whole is gathered when asked
  // for (collective, as these are called on every rank).
  std::vector<double> Radiance() { return Whole(start_); }
  void Exchange() { exchange_.ShareRows(packed_, x_); }
  const ReadExchange &Exchanged() const { return exchange_; }
  // B^k once exchanged (every patch's values), to keep for a restart and to continue from (solve_iteration.h).
  std::vector<double> Iterate() { return Whole(x_); }
  void SetIterate(const std::vector<double> &b) { Deinterleave(b, x_); }

 private:
  // Every patch's values of v, from the ranks whose rows they are (v holds this rank's).
  std::vector<double> Whole(const ChannelVectors &v) {
    ChannelVectors whole = v;
    std::vector<double> own(3 * s_.F->rows.size());
    for (size_t r = 0; r < s_.F->rows.size(); ++r)
      for (int c = 0; c < 3; ++c) own[3 * r + size_t(c)] = v.c[c][size_t(s_.F->rows[r])];
    GatherInto(comm_, setup_.exchange, own, gathered_, whole);
    return Interleave(whole, size_t(s_.F->n));
  }
  // Adds the far links' share of row r (hierarchical operator), read from B^k: node means and patch values, and
  // what the elements above the row gathered from them, read at its centroid (FarFieldHost, in Sweep).
  void AddFarField(size_t r, double out[3]) const {
    if (!farView_.hasLinks) return;
    for (int c = 0; c < 3; ++c) out[c] += far_[3 * r + size_t(c)];
  }
  void Dot(size_t r, Channels x, double out[3]) const {
    if (s_.F->F64()) RowDot(*s_.F, s_.F->F64(), r, x, out);
    else RowDot(*s_.F, s_.F->F32(), r, x, out);
  }
  // Row r's new values E + rho sum, and the residual |E + rho t - old| of the values `old`.
  void Update(size_t r, const double t[3], const double sum[3], Channels old) {
    residual_[r] = UpdateRow(s_, r, t, sum, old, &packed_[3 * r]) / setup_.maxEmission;
  }

  MPI_Comm comm_;
  const LocalSystem &s_;
  const SolveSetup &setup_;
  SolverMethod method_;
  ChannelVectors x_, start_;  // the newest values, and B^k
  std::vector<double> packed_, gathered_, residual_;
  FlatTreeNodes nodes_;              // the far links' tree and view (hierarchical operator)
  ReadExchange exchange_;
  FarFieldView farView_;
  std::vector<double> means_;         // per node read, its mean of B^k (column-major, nodes x 3)
  std::vector<double> startColumns_;  // B^k, column-major (n x 3), as the far field reads it
  std::vector<double> far_;           // per local row, its far field from B^k (3 values)
};

}  // namespace

SolverResult SolveRadiosityCsr(MPI_Comm comm, const LocalSystem &s, const SolverOptions &options, PhaseTimers &timers) {
  RAD_CHECK(s.F->IsCsr(), "SolveRadiosityCsr: F is not CSR");
  return IterateSolve(comm, s, options, timers, false, [&](const SolveSetup &setup) {
    auto sweeps = std::make_unique<CsrSweeps>(comm, s, setup, options.method, options.exchange);
    // Summed over the ranks: what a sweep moves between them, beside what gathering every row would move.
    timers.SetCounter("solve values exchanged per sweep", double(sweeps->Exchanged().ValuesReceived()));
    timers.SetCounter("solve values of all rows per sweep", double(sweeps->Exchanged().ValuesOfAllRows()));
    return sweeps;
  });
}

}  // namespace rad
