// One CUDA device per rank, chosen from the rank's place on its node: ranks sharing a node (MPI_Comm_split_type
// with MPI_COMM_TYPE_SHARED) take devices round robin, local rank % device count. Includable by g++ (no CUDA
// types).
#pragma once

#include <mpi.h>

namespace rad {

// Collective over `comm` on the first call (the node split); later calls return the same choice without
// communicating, and make it current again for the calling thread. Returns the device index, or -1 when this
// rank sees no usable device (no GPU, no driver).
int SelectCudaDevice(MPI_Comm comm);

}  // namespace rad
