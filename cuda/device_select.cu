#include "cuda/device_select.h"

#include "cuda/cuda_check.h"
#include "cuda/device_info.h"
#include "util/mpi_check.h"

namespace rad {

namespace {
constexpr int kNotChosen = -2;
int chosenDevice = kNotChosen;
}  // namespace

int SelectCudaDevice(MPI_Comm comm) {
  if (chosenDevice == kNotChosen) {
    // The split is collective, so every rank makes it, with or without a device.
    MPI_Comm node = MPI_COMM_NULL;
    RAD_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int localRank = 0;
    RAD_MPI(MPI_Comm_rank(node, &localRank));
    RAD_MPI(MPI_Comm_free(&node));
    const int count = CudaDeviceCount();
    chosenDevice = count > 0 ? localRank % count : -1;
  }
  if (chosenDevice >= 0) RAD_CUDA(cudaSetDevice(chosenDevice));
  return chosenDevice;
}

}  // namespace rad
