#include "cuda/device_solve.h"

#include <cstdio>
#include <vector>

#include "cuda/device_info.h"
#include "cuda/device_select.h"
#include "util/error.h"
#include "util/mpi_check.h"

namespace rad {

namespace {

// Room left for Thrust's temporary storage and cuBLAS's workspace when checking free memory.
constexpr double kReserveBytes = double(size_t(64) << 20);

// B[allRows[q]] = values[q] (3 channels), B column-major n x 3.
__global__ void ScatterKernel(long long count, const long long *allRows, const double *values, double *b,
                              long long n) {
  const long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= count) return;
  const size_t i = size_t(allRows[q]);
  for (int c = 0; c < 3; ++c) b[i + size_t(c) * size_t(n)] = values[3 * q + c];
}

}  // namespace

int RequireSolveDevice(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int device = SelectCudaDevice(comm);
  const int mine = device < 0 ? rank : size;
  int first = size;
  RAD_MPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first < size)
    throw InputError("the GPU solver needs a CUDA device on every rank, and rank " + std::to_string(first) +
                     " has none (" + DescribeCudaDevices() + ")");
  return device;
}

void RequireSolveMemory(MPI_Comm comm, int device, long long rows, double needBytes,
                        const std::function<std::string(long long rows, double needBytes)> &what) {
  size_t freeBytes = 0, totalBytes = 0;
  RAD_CUDA(cudaMemGetInfo(&freeBytes, &totalBytes));
  const double mine[4] = {needBytes + kReserveBytes, double(freeBytes), double(device), double(rows)};
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<double> all(4 * size_t(size));
  RAD_MPI(MPI_Allgather(mine, 4, MPI_DOUBLE, all.data(), 4, MPI_DOUBLE, comm));
  for (int r = 0; r < size; ++r) {
    const double *v = &all[4 * size_t(r)];
    if (v[0] <= v[1]) continue;
    const double gib = double(1 << 30);
    char tail[256];
    std::snprintf(tail, sizeof tail, " (%.2f GiB with room for temporary storage), but only %.2f GiB are free",
                  v[0] / gib, v[1] / gib);
    throw InputError("the GPU solve does not fit on rank " + std::to_string(r) + "'s device " +
                     std::to_string(int(v[2])) + ": " + what((long long)v[3], v[0] - kReserveBytes) + tail +
                     "; use more ranks (GPUs) or store F in float");
  }
}

std::vector<double> DownloadRadiance(const double *b, long long n, cudaStream_t stream) {
  const size_t nn = size_t(n);
  std::vector<double> columns(3 * nn), out(3 * nn);
  RAD_CUDA(cudaStreamSynchronize(stream));  // cudaMemcpy does not wait for a non-blocking stream
  RAD_CUDA(cudaMemcpy(columns.data(), b, sizeof(double) * 3 * nn, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < nn; ++i)
    for (size_t c = 0; c < 3; ++c) out[3 * i + c] = columns[i + c * nn];
  return out;
}

void UploadRadiance(const std::vector<double> &radiance, double *b, long long n, cudaStream_t stream) {
  const size_t nn = size_t(n);
  RAD_CHECK(radiance.size() == 3 * nn, "UploadRadiance: not 3 values per patch");
  std::vector<double> columns(3 * nn);
  for (size_t i = 0; i < nn; ++i)
    for (size_t c = 0; c < 3; ++c) columns[i + c * nn] = radiance[3 * i + c];
  RAD_CUDA(cudaStreamSynchronize(stream));  // nothing queued may write B after it
  RAD_CUDA(cudaMemcpy(b, columns.data(), sizeof(double) * 3 * nn, cudaMemcpyHostToDevice));
}

ValueExchange::ValueExchange(MPI_Comm comm, const Exchange &exchange, const std::vector<long long> &rows)
    : comm_(comm), exchange_(exchange), m_((long long)rows.size()), total_((long long)exchange.allRows.size()) {
  MPI_Comm_size(comm, &commSize_);
  rows_ = MakeDeviceBuffer<long long>(rows.size());
  if (!rows.empty()) rows_->Upload(rows.data(), rows.size());
  if (commSize_ > 1) {
    allRows_ = MakeDeviceBuffer<long long>(exchange.allRows.size());
    if (total_ > 0) allRows_->Upload(exchange.allRows.data(), exchange.allRows.size());
    gathered_ = MakeDeviceBuffer<double>(3 * size_t(total_));
    packedHost_ = std::make_unique<PinnedBuffer<double>>(3 * size_t(m_));
    gatheredHost_ = std::make_unique<PinnedBuffer<double>>(3 * size_t(total_));
  }
}

void ValueExchange::Into(const double *packed, double *b, long long n, cudaStream_t stream) {
  const double *values = packed;
  const long long *where = rows_->data();
  long long count = m_;
  if (commSize_ > 1) {
    RAD_CUDA(cudaMemcpyAsync(packedHost_->data(), packed, sizeof(double) * 3 * size_t(m_), cudaMemcpyDeviceToHost,
                             stream));
    RAD_CUDA(cudaStreamSynchronize(stream));
    RAD_MPI(MPI_Allgatherv(packedHost_->data(), int(3 * m_), MPI_DOUBLE, gatheredHost_->data(),
                           exchange_.counts.data(), exchange_.displacements.data(), MPI_DOUBLE, comm_));
    RAD_CUDA(cudaMemcpyAsync(gathered_->data(), gatheredHost_->data(), sizeof(double) * 3 * size_t(total_),
                             cudaMemcpyHostToDevice, stream));
    values = gathered_->data();
    where = allRows_->data();
    count = total_;
  }
  if (count > 0) {
    ScatterKernel<<<Blocks(count, 256), 256, 0, stream>>>(count, where, values, b, n);
    RAD_CUDA_LAUNCH();
  }
}

}  // namespace rad
