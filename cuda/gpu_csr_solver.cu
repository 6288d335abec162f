#include "cuda/gpu_csr_solver.h"

#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>

#include <climits>
#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/device_solve.h"
#include "solver/solve_iteration.h"
#include "solver/sparse_transport.h"
#include "util/error.h"

namespace rad {

namespace {

constexpr int kThreads = 256;  // the kernels with a warp per row or node
constexpr int kWarps = kThreads / 32;
constexpr int kGroup = kSubstitutionGroup;
constexpr int kSweepThreads = 32 * kGroup;  // Gauss-Seidel: a warp per row of a group
constexpr unsigned kFullWarp = 0xffffffffu;

static_assert(kGroup == 32, "one warp solves a group, a lane per row");

// The sum of v over the warp, on every lane, in a fixed order (the same bits run to run).
__device__ __forceinline__ double WarpSum(double v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullWarp, v, offset);
  return v;
}

__device__ __forceinline__ long long GlobalWarp() { return ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; }

// ---- The far field of B^k (b, n x 3) -----------------------------------------------------------------------

__global__ void NodeMeansKernel(FarFieldView v, const double *b, long long n, double *means) {
  const long long k = GlobalWarp();
  if (k >= v.nodes) return;  // whole warps
  const int lane = threadIdx.x % 32;
  for (int c = 0; c < 3; ++c) {
    const double sum = WarpSum(NodeWeightedSumPart(v, int32_t(k), b + c * n, lane, 32));
    if (lane == 0) means[k + c * (long long)v.nodes] = NodeMean(v, int32_t(k), sum);
  }
}

__global__ void GatherElementsKernel(FarFieldView v, const double *means, double *gathered) {
  const long long m = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= v.elements) return;
  double g[kGatheredPerElement];
  GatherElement(v, m, means, g);
  for (int i = 0; i < kGatheredPerElement; ++i) gathered[kGatheredPerElement * m + i] = g[i];
}

__global__ void RowFarFieldKernel(FarFieldView v, long long rows, const double *b, long long n, const double *means,
                                  const double *gathered, double *far) {
  const long long r = GlobalWarp();
  if (r >= rows) return;
  const int lane = threadIdx.x % 32;
  double acc[3] = {0, 0, 0};
  AddRowFarField(v, r, b, n, means, gathered, lane, 32, acc);
  for (int c = 0; c < 3; ++c) {
    const double sum = WarpSum(acc[c]);
    if (lane == 0) far[3 * r + c] = sum;
  }
}

// ---- The sweeps ------------------------------------------------------------------------------------------

// Jacobi from B^k (b): packed = E + rho (F_r . b + far_r), and the residual of B^k at each row.
template <typename T>
__global__ void JacobiRowsKernel(CsrRowsView<T> f, long long m, const long long *rows, const double *far,
                                 const double *e, const double *rho, const double *b, long long n,
                                 double maxEmission, double *packed, double *residual) {
  const long long r = GlobalWarp();
  if (r >= m) return;
  const int lane = threadIdx.x % 32;
  double acc[3] = {0, 0, 0};
  AddRowTimes(f, r, b, n, lane, 32, acc);
  double t[3];
  for (int c = 0; c < 3; ++c) t[c] = WarpSum(acc[c]) + (far ? far[3 * r + c] : 0.0);
  if (lane != 0) return;
  const long long i = rows[r];
  const double old[3] = {b[i], b[i + n], b[i + 2 * n]};
  residual[r] = RowResidual(e + 3 * r, rho + 3 * r, t, old, maxEmission);
  for (int c = 0; c < 3; ++c) packed[3 * r + c] = e[3 * r + c] + rho[3 * r + c] * t[c];
}

// Gauss-Seidel over all the rank's rows, one thread block (see the header; CsrGaussSeidelSweepHost is the same
// in order). x: the newest values, updated in place at the rank's rows; b: B^k.
template <typename T>
__global__ void __launch_bounds__(kSweepThreads)
    GaussSeidelKernel(CsrRowsView<T> f, long long m, const long long *rows, const int32_t *localOf,
                      const double *far, const double *e, const double *rho, double *x, const double *b, long long n,
                      double maxEmission, double *packed, double *residual) {
  __shared__ double accS[kGroup][3];
  __shared__ double triangleS[kGroup][kGroup + 1];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (long long g0 = 0; g0 < m; g0 += kGroup) {
    const long long r = g0 + warp;
    triangleS[warp][lane] = 0;
    __syncwarp();
    if (r < m) {
      double newest[3] = {0, 0, 0}, start[3] = {0, 0, 0};
      GaussSeidelRowPass(f, r, x, b, n, localOf, g0, lane, 32, newest, start, triangleS[warp]);
      for (int c = 0; c < 3; ++c) {
        const double shared = far ? far[3 * r + c] : 0.0;
        newest[c] = WarpSum(newest[c]) + shared;
        start[c] = WarpSum(start[c]) + shared;
      }
      if (lane == 0) {
        const long long i = rows[r];
        const double old[3] = {b[i], b[i + n], b[i + 2 * n]};
        residual[r] = RowResidual(e + 3 * r, rho + 3 * r, start, old, maxEmission);
        for (int c = 0; c < 3; ++c) accS[warp][c] = newest[c];
      }
    }
    __syncthreads();
    if (warp == 0) {
      const int count = int(min((long long)kGroup, m - g0));
      const long long mine = g0 + lane;
      double a[3] = {0, 0, 0}, old[3] = {0, 0, 0}, change[3] = {0, 0, 0};
      if (lane < count)
        for (int c = 0; c < 3; ++c) {
          a[c] = accS[lane][c];
          old[c] = x[rows[mine] + c * n];
        }
      SolveGroupInWarp(lane, count, triangleS, e + 3 * g0, rho + 3 * g0, a, old, packed + 3 * g0, change);
      if (lane < count)
        for (int c = 0; c < 3; ++c) x[rows[mine] + c * n] = packed[3 * mine + c];
    }
    __syncthreads();  // the group's new values, seen by the next group's rows
  }
}

// ---- The solve -------------------------------------------------------------------------------------------

template <typename V>
const V *UploadTo(std::vector<std::unique_ptr<DeviceBuffer<V>>> &held, const V *host, size_t count) {
  held.push_back(MakeDeviceBuffer<V>(count));
  if (count > 0) held.back()->Upload(host, count);
  return held.back()->data();
}
template <typename V>
const V *UploadTo(std::vector<std::unique_ptr<DeviceBuffer<V>>> &held, const std::vector<V> &host) {
  return UploadTo(held, host.data(), host.size());
}

// Bytes of the far field's arrays on the device (ViewFarField's), and of its per-sweep work.
double FarFieldBytes(const FarLinks &l, long long m) {
  if (l.Empty()) return 0;
  const ElementFarLinks &e = l.elements;
  const double nodes = double(l.tree->nodes.size());
  return nodes * (4 + 4 + 8 + 3 * 8) + double(l.tree->order.size()) * 4 + double(l.area.size()) * 8 +
         double(l.ptr.size()) * 8 + double(l.LinkCount()) * (2 + 2) + double(l.nameSpanStart.size()) * 4 +
         double(e.ptr.size()) * 8 + double(e.target.size()) * (4 + 4 + 2 * kElementLinkShape) + double(e.rowPtr.size()) * 8 +
         double(e.rowElement.size()) * (4 + 16) + double(e.element.size()) * kGatheredPerElement * 8 + double(m) * 3 * 8;
}

template <typename T>
class DeviceCsrSystem {
 public:
  DeviceCsrSystem(MPI_Comm comm, int device, const LocalSystem &s, const T *values, const Exchange &exchange,
                  double maxEmission, bool jacobi)
      : n_(s.F->n), m_((long long)s.F->rows.size()), maxEmission_(maxEmission), jacobi_(jacobi) {
    const FormFactorRows &F = *s.F;
    const size_t nn = size_t(n_), m = size_t(m_), nnz = size_t(F.EntryCount());
    // F's values and columns; per patch localOf, x and B^k; per row its pointer, global row, E, rho, new
    // values and residual; the exchange's rows and values; the far field.
    const double need = double(nnz) * double(sizeof(T) + 2) + double(F.columnSpanStart.size()) * 4 +
                        double(nn) * (4 + 2 * 24) + double(m) * (8 + 8 + 72 + 8) +
                        double(exchange.allRows.size()) * (8 + 24) + FarFieldBytes(F.links, m_);
    RequireSolveMemory(comm, device, m_, need, [&](long long rows, double bytes) {
      char text[200];
      std::snprintf(text, sizeof text, "its %lld CSR rows of F, with their far field and work space, need %.2f GiB",
                    rows, bytes / double(1 << 30));
      return std::string(text);
    });
    stream_ = std::make_unique<Stream>();
    f_.columns = F.Columns();
    f_.columns.ptr = UploadTo(longs_, F.indptr);
    f_.columns.low = UploadTo(halves_, F.columnLow);
    f_.columns.spanStart = UploadTo(ints_, F.columnSpanStart);
    f_.values = UploadTo(values_, values, nnz);
    localOf_ = UploadTo(ints_, LocalRows(nn, F.rows));
    rows_ = UploadTo(longs_, F.rows);
    std::vector<double> x0(3 * nn), eLocal(3 * m), rhoLocal(3 * m);
    for (size_t i = 0; i < nn; ++i)
      for (size_t c = 0; c < 3; ++c) x0[i + c * nn] = s.emission[3 * i + c];  // B^0 = E
    for (size_t r = 0; r < m; ++r)
      for (size_t c = 0; c < 3; ++c) {
        eLocal[3 * r + c] = s.emission[3 * size_t(F.rows[r]) + c];
        rhoLocal[3 * r + c] = s.reflectance[3 * size_t(F.rows[r]) + c];
      }
    x_ = MakeDeviceBuffer<double>(3 * nn);
    x_->Upload(x0.data(), x0.size());
    b_ = MakeDeviceBuffer<double>(jacobi ? 1 : 3 * nn);
    e_ = UploadTo(doubles_, eLocal);
    rho_ = UploadTo(doubles_, rhoLocal);
    packed_ = MakeDeviceBuffer<double>(3 * m);
    residual_ = MakeDeviceBuffer<double>(m);
    nodes_ = FlattenTreeNodes(F.links);
    far_ = ViewFarField(F.links, nodes_, [&](const auto &host) { return Upload(host); });
    if (far_.hasLinks) {
      means_ = MakeDeviceBuffer<double>(3 * size_t(far_.nodes));
      gathered_ = MakeDeviceBuffer<double>(kGatheredPerElement * size_t(far_.elements));
      farRows_ = MakeDeviceBuffer<double>(3 * m);
    }
    exchange_ = std::make_unique<ValueExchange>(comm, exchange, F.rows);
    RAD_CUDA(cudaDeviceSynchronize());
  }

  // One sweep from B^k: the rank's new values into packed_; returns the rank's max residual of B^k.
  double Sweep(bool /*measured: every sweep measures*/) {
    if (m_ == 0) return 0;
    const double *b = x_->data();
    if (!jacobi_) {  // Gauss-Seidel changes x as it goes: B^k is kept aside for the residual and the far field
      RAD_CUDA(cudaMemcpyAsync(b_->data(), x_->data(), sizeof(double) * 3 * size_t(n_), cudaMemcpyDeviceToDevice,
                               TheStream()));
      b = b_->data();
    }
    const double *far = FarField(b);
    if (jacobi_) {
      JacobiRowsKernel<T><<<Blocks(m_, kWarps), kThreads, 0, TheStream()>>>(
          f_, m_, rows_, far, e_, rho_, b, n_, maxEmission_, packed_->data(), residual_->data());
    } else {
      GaussSeidelKernel<T><<<1, kSweepThreads, 0, TheStream()>>>(f_, m_, rows_, localOf_, far, e_, rho_, x_->data(),
                                                                  b, n_, maxEmission_, packed_->data(),
                                                                  residual_->data());
    }
    RAD_CUDA_LAUNCH();
    const double *r = residual_->data();
    return thrust::reduce(thrust::cuda::par.on(TheStream()), r, r + m_, 0.0, thrust::maximum<double>());
  }

  // All ranks' new values into B^(k+1). Collective.
  void Exchange() {
    exchange_->Into(packed_->data(), x_->data(), n_, TheStream());
    RAD_CUDA(cudaStreamSynchronize(TheStream()));
  }

  // B^k, the iterate the last sweep measured, as [n][3] (the layout of SolverResult::radiance). Gauss-Seidel's
  // x already holds the rank's newer values: B^k is its copy.
  std::vector<double> Radiance() {
    return DownloadRadiance((jacobi_ || m_ == 0 ? x_ : b_)->data(), n_, TheStream());
  }

  // Kept and continued by a checkpointed `run` (solve_checkpoint.h): B^k once exchanged (x, whichever the
  // method), and B^k set before the first sweep of a restart.
  std::vector<double> Iterate() { return DownloadRadiance(x_->data(), n_, TheStream()); }
  void SetIterate(const std::vector<double> &b) { UploadRadiance(b, x_->data(), n_, TheStream()); }

 private:
  cudaStream_t TheStream() const { return stream_->get(); }

  template <typename V>
  const V *Upload(const std::vector<V> &host) {
    if constexpr (std::is_same_v<V, double>) return UploadTo(doubles_, host);
    else if constexpr (std::is_same_v<V, float>) return UploadTo(floats_, host);
    else if constexpr (std::is_same_v<V, long long>) return UploadTo(longs_, host);
    else if constexpr (std::is_same_v<V, uint16_t>) return UploadTo(halves_, host);
    else return UploadTo(ints_, host);
  }

  // Each local row's far field from b (B^k), or null without far links.
  const double *FarField(const double *b) {
    if (!far_.hasLinks) return nullptr;
    NodeMeansKernel<<<Blocks(far_.nodes, kWarps), kThreads, 0, TheStream()>>>(far_, b, n_, means_->data());
    RAD_CUDA_LAUNCH();
    if (far_.hasElements) {
      GatherElementsKernel<<<Blocks(far_.elements, kThreads), kThreads, 0, TheStream()>>>(far_, means_->data(),
                                                                                         gathered_->data());
      RAD_CUDA_LAUNCH();
    }
    RowFarFieldKernel<<<Blocks(m_, kWarps), kThreads, 0, TheStream()>>>(far_, m_, b, n_, means_->data(),
                                                                       gathered_->data(), farRows_->data());
    RAD_CUDA_LAUNCH();
    return farRows_->data();
  }

  long long n_, m_;
  double maxEmission_;
  bool jacobi_;
  std::unique_ptr<Stream> stream_;
  // Arrays uploaded once, held for the solve.
  std::vector<std::unique_ptr<DeviceBuffer<double>>> doubles_;
  std::vector<std::unique_ptr<DeviceBuffer<float>>> floats_;
  std::vector<std::unique_ptr<DeviceBuffer<long long>>> longs_;
  std::vector<std::unique_ptr<DeviceBuffer<int32_t>>> ints_;
  std::vector<std::unique_ptr<DeviceBuffer<uint16_t>>> halves_;
  std::vector<std::unique_ptr<DeviceBuffer<T>>> values_;
  CsrRowsView<T> f_{};
  const int32_t *localOf_ = nullptr;
  const long long *rows_ = nullptr;
  const double *e_ = nullptr, *rho_ = nullptr;
  FlatTreeNodes nodes_;
  FarFieldView far_;
  std::unique_ptr<DeviceBuffer<double>> x_, b_, packed_, residual_, means_, gathered_, farRows_;
  std::unique_ptr<ValueExchange> exchange_;
};

template <typename T>
SolverResult Solve(MPI_Comm comm, const LocalSystem &s, const T *values, const SolverOptions &options,
                   PhaseTimers &timers) {
  if (s.F->n > INT_MAX) throw InputError("the GPU solver takes at most " + std::to_string(INT_MAX) + " patches");
  const bool jacobi = options.method == SolverMethod::kJacobi;
  const int device = RequireSolveDevice(comm);
  return IterateSolve(comm, s, options, timers, /*measureEverySweep=*/true, [&](const SolveSetup &setup) {
    return std::make_unique<DeviceCsrSystem<T>>(comm, device, s, values, setup.exchange, setup.maxEmission, jacobi);
  });
}

}  // namespace

SolverResult SolveRadiosityGpuCsr(MPI_Comm comm, const LocalSystem &system, const SolverOptions &options,
                                  PhaseTimers &timers) {
  RAD_CHECK(system.F != nullptr && system.F->IsCsr(), "SolveRadiosityGpuCsr: F is not CSR");
  if (system.F->precision == Precision::kFloat) return Solve(comm, system, system.F->F32(), options, timers);
  return Solve(comm, system, system.F->F64(), options, timers);
}

}  // namespace rad
