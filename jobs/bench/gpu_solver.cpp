// GPU solver benchmark: for each N, seconds per iteration and the bandwidth of reading F for Jacobi and block
// Gauss-Seidel (several block sizes; for double F both cuBLAS and the project's product kernel), next to a
// device-to-device cudaMemcpy of the same bytes measured in the same run. The copy's figure counts read + write
// traffic (2 x bytes / time: what the device's memory sustains); the solver's counts F read once per sweep
// (F's bytes / time of a sweep), so "% of copy" says how close a sweep comes to streaming F at the device's
// bandwidth. "s/iteration" adds the exchange (residual Allreduce, Allgatherv of B through host memory).
// F is synthetic (rows summing to about 0.9; the time of a sweep does not depend on the values), distributed
// cyclically as in the real runs, one device per rank.
//   mpirun -n P radiosity_bench_gpu_solver [N ...] [--sweeps S] [--precision double|float|both]
// Defaults: N = 2944 and 11776 (the reference scene at subdiv 3 and 4), 20 sweeps, both precisions.
#include <cuda_runtime.h>
#include <mpi.h>
#include <tbb/parallel_for.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_info.h"
#include "cuda/device_select.h"
#include "cuda/gpu_solver.h"
#include "jobs/bench/bench_inputs.h"
#include "pipeline/execution.h"
#include "solver/radiosity_solver.h"
#include "util/decomposition.h"
#include "util/error.h"
#include "util/rng.h"
#include "util/timers.h"

namespace {

double SlowestRank(double seconds) {
  double slowest = 0;
  MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

// Seconds per device-to-device copy of `bytes`, timed with events over `reps` copies after one warm-up.
double CopySeconds(size_t bytes, int reps) {
  void *a = nullptr, *b = nullptr;
  RAD_CUDA(cudaMalloc(&a, bytes));
  RAD_CUDA(cudaMalloc(&b, bytes));
  RAD_CUDA(cudaMemset(a, 0, bytes));
  cudaEvent_t start, stop;
  RAD_CUDA(cudaEventCreate(&start));
  RAD_CUDA(cudaEventCreate(&stop));
  RAD_CUDA(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
  RAD_CUDA(cudaEventRecord(start));
  for (int k = 0; k < reps; ++k) RAD_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
  RAD_CUDA(cudaEventRecord(stop));
  RAD_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  RAD_CUDA(cudaEventElapsedTime(&ms, start, stop));
  RAD_CUDA(cudaEventDestroy(start));
  RAD_CUDA(cudaEventDestroy(stop));
  RAD_CUDA(cudaFree(a));
  RAD_CUDA(cudaFree(b));
  return 1e-3 * double(ms) / reps;
}

template <typename T>
void Bench(long long n, int sweeps) {
  const int rank = rad::WorldRank(), size = rad::WorldSize();
  const char *precision = std::is_same_v<T, double> ? "double" : "float";
  rad::FormFactorRows rows;
  const rad::LocalSystem s = bench::SyntheticSystem<T>(n, rank, size, rows);
  const size_t m = rows.rows.size();

  const double myBytes = double(m) * double(n) * sizeof(T), bytes = double(n) * double(n) * sizeof(T);
  const double copySeconds = SlowestRank(CopySeconds(size_t(myBytes), 10));
  const double copyBandwidth = 2 * myBytes / copySeconds;  // read + write, of the slowest rank's share
  if (rank == 0) {
    std::printf("\nN %lld, F %s (%.1f MiB in all, %.1f MiB on the largest rank), %d rank(s), %d sweeps\n", n,
                precision, bytes / (1 << 20), myBytes / (1 << 20), size, sweeps);
    std::printf("  %-34s %12s %12s %10s %9s %s\n", "", "s/iteration", "s/sweep", "F GB/s", "of copy", "");
    std::printf("  %-34s %12s %12.3e %10.1f %9s  (read + write counted)\n", "cudaMemcpy device to device", "",
                copySeconds, copyBandwidth / 1e9, "100 %");
  }

  struct Variant {
    rad::SolverMethod method;
    int blockRows;
    bool cublas;
  };
  std::vector<Variant> variants;
  for (bool cublas : {true, false}) {
    if (!std::is_same_v<T, double> && cublas) continue;  // float F always uses the project's kernel
    variants.push_back({rad::SolverMethod::kJacobi, 0, cublas});
    for (int blockRows : {128, 256, 512}) variants.push_back({rad::SolverMethod::kGaussSeidel, blockRows, cublas});
  }
  for (const Variant &v : variants) {
    rad::SolverOptions options;
    options.method = v.method;
    options.tolerance = 0;  // never converges: exactly `sweeps` passes
    options.maxIterations = sweeps - 1;
    rad::GpuSolverSettings settings;
    settings.cublasForDouble = v.cublas;
    if (v.blockRows > 0) settings.blockRows = v.blockRows;
    {  // warm-up: device context, cuBLAS, first allocations
      rad::SolverOptions warm = options;
      warm.maxIterations = 1;
      rad::PhaseTimers timers;
      rad::SolveRadiosityGpu(MPI_COMM_WORLD, s, warm, timers, settings);
    }
    rad::PhaseTimers timers;
    const rad::SolverResult result = rad::SolveRadiosityGpu(MPI_COMM_WORLD, s, options, timers, settings);
    const double sweep = SlowestRank(timers.Get("solve sweeps")) / result.sweeps;
    const double iteration = SlowestRank(timers.Get("solve sweeps") + timers.Get("solve exchange")) / result.sweeps;
    const double fBandwidth = myBytes / sweep;
    if (rank == 0) {
      char label[96];
      if (v.method == rad::SolverMethod::kJacobi)
        std::snprintf(label, sizeof label, "jacobi (%s)", v.cublas ? "cuBLAS" : "own kernel");
      else
        std::snprintf(label, sizeof label, "block gauss-seidel b=%d (%s)", v.blockRows,
                      v.cublas ? "cuBLAS" : "own kernel");
      std::printf("  %-34s %12.3e %12.3e %10.1f %7.0f %%\n", label, iteration, sweep, fBandwidth / 1e9,
                  100 * fBandwidth / copyBandwidth);
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  std::vector<long long> sizes;
  int sweeps = 20;
  std::string precision = "both";
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--sweeps" && a + 1 < argc) sweeps = std::atoi(argv[++a]);
    else if (arg == "--precision" && a + 1 < argc) precision = argv[++a];
    else sizes.push_back(std::atoll(arg.c_str()));
  }
  if (sizes.empty()) sizes = {2944, 11776};
  bool usage = sweeps < 2 || (precision != "double" && precision != "float" && precision != "both");
  for (long long n : sizes) usage = usage || n < 1;
  if (usage) {
    if (rad::WorldRank() == 0)
      std::fprintf(stderr,
                   "usage: radiosity_bench_gpu_solver [N ...] [--sweeps S >= 2] [--precision double|float|both]\n");
    MPI_Finalize();
    return 2;
  }
  // Every rank needs a device; say so clearly instead of failing inside the solver.
  int mine = rad::SelectCudaDevice(MPI_COMM_WORLD) >= 0 ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) {
    if (rad::WorldRank() == 0)
      std::fprintf(stderr, "radiosity_bench_gpu_solver: no CUDA device on some rank (rank 0: %s); nothing to measure\n",
                   rad::DescribeCudaDevices().c_str());
    MPI_Finalize();
    return 1;
  }
  if (rad::WorldRank() == 0) std::printf("GPU solver benchmark; rank 0 %s\n", rad::DescribeCudaDevices().c_str());
  try {
    for (long long n : sizes) {
      if (precision != "float") Bench<double>(n, sweeps);
      if (precision != "double") Bench<float>(n, sweeps);
    }
  } catch (const rad::InputError &error) {  // e.g. F does not fit in device memory
    if (rad::WorldRank() == 0) std::fprintf(stderr, "radiosity_bench_gpu_solver: %s\n", error.what());
    MPI_Finalize();
    return 2;
  }
  MPI_Finalize();
  return 0;
}
