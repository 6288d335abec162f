#include "cuda/gpu_solver.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/device_solve.h"
#include "cuda/gpu_csr_solver.h"
#include "solver/block_gauss_seidel.h"
#include "solver/solve_iteration.h"
#include "solver/solver_common.h"
#include "util/error.h"
#include "util/mpi_check.h"

namespace rad {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullWarp = 0xffffffffu;
// The product kernel: each warp takes kRowsPerWarp rows, so a thread block takes kProductRows; columns go in
// tiles of kTileColumns whose values of X sit in shared memory, read by all the block's rows.
constexpr int kRowsPerWarp = 4;
constexpr int kProductRows = kWarps * kRowsPerWarp;
constexpr int kTileColumns = 512;
// Column splits: enough thread blocks to fill the device, but no split narrower than this.
constexpr int kMinSplitColumns = 1024;
constexpr int kMaxSplits = 64;

static_assert(kSubstitutionGroup == 32, "the substitution kernel solves one group with one warp");

// ---- Device memory (device_buffer.h) and stream (device_solve.h) -----------------------------------------

class Cublas {
 public:
  explicit Cublas(cudaStream_t stream) {
    RAD_CUBLAS(cublasCreate(&handle_));
    RAD_CUBLAS(cublasSetStream(handle_, stream));
  }
  ~Cublas() { cublasDestroy(handle_); }
  Cublas(const Cublas &) = delete;
  Cublas &operator=(const Cublas &) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// ---- Kernels ---------------------------------------------------------------------------------------------

// partial[(s K + k) ld + r] = sum over the columns j of split s of F[r][j] * x[j + k ldx], for r < rows.
// F is row-major with n columns; every row's sum over a split has a fixed order (lane = j mod 32, then the
// warp's shuffle tree), so results do not change from run to run.
template <typename T, int K>
__global__ void __launch_bounds__(kThreads)
    RowsTimesColumnsKernel(const T *f, long long n, int rows, const double *x, long long ldx, int splits,
                           double *partial, long long ld) {
  __shared__ double xs[K][kTileColumns];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = blockIdx.x * kProductRows + warp * kRowsPerWarp;
  long long begin, end;
  ColumnSplit(n, splits, int(blockIdx.y), begin, end);
  const T *fRow[kRowsPerWarp];
  for (int q = 0; q < kRowsPerWarp; ++q) fRow[q] = f + size_t(min(row0 + q, rows - 1)) * size_t(n);
  double acc[kRowsPerWarp][K];
  for (int q = 0; q < kRowsPerWarp; ++q)
    for (int k = 0; k < K; ++k) acc[q][k] = 0;
  for (long long tile = begin; tile < end; tile += kTileColumns) {
    const int width = int(min((long long)kTileColumns, end - tile));
    __syncthreads();  // the previous tile is no longer read
    for (int idx = threadIdx.x; idx < K * kTileColumns; idx += kThreads) {
      const int k = idx / kTileColumns, j = idx % kTileColumns;
      xs[k][j] = j < width ? x[tile + j + k * ldx] : 0.0;
    }
    __syncthreads();
    for (int j = lane; j < width; j += 32) {
      double xj[K];
      for (int k = 0; k < K; ++k) xj[k] = xs[k][j];
      for (int q = 0; q < kRowsPerWarp; ++q) {
        const double v = double(fRow[q][tile + j]);
        for (int k = 0; k < K; ++k) acc[q][k] += v * xj[k];
      }
    }
  }
  for (int q = 0; q < kRowsPerWarp; ++q)
    for (int k = 0; k < K; ++k) {
      double v = acc[q][k];
      for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFullWarp, v, offset);
      if (lane == 0 && row0 + q < rows) partial[(size_t(blockIdx.y) * K + k) * size_t(ld) + size_t(row0 + q)] = v;
    }
}

// Jacobi: packed = E + rho * (F B), and each row's residual of B, from the product's `splits` partial sums.
__global__ void JacobiUpdateKernel(int rows, const double *partial, int splits, long long ld,
                                   const long long *globalRows, const double *e, const double *rho, const double *b,
                                   long long n, double maxEmission, double *packed, double *residual) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  double t[3] = {0, 0, 0};
  for (int s = 0; s < splits; ++s)
    for (int c = 0; c < 3; ++c) t[c] += partial[(size_t(s) * 3 + c) * size_t(ld) + size_t(r)];
  const size_t i = size_t(globalRows[r]);
  const double x[3] = {b[i], b[i + size_t(n)], b[i + 2 * size_t(n)]};
  residual[r] = RowResidual(e + 3 * r, rho + 3 * r, t, x, maxEmission);
  for (int c = 0; c < 3; ++c) packed[3 * r + c] = e[3 * r + c] + rho[3 * r + c] * t[c];
}

// Gauss-Seidel, one block of `count` rows (one thread block): from the product of the block's rows by
// [B^k | D] (partial sums, 6 columns), the residual of B^k at each row, then the forward substitution in
// groups of 32 rows (solver/block_gauss_seidel.h; the host's BlockGaussSeidelSweepHost is the same in order):
// all threads add the previous group's changes to the later rows and load the group's triangle of F into
// shared memory; then one warp solves the group, lane = row, passing each row's change down by shuffles.
// The new values go to `packed`, the changes to D (x's columns 3 to 5) for the blocks after this one.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    BlockSubstitutionKernel(const T *f, long long n, int count, const long long *blockRows, const double *partial,
                            int splits, const double *e, const double *rho, double *x, double maxEmission,
                            double *packed, double *residual) {
  __shared__ long long rowsS[kGpuMaxBlockRows];
  __shared__ double accS[kGpuMaxBlockRows * 3];
  __shared__ double changesS[kGpuMaxBlockRows * 3];
  __shared__ double triangleS[32][33];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const size_t nn = size_t(n);

  for (int r = tid; r < count; r += kThreads) {
    rowsS[r] = blockRows[r];
    double t[3] = {0, 0, 0}, u[3] = {0, 0, 0};
    for (int s = 0; s < splits; ++s)
      for (int c = 0; c < 3; ++c) {
        t[c] += partial[(size_t(s) * 6 + c) * size_t(count) + size_t(r)];
        u[c] += partial[(size_t(s) * 6 + 3 + c) * size_t(count) + size_t(r)];
      }
    const size_t i = size_t(rowsS[r]);
    const double xr[3] = {x[i], x[i + nn], x[i + 2 * nn]};
    residual[r] = RowResidual(e + 3 * r, rho + 3 * r, t, xr, maxEmission);
    for (int c = 0; c < 3; ++c) accS[3 * r + c] = t[c] + u[c];
  }
  __syncthreads();

  for (int g0 = 0; g0 < count; g0 += 32) {
    const int g1 = min(count, g0 + 32);
    if (g0 > 0)  // the previous group's changes, into every later row (in increasing order of the group's rows)
      for (int r = g0 + tid; r < count; r += kThreads) {
        double a[3] = {accS[3 * r], accS[3 * r + 1], accS[3 * r + 2]};
        AddBlockChanges(f + size_t(r) * nn, rowsS, g0 - 32, g0, changesS, a);
        for (int c = 0; c < 3; ++c) accS[3 * r + c] = a[c];
      }
    for (int idx = tid; idx < 32 * 32; idx += kThreads) {
      const int rr = idx / 32, q = idx % 32;
      triangleS[rr][q] = (q < rr && g0 + rr < count) ? double(f[size_t(g0 + rr) * nn + size_t(rowsS[g0 + q])]) : 0.0;
    }
    __syncthreads();
    if (warp == 0) {
      const int r = g0 + lane;
      const bool active = r < g1;
      double a[3] = {0, 0, 0}, xr[3] = {0, 0, 0}, change[3] = {0, 0, 0};
      if (active)
        for (int c = 0; c < 3; ++c) {
          a[c] = accS[3 * r + c];
          xr[c] = x[size_t(rowsS[r]) + size_t(c) * nn];
        }
      SolveGroupInWarp(lane, g1 - g0, triangleS, e + 3 * g0, rho + 3 * g0, a, xr, packed + 3 * g0, change);
      if (active)
        for (int c = 0; c < 3; ++c) {
          changesS[3 * r + c] = change[c];
          x[size_t(rowsS[r]) + size_t(3 + c) * nn] = change[c];
        }
    }
    __syncthreads();
  }
}

// ---- The solve -------------------------------------------------------------------------------------------

// The rank's share of the system on its device, and the sweeps and exchange over it.
template <typename T>
class DeviceSystem {
 public:
  DeviceSystem(MPI_Comm comm, int device, const LocalSystem &s, const T *fHost, const Exchange &exchange,
               double maxEmission, bool jacobi, const GpuSolverSettings &settings)
      : n_(s.F->n),
        m_(int(s.F->rows.size())),
        maxEmission_(maxEmission),
        blockRows_(settings.blockRows),
        useCublas_(std::is_same_v<T, double> && settings.cublasForDouble),
        jacobi_(jacobi) {
    const size_t nn = size_t(n_), m = size_t(m_), total = exchange.allRows.size();
    int smCount = 1;
    RAD_CUDA(cudaDeviceGetAttribute(&smCount, cudaDevAttrMultiProcessorCount, device));
    // Splits of the product kernel's columns, so that even one block's rows keep the device busy.
    jacobiSplits_ =
        useCublas_ ? 1 : ChooseColumnSplits(m_, n_, kProductRows, 2 * smCount, kMinSplitColumns, kMaxSplits);
    blockSplits_ = useCublas_ ? 1
                              : ChooseColumnSplits(std::min(m_, blockRows_), n_, kProductRows, 2 * smCount,
                                                   kMinSplitColumns, kMaxSplits);
    const size_t partialCount =
        jacobi ? size_t(jacobiSplits_) * 3 * m : size_t(blockSplits_) * 6 * size_t(std::min(m_, blockRows_));
    const size_t workBytes = sizeof(double) * (6 * nn + partialCount + m + 3 * m + 6 * m + 2 * 3 * total) +
                             sizeof(long long) * (2 * m + total);
    const double fBytes = double(m) * double(nn) * double(sizeof(T));
    RequireSolveMemory(comm, device, m_, fBytes + double(workBytes), [&](long long rows, double) {
      char text[160];
      std::snprintf(text, sizeof text, "its %lld rows of F need %lld x %lld x %zu bytes = %.2f GiB, and work space",
                    rows, rows, n_, sizeof(T), double(rows) * double(n_) * double(sizeof(T)) / double(1 << 30));
      return std::string(text);
    });

    stream_ = std::make_unique<Stream>();
    cublas_ = std::make_unique<Cublas>(stream_->get());
    f_ = MakeDeviceBuffer<T>(m * nn);
    x_ = MakeDeviceBuffer<double>(6 * nn);
    partial_ = MakeDeviceBuffer<double>(partialCount);
    residual_ = MakeDeviceBuffer<double>(m);
    packed_ = MakeDeviceBuffer<double>(3 * m);
    e_ = MakeDeviceBuffer<double>(3 * m);
    rho_ = MakeDeviceBuffer<double>(3 * m);
    rows_ = MakeDeviceBuffer<long long>(m);
    exchangeValues_ = std::make_unique<ValueExchange>(comm, exchange, s.F->rows);

    RAD_CUDA(cudaMemcpy(f_->data(), fHost, sizeof(T) * m * nn, cudaMemcpyHostToDevice));
    std::vector<double> x0(6 * nn, 0.0), eLocal(3 * m), rhoLocal(3 * m);
    for (size_t i = 0; i < nn; ++i)
      for (size_t c = 0; c < 3; ++c) x0[i + c * nn] = s.emission[3 * i + c];  // B^0 = E, D = 0
    for (size_t r = 0; r < m; ++r)
      for (size_t c = 0; c < 3; ++c) {
        eLocal[3 * r + c] = s.emission[3 * size_t(s.F->rows[r]) + c];
        rhoLocal[3 * r + c] = s.reflectance[3 * size_t(s.F->rows[r]) + c];
      }
    Upload(x_->data(), x0);
    Upload(e_->data(), eLocal);
    Upload(rho_->data(), rhoLocal);
    Upload(rows_->data(), s.F->rows);
  }

  // A Jacobi sweep from B^k: the rank's new values into packed_; returns the rank's max residual of B^k.
  // IterateSolve's interface (solver/solve_iteration.h): every sweep measures B^k.
  double Sweep(bool /*measured*/) { return jacobi_ ? JacobiSweep() : GaussSeidelSweep(); }
  void Exchange() { ExchangeValues(); }

  double JacobiSweep() {
    if (m_ == 0) return 0;
    Product<3>(0, m_, jacobiSplits_, partial_->data(), m_);
    JacobiUpdateKernel<<<Blocks(m_, kThreads), kThreads, 0, TheStream()>>>(
        m_, partial_->data(), jacobiSplits_, m_, rows_->data(), e_->data(), rho_->data(), x_->data(), n_, maxEmission_,
        packed_->data(), residual_->data());
    RAD_CUDA_LAUNCH();
    return MaxResidual();
  }

  // A Gauss-Seidel sweep from B^k (block by block, see the header); returns the rank's max residual of B^k.
  double GaussSeidelSweep() {
    if (m_ == 0) return 0;
    for (int b0 = 0; b0 < m_; b0 += blockRows_) {
      const int count = std::min(blockRows_, m_ - b0);
      Product<6>(b0, count, blockSplits_, partial_->data(), count);
      BlockSubstitutionKernel<T><<<1, kThreads, 0, TheStream()>>>(
          f_->data() + size_t(b0) * size_t(n_), n_, count, rows_->data() + b0, partial_->data(), blockSplits_,
          e_->data() + 3 * size_t(b0), rho_->data() + 3 * size_t(b0), x_->data(), maxEmission_,
          packed_->data() + 3 * size_t(b0), residual_->data() + b0);
      RAD_CUDA_LAUNCH();
    }
    return MaxResidual();
  }

  // All ranks' new values into B (B^{k+1}), and D back to zero. Collective.
  void ExchangeValues() {
    exchangeValues_->Into(packed_->data(), x_->data(), n_, TheStream());
    RAD_CUDA(cudaMemsetAsync(x_->data() + 3 * size_t(n_), 0, sizeof(double) * 3 * size_t(n_), TheStream()));
    RAD_CUDA(cudaStreamSynchronize(TheStream()));
  }

  // B^k as [n][3], the layout of SolverResult::radiance.
  std::vector<double> Radiance() { return DownloadRadiance(x_->data(), n_, TheStream()); }
  // Kept and continued by a checkpointed `run` (solve_checkpoint.h): B^k once exchanged (D is then 0), and B^k
  // set before the first sweep of a restart.
  std::vector<double> Iterate() { return Radiance(); }
  void SetIterate(const std::vector<double> &b) { UploadRadiance(b, x_->data(), n_, TheStream()); }

 private:
  cudaStream_t TheStream() const { return stream_->get(); }

  template <typename V>
  void Upload(V *device, const std::vector<V> &host) {
    RAD_CUDA(cudaMemcpy(device, host.data(), sizeof(V) * host.size(), cudaMemcpyHostToDevice));
  }

  // partial (splits x K columns of ld values) = F's local rows [first, first + count) times the first K
  // columns of x.
  template <int K>
  void Product(int first, int count, int splits, double *out, long long ld) {
    const T *rowsOfF = f_->data() + size_t(first) * size_t(n_);
    if constexpr (std::is_same_v<T, double>) {
      if (useCublas_) {
        // Row-major rows x n is column-major n x rows: C (rows x K) = A^T X. Calls of at most 2^30 entries of F.
        const double one = 1, zero = 0;
        const int chunk = int(std::max(1LL, (1LL << 30) / n_));
        for (int r0 = 0; r0 < count; r0 += chunk) {
          const int rowsNow = std::min(chunk, count - r0);
          RAD_CUBLAS(cublasDgemm(cublas_->get(), CUBLAS_OP_T, CUBLAS_OP_N, rowsNow, K, int(n_), &one,
                                 rowsOfF + size_t(r0) * size_t(n_), int(n_), x_->data(), int(n_), &zero, out + r0,
                                 int(ld)));
        }
        return;
      }
    }
    const dim3 grid(unsigned(Blocks(count, kProductRows)), unsigned(splits));
    RowsTimesColumnsKernel<T, K>
        <<<grid, kThreads, 0, TheStream()>>>(rowsOfF, n_, count, x_->data(), n_, splits, out, ld);
    RAD_CUDA_LAUNCH();
  }

  double MaxResidual() {
    const double *r = residual_->data();
    return thrust::reduce(thrust::cuda::par.on(TheStream()), r, r + m_, 0.0, thrust::maximum<double>());
  }

  long long n_;
  int m_;
  double maxEmission_;
  int blockRows_;
  bool useCublas_;
  bool jacobi_;
  int jacobiSplits_ = 1, blockSplits_ = 1;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<Cublas> cublas_;
  std::unique_ptr<DeviceBuffer<T>> f_;
  std::unique_ptr<DeviceBuffer<double>> x_, partial_, residual_, packed_, e_, rho_;
  std::unique_ptr<DeviceBuffer<long long>> rows_;
  std::unique_ptr<ValueExchange> exchangeValues_;
};

template <typename T>
SolverResult Solve(MPI_Comm comm, const LocalSystem &s, const T *fHost, const SolverOptions &options,
                   PhaseTimers &timers, const GpuSolverSettings &settings) {
  if (settings.blockRows < 32 || settings.blockRows > kGpuMaxBlockRows)
    RAD_FATAL("GpuSolverSettings::blockRows must be in [32, " + std::to_string(kGpuMaxBlockRows) + "]");
  if (s.F->n > INT_MAX) throw InputError("the GPU solver takes at most " + std::to_string(INT_MAX) + " patches");
  const bool jacobi = options.method == SolverMethod::kJacobi;
  const int device = RequireSolveDevice(comm);
  // The device's sweeps measure B^k in every sweep (IterationMonitor).
  return IterateSolve(comm, s, options, timers, /*measureEverySweep=*/true, [&](const SolveSetup &setup) {
    return std::make_unique<DeviceSystem<T>>(comm, device, s, fHost, setup.exchange, setup.maxEmission, jacobi,
                                             settings);
  });
}

}  // namespace

SolverResult SolveRadiosityGpu(MPI_Comm comm, const LocalSystem &system, const SolverOptions &options,
                               PhaseTimers &timers, const GpuSolverSettings &settings) {
  if (system.F == nullptr) RAD_FATAL("LocalSystem: no rows of F");
  if (system.F->IsCsr()) return SolveRadiosityGpuCsr(comm, system, options, timers);
  if (system.F->precision == Precision::kFloat) return Solve(comm, system, system.F->F32(), options, timers, settings);
  return Solve(comm, system, system.F->F64(), options, timers, settings);
}

}  // namespace rad
