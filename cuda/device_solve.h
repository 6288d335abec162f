// What the GPU's two radiosity solvers share (gpu_solver.cu for dense rows of F, gpu_csr_solver.cu for CSR
// rows): their stream, the checks that every rank has a device and that its share fits, and the exchange of
// each sweep's new values between ranks into B on the device. CUDA code: included by .cu files only.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "solver/solver_common.h"

namespace rad {

class Stream {
 public:
  Stream() { RAD_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Gauss-Seidel's substitution in a group of `count` <= 32 rows by one warp, lane = row of the group: in order,
// row q takes its new value E + rho a (into packed) and passes its change from `old` down by shuffles to the
// later rows, each adding triangle[lane][q] times it (solver/block_gauss_seidel.h). e, rho and packed point
// at the group's first row, 3 values per row; lanes past `count` hold zeros and write nothing.
template <int Ld>
__device__ __forceinline__ void SolveGroupInWarp(int lane, int count, const double (*triangle)[Ld], const double *e,
                                                 const double *rho, double a[3], const double old[3],
                                                 double *packed, double change[3]) {
  for (int q = 0; q < count; ++q) {
    if (lane == q)
      for (int c = 0; c < 3; ++c) {
        const double value = e[3 * lane + c] + rho[3 * lane + c] * a[c];
        packed[3 * lane + c] = value;
        change[c] = value - old[c];
      }
    for (int c = 0; c < 3; ++c) {
      const double dq = __shfl_sync(0xffffffffu, change[c], q);
      if (lane > q) a[c] += triangle[lane][q] * dq;
    }
  }
}

inline int Blocks(long long count, int threads) { return int(std::max(1LL, (count + threads - 1) / threads)); }

// Every rank must have a device: if one has none, all throw the same InputError. Returns this rank's device.
int RequireSolveDevice(MPI_Comm comm);

// Throws the same InputError on every rank when some rank's `needBytes` (plus room for temporary storage) are
// more than its device's free memory. `what(rows, needBytes)` says what that rank's rows hold, in words; the
// message adds the rank, its device and what is free.
void RequireSolveMemory(MPI_Comm comm, int device, long long rows, double needBytes,
                        const std::function<std::string(long long rows, double needBytes)> &what);

// B (n x 3 column-major, device memory) as [n][3], the layout of SolverResult::radiance, once `stream` is done.
std::vector<double> DownloadRadiance(const double *b, long long n, cudaStream_t stream);
// The inverse: `radiance` ([n][3]) into B (n x 3 column-major, device memory), complete on return (a kept
// iterate continued after a restart: solve_checkpoint.h).
void UploadRadiance(const std::vector<double> &radiance, double *b, long long n, cudaStream_t stream);

// Every rank's new values (3 per local row, in device memory) into B (n x 3 column-major, device memory), at
// their global rows: through pinned host memory and MPI_Allgatherv between ranks (Open MPI here cannot read
// device memory), on the device alone with one rank. Collective.
class ValueExchange {
 public:
  ValueExchange(MPI_Comm comm, const Exchange &exchange, const std::vector<long long> &rows);
  void Into(const double *packed, double *b, long long n, cudaStream_t stream);

 private:
  MPI_Comm comm_;
  int commSize_ = 1;
  const Exchange &exchange_;
  long long m_, total_;
  std::unique_ptr<DeviceBuffer<long long>> rows_, allRows_;
  std::unique_ptr<DeviceBuffer<double>> gathered_;
  std::unique_ptr<PinnedBuffer<double>> packedHost_, gatheredHost_;
};

}  // namespace rad
