#include "cli/backend_option.h"

#include <cstdio>

#include "util/agree.h"
#include "util/error.h"

#ifdef RAD_HAVE_CUDA
#include "device_info.h"
#endif

namespace rad {

void AddBackendOption(CLI::App &cmd, std::string &backend) {
  cmd.add_option("--backend", backend,
                 "Where to compute: gpu (one CUDA device per rank), cpu (Embree and the rank's cores), or auto (the "
                 "GPU when every rank has one, else the CPU)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}));
}

const char *BackendName(Backend backend) { return backend == Backend::kGpu ? "gpu" : "cpu"; }

Backend ResolveBackend(MPI_Comm comm, const std::string &requested) {
  if (requested == "cpu") return Backend::kCpu;
  if (requested != "auto" && requested != "gpu")
    throw InputError("--backend must be auto, cpu or gpu, not '" + requested + "'");
#ifdef RAD_HAVE_CUDA
  const bool mine = CudaDeviceCount() > 0;
  const std::string why = DescribeCudaDevices();
#else
  const bool mine = false;
  const std::string why = "this build has no CUDA backend (nvcc was not found when it was configured)";
#endif
  int all = 0;
  const int mineInt = mine ? 1 : 0;
  MPI_Allreduce(&mineInt, &all, 1, MPI_INT, MPI_MIN, comm);
  if (all == 1) return Backend::kGpu;
  if (requested == "gpu") {
    // The message of the lowest rank without a device, on every rank.
    AgreeOrThrow(comm, mine, "--backend gpu: no usable CUDA device on this rank (" + why + ")");
    throw InputError("--backend gpu: no usable CUDA device on some rank");  // not reached: some rank lacks one
  }
  return Backend::kCpu;
}

void AnnounceBackend(MPI_Comm comm, const std::string &requested, Backend backend, bool quiet) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0 || quiet || requested != "auto" || backend != Backend::kCpu) return;
#ifdef RAD_HAVE_CUDA
  const std::string why = CudaDeviceCount() > 0 ? "not every rank has one" : DescribeCudaDevices();
#else
  const std::string why = "this build has no CUDA backend";
#endif
  std::fprintf(stderr, "radiosity: notice: no CUDA device for every rank (%s); using the CPU backend\n", why.c_str());
}

}  // namespace rad
